"""README and docs/robot3.md say plainly what works for the 3x3x3 (in simulation, with 3x3x3 grippers), and every
3x3x3 command they show parses as written."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from robot.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", ROOT / "docs" / "robot3.md")


def test_the_3x3x3_status_says_simulation_and_3x3x3_grippers_and_no_longer_planning_only():
    readme, robot3 = (path.read_text() for path in DOCS)
    heading = next(line for line in readme.splitlines() if line.startswith("## 3x3x3"))
    assert "simulation" in heading and "3x3x3 grippers" in heading, heading
    status = next(line for line in robot3.splitlines() if line.startswith("Status:"))
    assert "simulation" in status and "3x3x3 grippers" in status, status
    for text in (readme, robot3):  # what the status lines said before the robot ran
        assert "the robot does not yet" not in text and "planning only" not in text
        assert "no firmware or camera support yet" not in text


def _commands3():
    for path in DOCS:
        for command in re.findall(r"cube-robot [^`\n]*--puzzle 3x3x3[^`\n]*", path.read_text()):
            command = re.sub(r"\[[^\]]*\]", "", command.split("  #")[0]).strip()  # [optional] parts, comments
            yield path.name, command


@pytest.mark.parametrize("where, command", list(_commands3()))
def test_each_documented_3x3x3_command_parses_as_written(where, command):
    words = shlex.split(command)[1:]
    words = [w for w in words if not w.isupper() or not w.isalpha()]  # placeholders such as FILE
    try:
        build_parser().parse_args(words + (["x.json"] if words[:2] == ["vision", "decode"] else []))
    except SystemExit as exc:
        pytest.fail(f"{where}: `{command}` does not parse ({exc})")
