"""Phase 1 of the two-phase search, vectorised: every phase-1 solution of a given length,
in batches of numpy arrays.

The phase-1 table is exact, so the nodes worth expanding are nearly all on phase-1
solutions, and there are many of them (about 13 times more per extra move): a Python
loop spends ~0.5 us per move tried, numpy a few ns.  The tree is walked depth-first in
blocks of at most BLOCK nodes (every node of a block expanded by all 18 moves at once),
so memory stays at a few MB whatever the length.
"""

from __future__ import annotations

import numpy as np

import robot.solver3.coords as C

BLOCK = 1024
FACE = np.arange(18) // 3
NO_FACE = 6
_OPPOSITE_ORDER = [(f, g) for f in range(6) for g in range(6) if g == (f + 3) % 6 and g < f]
# ALLOWED[last face, move]: never the same face twice; of two opposite faces only U-D, R-L, F-B.
ALLOWED = np.array([[FACE[m] != last and (last, FACE[m]) not in _OPPOSITE_ORDER for m in range(18)]
                    for last in range(NO_FACE + 1)])
# The last phase-1 move is a quarter turn of R, L, F or B (else a shorter phase 1 exists).
ALLOWED_LAST = ALLOWED & np.array([m not in C.PHASE2_MOVES for m in range(18)])


class Phase1:
    """The tables phase 1 needs, as numpy arrays; batches() enumerates solutions."""

    def __init__(self, tables):
        mt, st = tables.moves, tables.symmetry
        as32 = lambda a: np.ascontiguousarray(a, dtype=np.int32)  # noqa: E731
        self.twist, self.flip, self.subset, self.corners = (as32(mt[k]) for k in ("twist", "flip", "subset", "corners"))
        self.slice_fs = as32((np.arange(C.N_SUBSET) // 24) * C.N_FLIP)
        self.class_start = st["class_of"].astype(np.int64) * C.N_TWIST
        self.sym_of = st["sym_of"].astype(np.intp)
        self.twist_conj = np.ascontiguousarray(st["twist_conj"].T, dtype=np.int64)  # [sym, twist]
        self.table = tables.phase1
        by_class = tables.phase1.reshape(-1, C.N_TWIST)
        # Lower bounds of the distance from the twist alone and the (slice set, flip) alone:
        # cheap first tests that reject most moves.
        self.twist_h = by_class.min(0)[st["twist_conj"]].min(1).astype(np.uint8)
        self.flipslice_h = by_class.min(1)[st["class_of"]].astype(np.uint8)

    def distance(self, twist, flip, slice_):
        fs = self.slice_fs[slice_] + flip
        return self.table[self.class_start[fs] + self.twist_conj[self.sym_of[fs], twist]]

    def batches(self, start: dict, length: int):
        """Yield dicts of arrays (path (n, length) int8, corners, slice, u, d) of phase-1
        solutions of exactly `length` moves from the cube with coordinates `start`."""
        node = {k: np.array([start[k]], dtype=np.int32) for k in ("twist", "flip", "slice", "corners", "u", "d")}
        node["last"] = np.array([NO_FACE], dtype=np.intp)
        node["path"] = np.zeros((1, 0), dtype=np.int8)
        if length == 0:
            if self.distance(node["twist"], node["flip"], node["slice"])[0] == 0:
                yield node
            return
        stack = [(0, node)]
        while stack:
            depth, node = stack.pop()
            n = len(node["twist"])
            if n > BLOCK:
                for lo in range((n - 1) // BLOCK * BLOCK, -1, -BLOCK):
                    stack.append((depth, {k: v[lo:lo + BLOCK] for k, v in node.items()}))
                continue
            togo = length - depth
            children = self._expand(node, togo)
            if togo == 1:
                yield children  # even when empty: the caller checks the clock between batches
            elif len(children["twist"]):
                stack.append((depth + 1, children))

    def _expand(self, node, togo):
        """The children of a block of nodes whose distance is below `togo` - 1 (they are on
        phase-1 solutions of `togo` more moves)."""
        twist = self.twist[node["twist"]]  # (n, 18)
        ok = (ALLOWED if togo > 1 else ALLOWED_LAST)[node["last"]] & (self.twist_h[twist] < togo)
        rows, moves = np.nonzero(ok)
        twist = twist[rows, moves]
        flip = self.flip[node["flip"][rows], moves]
        slice_ = self.subset[node["slice"][rows], moves]
        fs = self.slice_fs[slice_] + flip
        keep = np.flatnonzero(self.flipslice_h[fs] < togo)
        rows, moves, twist, flip, slice_, fs = rows[keep], moves[keep], twist[keep], flip[keep], slice_[keep], fs[keep]
        h = self.table[self.class_start[fs] + self.twist_conj[self.sym_of[fs], twist]]
        keep = np.flatnonzero(h < togo)
        rows, moves = rows[keep], moves[keep]
        return {
            "twist": twist[keep], "flip": flip[keep], "slice": slice_[keep],
            "corners": self.corners[node["corners"][rows], moves],
            "u": self.subset[node["u"][rows], moves], "d": self.subset[node["d"][rows], moves],
            "last": FACE[moves], "path": np.concatenate([node["path"][rows], moves[:, None].astype(np.int8)], axis=1),
        }
