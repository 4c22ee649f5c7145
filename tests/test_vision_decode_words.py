"""`cube-robot vision decode` says what its confidence is about (the whole cube against the next-best
legal cube), so it does not read as a contradiction beside a sticker far from its colour."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robot import cli
from robot import config as config_module

CASES = Path(config_module.PROJECT_ROOT).parent / "shared" / "data" / "real-cube-readings" / "2x2x2-cases.json"


def decode_lines(tmp_path, capsys, rgb) -> list[str]:
    path = tmp_path / "readings.json"
    path.write_text(json.dumps(rgb))
    assert cli.main(["vision", "decode", str(path)]) == 0
    return capsys.readouterr().out.splitlines()


@pytest.mark.skipif(not CASES.is_file(), reason=f"needs the shared readings {CASES}")
def test_confidence_and_a_far_worst_sticker_are_explained_together(tmp_path, capsys):
    case = json.loads(CASES.read_text())["cases"][1]  # a real robot's scan: one sticker far from its colour
    lines = decode_lines(tmp_path, capsys, case["rgb_URFDLB"])
    [confidence] = [line for line in lines if line.startswith("confidence ")]
    [worst] = [line for line in lines if line.startswith("worst sticker: ")]
    assert confidence.startswith("confidence 1.00: no other legal cube within 6.0 noise units"), confidence
    # Its white reads bluish (147, 159, 198) beside a real blue: named white, one name a colour.
    assert "21.6 noise units from white" in worst and "no other legal cube explains the readings better" in worst


def test_a_clean_scan_says_nothing_more_of_its_worst_sticker(tmp_path, capsys):
    from robot import cube
    from robot.sim.render import STANDARD_PALETTE

    rgb = [list(STANDARD_PALETTE[letter]) for letter in cube.SOLVED_FACELETS]
    lines = decode_lines(tmp_path, capsys, rgb)
    [worst] = [line for line in lines if line.startswith("worst sticker: ")]
    assert worst.endswith(")") and "legal cube" not in worst, worst
