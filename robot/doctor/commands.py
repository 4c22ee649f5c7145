"""`cube-robot doctor`: run every health check and print one table.

A check is a function `check(config, args) -> list[Result]` (robot/checks.py)
in its package's doctor_checks module, listed in CHECKS below as
(title, "module:function"); modules are imported only when the check runs, so
a broken camera stack cannot hide a serial problem.  To add a check: write the
function beside what it checks and append one line to CHECKS (and, if it
needs an option, add it in `register`).
"""

from __future__ import annotations

import argparse
import sys

from ..cli_common import add_config_argument
from ..config_types import Config
from ..exit_status import ExitStatus
from ..checks import FAIL, Result
from . import format_table, preflight
from .preflight import PREFLIGHT_CHECKS

# Its FAIL means no robot answers (on the named port, or on any): exit NOT_STARTED, as a run would end.
NO_ROBOT_CHECK = next(title for title, target in PREFLIGHT_CHECKS if target.endswith(":check_handshake"))

CHECKS = PREFLIGHT_CHECKS + [  # the run's pre-flight checks (robot/doctor/preflight.py), then the rest
    ("firmware emulator", "robot.sim.doctor_checks:check_emulator"),
    ("folders", "robot.doctor.folders:check_folders"),
]


def register(subparsers) -> None:
    doctor = subparsers.add_parser(
        "doctor", help="check the robot's connections and settings",
        description="Run every health check (serial ports, ...) and print what each found.",
        epilog="examples:\n  cube-robot doctor\n  cube-robot doctor --port /dev/ttyACM0\n"
               "  cube-robot doctor --sim   (rehearse: the emulated robot and the simulated webcam)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    doctor.add_argument("--port", metavar="PATH",
                        help="ask only this serial port or pyserial URL (as link.port does): the other ports "
                             "are listed, not opened, since opening a port resets an Uno on it")
    doctor.add_argument("--sim", action="store_true",
                        help="check the emulated robot (the firmware in simavr, else the mock) and the simulated "
                             "webcam instead of the real ones; every line says SIMULATED")
    doctor.add_argument("--firmware", choices=("auto", "emulator", "mock"), default="auto",
                        help="with --sim: the real firmware in simavr (emulator), the Python mock, or auto")
    add_config_argument(doctor)
    doctor.set_defaults(handler=run_doctor)


def run_checks(config: Config, args) -> list[tuple[str, Result]]:
    return preflight.run_checks(config, args, CHECKS)


def run_doctor(args) -> int:
    from .. import config as config_module

    config = config_module.load(args.config)
    if args.sim:
        return _run_simulated(config, args)
    args.named_robot = None  # the named port's robot, opened once by the serial row and read by later rows
    try:
        rows = run_checks(config, args)
    finally:
        if args.named_robot is not None:
            args.named_robot.close()
    print(format_table(rows))
    return _exit_status(rows)


def _run_simulated(config: Config, args) -> int:
    from ..cli_common import simulated
    from . import simulated as sim

    if args.port:
        print(simulated("cube-robot doctor: --sim checks the emulated robot; --port names a real one: give one "
                        "of them"), file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    backend, rows = sim.run_checks(config, args, CHECKS, NO_ROBOT_CHECK)
    print(simulated(f"doctor against the emulated robot ({backend.removeprefix('SIMULATED: ')}) and the "
                    "simulated webcam: a rehearsal, not your robot"))
    print(simulated(format_table(rows)))
    return _exit_status(rows, simulated)


def _exit_status(rows, mark=str) -> int:
    failed = {title for title, r in rows if r.status == FAIL}
    if failed:
        print("\n" + mark("Some checks failed: see the detail column."), file=sys.stderr)
    if NO_ROBOT_CHECK in failed:
        return ExitStatus.NOT_STARTED
    return ExitStatus.NOT_DONE if failed else ExitStatus.OK
