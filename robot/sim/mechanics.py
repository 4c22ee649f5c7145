"""The emulated robot's mechanics are those of the robot config.yaml describes.

A maker sets `motion.arms.<arm>.invert` because that arm's motor is wired the other way round
(its coils swapped): the firmware then drives DIR the other way and the arm turns as asked.  An
emulated robot built from that config must have the same wiring, or the inverted DIR turns its
arm backwards and a simulated run with a bring-up config misreads its own scans.

    reversed_ = reversed_motors(config)          # {"R": False, ..., "B": True}
    wire_as_configured(emulator_or_mock, config)  # tells the harness / mock arms
    place_sensors(emulator_or_mock, config)       # homing sensors where the zero offsets put the zeros
    physical_steps = dir_steps * direction(reversed_, "B")
"""

from __future__ import annotations

from ..config_types import Config

ARMS = "RLFB"
SENSOR_WIDTH_TURNS = 1 / 24  # a Hall sensor switches over about 15 degrees


def reversed_motors(config: Config) -> dict[str, bool]:
    """Which arms' motors are wired the other way round: those config inverts."""
    arms = config.motion.arms
    return {arm: arm in arms and arms[arm].invert for arm in ARMS}


def direction(reversed_: dict[str, bool], arm: str) -> int:
    """+1 when a step with DIR high turns the arm clockwise, -1 when its motor is wired reversed."""
    return -1 if reversed_[arm] else 1


def wire_as_configured(mechanics, config: Config) -> dict[str, bool]:
    """Wire the emulated motors (simavr harness or mock arms) as config's inversions say; returns them."""
    reversed_ = reversed_motors(config)
    for arm, flag in reversed_.items():
        mechanics.reverse_wiring(arm, flag)
    return reversed_


def place_sensors(mechanics, config: Config) -> None:
    """With motion.homing.sensors, one sensor per arm where its zero offset says: homing an arm that
    starts straight (the emulator's angle 0) ends straight.  The emulator also takes the polarity."""
    motion = config.motion
    rev = motion.steps_per_rev
    emulated = hasattr(mechanics, "sensor_level")  # the simavr harness (the mock has no input level)
    if emulated:
        mechanics.sensor_level(active_high=motion.homing.sensor_active == "high")
    if not motion.homing.sensors:
        return
    width = max(1, round(rev * SENSOR_WIDTH_TURNS))
    for arm in ARMS:
        start = -motion.arms[arm].zero_offset_steps % rev  # the edge, seen from straight
        if emulated:
            mechanics.set_sensor(arm, start, width, rev)
        else:
            mechanics.set_sensor(arm, start, width)
