"""Every command: help text with examples, and --config."""

import argparse

from robot.cli import build_parser


def _leaf_parsers(parser, prefix=()):
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not actions:
        yield prefix, parser
        return
    for name, sub in actions[0].choices.items():
        yield from _leaf_parsers(sub, prefix + (name,))


def test_every_command_has_examples_and_config():
    leaves = list(_leaf_parsers(build_parser()))
    names = {" ".join(p) for p, _ in leaves}
    for expected in ("solve", "run", "history", "doctor", "tables build", "calibrate colors", "calibrate colours",
                     "calibrate timing", "vision decode", "vision show"):
        assert expected in names, names
    for path, parser in leaves:
        text = parser.format_help()
        assert "--config" in text, f"cube-robot {' '.join(path)} does not take --config"
        assert "example" in text.lower(), f"cube-robot {' '.join(path)} has no examples in its help"
