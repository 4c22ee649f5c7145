"""How long an action takes with given motion settings (config `motion` section).

The firmware's stepper ramp is trapezoidal: accelerate at `accel` up to
`max_speed`, cruise, decelerate; a short move that cannot reach full speed is a
triangle.  A regrip overlaps the grippers with the turns around it
(robot/regrip.py, the one source of its arithmetic): the taking pair starts
closing before the previous turn ends, and the next turn starts as soon as the
releasing jaws are out of its layers' reach.  Its cost depends on the turns
around it (their reach) and on each gripper's own widths (`motion.arms`).
"""

from __future__ import annotations

import math

from . import regrip
from .config_types import Config, MotionConfig


def steps_for(angle: int, steps_per_rev: int) -> int:
    return abs(angle) * steps_per_rev // 360


def move_seconds(steps: int, max_speed: float, accel: float) -> float:
    """Duration of a trapezoidal move of `steps` steps starting and ending at rest."""
    if steps <= 0:
        return 0.0
    ramp_steps = max_speed * max_speed / accel  # accelerate + decelerate at full speed
    if steps >= ramp_steps:
        return 2 * max_speed / accel + (steps - ramp_steps) / max_speed
    return 2 * math.sqrt(steps / accel)


def turn_ms(angles, motion: MotionConfig) -> float:
    """Arms turn together: the slowest (largest angle) decides."""
    steps = max(steps_for(a, motion.steps_per_rev) for a in angles)
    return 1000 * move_seconds(steps, motion.max_speed_steps_per_s, motion.accel_steps_per_s2)


class JawSettingsError(ValueError):
    """The motion settings cannot make a safe regrip (the message names the settings)."""


def arm_jaws(motion: MotionConfig, face: str | None) -> regrip.Jaws:
    """One gripper's jaws as the firmware is told them: its own widths (motion.arms.<face>) or the common ones."""
    arm = motion.arms.get(face) if face is not None else None  # None: a gripper with the common widths
    open_us = motion.servo_open_us if arm is None or arm.servo_open_us is None else arm.servo_open_us
    closed_us = motion.servo_closed_us if arm is None or arm.servo_closed_us is None else arm.servo_closed_us
    return regrip.Jaws(open_us, closed_us, motion.servo_speed_us_per_ms, motion.jaw_clear_pct / 100,
                       motion.jaw_contact_pct / 100, motion.jaw_open_gap_mm)


def pair_jaws(motion: MotionConfig, faces) -> list[regrip.Jaws]:
    """The jaws of a pair's grippers, one per arm (each its own travel)."""
    return [arm_jaws(motion, face) for face in faces]


def turn_reach(angles, motion: MotionConfig) -> regrip.TurnReach:
    """The moments and reach of a TURN whose arms turn by `angles` (the firmware's ramp)."""
    return regrip.turn_reach([steps_for(a, motion.steps_per_rev) for a in angles], motion.steps_per_rev,
                             motion.max_speed_steps_per_s, motion.accel_steps_per_s2, motion.cube_mm)


def check_open_gap(motion: MotionConfig) -> None:
    """The open jaws must stay outside a turning layer's reach (its corners at 45 degrees)."""
    reach = regrip.envelope_mm(45, motion.cube_mm)
    if motion.jaw_open_gap_mm <= reach:
        raise JawSettingsError(
            f"motion.jaw_open_gap_mm {motion.jaw_open_gap_mm:g} is inside a turning layer's reach: its corners "
            f"sweep {reach:.1f} mm past the faces for motion.cube_mm {motion.cube_mm:g}; the open jaws would be hit "
            f"(open them further, or measure the gap again)")


def regrip_between(motion: MotionConfig, taking_faces, releasing_faces, prev_angles=None, next_angles=None) -> int:
    """A regrip's duration (the GRIP's `done`): from the end of the previous turn (None: no turn
    right before it, no overlap) to the moment the next turn may start (None: until the releasing
    pair is fully open).  The pair of `taking_faces` takes the cube from `releasing_faces`."""
    check_open_gap(motion)
    prev = turn_reach(prev_angles, motion) if prev_angles else None
    nxt = turn_reach(next_angles, motion) if next_angles else None
    return regrip.regrip_ms(prev, nxt, pair_jaws(motion, taking_faces), pair_jaws(motion, releasing_faces))


def regrip_without_overlap(motion: MotionConfig, taking_faces, releasing_faces) -> int:
    """The same hand-over done one step after another (close fully, then open fully)."""
    return regrip.regrip_ms_without_overlap(pair_jaws(motion, taking_faces), pair_jaws(motion, releasing_faces))


TIMING_KEYS = ("quarter_turn_ms", "half_turn_ms", "regrip_ms")


def derived_timing(motion: MotionConfig, pairs=None) -> dict[str, int]:
    """robot.timing as the `motion` settings make it (what the firmware will take).  regrip_ms:
    a regrip between two quarter turns (the slowest hand-over of `pairs`; without pairs, grippers
    with the common widths); the solver charges each regrip its own cost (plan.RobotProfile)."""
    if pairs:
        names = list(pairs)
        regrip_ms = max(regrip_between(motion, pairs[a], pairs[b], [90], [90]) for a in names for b in names if a != b)
    else:
        regrip_ms = regrip_between(motion, [None], [None], [90], [90])
    return {
        "quarter_turn_ms": round(turn_ms([90], motion)),
        "half_turn_ms": round(turn_ms([180], motion)),
        "regrip_ms": regrip_ms,
    }


def robot_timing(config: Config) -> dict[str, int]:
    """config's robot.timing with each null value derived from `motion`; a number (measured) wins."""
    derived = derived_timing(config.motion, config.robot.pairs)
    given = config.robot.timing
    return {key: derived[key] if getattr(given, key) is None else getattr(given, key) for key in TIMING_KEYS}
