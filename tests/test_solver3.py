"""3x3x3 model, validation and coordinate tables (fast; the full tables are not built here)."""

import numpy as np
import pytest

from robot.solver3 import coords as C
from robot.solver3 import cube3


def test_r_move_matches_kociemba_layout():
    state = cube3.apply(cube3.solved(), cube3.parse_moves("R"))
    assert cube3.to_facelets(state) == "UUFUUFUUFRRRRRRRRRFFDFFDFFDDDBDDBDDBLLLLLLLLLUBBUBBUBB"


def test_facelets_round_trip_and_move_order():
    rng = np.random.default_rng(1)
    for _ in range(200):
        state = cube3.random_state(rng)
        parsed, centres = cube3.parse_facelets(cube3.to_facelets(state, "WRGYOB"))
        assert centres == "WRGYOB"
        assert all((a == b).all() for a, b in zip(parsed, state))
    for m in range(18):
        state = cube3.apply(cube3.solved(), [m] * 4)
        assert cube3.to_facelets(state) == cube3.SOLVED_FACELETS


def test_mirror_symmetry_conjugates_r_to_l_inverse():
    colours = cube3.colours_from_cubies(*(np.asarray(x)[None] for x in cube3.apply(cube3.solved(), [3])))
    mirror = next(i for i, m in enumerate(cube3.SYMMETRIES) if round(np.linalg.det(m)) == -1
                  and (m == np.diag([-1, 1, 1])).all())
    seen = "".join("URFDLB"[f] for f in cube3.conjugate_colours(colours, mirror)[0])
    assert seen == cube3.to_facelets(cube3.apply(cube3.solved(), cube3.parse_moves("L'")))


def _swap(text, i, j):
    s = list(text)
    s[i], s[j] = s[j], s[i]
    return "".join(s)


@pytest.mark.parametrize("make, error", [
    (lambda f: f[:53], cube3.LengthError),
    (lambda f: "R" + f[1:], cube3.ColourCountError),
    (lambda f: _swap(f, 0, 13), cube3.CentreError),  # two centres show U
    (lambda f: _swap(f, 8, 9), cube3.ImpossibleCornerError),  # URF corner in mirror order
    (lambda f: _swap(f, 5, 10), cube3.FlippedEdgeError),       # UR edge flipped
    (lambda f: f[:8] + "R" + "F" + f[10:20] + "U" + f[21:], cube3.TwistedCornerError),
])
def test_validation_names_the_problem(make, error):
    with pytest.raises(error):
        cube3.parse_facelets(make(cube3.SOLVED_FACELETS))


def test_duplicate_and_parity_errors():
    solved = cube3.SOLVED_FACELETS
    # Swap the UR and UF edges' stickers: a lone edge swap is a parity error.
    swapped = list(solved)
    for a, b in zip(cube3.EDGE_FACELETS[0], cube3.EDGE_FACELETS[1]):
        swapped[a], swapped[b] = swapped[b], swapped[a]
    with pytest.raises(cube3.ParityError):
        cube3.parse_facelets("".join(swapped))
    # Copy UF onto UR (and UR's colours elsewhere): UF twice.
    dup = list(solved)
    for a, b in zip(cube3.EDGE_FACELETS[0], cube3.EDGE_FACELETS[1]):
        dup[a] = solved[b]
    for a, b in zip(cube3.EDGE_FACELETS[7], cube3.EDGE_FACELETS[0]):
        dup[a] = solved[b]
    with pytest.raises(cube3.Cube3Error) as info:
        cube3.parse_facelets("".join(dup))
    assert isinstance(info.value, (cube3.DuplicateEdgeError, cube3.ImpossibleEdgeError, cube3.ColourCountError))


def test_move_tables_agree_with_cubie_moves():
    tables = C.build_move_tables()
    rng = np.random.default_rng(0)
    for _ in range(300):
        state = cube3.random_state(rng)
        m = int(rng.integers(18))
        a = C.phase_coords(state)
        b = C.phase_coords(cube3.multiply(state, cube3.move(m)))
        assert tables["twist"][a["twist"], m] == b["twist"]
        assert tables["flip"][a["flip"], m] == b["flip"]
        for key in ("slice", "u", "d"):
            assert tables["subset"][a[key], m] == b[key]
        assert tables["corners"][a["corners"], m] == b["corners"]
