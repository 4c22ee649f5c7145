"""Pre-flight: the checks a run makes before it waits for the start button, each failure named with
its fix, before anything moves.  `cube-robot doctor` runs the same checks (PREFLIGHT_CHECKS are the
first rows of its CHECKS), so there is one implementation of each.

A check is `check(config, context) -> list[Result]` (robot/checks.py); a FAIL stops the run
(NOT STARTED, exit 4), a WARN is said and the run goes on.  The context is the doctor's arguments, or
for a run a namespace with the open robot's `link` and `camera`, `port`, and `build_tables=True`
(checks may leave findings on it for later checks: the camera's frame size for the regions check;
`preflight_failures`, the failed rows so far, lets a check that moves the robot move nothing then).

To add a check: write it beside what it checks and add one line below, in the order a person would
fix things (checks that move the robot last).
"""

from __future__ import annotations

import importlib

from ..checks import FAIL, Result
from ..config_types import Config

PREFLIGHT_CHECKS = [
    ("firmware handshake", "robot.link.doctor_checks:check_handshake"),
    ("camera", "robot.vision.doctor_checks:check_camera"),
    ("regions file", "robot.vision.doctor_checks:check_regions"),
    ("colour calibration", "robot.vision.doctor_checks:check_colour_calibration"),
    ("solver tables", "robot.solver.doctor_checks:check_tables"),
    ("motors and homing", "robot.arms.doctor_checks:check_arms"),  # last: it may home the arms (moves)
]


def run_checks(config: Config, context, checks=PREFLIGHT_CHECKS) -> list[tuple[str, Result]]:
    """(title, Result) rows of every check; a check that crashes is itself a failed row."""
    rows: list[tuple[str, Result]] = []
    for title, target in checks:
        try:
            context.preflight_failures = failures(rows)
        except AttributeError:  # a context that takes no attributes: checks see no findings
            pass
        module_name, function_name = target.split(":")
        try:
            check = getattr(importlib.import_module(module_name), function_name)
            results = check(config, context)
        except Exception as exc:
            results = [Result(title, FAIL, f"the check crashed: {type(exc).__name__}: {exc}")]
        rows += [(title, r) for r in results]
    return rows


def failures(rows) -> list[str]:
    """One line per failed check: what, where, and the fix."""
    return [f"{title}: {r.item}: {r.detail}" for title, r in rows if r.status == FAIL]
