"""The cube model: geometry, moves, validation errors."""

import numpy as np
import pytest

from robot import cube
from robot.cube import (
    CORNER_FACELETS, MOVES, SOLVED, SOLVED_FACELETS, apply_moves, facelet_index, parse_facelets,
)

# Kociemba's published 2x2x2 tables (typed in independently of our geometry).
KOCIEMBA_CORNER_FACELETS = [
    ["U4", "R1", "F2"], ["U3", "F1", "L2"], ["U1", "L1", "B2"], ["U2", "B1", "R2"],
    ["D2", "F4", "R3"], ["D1", "L4", "F3"], ["D3", "B4", "L3"], ["D4", "R4", "B3"],
]
KOCIEMBA_MOVES = {
    "U": ((3, 0, 1, 2, 4, 5, 6, 7), (0,) * 8),
    "R": ((4, 1, 2, 0, 7, 5, 6, 3), (2, 0, 0, 1, 1, 0, 0, 2)),
    "F": ((1, 5, 2, 3, 0, 4, 6, 7), (1, 2, 0, 0, 2, 1, 0, 0)),
    "D": ((0, 1, 2, 3, 5, 6, 7, 4), (0,) * 8),
    "L": ((0, 2, 6, 3, 4, 1, 5, 7), (0, 1, 2, 0, 0, 2, 1, 0)),
    "B": ((0, 1, 3, 7, 4, 5, 2, 6), (0, 0, 1, 2, 0, 0, 2, 1)),
}


def test_corner_facelets_match_kociemba():
    assert [[cube.facelet_name(i) for i in c] for c in CORNER_FACELETS] == KOCIEMBA_CORNER_FACELETS


@pytest.mark.parametrize("name", list(KOCIEMBA_MOVES))
def test_face_moves_match_kociemba(name):
    cp, co = KOCIEMBA_MOVES[name]
    assert MOVES[name] == cube.CubieCube(cp, co)


def test_move_orders_and_inverses():
    for name in "URFDLBxyz":
        m = MOVES[name]
        assert m * m * m * m == SOLVED
        assert m * MOVES[name + "'"] == SOLVED
        assert m * m == MOVES[name + "2"]
        assert apply_moves(apply_moves(SOLVED_FACELETS, name), name + "'") == SOLVED_FACELETS


def test_facelet_and_cubie_moves_agree():
    rng = np.random.default_rng(1)
    names = list(MOVES)
    for _ in range(50):
        seq = [names[i] for i in rng.integers(0, len(names), 12)]
        state = SOLVED.apply(seq)
        assert state.to_facelets() == apply_moves(SOLVED_FACELETS, seq)


def test_layer_identity_on_2x2():
    # No middle layer: L is R followed by the rotation x'.
    assert MOVES["L"] == MOVES["R"] * MOVES["x'"]
    assert MOVES["U"] == MOVES["D"] * MOVES["y"]


def test_rotations_are_solved_and_canonical_is_identity():
    for r in cube.ROTATIONS:
        assert r.is_solved()
        assert r.canonical() == SOLVED
    assert not MOVES["R"].is_solved()


def test_parse_round_trip_with_any_symbols():
    rng = np.random.default_rng(2)
    for _ in range(100):
        state = cube.random_state(rng)
        symbols = "".join(rng.permutation(list("wyrogb")))
        text = state.to_facelets(symbols)
        parsed = parse_facelets(text)
        assert parsed.cubie == state
        assert parsed.cubie.to_facelets(parsed.colours) == text


def test_mirror_image_scheme_is_valid():
    # Swap the R and L colours everywhere: a mirror-image colour scheme.
    text = apply_moves(SOLVED_FACELETS, "R U F' D2 L B'").translate(str.maketrans("RL", "LR"))
    parsed = parse_facelets(text)
    assert parsed.cubie.to_facelets(parsed.colours) == text
    assert sorted(parsed.colours) == sorted("URFDLB")


def test_parse_moves_errors_name_the_token():
    with pytest.raises(cube.MoveError, match="move 2 'Q'"):
        cube.parse_moves("R Q")
    assert cube.parse_moves("R2' U’") == ["R2", "U'"]


def _swap(text, a, b):
    chars = list(text)
    i, j = facelet_index(a), facelet_index(b)
    chars[i], chars[j] = chars[j], chars[i]
    return "".join(chars)


def test_length_error():
    with pytest.raises(cube.LengthError, match="got 23"):
        parse_facelets(SOLVED_FACELETS[:-1])


def test_colour_count_errors():
    with pytest.raises(cube.ColourCountError, match="exactly 6 colours, found 7") as info:
        parse_facelets(SOLVED_FACELETS[:-1] + "X")  # a typo in the last sticker: it is named
    assert "'X' x1 at B4" in str(info.value) and "'B' x3 at B1 B2 B3" in str(info.value)
    assert "'U' x4," in str(info.value)  # colours seen 4 times are not listed by position
    assert set(info.value.facelets) == {"B1", "B2", "B3", "B4"}
    text = "F" + SOLVED_FACELETS[1:]  # one U sticker painted F: U x3, F x5
    with pytest.raises(cube.ColourCountError, match="'U' appears 3 times") as info:
        parse_facelets(text)
    assert "'F' appears 5 times" in str(info.value)
    assert set(info.value.facelets) == {"U1", "U2", "U3", "U4", "F1", "F2", "F3", "F4"}


def test_corner_with_two_of_one_colour():
    # U4 (URF) and F1 (UFL) swapped: URF gets two F stickers... check exact names.
    text = _swap(SOLVED_FACELETS, "U4", "F1")
    with pytest.raises(cube.ImpossibleCornerError) as info:
        parse_facelets(text)
    assert "URF" in str(info.value) and "U4" in str(info.value)


def test_two_corners_with_swapped_side_stickers_are_mirrored():
    text = _swap(SOLVED_FACELETS, "R1", "L1")  # URF: U,L,F; ULB: U,R,B -> legal sets, mirrored
    with pytest.raises(cube.MirroredCornerError) as info:
        parse_facelets(text)
    assert set(info.value.corners) == {"URF", "ULB"}


def test_opposite_colours_named():
    # Swap U4 (URF) with B4 (DBL): URF = B, R, F -> B and F are opposite.
    text = _swap(SOLVED_FACELETS, "U4", "B4")
    with pytest.raises(cube.ImpossibleCornerError, match="opposite colours") as info:
        parse_facelets(text)
    assert "URF" in info.value.corners or "DBL" in info.value.corners
    assert any(f in info.value.facelets for f in ("U4", "B4"))


def test_mirrored_corner():
    text = _swap(SOLVED_FACELETS, "R1", "F2")  # URF stickers in mirror order
    with pytest.raises(cube.MirroredCornerError, match="URF") as info:
        parse_facelets(text)
    assert info.value.corners == ("URF",)
    assert set(info.value.facelets) == {"U4", "R1", "F2"}


def test_duplicate_corner():
    # URF twice (URF at URF and DLB's slot holding a URF piece) with counts still 4 each:
    # pieces URF, URF, UBR, UFL, DLB, DLB, DRB... build from cubies directly.
    state = cube.CubieCube((0, 1, 2, 3, 4, 5, 6, 7), (0,) * 8)
    text = list(state.to_facelets())
    # Repaint ULB (U,L,B) as URF (U,R,F) and DFR (D,F,R) as DLB (D,L,B): counts stay 4 each.
    for facelet, colour in zip(CORNER_FACELETS[2], "URF"):
        text[facelet] = colour
    for facelet, colour in zip(CORNER_FACELETS[4], "DBL"):
        text[facelet] = colour
    with pytest.raises(cube.DuplicateCornerError) as info:
        parse_facelets("".join(text))
    assert set(info.value.corners) in ({"URF", "ULB"}, {"DFR", "DBL"})


def test_twisted_corner():
    state = cube.CubieCube(tuple(range(8)), (1, 0, 0, 0, 0, 0, 0, 0))
    with pytest.raises(cube.TwistedCornerError, match="sum to 1") as info:
        parse_facelets(state.to_facelets())
    assert info.value.corners == ("URF",)


def test_random_strings_never_crash():
    rng = np.random.default_rng(3)
    valid = 0
    for _ in range(3000):
        kind = rng.integers(0, 3)
        if kind == 0:
            text = "".join(rng.choice(list("URFDLBx"), rng.integers(20, 27)))
        elif kind == 1:
            text = "".join(rng.permutation(list(SOLVED_FACELETS)))
        else:
            text = cube.random_state(rng).to_facelets()
            i, j = rng.integers(0, 24, 2)
            text = _swap(text, cube.facelet_name(i), cube.facelet_name(j))
        try:
            parsed = parse_facelets(text)
        except cube.CubeError as exc:
            assert str(exc).startswith(type(exc).__name__ + ": ")
        else:
            valid += 1
            assert parsed.cubie.to_facelets(parsed.colours) == text
    assert valid > 0
