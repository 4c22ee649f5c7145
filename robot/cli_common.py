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
        help=f"settings file (default: {DEFAULT_CONFIG_PATH.name} in the project root)",
    )
