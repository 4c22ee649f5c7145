"""The virtual 3x3x3 moved by the firmware's pins (SIMULATED): the gripper changes and arm moves of a
simavr pin log (robot/sim/pinlog.py), in time order, fed to virtual_robot3.VirtualRobot3 as
robot_sim.py feeds the 2x2x2's virtual robot (motors wired as the firmware assumes them).

    timeline = pin_timeline(emu.pin_events(), config.motion, start_cycle)
    replay(virtual, emu.pin_events(), config.motion, start_cycle)   # raises Jam3 with its evidence
"""

from __future__ import annotations

from .. import firmware_header
from ..config_types import MotionConfig
from ..link.protocol import gripper_widths
from . import pinlog
from .virtual_robot3 import VirtualRobot3

_LIMITS = firmware_header.limits()
# A pulse stretched by simavr's lost Timer1 compare (robot_sim.py _servo_commands) is no position.
SERVO_RANGE_US = (_LIMITS["SERVO_US_MIN"] - 50, _LIMITS["SERVO_US_MAX"] + 50)


def pin_timeline(events, motion: MotionConfig, start_cycle: int = 0) -> list[tuple[int, int, str, str, int]]:
    """(cycle, order, kind, arm, value) from start_cycle on: each gripper's new width ("grip", 1 closed or
    0 open, at the rise of its first pulse of that width) and each arm move ("turn", signed steps), sorted
    by cycle (a gripper change first at the same cycle)."""
    low, high = SERVO_RANGE_US
    pulses = {arm: [p for p in arm_pulses if low <= p.width_us <= high]
              for arm, arm_pulses in pinlog.servo_pulses(events).items()}
    timeline: list[tuple[int, int, str, str, int]] = []
    for arm, changes in pinlog.width_changes(pulses).items():
        open_us, closed_us = gripper_widths(motion, arm)
        timeline += [(p.start_cycle, 0, "grip", arm, int(abs(p.width_us - closed_us) < abs(p.width_us - open_us)))
                     for p in changes if p.start_cycle >= start_cycle]
    for arm, moves in pinlog.MotionDecoder().motions(events, start_cycle).items():
        timeline += [(move.start_cycle, 1, "turn", arm, move.steps) for move in moves]
    return sorted(timeline)


def replay(robot: VirtualRobot3, events, motion: MotionConfig, start_cycle: int = 0) -> int:
    """Move `robot` by the pins from start_cycle on (its grippers and arms as they were then); returns
    how many events it took.  A jam raises virtual_robot3.Jam3 (also kept in robot.jams)."""
    timeline = pin_timeline(events, motion, start_cycle)
    for cycle, _, kind, arm, value in timeline:
        at_ms = pinlog.cycles_to_ms(cycle)
        if kind == "grip":
            robot.set_gripper(arm, bool(value), at_ms)
        else:
            robot.turn_arm(arm, value, at_ms)
    robot.finish()
    return len(timeline)
