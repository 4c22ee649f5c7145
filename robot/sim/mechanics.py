"""The emulated robot's mechanics are those of the robot config.yaml describes.

A maker sets `motion.arms.<arm>.invert` because that arm's motor is wired the other way round
(its coils swapped): the firmware then drives DIR the other way and the arm turns as asked.  An
emulated robot built from that config must have the same wiring, or the inverted DIR turns its
arm backwards and a simulated run with a bring-up config misreads its own scans.

    reversed_ = reversed_motors(config)          # {"R": False, ..., "B": True}
    wire_as_configured(emulator_or_mock, config)  # tells the harness / mock arms
    physical_steps = dir_steps * direction(reversed_, "B")
"""

from __future__ import annotations

ARMS = "RLFB"


def reversed_motors(config) -> dict[str, bool]:
    """Which arms' motors are wired the other way round: those config inverts."""
    arms = config["motion"].get("arms") or {}
    return {arm: bool((arms.get(arm) or {}).get("invert", False)) for arm in ARMS}


def direction(reversed_: dict[str, bool], arm: str) -> int:
    """+1 when a step with DIR high turns the arm clockwise, -1 when its motor is wired reversed."""
    return -1 if reversed_[arm] else 1


def wire_as_configured(mechanics, config) -> dict[str, bool]:
    """Wire the emulated motors (simavr harness or mock arms) as config's inversions say; returns them."""
    reversed_ = reversed_motors(config)
    for arm, flag in reversed_.items():
        mechanics.reverse_wiring(arm, flag)
    return reversed_
