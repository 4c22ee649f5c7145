"""The legal-cube search for the 3x3x3: the best legal cube for given sticker costs, and the next-best ones.

The centres fix the colour scheme (colour class k is the colour of face k's
centre, faces U R F D L B), so a legal cube is: 8 distinct corner pieces,
12 distinct edge pieces, corner twists summing to 0 mod 3, edge flips to 0
mod 2, and corner and edge permutations of the same parity.  Nine stickers
per colour comes for free.

Each orbit (corners, edges) is searched exactly by a dynamic programme over
its positions, in order, whose state is (pieces used, orientation sum, parity
of the permutation so far); the two orbits meet only in the parity, so the
best cube is the best corners + best edges of one parity.  The next-best cubes
(for the decoder's margin): for every position, the best legal cube whose
piece or orientation differs there -- any other legal cube differs from the
best somewhere, so the second best is among them.
Placements follow robot.solver3.cube3 (cp/co/ep/eo, colours_from_cubies).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from ..solver3.cube3 import CORNER_COLOURS, CORNER_FACELETS, EDGE_COLOURS, EDGE_FACELETS, FACELET_COUNT

COLOURS = 6
CENTRES = np.array([9 * f + 4 for f in range(COLOURS)])
_CF, _EF = np.array(CORNER_FACELETS), np.array(EDGE_FACELETS)  # (8, 3), (12, 2) facelets of each position
# _CC[piece, twist, k]: colour class on facelet k of a position holding `piece` with `twist` (and edges).
_CC = np.array([[[CORNER_COLOURS[p][(k - t) % 3] for k in range(3)] for t in range(3)] for p in range(8)])
_EC = np.array([[[EDGE_COLOURS[p][(k - f) % 2] for k in range(2)] for f in range(2)] for p in range(12)])


@functools.cache
def _levels(n: int):
    """Per position p: the piece sets after placing p+1 pieces, their predecessors, and the parity each adds.

    Positions are filled in order, so the piece placed at position p makes an
    inversion with every earlier piece greater than it.
    """
    index_of = {0: 0}
    levels = []
    for size in range(1, n + 1):
        masks = [sum(1 << j for j in c) for c in itertools.combinations(range(n), size)]
        pieces = np.array([[j for j in range(n) if m >> j & 1] for m in masks])
        before = [[m ^ (1 << j) for j in row] for m, row in zip(masks, pieces)]
        pred = np.array([[index_of[b] for b in row] for row in before])
        toggle = np.array([[bin(b >> (j + 1)).count("1") & 1 for b, j in zip(row, prow)]
                           for row, prow in zip(before, pieces)], dtype=bool)
        levels.append((pred, pieces, toggle))
        index_of = {m: i for i, m in enumerate(masks)}
    return levels


def _orbit_tables(costs: np.ndarray):
    """Forward pass for a batch of (B, n positions, n pieces, m orientations) placement costs.

    Returns the kept tables: tables[p][set, residue, parity, b] is the best cost
    of filling positions 0..p-1 with that set of pieces.
    """
    batch, n, _, m = costs.shape
    by_position = np.ascontiguousarray(np.moveaxis(costs, 0, -1))  # (position, piece, orientation, batch)
    table = np.full((1, m, 2, batch), np.inf)
    table[0, 0, 0] = 0.0
    tables = [table]
    for position, (pred, pieces, toggle) in enumerate(_levels(n)):
        before = table[pred]  # (sets, new piece, residue, parity, batch)
        before = np.where(toggle[:, :, None, None, None], before[:, :, :, ::-1], before)
        place = by_position[position][pieces]  # (sets, new piece, orientation, batch)
        best = before + place[:, :, 0, None, None, :]
        for o in range(1, m):  # new residue r comes from residue (r - o) % m
            np.minimum(best, np.roll(before, o, axis=2) + place[:, :, o, None, None, :], out=best)
        table = best.min(axis=1)
        tables.append(table)
    return tables, by_position


def _orbit_choice(tables, by_position, parity: np.ndarray):
    """Backward pass: (pieces (B, n), orientations (B, n)) of each batch entry's best at `parity` (B,)."""
    n, m, batch = by_position.shape[0], by_position.shape[2], by_position.shape[3]
    everyone = np.arange(batch)
    pieces_out = np.zeros((batch, n), dtype=int)
    orient_out = np.zeros((batch, n), dtype=int)
    mask = np.zeros(batch, dtype=int)
    residue = np.zeros(batch, dtype=int)
    parity = np.asarray(parity, dtype=int).copy()
    orientations = np.arange(m)[None, None, :]
    for position in range(n - 1, -1, -1):
        pred, pieces, toggle = _levels(n)[position]
        piece, came_from, before_parity = pieces[mask], pred[mask], parity[:, None] ^ toggle[mask]
        cand = (tables[position][came_from[:, :, None], (residue[:, None, None] - orientations) % m,
                                 before_parity[:, :, None], everyone[:, None, None]]
                + by_position[position][piece[:, :, None], orientations, everyone[:, None, None]])
        i, o = np.divmod(cand.reshape(batch, -1).argmin(axis=1), m)
        pieces_out[:, position] = piece[everyone, i]
        orient_out[:, position] = o
        residue = (residue - o) % m
        parity = before_parity[everyone, i]
        mask = came_from[everyone, i]
    return pieces_out, orient_out


def placement_costs(sticker_cost: np.ndarray):
    """(8, 8, 3) corner and (12, 12, 2) edge placement costs from (54, 6) sticker costs."""
    c = np.asarray(sticker_cost, dtype=float)
    corner = c[_CF[:, None, None, :], _CC[None, :, :, :]].sum(axis=-1)
    edge = c[_EF[:, None, None, :], _EC[None, :, :, :]].sum(axis=-1)
    return corner, edge


def labels_of(cp, co, ep, eo) -> np.ndarray:
    """(B, 54) colour class of each facelet (centres: their own face) from (B, 8) and (B, 12) cubie arrays."""
    cp, co, ep, eo = (np.atleast_2d(x) for x in (cp, co, ep, eo))
    labels = np.empty((len(cp), FACELET_COUNT), dtype=int)
    labels[:, CENTRES] = np.arange(COLOURS)
    labels[:, _CF] = _CC[cp, co]
    labels[:, _EF] = _EC[ep, eo]
    return labels


def _parity(perm: np.ndarray) -> np.ndarray:
    """(B,) permutation parity of each row."""
    i, j = np.triu_indices(perm.shape[1], 1)
    return np.count_nonzero(perm[:, i] > perm[:, j], axis=1) % 2


def _cheapest(costs: np.ndarray):
    """Each position at its cheapest placement: (pieces, orientations, total) of (B, n, n, m) costs."""
    batch, n, _, m = costs.shape
    flat = costs.reshape(batch, n, -1)
    choice = flat.argmin(axis=2)
    return choice // m, choice % m, np.take_along_axis(flat, choice[..., None], axis=2)[..., 0].sum(axis=1)


def _legal_orbit(pieces, orientations, m) -> np.ndarray:
    ordered = np.sort(pieces, axis=1)
    return (ordered[:, 1:] != ordered[:, :-1]).all(axis=1) & (orientations.sum(axis=1) % m == 0)


@functools.cache
def _solved_cube_check() -> None:
    """The placement tables agree with cube3 (the solved cube labels each facelet with its own face)."""
    labels = labels_of(np.arange(8), np.zeros(8, int), np.arange(12), np.zeros(12, int))[0]
    assert (labels == np.arange(FACELET_COUNT) // 9).all()


def best_legal(sticker_cost: np.ndarray):
    """The legal cube with the smallest summed sticker cost: (cost, labels (54,), (cp, co, ep, eo)).

    sticker_cost: (54, 6) cost of giving each facelet each colour class (a centre's own
    class is forced).  Exact.
    """
    _solved_cube_check()
    corner, edge = placement_costs(sticker_cost)
    cp, co, c_total = _cheapest(corner[None])
    ep, eo, e_total = _cheapest(edge[None])
    # Usual for clean readings: the cheapest placements already form a legal cube.
    if (_legal_orbit(cp, co, 3) & _legal_orbit(ep, eo, 2) & (_parity(cp) == _parity(ep)))[0]:
        cost = float(c_total[0] + e_total[0]) + float(sticker_cost[CENTRES, np.arange(COLOURS)].sum())
        return cost, labels_of(cp, co, ep, eo)[0], (cp[0], co[0], ep[0], eo[0])
    c_tables, c_by = _orbit_tables(corner[None])
    e_tables, e_by = _orbit_tables(edge[None])
    c_best, e_best = c_tables[-1][0, 0, :, 0], e_tables[-1][0, 0, :, 0]  # (2 parities)
    parity = int(np.argmin(c_best + e_best))
    cp, co = _orbit_choice(c_tables, c_by, np.array([parity]))
    ep, eo = _orbit_choice(e_tables, e_by, np.array([parity]))
    cost = float(c_best[parity] + e_best[parity]) + float(sticker_cost[CENTRES, np.arange(COLOURS)].sum())
    return cost, labels_of(cp, co, ep, eo)[0], (cp[0], co[0], ep[0], eo[0])


def alternatives(sticker_cost: np.ndarray, best, limit: float = np.inf):
    """For every corner and edge position, the best legal cube that differs from `best` there.

    best: (cp, co, ep, eo) of the best cube.  Returns (costs (K,), labels (K, 54)) of
    those cheaper than `limit` (duplicates possible; the caller keeps distinct ones).
    A position is searched only if its lower bound (every other position at its
    cheapest placement, this one at its cheapest different one) is below `limit`:
    for a clean scan usually none is, and no search runs.
    """
    cp, co, ep, eo = (np.asarray(x) for x in best)
    corner, edge = placement_costs(sticker_cost)
    centre_cost = float(sticker_cost[CENTRES, np.arange(COLOURS)].sum())
    c_cheapest, e_cheapest = corner.reshape(8, -1).min(axis=1), edge.reshape(12, -1).min(axis=1)
    c_other, e_other = corner.copy(), edge.copy()
    c_other[np.arange(8), cp, co] = np.inf
    e_other[np.arange(12), ep, eo] = np.inf
    base = c_cheapest.sum() + e_cheapest.sum() + centre_cost
    c_at = np.flatnonzero(base - c_cheapest + c_other.reshape(8, -1).min(axis=1) < limit)
    e_at = np.flatnonzero(base - e_cheapest + e_other.reshape(12, -1).min(axis=1) < limit)
    if len(c_at) == 0 and len(e_at) == 0:
        return np.empty(0), np.empty((0, FACELET_COUNT), dtype=int)
    c_batch = np.repeat(corner[None], 1 + len(c_at), axis=0)  # entry 0: unchanged; 1 + k: differs at c_at[k]
    c_batch[1 + np.arange(len(c_at)), c_at, cp[c_at], co[c_at]] = np.inf
    e_batch = np.repeat(edge[None], 1 + len(e_at), axis=0)
    e_batch[1 + np.arange(len(e_at)), e_at, ep[e_at], eo[e_at]] = np.inf
    c_tables, c_by = _orbit_tables(c_batch)
    e_tables, e_by = _orbit_tables(e_batch)
    c_best, e_best = c_tables[-1][0, 0].T, e_tables[-1][0, 0].T  # (batch, 2 parities)
    # Corner entries take the unchanged edges' best of the same parity, and vice versa.
    c_totals = c_best[1:] + e_best[0][None]
    e_totals = e_best[1:] + c_best[0][None]
    c_parity, e_parity = c_totals.argmin(axis=1), e_totals.argmin(axis=1)
    costs = np.concatenate([c_totals.min(axis=1), e_totals.min(axis=1)]) + centre_cost
    keep = costs < limit
    if not keep.any():
        return np.empty(0), np.empty((0, FACELET_COUNT), dtype=int)
    # Each entry's own orbit at its parity; the other orbit's unchanged best at that parity.
    alt_cp, alt_co = _orbit_choice(c_tables, c_by, np.concatenate([[0], c_parity]))
    alt_ep, alt_eo = _orbit_choice(e_tables, e_by, np.concatenate([[0], e_parity]))
    odd_cp, odd_co = _orbit_choice(c_tables, c_by, np.ones(len(c_batch), dtype=int))  # entry 0 at parity 1
    odd_ep, odd_eo = _orbit_choice(e_tables, e_by, np.ones(len(e_batch), dtype=int))
    edges = [(odd_ep[0], odd_eo[0]) if p else (alt_ep[0], alt_eo[0]) for p in c_parity]
    corners = [(odd_cp[0], odd_co[0]) if p else (alt_cp[0], alt_co[0]) for p in e_parity]
    def rows(pairs, k, n):  # (len(pairs), n) of the k-th array of each pair (0 rows if none)
        return np.array([pair[k] for pair in pairs], dtype=int).reshape(-1, n)

    labels = np.concatenate([labels_of(alt_cp[1:], alt_co[1:], rows(edges, 0, 12), rows(edges, 1, 12)),
                             labels_of(rows(corners, 0, 8), rows(corners, 1, 8), alt_ep[1:], alt_eo[1:])])
    return costs[keep], labels[keep]
