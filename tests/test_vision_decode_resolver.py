"""`cube-robot vision decode` reads the rubiks-color-resolver's reading files as they are ({"1": [R, G, B], ...},
squares numbered from 1, faces in the order U L F R B D): the shared real readings decode from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robot import cli

RESOLVER = Path(__file__).resolve().parents[2] / "shared" / "data" / "real-cube-readings" / \
    "dwalton76-rubiks-color-resolver"


@pytest.mark.parametrize("per_face", [4, 9])
def test_a_resolver_file_is_reordered_to_the_decoders_URFDLB(tmp_path, per_face):
    from robot.vision.commands import _load_readings

    urfdlb = [[i, 0, 0] for i in range(6 * per_face)]  # reading k carries k: its place in U R F D L B order
    ulfrbd = [urfdlb[per_face * "URFDLB".index(f) + k] for f in "ULFRBD" for k in range(per_face)]
    path = tmp_path / "squares.txt"
    path.write_text(json.dumps({str(n + 1): rgb for n, rgb in enumerate(ulfrbd)}))
    assert _load_readings(str(path)) == urfdlb


def test_an_object_that_is_no_resolver_file_is_named_with_the_format_asked_for(tmp_path, capsys):
    path = tmp_path / "squares.txt"
    path.write_text(json.dumps({"1": [1, 2, 3], "x": [4, 5, 6]}))
    assert cli.main(["vision", "decode", "--puzzle", "3x3x3", "--no-calibration", str(path)]) == 2
    err = capsys.readouterr().err
    assert "a JSON object" in err and '"1" to "54"' in err and "U L F R B D" in err


@pytest.mark.skipif(not RESOLVER.exists(), reason="../shared/data/real-cube-readings is not beside the repository")
def test_a_real_3x3x3_reading_file_decodes_from_the_command_line(capsys):
    expected = json.loads((RESOLVER / "expected.json").read_text())
    name = "tests/test-data/3x3x3-random-01.txt"
    assert cli.main(["vision", "decode", "--puzzle", "3x3x3", "--no-calibration", "--json",
                     str(RESOLVER / name)]) == 0
    out = json.loads(capsys.readouterr().out)
    truth = expected[name]["expected_kociemba_URFDLB"]
    assert out["ok"] and len({(a, b) for a, b in zip(out["facelets"], truth)}) == 6  # the same cube up to naming
