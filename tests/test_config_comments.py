"""The commands config.yaml's comments recommend are ones the CLI takes as written."""

import re
import shlex

from robot import config as config_module
from robot.cli import build_parser

QUOTED_COMMAND = re.compile(r"[`'](cube-robot [^`']+)[`']")


def recommended_commands():
    text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    return [shlex.split(m[1])[1:] for line in text.splitlines() if line.lstrip().startswith("#")
            for m in QUOTED_COMMAND.finditer(line)]


def subcommand(parser, words):
    """The parser of `cube-robot WORDS...` (e.g. calibrate timing), or None when there is none."""
    for word in words:
        choices = next((a.choices for a in parser._actions if isinstance(a.choices, dict)), {})
        if word not in choices:
            return None
        parser = choices[word]
    return parser


def test_every_command_config_yaml_recommends_exists_and_parses():
    commands = recommended_commands()
    assert len(commands) >= 5 and ["calibrate", "timing", "--save"] in commands
    for args in commands:
        parser = build_parser()
        if any(a.startswith("-") for a in args):  # a whole command line: the CLI takes it as written
            assert callable(parser.parse_args(args).handler), args
        else:  # a command named (`cube-robot jog` checks ...)
            assert subcommand(parser, args) is not None, args


def test_config_yaml_never_recommends_saving_what_the_emulator_measured():
    # `calibrate timing` and `tune grippers` refuse --save with --sim (tests/test_timing_calibration.py,
    # tests/test_bringup_commands.py): a comment that recommends it sends the maker into a refusal.
    for args in recommended_commands():
        assert not ("--sim" in args and "--save" in args), " ".join(["cube-robot", *args])
