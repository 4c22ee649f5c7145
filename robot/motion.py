"""How long an action takes with given motion settings (config `motion` section).

The firmware's stepper ramp is trapezoidal: accelerate at `accel` up to
`max_speed`, cruise, decelerate; a short move that cannot reach full speed is a
triangle.  A GRIP is two settle phases of `grip_ms` (close the pair, open the
other); a phase whose grippers already are there is skipped, so a GRIP to the
pair that already holds takes 0 ms (motion.cpp).  The mock firmware times its
`done` events with these, and the bench compares them with the real firmware.
"""

from __future__ import annotations

import math

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


def grip_ms(motion: MotionConfig, phases: int = 2) -> float:
    """A GRIP with `phases` halves to do: 2 a regrip, 1 when one pair already is where it must be,
    0 when the pair already holds (the firmware skips a half whose grippers do not move)."""
    return phases * motion.grip_ms


TIMING_KEYS = ("quarter_turn_ms", "half_turn_ms", "regrip_ms")


def derived_timing(motion: MotionConfig) -> dict[str, int]:
    """robot.timing as the `motion` settings make it (what the firmware will take)."""
    return {
        "quarter_turn_ms": round(turn_ms([90], motion)),
        "half_turn_ms": round(turn_ms([180], motion)),
        "regrip_ms": round(grip_ms(motion)),
    }


def robot_timing(config: Config) -> dict[str, int]:
    """config's robot.timing with each null value derived from `motion`; a number (measured) wins."""
    derived = derived_timing(config.motion)
    given = config.robot.timing
    return {key: derived[key] if getattr(given, key) is None else getattr(given, key) for key in TIMING_KEYS}
