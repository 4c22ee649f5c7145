"""Two-phase search (Kociemba's algorithm) over the tables of robot/solver3/tables.py.

Phase 1 takes the cube into G1 = <U, D, R2, L2, F2, B2>; its table is exact (moves to G1
from each symmetry class of (slice set, flip) times twist), so iterative deepening on the
phase-1 length L1 visits little besides the phase-1 solutions themselves.  For each
phase-1 solution, phase 2 (IDA*, pruned by the max of the (corners, slice order) and
(U/D edges, slice order) tables) looks for the shortest finish within the length still
allowed.  Every solution found tightens the bound, so the search yields successively
shorter solutions until the time is up or the bound cannot be beaten.

Speed in pure Python: the recursion only touches Python ints, lists and bytes (the
numpy tables are converted once, in Search.__init__); a phase-1 node costs 3 move-table
lookups and 3 for its distance, a phase-2 node 3 and 2.
"""

from __future__ import annotations

import time

import numpy as np

import robot.solver3.coords as C
from .tables import Tables3

N_MOVES = 18
FACE = [m // 3 for m in range(N_MOVES)]
NO_FACE = 6
# Moves allowed after a move of face `last` (NO_FACE at the start): never the same face
# twice, and of two opposite faces (which commute) only the order U-D, R-L, F-B.
ALLOWED = [[m for m in range(N_MOVES) if FACE[m] != last and not (FACE[m] == (last + 3) % 6 and FACE[m] < last)]
           for last in range(NO_FACE + 1)]
PHASE2_MOVES = list(C.PHASE2_MOVES)
ALLOWED2 = [[k for k, m in enumerate(PHASE2_MOVES) if m in ALLOWED[last]] for last in range(NO_FACE + 1)]
# A phase-1 solution ends with a quarter turn of R, L, F or B: one ending with a phase-2 move
# would be a shorter phase-1 solution followed by phase 2.
ALLOWED_LAST = [[m for m in moves if m not in C.PHASE2_MOVES] for moves in ALLOWED]
SOLVED_SP = C.SOLVED_SLICE % 24
INF = float("inf")
TURN_SECONDS = 0.002  # when several start cubes take turns


class Unsolvable(RuntimeError):
    """No solution within the requested length (and time)."""


class OutOfTime(Exception):
    """Internal: the deadline passed inside a phase-2 search."""


class Search:
    """Tables as compact Python lists/bytes, and the two phases over them."""

    def __init__(self, tables: Tables3):
        mt, st = tables.moves, tables.symmetry
        self.directory = tables.directory
        flat = lambda a: a.astype(int).ravel().tolist()  # noqa: E731
        self.twist_move = flat(mt["twist"])
        self.flip_move = flat(mt["flip"])
        self.slice_fs = [(s // 24) * C.N_FLIP for s in range(C.N_SUBSET)]
        self.subset_move = flat(mt["subset"])
        self.corner_move = flat(mt["corners"])
        # Phase 2 moves only (10 columns).
        self.corner_move2 = flat(mt["corners"][:, PHASE2_MOVES])
        self.ud_move2 = flat(mt["ud"][:, PHASE2_MOVES])
        slice_perm = mt["subset"][C.SOLVED_SET * 24 + np.arange(24)] - C.SOLVED_SET * 24
        self.sp_move2 = flat(slice_perm[:, PHASE2_MOVES])
        # h1 = phase1[class_start[fs] + twist_conj[sym_of[fs]][twist]] with fs = set * 2048 + flip.
        # phase1 is the loaded file itself when there is one (no copy): offset past its header.
        self.phase1, offset = tables.phase1_raw or (tables.phase1.tobytes(), 0)
        self.class_start = (st["class_of"].astype(int) * C.N_TWIST + offset).tolist()
        self.sym_of = st["sym_of"].astype("uint8").tobytes()
        self.twist_conj = [st["twist_conj"][:, s].astype(int).tolist() for s in range(st["twist_conj"].shape[1])]
        # Lower bounds of h1 from the twist alone and the (slice set, flip) alone.
        by_class = tables.phase1.reshape(-1, C.N_TWIST)
        self.twist_h = by_class.min(0)[st["twist_conj"]].min(1).astype("uint8").tobytes()
        self.flipslice_h = by_class.min(1)[st["class_of"]].astype("uint8").tobytes()
        self.p2_corners = tables.phase2["corners"].tobytes()
        self.p2_ud = tables.phase2["ud"].tobytes()
        positions = C.subset_positions(range(C.N_SUBSET))
        self.subset_positions = [tuple(p) for p in positions.tolist()]
        self._ud_cache = {}

    # -- coordinates ----------------------------------------------------------

    def h1(self, twist, flip, set_):
        fs = set_ * C.N_FLIP + flip
        return self.phase1[self.class_start[fs] + self.twist_conj[self.sym_of[fs]][twist]]

    def h2(self, corners, ud, sp):
        a, b = self.p2_corners[corners * 24 + sp], self.p2_ud[ud * 24 + sp]
        return a if a > b else b

    def ud_coord(self, u, d):
        """Phase-2 permutation of the 8 U/D edges from their two subset coordinates (in G1)."""
        key = u * C.N_SUBSET + d
        value = self._ud_cache.get(key)
        if value is None:
            ep = [0] * 8
            for piece, pos in enumerate(self.subset_positions[u]):
                ep[pos] = piece
            for piece, pos in enumerate(self.subset_positions[d]):
                ep[pos] = piece + 4
            value = 0
            for i in range(8):
                value = value * (8 - i) + sum(1 for x in ep[i + 1:] if x < ep[i])
            self._ud_cache[key] = value
        return value

    # -- phase 1 --------------------------------------------------------------

    def _phase1(self, twist, flip, slice_, corners, length):
        """Yield (path, corners, slice) for every phase-1 solution of exactly `length` moves.

        Iterative (an explicit stack), so a solution costs no generator chain; `path` is
        one shared list, valid until the next solution."""
        if length == 0:
            yield [], corners, slice_
            return
        tm, fm, sm, cm = self.twist_move, self.flip_move, self.subset_move, self.corner_move
        slice_fs, p1, cs, so, tc = self.slice_fs, self.phase1, self.class_start, self.sym_of, self.twist_conj
        twist_h, flipslice_h = self.twist_h, self.flipslice_h
        path = [0] * length
        tws, fls, sls, crs = [twist] * length, [flip] * length, [slice_] * length, [corners] * length
        moves_left = [None] * length
        moves_left[0] = iter(ALLOWED[NO_FACE] if length > 1 else ALLOWED_LAST[NO_FACE])
        depth = 0
        while depth >= 0:
            t18, f18, s18 = tws[depth] * 18, fls[depth] * 18, sls[depth] * 18
            togo = length - depth
            for m in moves_left[depth]:
                tw = tm[t18 + m]
                if twist_h[tw] >= togo:  # cheap bounds first: they reject most moves
                    continue
                fl, sl = fm[f18 + m], sm[s18 + m]
                fs = slice_fs[sl] + fl
                if flipslice_h[fs] >= togo or p1[cs[fs] + tc[so[fs]][tw]] >= togo:
                    continue
                path[depth] = m
                if togo == 1:
                    yield path, cm[crs[depth] * 18 + m], sl
                    continue
                crs[depth + 1] = cm[crs[depth] * 18 + m]
                depth += 1
                tws[depth], fls[depth], sls[depth] = tw, fl, sl
                moves_left[depth] = iter(ALLOWED[FACE[m]] if togo > 2 else ALLOWED_LAST[FACE[m]])
                break
            else:
                depth -= 1

    # -- phase 2 --------------------------------------------------------------

    def _phase2(self, corners, ud, sp, last, togo, path):
        """Depth-first: can (corners, ud, sp) be solved in exactly `togo` phase-2 moves?
        Precondition: h2 <= togo.  On success the moves (phase-2 column indices) are in path."""
        if togo == 0:
            return True
        self.nodes += 1
        if self.deadline is not None and not self.nodes & 1023 and time.perf_counter() > self.deadline:
            raise OutOfTime
        cm, um, spm, pc, pu = self.corner_move2, self.ud_move2, self.sp_move2, self.p2_corners, self.p2_ud
        c10, u10, s10 = corners * 10, ud * 10, sp * 10
        left = togo - 1
        for k in ALLOWED2[last]:
            c, s = cm[c10 + k], spm[s10 + k]
            if pc[c * 24 + s] > left:
                continue
            u = um[u10 + k]
            if pu[u * 24 + s] > left:
                continue
            path.append(k)
            if self._phase2(c, u, s, FACE[PHASE2_MOVES[k]], left, path):
                return True
            path.pop()
        return False

    # -- driver ---------------------------------------------------------------

    def _start(self, coords: dict):
        """One start cube's search, phase-1 length after length: yields the moves of each
        solution cheaper than the best so far (reading and tightening self.bound and
        self.best_cost), or None when its turn is over (self.turn_ends)."""
        length1 = self.h1(coords["twist"], coords["flip"], coords["slice"] // 24)
        while length1 <= self.bound:
            yield from self._level(coords, length1)
            length1 += 1

    def _level(self, coords: dict, length1: int):
        twist, flip, slice_, corners, u, d = (coords[k] for k in ("twist", "flip", "slice", "corners", "u", "d"))
        sm, pc = self.subset_move, self.p2_corners
        work = 0
        for path, c, sl in self._phase1(twist, flip, slice_, corners, length1):
            work += 1
            if not work & 15:
                now = time.perf_counter()
                if self.deadline is not None and now > self.deadline:
                    raise OutOfTime
                if now > self.turn_ends:
                    yield None
            budget = self.bound - length1
            if budget < 0:
                return
            sp = sl % 24
            if pc[c * 24 + sp] > budget:  # most phase-1 solutions end here
                continue
            su, sd = u, d
            for m in path:
                su, sd = sm[su * 18 + m], sm[sd * 18 + m]
            ud = self.ud_coord(su, sd)
            h = self.h2(c, ud, sp)
            last = FACE[path[-1]] if path else NO_FACE
            for length2 in range(h, budget + 1):
                found = []
                if not self._phase2(c, ud, sp, last, length2, found):
                    continue
                moves = list(path) + [PHASE2_MOVES[k] for k in found]
                value = self.cost(moves)
                if value < self.best_cost:
                    self.best_cost = value
                    self.bound = min(self.bound, self.htm_bound(value))
                    yield moves
                break

    def solutions(self, starts: list, max_htm: int = 20, deadline: float | None = None, hard_deadline=False,
                  cost=len, max_cost: float | None = None, htm_bound=lambda cost: cost - 1):
        """Yield (start index, moves) of ever lower `cost`, each at most max_htm moves.

        starts: coords.phase_coords of one or more cubes whose solutions are equivalent
        (the same cube seen along another axis, or its inverse); their searches take turns
        of TURN_SECONDS (which one is lucky varies from cube to cube: this cuts the slow
        tail).  Stops when every phase-1 length has been tried, or at the perf_counter
        `deadline` once a solution was yielded (at once if hard_deadline).  A solution is
        yielded only if its cost is below the best so far and at most max_cost;
        htm_bound(cost) is the most HTM moves a cheaper solution can have.
        """
        self.deadline, self.nodes = (deadline if hard_deadline else None), 0
        self.best_cost = INF if max_cost is None else max_cost + 0.5
        self.bound, self.cost, self.htm_bound = max_htm, cost, htm_bound
        searches = [(i, self._start(c)) for i, c in enumerate(starts)]
        try:
            while searches:
                for entry in list(searches):
                    self.turn_ends = time.perf_counter() + TURN_SECONDS
                    for moves in entry[1]:
                        if moves is None:
                            break
                        self.deadline = deadline
                        yield entry[0], moves
                        if not moves:
                            return
                    else:
                        searches.remove(entry)
        except OutOfTime:
            return
