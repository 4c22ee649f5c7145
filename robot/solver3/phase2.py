"""Phase 2 of the two-phase search, vectorised: from many G1 cubes at once (the phase-1
solutions of one batch), level by level, the shortest finishes within a length limit.

A node at depth g survives while g + max(corners/slice-order distance, U/D-edges/
slice-order distance) <= the limit, so the levels stay small; past FRONTIER_CAP nodes the
caller falls back to depth-first search in Python (TooWide).
"""

from __future__ import annotations

import numpy as np

import robot.solver3.coords as C

FRONTIER_CAP = 200_000
PHASE2_MOVES = list(C.PHASE2_MOVES)
FACE = np.arange(18) // 3
NO_FACE = 6
FACE2 = FACE[PHASE2_MOVES]
# ALLOWED2[last face, phase-2 move]: as in phase 1, no face twice, opposite faces in one order.
ALLOWED2 = np.array([[FACE[m] != last and not (FACE[m] == (last + 3) % 6 and FACE[m] < last) for m in PHASE2_MOVES]
                     for last in range(NO_FACE + 1)])
SOLVED_SP = C.SOLVED_SLICE % 24


class TooWide(Exception):
    """A level grew past FRONTIER_CAP nodes."""


class Phase2:
    def __init__(self, tables):
        mt = tables.moves
        self.corners = np.ascontiguousarray(mt["corners"][:, PHASE2_MOVES], dtype=np.int64)
        self.ud = np.ascontiguousarray(mt["ud"][:, PHASE2_MOVES], dtype=np.int64)
        slice_perm = mt["subset"][C.SOLVED_SET * 24 + np.arange(24)].astype(np.int64) - C.SOLVED_SET * 24
        self.sp = np.ascontiguousarray(slice_perm[:, PHASE2_MOVES])
        self.dist_corners, self.dist_ud = tables.phase2["corners"], tables.phase2["ud"]

    def levels(self, corners, ud, sp, last, limit: int):
        """For depth 0, 1, ... up to `limit`: yield (depth, [(start index, phase-2 move
        indices)]) of the starts solved in exactly `depth` moves (shortest first)."""
        history: list = []  # per depth: (parent row, phase-2 move)
        depth = 0
        while True:
            solved = np.flatnonzero((corners == 0) & (ud == 0) & (sp == SOLVED_SP))
            yield depth, [self._walk_back(history, int(j)) for j in solved]
            if depth == limit or not len(corners):
                return
            c2, u2, s2 = self.corners[corners], self.ud[ud], self.sp[sp]
            h = np.maximum(self.dist_corners[c2 * 24 + s2], self.dist_ud[u2 * 24 + s2])
            rows, k = np.nonzero(ALLOWED2[last] & (h <= limit - depth - 1))
            if len(rows) > FRONTIER_CAP:
                raise TooWide
            corners, ud, sp, last = c2[rows, k], u2[rows, k], s2[rows, k], FACE2[k]
            history.append((rows, k))
            depth += 1

    @staticmethod
    def _walk_back(history, node):
        moves = []
        for rows, k in reversed(history):
            moves.append(int(k[node]))
            node = int(rows[node])
        return node, moves[::-1]
