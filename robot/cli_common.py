"""Command-line helpers every command module shares.

Command modules import from here, never from robot/cli.py: cli.py imports the
command modules to register them, so importing it back would be a cycle.
"""

from __future__ import annotations

import argparse

from .config import DEFAULT_CONFIG_PATH


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    """Every command takes --config PATH."""
    parser.add_argument(
        "--config", metavar="PATH", default=None,
        help=f"settings file (default: {str(DEFAULT_CONFIG_PATH).replace('%', '%%')})",  # argparse formats %
    )


def simulated(text) -> str:
    """Every non-blank line of `text` marked SIMULATED (output about the emulated robot, as a simulated
    run's report)."""
    return "\n".join(f"SIMULATED | {line}" if line.strip() else line for line in str(text).split("\n"))


# Values measured or tuned on the emulator are the emulator's: they never go into the maker's config.
SIM_NOT_SAVED = ("not saved: {what} the emulated robot (--sim) are the emulator's, not your robot's; "
                 "{path} is unchanged (tune or measure on the robot, with --port, to save)")
