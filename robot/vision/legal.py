"""The legal-cube search: the best legal 2x2x2 cube for given sticker costs.

A legal cube here: 6 colours of exactly 4 stickers, 8 distinct corners of one
handedness, twists summing to 0 mod 3, in any of the 30 colour schemes (which
colours are opposite, and handedness; mirror-image schemes included).

For each scheme a dynamic programme over corner positions x (piece, twist)
whose state is (pieces used, twist sum mod 3) finds the exact best cube;
schemes whose lower bound cannot win are skipped.  Exactly 4 stickers per
colour comes for free.  `alternatives` finds the best cubes that differ from
a given one (for the decoder's confidence margin).
"""

from __future__ import annotations

import itertools

import numpy as np

from ..cube import CORNER_FACELETS, FACELET_COUNT, FACES, _PIECE_FACES

COLOURS = 6
PER_COLOUR = 4
CORNERS = len(CORNER_FACELETS)
STICKERS = np.array(CORNER_FACELETS)  # (8 positions, 3 facelets)

def _schemes() -> np.ndarray:
    """(30, 6): for each colour scheme, the colour class on faces U R F D L B.

    One representative per scheme up to whole-cube rotation: class 0 on U, the
    smallest remaining class on F, then the opposite classes and the two
    handednesses (R/L order).  Mirror-image schemes are included.
    """
    out = []
    for down in range(1, COLOURS):
        rest = [c for c in range(1, COLOURS) if c != down]
        front = rest[0]
        for back in rest[1:]:
            right, left = [c for c in rest if c not in (front, back)]
            for r, l in ((right, left), (left, right)):
                by_face = {"U": 0, "D": down, "F": front, "B": back, "R": r, "L": l}
                out.append([by_face[f] for f in FACES])
    return np.array(out)


SCHEMES = _schemes()
# _CLASS[s, piece, twist, k]: colour class on facelet k of a corner position
# holding `piece` with `twist`, under scheme s (as in CubieCube.to_facelets).
_CLASS = np.array([
    [[[scheme[FACES.index(_PIECE_FACES[piece][(k - twist) % 3])] for k in range(3)]
      for twist in range(3)] for piece in range(CORNERS)]
    for scheme in SCHEMES
])


def _levels():
    """Per corner position p: the piece sets after placing p+1 pieces, with predecessors."""
    index_of = {0: 0}
    levels = []
    for size in range(1, CORNERS + 1):
        masks = [sum(1 << j for j in c) for c in itertools.combinations(range(CORNERS), size)]
        pieces = np.array([[j for j in range(CORNERS) if m >> j & 1] for m in masks])
        pred = np.array([[index_of[m ^ (1 << j)] for j in row] for m, row in zip(masks, pieces)])
        levels.append((pred, pieces))
        index_of = {m: i for i, m in enumerate(masks)}
    return levels


_LEVELS = _levels()


# Each placement's ordered colour triple, as an index into its position's (6, 6, 6) triple costs.
_TRIPLE_INDEX = (np.arange(CORNERS)[None, :, None, None] * COLOURS**3 + _CLASS[:, None, :, :, 0] * COLOURS**2
                 + _CLASS[:, None, :, :, 1] * COLOURS + _CLASS[:, None, :, :, 2])  # (30, 8, 8, 3)


def _corner_costs(sticker_cost: np.ndarray) -> np.ndarray:
    """(30, 8 positions, 8 pieces, 3 twists) cost of each placement, from (24, 6) sticker costs."""
    c = np.asarray(sticker_cost, dtype=float)[STICKERS]  # (8 positions, 3 facelets, 6 classes)
    triples = c[:, 0, :, None, None] + c[:, 1, None, :, None] + c[:, 2, None, None, :]  # (8, 6, 6, 6)
    return triples.ravel()[_TRIPLE_INDEX]


def _cheapest(corner: np.ndarray):
    """Each position at its cheapest placement: (placements (B, 8) as piece * 3 + twist, bound (B,)).

    The bound is never above the best legal cube's cost; when those
    placements are legal (see _is_legal) they are that cube.
    """
    flat = corner.reshape(len(corner), CORNERS, -1)
    cheapest = flat.argmin(axis=2)
    return cheapest, np.take_along_axis(flat, cheapest[..., None], axis=2)[..., 0].sum(axis=1)


def _is_legal(pieces: np.ndarray, twists: np.ndarray) -> np.ndarray:
    """(B,) whether each row of (B, 8) pieces and twists is a legal cube (distinct pieces, twists 0 mod 3)."""
    ordered = np.sort(pieces, axis=1)
    return (ordered[:, 1:] != ordered[:, :-1]).all(axis=1) & (twists.sum(axis=1) % 3 == 0)


def _best_cubes(costs: np.ndarray):
    """Exact best legal cube for each of a batch of (B, 8, 8, 3) placement costs.

    costs[b, position, piece, twist].  Returns (total (B,), placements (B, 8, 2)
    = (piece, twist) at each position).  Pieces must be distinct and the twists
    must sum to 0 mod 3; the DP state is (set of pieces used, twist sum mod 3).
    Forward: only the best cost of each state is kept (contiguous slices, no
    large gathers: this is the decoder's hot loop); backward: each position's
    choice is found again from the kept tables, one state per batch entry.
    """
    batch = costs.shape[0]
    if batch == 0:
        return np.empty(0), np.empty((0, CORNERS, 2), dtype=int)
    by_position = np.ascontiguousarray(np.moveaxis(costs, 0, -1))  # (position, piece, twist, batch)
    table = np.full((1, 3, batch), np.inf)  # (piece set, twist residue, batch): the best cost so far
    table[0, 0] = 0.0
    tables = [table]
    for position, (pred, pieces) in enumerate(_LEVELS):
        before = table[pred]  # (sets, new piece, residue, batch)
        # twice[..., 3 - o:6 - o, :] at new residue r is `before` at residue (r - o) % 3 (twist o added).
        twice = np.concatenate([before, before], axis=2)
        place = by_position[position][pieces]  # (sets, new piece, twist, batch)
        best = twice[:, :, 0:3] + place[:, :, 0:1]
        for o in (1, 2):
            np.minimum(best, twice[:, :, 3 - o:6 - o] + place[:, :, o:o + 1], out=best)
        table = best.min(axis=1)
        tables.append(table)
    total = table[0, 0]
    placements = np.zeros((batch, CORNERS, 2), dtype=int)
    everyone = np.arange(batch)[:, None, None]
    twists = np.arange(3)[None, None, :]
    mask = np.zeros(batch, dtype=int)
    residue = np.zeros(batch, dtype=int)
    for position in range(CORNERS - 1, -1, -1):
        pred, pieces = _LEVELS[position]
        piece, came_from = pieces[mask], pred[mask]
        cand = (tables[position][came_from[:, :, None], (residue[:, None, None] - twists) % 3, everyone]
                + by_position[position][piece[:, :, None], twists, everyone])
        i, twist = np.divmod(cand.reshape(batch, -1).argmin(axis=1), 3)
        placements[:, position, 0] = piece[everyone[:, 0, 0], i]
        placements[:, position, 1] = twist
        residue = (residue - twist) % 3
        mask = came_from[everyone[:, 0, 0], i]
    return total, placements


def _labels(schemes: np.ndarray, placements: np.ndarray) -> np.ndarray:
    """(B, 24) colour class of each facelet, from schemes (B,) and placements (B, 8, 2)."""
    labels = np.empty((len(schemes), FACELET_COUNT), dtype=int)
    labels[:, STICKERS] = _CLASS[schemes[:, None], placements[..., 0], placements[..., 1]]
    return labels


def _solve_batch(corner: np.ndarray, schemes: np.ndarray, limit: float, cheapest=None):
    """Best cube of each batch entry whose lower bound is below `limit` (others skipped).

    corner: (B, 8, 8, 3) placement costs; schemes: (B,) the scheme of each
    entry; cheapest: _cheapest(corner) if already known.  Returns (totals
    (K,), labels (K, 24), schemes (K,), placements (K, 8, 2)) for the K
    entries searched.
    """
    cheapest, bound = _cheapest(corner) if cheapest is None else cheapest
    keep = np.flatnonzero(bound < limit)
    if len(keep) == 0:
        return np.empty(0), np.empty((0, FACELET_COUNT), dtype=int), schemes[keep], np.empty((0, CORNERS, 2), int)
    # Where the cheapest placements already form a legal cube, it is the
    # entry's optimum; the DP is only run for the others.
    pieces, twists = np.divmod(cheapest[keep], 3)
    totals = bound[keep].copy()
    placements = np.stack([pieces, twists], axis=-1)
    search = np.flatnonzero(~_is_legal(pieces, twists))
    if len(search):
        totals[search], placements[search] = _best_cubes(corner[keep[search]])
    return totals, _labels(schemes[keep], placements), schemes[keep], placements


def best_legal_labels(sticker_cost: np.ndarray, known=None, schemes: int | None = None):
    """The legal cube (colour class per facelet) with the smallest summed sticker cost.

    sticker_cost: (24, 6) cost of giving each facelet each colour class.
    known: optional labels of some legal cube (its cost bounds the search).
    Exact: every colour scheme is searched unless its lower bound already
    exceeds a cube found.  schemes: search only this many schemes, those with
    the lowest bounds (not exact: a cheap first step from rough centres).
    Returns (cost, labels (24,), scheme, placements (8, 2)).
    """
    corner = _corner_costs(sticker_cost)
    cheapest, bound = _cheapest(corner)
    order = np.argsort(bound, kind="stable")[:schemes]
    # The scheme with the lowest bound first: if its cheapest placements are
    # legal, that is the best cube (usual for clean readings); otherwise its
    # best cube (or the known one, if cheaper) rules out most other schemes.
    first = _solve_batch(corner[order[:1]], order[:1], np.inf, (cheapest[order[:1]], bound[order[:1]]))
    upper = first[0][0]
    if known is not None:
        upper = min(upper, float(sticker_cost[np.arange(FACELET_COUNT), known].sum()) + 1e-9)
    rest = order[1:][bound[order[1:]] < upper]
    if len(rest) == 0:
        return float(first[0][0]), first[1][0], int(first[2][0]), first[3][0]
    others = _solve_batch(corner[rest], rest, upper, (cheapest[rest], bound[rest]))
    totals, labels, found_schemes, placements = (np.concatenate([a, b]) for a, b in zip(first, others))
    k = int(np.argmin(totals))
    return float(totals[k]), labels[k], int(found_schemes[k]), placements[k]


# Corner pieces with no colour in common (URF-DBL, ...): two of them show all six colours.
_ANTIPODE = [next(j for j in range(CORNERS) if not set(_PIECE_FACES[i]) & set(_PIECE_FACES[j]))
             for i in range(CORNERS)]


def alternatives(sticker_cost: np.ndarray, scheme: int, placements: np.ndarray, limit: float):
    """Legal labellings other than the best (scheme, placements), cheaper than `limit`.

    Two searches, both exact within their reach:
    * for each corner position and scheme, the best cube whose three colours
      differ there (every other labelling differs somewhere);
    * because a mere renaming of colours (same cube) can win the first search
      when two colours look alike, also: in the best scheme, with two corners
      holding opposite pieces kept (they pin all six colours, so no renaming
      is possible), the best cube that differs at each other corner.
    Returns (costs (K,), labels (K, 24)).
    """
    corner = _corner_costs(sticker_cost)
    labels = _labels(np.array([scheme]), placements[None])[0]
    positions = np.arange(CORNERS)
    # Any scheme, differing at each position.  Only entries whose lower bound
    # (every other position at its cheapest) is below `limit` are built.
    same = (_CLASS[:, None] == labels[STICKERS][None, :, None, None, :]).all(axis=-1)  # (30, 8 positions, 8, 3)
    cheapest = corner.reshape(len(SCHEMES), CORNERS, -1).min(axis=2)  # (30, 8)
    cheapest_differing = np.where(same, np.inf, corner).reshape(len(SCHEMES), CORNERS, -1).min(axis=2)
    bound = cheapest.sum(axis=1)[:, None] - cheapest + cheapest_differing  # (30 schemes, 8 positions)
    at, differ_schemes = np.nonzero(bound.T < limit)  # position-major, as the search always ran
    differ = corner[differ_schemes]
    rows = np.arange(len(at))
    differ[rows, at] = np.where(same[differ_schemes, at], np.inf, differ[rows, at])
    # The best scheme, two opposite corners held, differing at each other position.
    own = corner[scheme]
    held_only = np.full_like(own, np.inf)
    held_only[positions, placements[:, 0], placements[:, 1]] = own[positions, placements[:, 0], placements[:, 1]]
    position_of_piece = np.empty(CORNERS, dtype=int)
    position_of_piece[placements[:, 0]] = positions
    pinned = []
    for piece in range(CORNERS // 2):
        keep = [position_of_piece[piece], position_of_piece[_ANTIPODE[piece]]]
        costs = own.copy()
        costs[keep] = held_only[keep]
        for position in positions:
            if position not in keep:
                pinned.append(costs.copy())
                pinned[-1][position, placements[position, 0], placements[position, 1]] = np.inf
    batch = np.concatenate([differ, np.array(pinned)])
    schemes = np.concatenate([differ_schemes, np.full(len(pinned), scheme)])
    totals, found, _, _ = _solve_batch(batch, schemes, limit)
    return totals, found

