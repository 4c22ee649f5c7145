"""UNFINISHED (not wired in, not tested): two-phase search, vectorised with numpy.

STATUS: its first run over random cubes exhausted memory (phase-1 candidate or phase-2
frontier growth is not bounded yet); see robot/solver3/__init__.py.

Python cannot afford one function call per search node, so both phases expand
whole frontiers at once: every node of a depth times every move is one numpy
gather, pruned by the distance tables.

Phase 1 lists *all* move sequences of length B that reach G1 (the phase-1 table
is exact, so only nodes on such paths survive), for B = d1, d1 + 1, ... (d1 =
the phase-1 distance).  Phase 2 then searches from all of these candidates at
once, iterative deepening on the total length T: a node at phase-2 depth g of a
candidate of length B survives while g + h2 <= T - B.  The first T that reaches
solved gives the shortest solution among the candidates; with a time limit the
search goes on for T - 1 with more candidates until the time is up.
"""

from __future__ import annotations

import time

import numpy as np

from . import coords as C
from .tables import Tables3

FACE_OF_MOVE = np.arange(18) // 3
# ALLOWED[last face (6 = none), move]: never the same face twice, opposite faces in one order only.
ALLOWED = np.ones((7, 18), dtype=bool)
for _last in range(6):
    for _m in range(18):
        _f = FACE_OF_MOVE[_m]
        if _f == _last or (_f == (_last + 3) % 6 and _f < _last):
            ALLOWED[_last, _m] = False
PHASE2 = np.array(C.PHASE2_MOVES)
# Phase 1 ends with a quarter turn of R, L, F or B (otherwise a shorter phase 1 was already tried).
ENDS_PHASE1 = np.array([m not in C.PHASE2_MOVES for m in range(18)])
MAX_REPORTED = 64  # solutions of the same depth handed to the metric choice
MAX_FRONTIER = 4_000_000  # nodes per phase-2 depth before the search gives up this bound


class Unsolvable(RuntimeError):
    """No solution within the requested length (and time)."""


class TwoPhase:
    def __init__(self, tables: Tables3):
        self.t = tables
        mt = tables.moves
        self.twist_move = mt["twist"].astype(np.int32)
        self.flip_move = mt["flip"].astype(np.int32)
        self.subset_move = mt["subset"].astype(np.int32)
        self.corner_move = mt["corners"][:, PHASE2].astype(np.int32)
        self.corner_move_all = mt["corners"].astype(np.int32)
        self.ud_move = mt["ud"][:, PHASE2].astype(np.int32)
        sp = mt["subset"][C.SOLVED_SET * 24 + np.arange(24)].astype(np.int32) - C.SOLVED_SET * 24
        self.slice_perm_move = sp[:, PHASE2]
        st = tables.symmetry
        self.class_of = st["class_of"].astype(np.int32)
        self.sym_of = st["sym_of"]
        self.twist_conj = st["twist_conj"].astype(np.int32)
        self.phase1 = tables.phase1
        self.p2_corners = tables.phase2["corners"]
        self.p2_ud = tables.phase2["ud"]

    # -- heuristics ---------------------------------------------------------

    def h1(self, twist, flip, slice_):
        fs = (slice_ // 24) * C.N_FLIP + flip
        return self.phase1[self.class_of[fs] * C.N_TWIST + self.twist_conj[twist, self.sym_of[fs]]]

    def h2(self, corners, ud, sp):
        return np.maximum(self.p2_corners[corners * 24 + sp], self.p2_ud[ud * 24 + sp])

    # -- phase 1 ------------------------------------------------------------

    def phase1_candidates(self, start: dict, length: int):
        """Every phase-1 solution of exactly `length` moves: (paths (N, length), phase-2 coordinates, last face)."""
        tw = np.array([start["twist"]])
        fl = np.array([start["flip"]])
        sl = np.array([start["slice"]])
        co = np.array([start["corners"]])
        u = np.array([start["u"]])
        d = np.array([start["d"]])
        last = np.array([6])
        paths = np.zeros((1, 0), dtype=np.int8)
        if length == 0:
            if self.h1(tw, fl, sl)[0] != 0:
                return None
        for g in range(length):
            ntw = self.twist_move[tw]
            nfl = self.flip_move[fl]
            nsl = self.subset_move[sl]
            h = self.h1(ntw, nfl, nsl)
            keep = ALLOWED[last] & (h <= length - g - 1)
            if g == length - 1:
                keep &= ENDS_PHASE1
            rows, moves = np.nonzero(keep)
            if not len(rows):
                return None
            tw, fl, sl = ntw[rows, moves], nfl[rows, moves], nsl[rows, moves]
            co = self.corner_move_all[co[rows], moves]
            u = self.subset_move[u[rows], moves]
            d = self.subset_move[d[rows], moves]
            last = FACE_OF_MOVE[moves]
            paths = np.concatenate([paths[rows], moves[:, None].astype(np.int8)], axis=1)
        return {"paths": paths, "corners": co, "ud": C.ud_from_subsets(u, d), "sp": sl % 24,
                "last": last, "length": np.full(len(paths), length)}

    # -- phase 2 ------------------------------------------------------------

    def phase2(self, cands: dict, total: int):
        """Shortest phase-2 completions with phase1 + phase2 <= total: [(candidate, moves)], or None."""
        co, ud, sp = cands["corners"], cands["ud"], cands["sp"]
        budget = total - cands["length"]
        ok = self.h2(co, ud, sp) <= budget
        idx = np.flatnonzero(ok)
        co, ud, sp, last, budget = co[idx], ud[idx], sp[idx], cands["last"][idx], budget[idx]
        history = []  # per depth: (parent index, move)
        g = 0
        while len(idx):
            solved = np.flatnonzero((co == 0) & (ud == 0) & (sp == C.SOLVED_SLICE % 24))
            if len(solved):
                found = []
                for node in solved[:MAX_REPORTED].tolist():
                    moves = []
                    for parent, move in reversed(history):
                        moves.append(int(move[node]))
                        node = int(parent[node])
                    found.append((int(idx[node]), moves[::-1]))
                return found
            if len(co) > MAX_FRONTIER:
                return None
            nco = self.corner_move[co]
            nud = self.ud_move[ud]
            nsp = self.slice_perm_move[sp]
            keep = ALLOWED[last][:, PHASE2] & (self.h2(nco, nud, nsp) <= (budget - g - 1)[:, None])
            rows, k = np.nonzero(keep)
            co, ud, sp = nco[rows, k], nud[rows, k], nsp[rows, k]
            last = FACE_OF_MOVE[PHASE2[k]]
            budget = budget[rows]
            history.append((rows, PHASE2[k]))
            g += 1
        return None

    # -- driver -------------------------------------------------------------

    def solve(self, state_coords: dict, max_length: int = 20, time_limit: float | None = None,
              max_extra: int = 3, cost=len):
        """Moves (list of move indices) of a solution of at most max_length moves.

        Without a time limit: the first (shortest over the candidates tried)
        solution.  With one: keeps looking for shorter ones until the time is up.
        """
        started = time.perf_counter()
        d1 = int(self.h1(np.array([state_coords["twist"]]), np.array([state_coords["flip"]]),
                         np.array([state_coords["slice"]]))[0])
        cache = {}

        def candidates(length):
            if length not in cache:
                cache[length] = self.phase1_candidates(state_coords, length)
            return cache[length]

        def attempt(total, extra):
            """Shortest solution of at most `total` moves from phase-1 lengths d1..d1+extra, or None."""
            lengths = [b for b in range(d1, min(total, d1 + extra) + 1) if candidates(b) is not None]
            if not lengths:
                return None
            merged = {k: np.concatenate([cache[b][k] for b in lengths]) for k in cache[lengths[0]] if k != "paths"}
            found = self.phase2(merged, total)
            if found is None:
                return None
            offsets = np.cumsum([0] + [len(cache[b]["paths"]) for b in lengths])
            solutions = []
            for index, p2 in found:
                which = int(np.searchsorted(offsets, index, side="right") - 1)
                p1 = cache[lengths[which]]["paths"][index - offsets[which]]
                solutions.append([int(m) for m in p1] + p2)
            return min(solutions, key=cost)

        def out_of_time():
            return time_limit is not None and time.perf_counter() - started > time_limit

        best = None
        total = d1
        while best is None and total <= max_length:
            best = attempt(total, max_extra)
            total += 1
        if best is None:
            raise Unsolvable(f"no solution of at most {max_length} moves found")
        if time_limit is None:
            return best
        # Shorter: one move less, with ever more phase-1 candidates, until the time is up.
        extra = max_extra + 1
        while not out_of_time() and d1 + extra <= len(best) - 1:
            shorter = attempt(len(best) - 1, extra)
            if shorter is not None:
                best = shorter
            else:
                extra += 1
        return best
