"""Puzzle YAML files: a bad file is refused with an error naming the file, the line and the key."""

from __future__ import annotations

import re

import numpy as np

import pytest

from robot.puzzles import Puzzle, PuzzleFileError, load_puzzle, shipped_puzzles
from robot.puzzles.puzzle import PuzzleMoveError, PuzzleStateError


def shipped_text(name: str) -> str:
    return shipped_puzzles()[name].read_text()


def write(tmp_path, text: str):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    return path


def line_of(text: str, fragment: str) -> int:
    """1-based line of the first line containing `fragment`."""
    return next(i for i, line in enumerate(text.splitlines(), start=1) if fragment in line)


def refused(path) -> PuzzleFileError:
    with pytest.raises(PuzzleFileError) as info:
        Puzzle(path)
    return info.value


# (what is wrong, replace this, with this, the key the error must name, the line holding this text)
CASES = [
    ("unknown top-level key", "fixed_piece: DBL", "fixed_piece: DBL\ncolour: red", "colour", "colour: red"),
    ("piece with an unknown face", "DRB]", "DRX]", "orbits.corners.pieces[7]", "pieces: [URF"),
    ("orientation count that does not fit", "orientations: 3", "orientations: 2",
     "orbits.corners.orientations", "orientations: 2"),
    ("vector with two numbers", "U: {normal: [0, 1, 0]", "U: {normal: [0, 1]", "faces.U.normal", "U: {normal"),
    ("a cube face turned like a Skewb corner", "R: {axis: R, order: 4}", "R: {axis: R, order: 3}", "moves.R",
     "R: {axis: R, order: 3}"),
    ("axis naming nothing", "F: {axis: F, order: 4}", "F: {axis: Q, order: 4}", "moves.F.axis", "axis: Q"),
    ("order out of range", "D: {axis: D, order: 4}", "D: {axis: D, order: 5}", "moves.D.order", "order: 5"),
    ("move without an order", "L: {axis: L, order: 4}", "L: {axis: L}", "moves.L", "L: {axis: L}"),
    ("fixed piece that does not exist", "fixed_piece: DBL", "fixed_piece: DBX", "fixed_piece", "fixed_piece"),
    ("a key given twice", "  y: {axis: U, order: 4}", "  y: {axis: U, order: 4}\n  y: {axis: D, order: 4}",
     "rotations.y", "  y: {axis: D"),
]


@pytest.mark.parametrize("problem, old, new, key, line_text", CASES, ids=[c[0] for c in CASES])
def test_a_bad_2x2x2_file_names_file_line_and_key(tmp_path, problem, old, new, key, line_text):
    original = shipped_text("2x2x2")
    assert old in original
    text = original.replace(old, new, 1)
    error = refused(write(tmp_path, text))
    assert error.file.endswith("bad.yaml")
    assert error.key_path == key
    assert error.line == line_of(text, line_text), (problem, str(error))
    assert str(error).startswith(f"{error.file}:{error.line}: {key}: ")


def test_a_missing_sticker_in_an_explicit_layout_is_named(tmp_path):
    text = shipped_text("pyraminx").replace("D: [FLD, FD, LD, FRD, RD, LRD]", "D: [FLD, FD, LD, FRD, RD]")
    error = refused(write(tmp_path, text))
    assert error.key_path == "facelets"
    assert "LRD on face D is missing" in str(error)
    assert error.line == line_of(text, "facelets:") + 1  # the mapping starts on the next line


def test_a_piece_listed_on_a_face_it_has_no_sticker_on(tmp_path):
    text = shipped_text("skewb").replace("U: [U, ULB, UBR, UFL, URF]", "U: [U, ULB, UBR, UFL, DRB]")
    error = refused(write(tmp_path, text))
    assert error.key_path == "facelets.U[4]"
    assert "piece 'DRB' has no sticker on face U" in str(error)


def test_invalid_yaml_and_missing_file_name_the_file(tmp_path):
    error = refused(write(tmp_path, "name: x\nfaces: [unclosed\n"))
    assert "not valid YAML" in str(error) and error.line is not None
    missing = tmp_path / "nowhere.yaml"
    error = refused(missing)
    assert str(missing) in str(error) and "cannot read" in str(error)


def test_unknown_moves_and_impossible_facelets_are_named():
    puzzle = load_puzzle("3x3x3")
    with pytest.raises(PuzzleMoveError, match=r"move 2 'Q' is not a move of 3x3x3"):
        puzzle.parse_moves("R Q")
    two_ups = puzzle.solved_facelets[:20] + "U" + puzzle.solved_facelets[21:]  # F3 of corner URF
    with pytest.raises(PuzzleStateError, match="no corners piece looks like .*place URF"):
        puzzle.from_facelets(two_ups)
    with pytest.raises(PuzzleStateError, match="expected 54 facelets"):
        puzzle.from_facelets("U" * 53)
    assert re.fullmatch(r"[URFDLB]{54}", puzzle.solved_facelets)


# Kociemba's cubie tables of the six face turns, typed in as explicit moves.
EXPLICIT_2X2X2 = """\
name: explicit 2x2x2
faces:
  U: {normal: [0, 1, 0], up: [0, 0, -1], right: [1, 0, 0]}
  R: {normal: [1, 0, 0], up: [0, 1, 0], right: [0, 0, -1]}
  F: {normal: [0, 0, 1], up: [0, 1, 0], right: [1, 0, 0]}
  D: {normal: [0, -1, 0], up: [0, 0, 1], right: [1, 0, 0]}
  L: {normal: [-1, 0, 0], up: [0, 1, 0], right: [0, 0, 1]}
  B: {normal: [0, 0, -1], up: [0, 1, 0], right: [-1, 0, 0]}
orbits:
  corners: {orientations: 3, reference: [U, D], pieces: [URF, UFL, ULB, UBR, DFR, DLF, DBL, DRB]}
moves:
  U: {corners: {permutation: [UBR, URF, UFL, ULB, DFR, DLF, DBL, DRB]}}
  R: {corners: {permutation: [DFR, UFL, ULB, URF, DRB, DLF, DBL, UBR], twist: [2, 0, 0, 1, 1, 0, 0, 2]}}
  F: {corners: {permutation: [UFL, DLF, ULB, UBR, URF, DFR, DBL, DRB], twist: [1, 2, 0, 0, 2, 1, 0, 0]}}
  D: {corners: {permutation: [URF, UFL, ULB, UBR, DLF, DBL, DRB, DFR]}}
  L: {corners: {permutation: [URF, ULB, DBL, UBR, DFR, UFL, DLF, DRB], twist: [0, 1, 2, 0, 0, 2, 1, 0]}}
  B: {corners: {permutation: [URF, UFL, UBR, DRB, DFR, DLF, ULB, DBL], twist: [0, 0, 1, 2, 0, 0, 2, 1]}}
facelets: {grid: 2}
"""


def test_moves_typed_in_as_permutations_equal_the_geometric_ones(tmp_path):
    explicit = Puzzle(write(tmp_path, EXPLICIT_2X2X2))
    geometric = load_puzzle("2x2x2")
    assert list(explicit.moves) == list(geometric.moves)  # U U2 U' R ... with the same powers
    for name, move in explicit.moves.items():
        assert move.order == 4
        assert np.array_equal(move.gather, geometric.moves[name].gather), name
        assert np.array_equal(move.ori_add, geometric.moves[name].ori_add), name


def test_a_bad_explicit_move_is_named(tmp_path):
    text = EXPLICIT_2X2X2.replace("DBL, DRB, DFR]}}", "DBL, DRB, DRB]}}")
    error = refused(write(tmp_path, text))
    assert error.key_path == "moves.D.corners.permutation"
    assert error.line == line_of(text, "  D: {corners")
    text = EXPLICIT_2X2X2.replace("twist: [2, 0, 0, 1, 1, 0, 0, 2]", "twist: [1, 0, 0, 1, 1, 0, 0, 2]")
    error = refused(write(tmp_path, text))
    assert error.key_path == "moves.R" and "2, 3 or 4 times" in str(error)
