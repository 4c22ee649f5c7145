"""The `cube-robot` command line: one subcommand per job.

Each package owns its commands: a module with `register(subparsers)` (listed in
COMMAND_MODULES), and for the `calibrate` group a module with
`register_calibrate(group)` (listed in CALIBRATE_MODULES).  These two lists
are the only place that names them.  Command modules take their shared
helpers from robot/cli_common.py, never from here (no import cycle), and
import their heavy dependencies (OpenCV, the solver tables) inside the
handlers, so `cube-robot --help` stays quick and nothing touches hardware at
import time.
"""

from __future__ import annotations

import argparse
import importlib
import os
import select
import sys

from . import __version__
from .config import ConfigError
from .exit_status import ExitStatus

COMMAND_MODULES = [
    "robot.solver.commands",
    "robot.run.commands",
    "calibrate",  # the group: register_calibrate_group below
    "robot.vision.commands",
    "robot.link.commands",
    "robot.doctor.commands",
    "robot.bringup.commands",
    "robot.panel.commands",
]

CALIBRATE_MODULES = [
    "robot.calibrate.colours",
    "robot.calibrate.timing",
    "robot.calibrate.overlap",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cube-robot",
        description="Controller for a four-arm 2x2x2 cube-solving robot.",
        epilog="Run 'cube-robot COMMAND --help' for the options and examples of each command.",
    )
    parser.add_argument("--version", action="version", version=f"cube-robot {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        if name == "calibrate":
            register_calibrate_group(subparsers)
        else:
            importlib.import_module(name).register(subparsers)
    return parser


def register_calibrate_group(subparsers) -> None:
    """`cube-robot calibrate WHAT`: each calibration is a subcommand of its own module."""
    parser = subparsers.add_parser(
        "calibrate", help="guided calibrations (colours, ...); results go to calibration/",
        description="Guided calibrations. Their results live in calibration/ (see calibration/README.md).",
    )
    group = parser.add_subparsers(dest="calibration", metavar="WHAT")
    parser.set_defaults(handler=lambda args: parser.print_help() or ExitStatus.BAD_CONFIG)  # no WHAT given
    for name in CALIBRATE_MODULES:
        importlib.import_module(name).register_calibrate(group)


def main(argv=None) -> int:
    """Run one command; when the reader of its output goes away (`cube-robot solve ... | head`), end
    quietly with ExitStatus.BROKEN_PIPE, as a Unix tool stopped by SIGPIPE does."""
    try:
        try:
            return _main(argv)
        finally:
            if sys.stdout is not None:
                sys.stdout.flush()  # output still buffered goes now, while a closed pipe can be handled here
    except BrokenPipeError:
        if not _stdout_reader_gone():
            raise  # another pipe (a link, a child process): a real failure
        # Python would flush stdout again at exit and print a traceback: point it at nothing.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return ExitStatus.BROKEN_PIPE


def _stdout_reader_gone() -> bool:
    """Is stdout a pipe or socket whose reading end is closed? (poll reports an error on it)"""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by something without a descriptor
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def _main(argv) -> int:
    try:
        parser = build_parser()  # imports every command's module: Ctrl-C may come here too
    except KeyboardInterrupt:
        print("cube-robot: interrupted (before the command started: nothing moved)", file=sys.stderr)
        return ExitStatus.INTERRUPTED
    args = parser.parse_args(argv)  # a bad argument: argparse exits with 2 (ExitStatus.BAD_CONFIG)
    if not getattr(args, "handler", None):  # no command given
        parser.print_help()
        return ExitStatus.BAD_CONFIG
    try:
        return int(args.handler(args) or ExitStatus.OK)
    except ConfigError as exc:
        print(f"cube-robot: bad config: {exc}", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    except KeyboardInterrupt:
        print("cube-robot: interrupted", file=sys.stderr)
        return ExitStatus.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
