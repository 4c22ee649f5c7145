"""Two-phase search (Kociemba's algorithm) over the tables of robot/solver3/tables.py.

Phase 1 takes the cube into G1 = <U, D, R2, L2, F2, B2>; its table is exact (moves to G1
from each symmetry class of (slice set, flip) times twist), so iterative deepening on the
phase-1 length L1 visits little besides the phase-1 solutions themselves: phase1.py lists
them in numpy batches.  Phase-1 solutions whose phase-2 distance (max of the (corners,
slice order) and (U/D edges, slice order) tables) fits the length still allowed go to
phase 2, all of a batch at once, level by level (phase2.py), so the first finish found is
the shortest; a level too wide falls back to IDA* in plain Python on lists and bytes, one
phase-1 solution after another.  Every solution found tightens the bound, so the search
yields successively shorter solutions until the time is up or the bound cannot be beaten.
Six views of the cube (3 axes, and inverted) take turns (api.views).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import robot.solver3.coords as C
from .phase1 import Phase1
from .phase2 import Phase2, TooWide
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
INF = float("inf")
TURN_SECONDS = 0.002  # when several start cubes take turns


class Unsolvable(RuntimeError):
    """No solution within the requested length (and time)."""


class OutOfTime(Exception):
    """Internal: the deadline passed inside a phase-2 search."""


@dataclass
class Run:
    """The state of one solutions() call (so several may be under way on one Search)."""
    bound: int  # most HTM moves a solution may still have
    best_cost: float  # a solution must cost less
    cost: object  # moves -> cost in the metric
    htm_bound: object  # cost -> most HTM moves of a cheaper solution
    deadline: float | None  # clock time; None while the first solution is awaited (soft limit)
    limit: float | None = None  # the deadline asked for, also while it is soft
    clock: Callable[[], float] = field(default=time.perf_counter)  # () -> seconds; tests pass a fake one
    turn_ends: float = 0.0
    nodes: int = 0

    def past_limit(self, found: bool) -> bool:
        """Out of time: past the limit, with a solution in hand (`found`, or one already yielded)."""
        return self.limit is not None and (found or self.deadline is not None) and self.clock() > self.limit


class Search:
    """The tables in the forms the two phases need, and the search over them."""

    def __init__(self, tables: Tables3):
        mt = tables.moves
        self.directory = tables.directory
        self.phase1 = Phase1(tables)
        self.phase2 = Phase2(tables)
        flat = lambda a: a.astype(int).ravel().tolist()  # noqa: E731
        # Phase 2 runs in Python on lists and bytes, phase-2 moves only (10 columns).
        self.corner_move2 = flat(mt["corners"][:, PHASE2_MOVES])
        self.ud_move2 = flat(mt["ud"][:, PHASE2_MOVES])
        slice_perm = mt["subset"][C.SOLVED_SET * 24 + np.arange(24)] - C.SOLVED_SET * 24
        self.sp_move2 = flat(slice_perm[:, PHASE2_MOVES])
        self.p2_corners_np, self.p2_ud_np = tables.phase2["corners"], tables.phase2["ud"]
        self.p2_corners, self.p2_ud = self.p2_corners_np.tobytes(), self.p2_ud_np.tobytes()
        # ud (phase-2 order of the 8 U/D edges) from the U-edge and D-edge subset coordinates,
        # which phase 1 follows: both lie among the 1680 subsets of the first 8 positions.
        ep = np.concatenate([C.PERMS8, np.tile(np.arange(8, 12), (C.N_PERM8, 1))], axis=1)
        u, d = C.subset_coord(ep, C.U_PIECES), C.subset_coord(ep, C.D_PIECES)
        self.ud_index = np.full(C.N_SUBSET, -1, dtype=np.int64)
        self.ud_index[np.unique(u)] = np.arange(1680)
        self.ud_of = np.full(1680 * 1680, -1, dtype=np.int64)
        self.ud_of[self.ud_index[u] * 1680 + self.ud_index[d]] = np.arange(C.N_PERM8)

    # -- phase 2 --------------------------------------------------------------

    def _phase2(self, run, corners, ud, sp, last, togo, path):
        """Depth-first: can (corners, ud, sp) be solved in exactly `togo` phase-2 moves?
        Precondition: h2 <= togo.  On success the moves (phase-2 column indices) are in path."""
        if togo == 0:
            return True
        run.nodes += 1
        if run.deadline is not None and not run.nodes & 1023 and run.clock() > run.deadline:
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
            if self._phase2(run, c, u, s, FACE[PHASE2_MOVES[k]], left, path):
                return True
            path.pop()
        return False

    # -- driver ---------------------------------------------------------------

    def _start(self, run, coords: dict):
        """One start cube's search, phase-1 length after length: yields the moves of each
        solution cheaper than the best so far (reading and tightening run.bound and
        run.best_cost), or None when its turn is over (run.turn_ends)."""
        length1 = int(self.phase1.distance(coords["twist"], coords["flip"], coords["slice"]))
        while length1 <= run.bound:
            yield from self._level(run, coords, length1)
            length1 += 1

    def _level(self, run, coords: dict, length1: int):
        pc, pu = self.p2_corners_np, self.p2_ud_np
        for batch in self.phase1.batches(coords, length1):
            now = run.clock()
            if run.deadline is not None and now > run.deadline:
                raise OutOfTime
            if now > run.turn_ends:
                yield None
            budget = run.bound - length1
            if budget < 0:
                return
            corners, sp = batch["corners"], batch["slice"] % 24
            keep = np.flatnonzero(pc[corners * 24 + sp] <= budget)  # most phase-1 solutions end here
            if not len(keep):
                continue
            corners, sp = corners[keep], sp[keep]
            ud = self.ud_of[self.ud_index[batch["u"][keep]] * 1680 + self.ud_index[batch["d"][keep]]]
            h = np.maximum(pc[corners * 24 + sp], pu[ud * 24 + sp])
            fits = np.flatnonzero(h <= budget)
            if not len(fits):
                continue
            paths = batch["path"][keep[fits]]
            lasts = np.asarray(FACE)[paths[:, -1]] if length1 else np.full(len(fits), NO_FACE)
            try:
                yield from self._finish(run, length1, paths, corners[fits], ud[fits], sp[fits], lasts)
            except TooWide:
                yield from self._finish_one_by_one(run, length1, paths, corners[fits], ud[fits], sp[fits], h[fits])

    def _finish(self, run, length1, paths, corners, ud, sp, lasts):
        """Phase 2 from all of a batch's phase-1 solutions at once, shortest finishes first.

        A level may hold hundreds of finishes (a short scramble has many), and rating one may be
        slow (the robot's converter: milliseconds each), so the clock is read before each: past
        the limit, the best of the level so far is yielded and the search ends."""
        for depth, found in self.phase2.levels(corners, ud, sp, lasts, run.bound - length1):
            if run.deadline is not None and run.clock() > run.deadline:
                raise OutOfTime
            best = None
            out_of_time = False
            for index, finish in found:
                if run.past_limit(best is not None):
                    out_of_time = True
                    break
                moves = paths[index].tolist() + [PHASE2_MOVES[k] for k in finish]
                value = run.cost(moves)
                if value < run.best_cost and (best is None or value < best[0]):
                    best = (value, moves)
            if best is not None:
                run.best_cost = best[0]
                run.bound = min(run.bound, run.htm_bound(best[0]))
                yield best[1]
            if out_of_time:
                raise OutOfTime
            if depth + 1 > run.bound - length1:
                return

    def _finish_one_by_one(self, run, length1, paths, corners, ud, sp, h):
        """Phase 2 depth-first in Python, one phase-1 solution after another (most promising first)."""
        for i in np.argsort(h, kind="stable").tolist():
            if run.past_limit(False):
                raise OutOfTime
            budget = run.bound - length1
            if h[i] > budget:
                continue
            path = paths[i].tolist()
            c, u, s = int(corners[i]), int(ud[i]), int(sp[i])
            last = FACE[path[-1]] if path else NO_FACE
            for length2 in range(int(h[i]), budget + 1):
                found: list = []
                if not self._phase2(run, c, u, s, last, length2, found):
                    continue
                moves = path + [PHASE2_MOVES[k] for k in found]
                value = run.cost(moves)
                if value < run.best_cost:
                    run.best_cost = value
                    run.bound = min(run.bound, run.htm_bound(value))
                    yield moves
                break

    def solutions(self, starts: list, max_htm: int = 20, deadline: float | None = None, hard_deadline=False,
                  cost=len, max_cost: float | None = None, htm_bound=lambda cost: cost - 1, clock=time.perf_counter):
        """Yield (start index, moves) of ever lower `cost`, each at most max_htm moves.

        starts: coords.phase_coords of one or more cubes whose solutions are equivalent
        (the same cube seen along another axis, or its inverse); their searches take turns
        of TURN_SECONDS (which one is lucky varies from cube to cube: this cuts the slow
        tail).  Stops when every phase-1 length has been tried, or at the `clock`
        `deadline` once a solution was yielded (at once if hard_deadline).  A solution is
        yielded only if its cost is below the best so far and at most max_cost;
        htm_bound(cost) is the most HTM moves a cheaper solution can have.  `cost` may also be
        a list, one callable per start (e.g. each view's moves mapped back to the cube's frame
        before rating), so that the costs of all starts compare.  `clock` (default
        time.perf_counter) is what `deadline` is read against; no candidate is rated past the
        deadline once one solution is in hand.
        """
        costs = cost if isinstance(cost, (list, tuple)) else [cost] * len(starts)
        run = Run(bound=max_htm, best_cost=INF if max_cost is None else max_cost + 0.5, cost=costs[0],
                  htm_bound=htm_bound, deadline=deadline if hard_deadline else None, limit=deadline, clock=clock)
        searches = [(i, self._start(run, c)) for i, c in enumerate(starts)]
        try:
            while searches:
                for entry in list(searches):
                    run.turn_ends = clock() + TURN_SECONDS
                    run.cost = costs[entry[0]]
                    for moves in entry[1]:
                        if moves is None:
                            break
                        run.deadline = deadline
                        yield entry[0], moves
                        if not moves:
                            return
                    else:
                        searches.remove(entry)
        except OutOfTime:
            return
