"""The `cube-robot` command line: one subcommand per job.

Each feature module that has commands exposes `register(subparsers)`; the list
below is the only place that names them.  Modules import their heavy
dependencies (OpenCV, the solver tables) inside the command handlers, so
`cube-robot --help` stays quick and nothing touches hardware at import time.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .config import DEFAULT_CONFIG_PATH, ConfigError

COMMAND_MODULES = [
    "robot.solver.commands",
    "robot.app",
    "robot.vision.calibrate_cmd",
    "robot.vision.commands",
    "robot.link.commands",
    "robot.doctor",
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
        importlib.import_module(name).register(subparsers)
    return parser


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    """Every command takes --config PATH."""
    parser.add_argument(
        "--config", metavar="PATH", default=None,
        help=f"settings file (default: {DEFAULT_CONFIG_PATH.name} in the project root)",
    )


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 1
    try:
        return int(args.handler(args) or 0)
    except ConfigError as exc:
        print(f"cube-robot: bad config: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cube-robot: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
