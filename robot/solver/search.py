"""IDA* over (cube state in the robot frame, holding pair), minimising plan duration.

The heuristic is the exact cost-to-go table (tables.robot-cost.npy), which is
also the near-solved lookup: every state is in it, so h(state) is the cost of
the cheapest plan and IDA* completes in its first iteration, walking only
along optimal successors (f = g + h never exceeds the bound on an optimal
path, and every other successor is cut at once).  The loop and the bound
update are kept so that a weaker admissible heuristic (a smaller table, or a
profile whose table is partial) still gives optimal plans.

States are robot-frame coordinates (cp8, co8) (solver/coords.py); the table
is indexed by their canonical relabelling.
"""

from __future__ import annotations

from ..plan import Grip, RobotProfile
from .coords import FACE_TURNS, N_CO8, N_CP8, CoordTables
from .tables import METRIC_TURNS, UNREACHABLE, UNSEEN, turn_face_indices

FOUND = -1


class Unsolvable(ValueError):
    """The arm layout cannot reach solved from this state."""


class RobotSearch:
    def __init__(self, coords: CoordTables, robot_cost, profile: RobotProfile):
        self.profile = profile
        fast = coords.fast()
        self._cp_move = fast["cp_move"]
        self._co_move = fast["co_move"]
        self.index = coords.scalar_indexer()
        self._cost = [memoryview(robot_cost[p]) for p in range(len(profile.pairs))]
        # For each pair: (flat cp_move offsets, flat co_move offsets, cost, Turn).
        self._turns = []
        for name, _ in profile.pairs:
            options = []
            for turn in profile.turns_of(name):
                faces = turn_face_indices(turn)
                options.append((tuple(t * N_CP8 for t in faces), tuple(t * N_CO8 for t in faces),
                                profile.cost(turn), turn))
            options.sort(key=lambda o: o[2])  # cheap turns first: the plan prefers them on ties
            self._turns.append(options)

    def h(self, cp8: int, co8: int, pair: int) -> int:
        return self._cost[pair][self.index(cp8, co8)]

    def solve(self, cp8: int, co8: int, start_pairs) -> tuple[int, list]:
        """(cost, actions) of a cheapest plan; start_pairs: pair indices allowed to hold first."""
        starts = sorted(start_pairs, key=lambda p: (self.h(cp8, co8, p), p))
        pair = starts[0]
        bound = self.h(cp8, co8, pair)
        if bound >= UNREACHABLE:
            raise Unsolvable("this arm layout cannot solve the cube from this state")
        path: list = []
        while True:
            result = self._dfs(cp8, co8, pair, 0, bound, path, False)
            if result == FOUND:
                actions = [Grip(self.profile.pairs[pair][0])] + path
                return bound, actions
            bound = result

    def _dfs(self, cp8, co8, pair, g, bound, path, after_regrip):
        estimate = self.h(cp8, co8, pair)
        f = g + estimate
        if f > bound:
            return f
        if estimate == 0:
            return FOUND
        lowest = UNREACHABLE * 64
        cp_move, co_move = self._cp_move, self._co_move
        for cp_offsets, co_offsets, cost, turn in self._turns[pair]:
            x, y = cp8, co8
            for a, b in zip(cp_offsets, co_offsets):
                x = cp_move[a + x]
                y = co_move[b + y]
            if g + cost + self.h(x, y, pair) > bound:
                continue  # cheap check before recursing
            path.append(turn)
            result = self._dfs(x, y, pair, g + cost, bound, path, False)
            if result == FOUND:
                return FOUND
            path.pop()
            lowest = min(lowest, result)
        if not after_regrip:  # two regrips in a row are never useful
            for other in range(len(self._cost)):
                if other == pair:
                    continue
                path.append(Grip(self.profile.pairs[other][0]))
                result = self._dfs(cp8, co8, other, g + self.profile.regrip_ms, bound, path, True)
                if result == FOUND:
                    return FOUND
                path.pop()
                lowest = min(lowest, result)
        return lowest


class MetricSearch:
    """Greedy descent of an exact htm/qtm distance table (U, R, F turns; DBL fixed)."""

    def __init__(self, coords: CoordTables, distances, metric: str):
        fast = coords.fast()
        self.index = coords.scalar_indexer()
        self._cp_move, self._co_move = fast["cp_move"], fast["co_move"]
        self._dist = memoryview(distances)
        self._turns = [FACE_TURNS.index(m) for m in METRIC_TURNS[metric]]

    def solve(self, cp8: int, co8: int) -> list[str]:
        distance = self._dist[self.index(cp8, co8)]
        if distance == UNSEEN:
            raise Unsolvable("state not in the distance table")
        moves = []
        while distance:
            for t in self._turns:
                x = self._cp_move[t * N_CP8 + cp8]
                y = self._co_move[t * N_CO8 + co8]
                d = self._dist[self.index(x, y)]
                if d == distance - 1:
                    moves.append(FACE_TURNS[t])
                    cp8, co8, distance = x, y, d
                    break
            else:  # pragma: no cover - only a corrupt table gets here
                raise Unsolvable("distance table is inconsistent")
        return moves

