"""`cube-robot doctor`: run every health check and print one table.

A check is a function `check(config, args) -> list[Result]` (robot/doctor/__init__.py)
in its package's doctor_checks module, listed in CHECKS below as
(title, "module:function"); modules are imported only when the check runs, so
a broken camera stack cannot hide a serial problem.  To add a check: write the
function beside what it checks and append one line to CHECKS (and, if it
needs an option, add it in `register`).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from ..cli_common import add_config_argument
from . import FAIL, Result, format_table

CHECKS = [
    ("serial", "robot.link.doctor_checks:check_serial"),
    ("solver tables", "robot.solver.doctor_checks:check_tables"),
    ("colour calibration", "robot.vision.doctor_checks:check_colour_calibration"),
    ("camera", "robot.vision.doctor_checks:check_camera"),
    ("firmware emulator", "robot.sim.doctor_checks:check_emulator"),
]


def register(subparsers) -> None:
    doctor = subparsers.add_parser(
        "doctor", help="check the robot's connections and settings",
        description="Run every health check (serial ports, ...) and print what each found.",
        epilog="examples:\n  cube-robot doctor\n  cube-robot doctor --port /dev/ttyACM0",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    doctor.add_argument("--port", metavar="PATH", help="also (or only) ask this serial port or pyserial URL")
    add_config_argument(doctor)
    doctor.set_defaults(handler=run_doctor)


def run_checks(config, args) -> list[tuple[str, Result]]:
    rows = []
    for title, target in CHECKS:
        module_name, function_name = target.split(":")
        try:
            check = getattr(importlib.import_module(module_name), function_name)
            results = check(config, args)
        except Exception as exc:  # a crashing check is itself a finding
            results = [Result(title, FAIL, f"the check crashed: {type(exc).__name__}: {exc}")]
        rows += [(title, r) for r in results]
    return rows


def run_doctor(args) -> int:
    from .. import config as config_module

    config = config_module.load(args.config)
    rows = run_checks(config, args)
    print(format_table(rows))
    failed = any(r.status == FAIL for _, r in rows)
    if failed:
        print("\nSome checks failed: see the detail column.", file=sys.stderr)
    return 1 if failed else 0
