"""What `cube-robot solve` says about input that is not a 24-symbol facelet string, and the faces of
one written with spaces between them."""

from __future__ import annotations

import io
import json
import re
import sys

import pytest

from robot import cli, cube

SPACED = "wwww rrrr gggg yyyy oooo bbbb"


def solve(capsys, monkeypatch, *args, stdin=""):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = cli.main(["solve", *args])
    return code, capsys.readouterr().out


def test_faces_separated_by_whitespace_are_one_cube():
    assert cube.parse_facelets(SPACED).facelets == SPACED.replace(" ", "")
    assert cube.parse_facelets("wwww\trrrr gggg\nyyyy oooo  bbbb").cubie.is_solved()


def test_solve_takes_faces_separated_by_spaces(capsys, monkeypatch):
    code, out = solve(capsys, monkeypatch, "--json", SPACED)
    assert code == 0 and json.loads(out)["facelets"] == "wwwwrrrrggggyyyyoooobbbb", out


@pytest.mark.parametrize("text, said", [
    ("wwwwr rrrggggyyyyoooobbbb", "got 25 characters including 1 space:"),
    ("ww ww rr rr gggg yyyy oooo bbbb", "got 31 characters including 7 spaces:"),
])
def test_a_wrong_length_counts_the_spaces_it_includes(text, said):
    with pytest.raises(cube.LengthError, match=said):
        cube.parse_facelets(text)


def test_a_move_sequence_given_as_a_cube_is_named_with_the_way_to_solve_it(capsys, monkeypatch):
    code, out = solve(capsys, monkeypatch, "-", stdin="R U2 F'\n")
    assert code == 2
    assert "got 7 characters including 2 spaces" in out
    assert "it looks like a move sequence: solve it with --scramble \"R U2 F'\"" in out, out
    code, out = solve(capsys, monkeypatch, "--json", "RUF")
    assert code == 2 and "--scramble \"RUF\"" not in out  # not moves separated by spaces: no guess


def test_tables_status_heads_each_puzzles_tables_with_its_folder(tmp_path, capsys):
    from conftest import copy_tables, scratch_config
    from robot.solver3 import tables as tables3

    folder = copy_tables(tmp_path / "tables")
    config = scratch_config(tmp_path, lambda text: re.sub(r"\n  dir: .*\n", f"\n  dir: {folder}\n", text, count=1))
    cli.main(["tables", "status", "--config", str(config)])
    lines = capsys.readouterr().out.splitlines()
    headers = [line for line in lines if not line.startswith(" ")]
    assert lines[0] == f"2x2x2 ({folder}):", lines
    assert f"3x3x3 ({folder / tables3.SUBDIR}):" in headers, lines
    assert lines[1].startswith("  coords.npz ") and lines[1].split()[-1] == "ok", lines
