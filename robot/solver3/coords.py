"""Coordinates of the two-phase 3x3x3 solver, their move tables and symmetry tables.

Phase 1 (any cube -> the subgroup G1 = <U, D, R2, L2, F2, B2>):
  twist   corner orientations              0..2186   (solved 0)
  flip    edge orientations                0..2047   (solved 0)
  slice   which 4 positions hold the FR FL BL BR edges (0..494) * 24 + their order
Phase 2 (inside G1 -> solved):
  corners corner permutation               0..40319  (lexicographic rank, solved 0)
  ud      permutation of the 8 U/D edges   0..40319
  slice % 24 (order of the slice edges)
The U edges and D edges are followed through phase 1 as two "subset" coordinates
(like slice) and combined into `ud` where phase 2 starts.

Symmetry: the 16 symmetries that keep the U-D axis map phase-1 coordinates to
phase-1 coordinates; (slice set, flip) pairs fall into 64,430 classes, which
shrinks the phase-1 distance table from 2.2e9 to 1.4e8 entries.

The coordinates are numbered by the puzzle engine's rankers (robot/puzzles/coords.py: twist and
flip are orientation ranks, corners and ud permutation ranks, a subset a lexicographic set rank
times 24 plus the order's permutation rank), and the move tables are the engine's, over its 3x3x3
(robot/puzzles/data/3x3x3.yaml, checked against cube3 by tests/test_puzzles.py).
"""

from __future__ import annotations

import numpy as np

import robot.solver3.cube3 as cube3
from ..puzzles import load_puzzle
from ..puzzles.coords import (OrientationComponent, PermutationComponent, PiecesComponent, Space,
                              combination_rank_lexicographic, orientation_rank, permutation_rank,
                              rank_combination_lexicographic, rank_orientation, rank_permutation,
                              unrank_combination_lexicographic, unrank_orientation, unrank_permutation)
from ..puzzles.tables import MoveTables, table_from_states

N_TWIST, N_FLIP, N_SET, N_SUBSET, N_PERM8 = 2187, 2048, 495, 11880, 40320
N_FLIPSLICE = N_SET * N_FLIP
N_MOVES = 18
PHASE2_MOVES = tuple(cube3.MOVE_NAMES.index(m) for m in ("U", "U2", "U'", "D", "D2", "D'", "R2", "L2", "F2", "B2"))
SLICE_PIECES, U_PIECES, D_PIECES = (8, 9, 10, 11), (0, 1, 2, 3), (4, 5, 6, 7)

PERMS8 = unrank_permutation(np.arange(N_PERM8), 8)  # lexicographic: index = rank


def twist_coord(co):
    return rank_orientation(co, 3, constrained=True)


def twist_decode(t):
    return unrank_orientation(t, 8, 3, constrained=True)


def flip_coord(eo):
    return rank_orientation(eo, 2, constrained=True)


def flip_decode(f):
    return unrank_orientation(f, 12, 2, constrained=True)


def _local(pieces) -> np.ndarray:
    """Edge piece -> its index among `pieces` (-1: not one of them)."""
    local = np.full(12, -1, dtype=np.int64)
    local[list(pieces)] = np.arange(len(pieces))
    return local


def set_coord(ep, pieces):
    """Lexicographic rank of the set of positions that hold the 4 edge pieces (subset // 24)."""
    return rank_combination_lexicographic(_local(pieces)[ep] >= 0)


def subset_coord(ep, pieces):
    """Set rank * 24 + order of the positions of 4 edge pieces, from ep (N, 12)."""
    local = _local(pieces)[np.asarray(ep)]
    held = local >= 0
    order = local[held].reshape(len(local), 4)  # which of the 4 pieces comes first, second, ...
    return rank_combination_lexicographic(held) * 24 + rank_permutation(order)


def subset_positions(coord):
    """Positions (N, 4) of the 4 pieces for subset coordinates."""
    coord = np.asarray(coord, dtype=np.int64)
    ascending = np.nonzero(unrank_combination_lexicographic(coord // 24, 12, 4))[1].reshape(len(coord), 4)
    order = unrank_permutation(coord % 24, 4)
    pos = np.empty_like(ascending)
    np.put_along_axis(pos, order, ascending, axis=1)
    return pos


SOLVED_SLICE = int(subset_coord(np.arange(12)[None], SLICE_PIECES)[0])
SOLVED_U = int(subset_coord(np.arange(12)[None], U_PIECES)[0])
SOLVED_D = int(subset_coord(np.arange(12)[None], D_PIECES)[0])
SOLVED_SET = SOLVED_SLICE // 24


def ud_from_subsets(u, d):
    """Phase-2 `ud` coordinate from the U-edge and D-edge subset coordinates (cube in G1)."""
    ep = np.empty((len(u), 8), dtype=np.int64)
    rows = np.arange(len(u))[:, None]
    ep[rows, subset_positions(u)] = np.arange(4)
    ep[rows, subset_positions(d)] = np.arange(4, 8)
    return rank_permutation(ep)


def phase_coords(state):
    """All search coordinates of one cubie state, as Python ints (the one-state rankers: a search's
    start, where numpy's cost per call would outweigh the work)."""
    cp, co, ep, eo = (np.asarray(x).tolist() for x in state)
    return {
        "twist": orientation_rank(co, 3, constrained=True), "flip": orientation_rank(eo, 2, constrained=True),
        "slice": _one_subset(ep, SLICE_PIECES), "corners": permutation_rank(cp),
        "u": _one_subset(ep, U_PIECES), "d": _one_subset(ep, D_PIECES),
    }


def _one_subset(ep: list, pieces) -> int:
    """subset_coord of one cube's edge permutation (a list)."""
    order = [pieces.index(piece) for piece in ep if piece in pieces]
    return combination_rank_lexicographic([piece in pieces for piece in ep]) * 24 + permutation_rank(order)


# ---------------------------------------------------------------------------
# Move tables: table[coord, move] = coordinate after the move.


def build_move_tables(progress=None) -> dict:
    """The puzzle engine's move tables (uint16, (coordinate, move)) of every coordinate above."""
    puzzle = load_puzzle("3x3x3")
    corners, edges = puzzle.orbit("corners"), puzzle.orbit("edges")
    moves = [puzzle.move(name) for name in cube3.MOVE_NAMES]
    # The subset coordinate moves the same whichever 4 pieces it follows.
    space = Space(puzzle, [
        OrientationComponent("twist", corners.ori_slots, 3, constrained=True),
        OrientationComponent("flip", edges.ori_slots, 2, constrained=True),
        PiecesComponent("subset", edges.perm_slots, SLICE_PIECES, ordered=True, lexicographic=True),
        PermutationComponent("corners", corners.perm_slots, range(8), even_only=False),
    ])
    tables = dict(zip(space.names, MoveTables(space, moves).tables))
    if progress:
        progress.update(N_MOVES - len(PHASE2_MOVES))
    # ud is defined inside G1 only: the moves that leave it have no column (zeros).
    ud = np.zeros((N_PERM8, N_MOVES), dtype=np.uint16)
    ud_edges = PermutationComponent("ud", edges.perm_slots[:8], range(8), even_only=False)
    ud[:, PHASE2_MOVES] = table_from_states(puzzle, ud_edges, [moves[m] for m in PHASE2_MOVES])
    if progress:
        progress.update(N_MOVES)
    return {name: table.astype(np.uint16) for name, table in tables.items()} | {"ud": ud}


def build_symmetry_tables(progress=None) -> dict:
    """Phase-1 symmetry classes of (slice set, flip), and twist seen through each symmetry."""
    # One cube per (slice set, flip): slice edges in the set (in order), other edges in order.
    sets = np.repeat(np.arange(N_SET), N_FLIP)
    flips = np.tile(np.arange(N_FLIP), N_SET)
    ep = np.empty((N_FLIPSLICE, 12), dtype=np.int64)
    slice_pos = np.nonzero(unrank_combination_lexicographic(sets, 12, 4))[1].reshape(N_FLIPSLICE, 4)
    rows = np.arange(N_FLIPSLICE)[:, None]
    ep[rows, slice_pos] = np.array(SLICE_PIECES)
    free = np.ones((N_FLIPSLICE, 12), dtype=bool)
    free[rows, slice_pos] = False
    ep[free] = np.tile(np.arange(8), N_FLIPSLICE)
    eo = flip_decode(flips)
    n = N_FLIPSLICE
    solved_c = (np.tile(np.arange(8), (n, 1)), np.zeros((n, 8), dtype=np.int64))
    conj = np.empty((N_FLIPSLICE, cube3.N_SYM), dtype=np.int32)
    co = twist_decode(np.arange(N_TWIST))
    twist_conj = np.empty((N_TWIST, cube3.N_SYM), dtype=np.uint16)
    for s in range(cube3.N_SYM):
        for lo in range(0, n, 1 << 18):
            hi = min(n, lo + (1 << 18))
            colours = cube3.colours_from_cubies(solved_c[0][lo:hi], solved_c[1][lo:hi], ep[lo:hi], eo[lo:hi])
            e2, o2, ok = cube3.edges_from_colours(cube3.conjugate_colours(colours, s))
            assert ok.all()
            conj[lo:hi, s] = set_coord(e2, SLICE_PIECES) * N_FLIP + flip_coord(o2)
        colours = cube3.colours_from_cubies(np.tile(np.arange(8), (N_TWIST, 1)), co,
                                            np.tile(np.arange(12), (N_TWIST, 1)), np.zeros((N_TWIST, 12), np.int64))
        c2, o2, ok = cube3.corners_from_colours(cube3.conjugate_colours(colours, s))
        assert ok.all()
        twist_conj[:, s] = twist_coord(o2)
        if progress:
            progress.update(s + 1)
    rep_of = conj.min(1)
    sym_of = conj.argmin(1).astype(np.uint8)
    reps = np.unique(rep_of).astype(np.uint32)
    class_of = np.searchsorted(reps, rep_of).astype(np.uint16)
    stabiliser = ((conj[reps] == reps[:, None]) * (1 << np.arange(cube3.N_SYM))).sum(1).astype(np.uint16)
    return {"class_of": class_of, "sym_of": sym_of, "reps": reps, "stabiliser": stabiliser,
            "twist_conj": twist_conj}
