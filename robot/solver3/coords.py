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
"""

from __future__ import annotations

import itertools

import numpy as np

import robot.solver3.cube3 as cube3

N_TWIST, N_FLIP, N_SET, N_SUBSET, N_PERM8 = 2187, 2048, 495, 11880, 40320
N_FLIPSLICE = N_SET * N_FLIP
N_MOVES = 18
PHASE2_MOVES = tuple(cube3.MOVE_NAMES.index(m) for m in ("U", "U2", "U'", "D", "D2", "D'", "R2", "L2", "F2", "B2"))
SLICE_PIECES, U_PIECES, D_PIECES = (8, 9, 10, 11), (0, 1, 2, 3), (4, 5, 6, 7)

COMBINATIONS = np.array(list(itertools.combinations(range(12), 4)))  # set rank -> ascending positions
_MASK_RANK = np.full(4096, -1, dtype=np.int64)
_MASK_RANK[(1 << COMBINATIONS).sum(1)] = np.arange(N_SET)
PERM4 = np.array(list(itertools.permutations(range(4))))
_PERM4_RANK = np.zeros(256, dtype=np.int64)
_PERM4_RANK[(PERM4 * np.array([64, 16, 4, 1])).sum(1)] = np.arange(24)
PERMS8 = np.array(list(itertools.permutations(range(8))))  # lexicographic: index = rank


def perm_rank(p: np.ndarray) -> np.ndarray:
    """Lexicographic rank of each row of p (N, n), a permutation of 0..n-1."""
    n = p.shape[1]
    rank = np.zeros(len(p), dtype=np.int64)
    for i in range(n):
        rank = rank * (n - i) + (p[:, i + 1:] < p[:, i:i + 1]).sum(1)
    return rank


def twist_coord(co):
    return (co[:, :7] * 3 ** np.arange(6, -1, -1)).sum(1)


def twist_decode(t):
    co = np.zeros((len(t), 8), dtype=np.int64)
    for i in range(6, -1, -1):
        co[:, i] = t % 3
        t = t // 3
    co[:, 7] = (-co[:, :7].sum(1)) % 3
    return co


def flip_coord(eo):
    return (eo[:, :11] * 2 ** np.arange(10, -1, -1)).sum(1)


def flip_decode(f):
    eo = np.zeros((len(f), 12), dtype=np.int64)
    for i in range(10, -1, -1):
        eo[:, i] = f % 2
        f = f // 2
    eo[:, 11] = eo[:, :11].sum(1) % 2
    return eo


def subset_coord(ep, pieces):
    """Set rank * 24 + order of the positions of 4 edge pieces, from ep (N, 12)."""
    pos = np.argsort(ep, axis=1)[:, list(pieces)]
    return subset_from_positions(pos)


def subset_from_positions(pos):
    mask = (1 << pos).sum(1)
    order = np.argsort(pos, axis=1)  # which of the 4 pieces comes first, second, ...
    return _MASK_RANK[mask] * 24 + _PERM4_RANK[(order * np.array([64, 16, 4, 1])).sum(1)]


def subset_positions(coord):
    """Positions (N, 4) of the 4 pieces for subset coordinates."""
    coord = np.asarray(coord, dtype=np.int64)
    ascending = COMBINATIONS[coord // 24]
    order = PERM4[coord % 24]
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
    return perm_rank(ep)


def phase_coords(state):
    """All search coordinates of one cubie state, as Python ints."""
    cp, co, ep, eo = (np.asarray(x)[None] for x in state)
    return {
        "twist": int(twist_coord(co)[0]), "flip": int(flip_coord(eo)[0]),
        "slice": int(subset_coord(ep, SLICE_PIECES)[0]), "corners": int(perm_rank(cp)[0]),
        "u": int(subset_coord(ep, U_PIECES)[0]), "d": int(subset_coord(ep, D_PIECES)[0]),
    }


# ---------------------------------------------------------------------------
# Move tables: table[coord, move] = coordinate after the move.


def _move_perm_inverse(m):
    return np.argsort(cube3.MOVES[2][m]), np.argsort(cube3.MOVES[0][m])


def build_move_tables(progress=None) -> dict:
    cmp, cmo, emp, emo = cube3.MOVES
    twist = np.empty((N_TWIST, N_MOVES), dtype=np.uint16)
    flip = np.empty((N_FLIP, N_MOVES), dtype=np.uint16)
    subset = {name: np.empty((N_SUBSET, N_MOVES), dtype=np.uint16) for name in ("slice", "u", "d")}
    corners = np.empty((N_PERM8, N_MOVES), dtype=np.uint16)
    ud = np.zeros((N_PERM8, N_MOVES), dtype=np.uint16)
    co = twist_decode(np.arange(N_TWIST))
    eo = flip_decode(np.arange(N_FLIP))
    pos = subset_positions(np.arange(N_SUBSET))
    for m in range(N_MOVES):
        twist[:, m] = twist_coord((co[:, cmp[m]] + cmo[m]) % 3)
        flip[:, m] = flip_coord((eo[:, emp[m]] + emo[m]) % 2)
        where = np.argsort(emp[m])  # the piece at position p moves to where[p]
        moved = subset_from_positions(where[pos])
        for name in subset:
            subset[name][:, m] = moved
        corners[:, m] = perm_rank(PERMS8[:, cmp[m]])
        if m in PHASE2_MOVES:
            ud[:, m] = perm_rank(PERMS8[:, emp[m][:8]])
        if progress:
            progress.update(m + 1)
    # The subset coordinate moves the same whichever 4 pieces it follows.
    return {"twist": twist, "flip": flip, "subset": subset["slice"], "corners": corners, "ud": ud}


def build_symmetry_tables(progress=None) -> dict:
    """Phase-1 symmetry classes of (slice set, flip), and twist seen through each symmetry."""
    # One cube per (slice set, flip): slice edges in the set (in order), other edges in order.
    sets = np.repeat(np.arange(N_SET), N_FLIP)
    flips = np.tile(np.arange(N_FLIP), N_SET)
    ep = np.empty((N_FLIPSLICE, 12), dtype=np.int64)
    slice_pos = COMBINATIONS[sets]
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
            conj[lo:hi, s] = (subset_coord(e2, SLICE_PIECES) // 24) * N_FLIP + flip_coord(o2)
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
