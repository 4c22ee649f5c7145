"""IDA* over (cube state in the robot frame, holding pair, class of the last turn, quarter parity of the
holding pair's arms), minimising plan duration.

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

from ..plan import Grip, RobotProfile, Turn
from .coords import FACE_TURNS, N_CO8, N_CP8, SOLVED_INDEX, CoordTables
from .costs import CostModel
from .tables import METRIC_TURNS, UNREACHABLE, UNSEEN, turn_face_indices

FOUND = -1


class Unsolvable(ValueError):
    """The arm layout cannot reach solved from this state."""


class RobotSearch:
    """Nodes are (state, holding pair, class of the last turn, quarter parity of the holding pair's
    arms: always 0 unless robot.square_released_arms); a regrip is one step with the turn after it
    (and the released arms' restore: solver/costs.py).  The plan's start has no last turn: its
    value is the start's one expansion onto the table (start_h)."""

    def __init__(self, coords: CoordTables, robot_cost, profile: RobotProfile):
        self.profile = profile
        self.model = CostModel(profile, turn_face_indices)
        fast = coords.fast()
        self._cp_move = fast["cp_move"]
        self._co_move = fast["co_move"]
        self.index = coords.scalar_indexer()
        self._cost = [memoryview(robot_cost[row]) for row in range(self.model.n_rows)]
        # For each pair, class of the last turn (START last) and quarter parity: its steps, cheapest
        # first (the plan prefers them on ties), each (flat cp_move offsets, flat co_move offsets,
        # cost, next pair, next class, next parity, table row after it, actions); the holding pair's
        # own turns come first.
        model = self.model
        self._steps_of = []
        for p in range(model.n_pairs):
            by_class = []
            for klass in range(model.n_classes + 1):
                by_parity = []
                for parity in range(model.n_parities):
                    steps = []
                    for q in [p] + [q for q in range(model.n_pairs) if q != p]:
                        grip: tuple = () if q == p else (Grip(self.profile.pairs[q][0]),)
                        if q != p and parity:
                            grip += (model.restore_turn(p, parity),)
                        for o in model.turns[q]:
                            cost = o.cost + model.hand_over(p, klass, q, o.kind, parity)
                            after = parity ^ o.mask if q == p else o.mask
                            steps.append((tuple(t * N_CP8 for t in o.faces), tuple(t * N_CO8 for t in o.faces),
                                          cost, q, o.klass, after, model.row(q, o.klass, after), grip + (o.turn,)))
                    steps.sort(key=lambda step: (step[3] != p, step[2]))
                    by_parity.append(steps)
                by_class.append(by_parity)
            self._steps_of.append(by_class)

    def h(self, cp8: int, co8: int, pair: int, klass: int, parity: int = 0) -> int:
        """Cost to solved after a turn of class `klass` by `pair` (START: from the plan's start) with
        its arms at that quarter parity."""
        if klass == self.model.start_class():
            return self.start_h(cp8, co8, pair, parity)
        return self._cost[self.model.row(pair, klass, parity)][self.index(cp8, co8)]

    def start_h(self, cp8: int, co8: int, pair: int, parity: int = 0) -> int:
        """Cost to solved when `pair` holds at the start: the best first step onto the table."""
        if self.index(cp8, co8) == SOLVED_INDEX:
            return 0
        return min(total for total, *_ in self._steps(cp8, co8, pair, self.model.start_class(), parity))

    def _steps(self, cp8, co8, pair, klass, parity=0):
        """(step cost + cost to solved after it, step cost, next pair, next class, next parity, actions,
        cp8, co8) of each step from a node: the holding pair's turns, then each regrip with the other
        pair's turn."""
        cp_move, co_move, cost_rows, index = self._cp_move, self._co_move, self._cost, self.index
        for cp_offsets, co_offsets, step, q, next_class, after, row, actions in self._steps_of[pair][klass][parity]:
            x, y = cp8, co8
            for a, b in zip(cp_offsets, co_offsets):
                x = cp_move[a + x]
                y = co_move[b + y]
            yield step + cost_rows[row][index(x, y)], step, q, next_class, after, actions, x, y

    def start_parity(self, pair: int, start_angles) -> int:
        """The quarter parity of `pair`'s arms standing at `start_angles` (face -> degrees; a face not
        named stands at 0); 0 when the model does not track it."""
        if not self.model.square:
            return 0
        return sum(1 << i for i, face in enumerate(self.model.faces[pair]) if start_angles.get(face, 0) % 180)

    def solve(self, cp8: int, co8: int, start_pairs, start_angles=None) -> tuple[int, list]:
        """(cost, actions) of a cheapest plan; start_pairs: pair indices allowed to hold first;
        start_angles: where the arms stand at the start (face -> degrees; None: every arm at 0)."""
        start_angles = dict(start_angles or {})
        start = self.model.start_class()
        if self.model.square:  # no pair starts while another pair's arm stands a quarter round
            start_pairs = [p for p in start_pairs if not any(
                self.start_parity(q, start_angles) for q in range(self.model.n_pairs) if q != p)]
            if not start_pairs:
                raise ValueError(f"at the start (arm angles {start_angles}) an arm of a pair other than the start "
                                 "pair stands a quarter round: robot.square_released_arms needs it square")
        parities = {p: self.start_parity(p, start_angles) for p in start_pairs}
        starts = sorted(start_pairs, key=lambda p: (self.start_h(cp8, co8, p, parities[p]), p))
        pair = starts[0]
        bound = self.start_h(cp8, co8, pair, parities[pair])
        if bound >= UNREACHABLE:
            raise Unsolvable("this arm layout cannot solve the cube from this state")
        path: list = []
        while True:
            result = self._dfs(cp8, co8, pair, start, parities[pair], 0, bound, path)
            if result == FOUND:
                actions = [Grip(self.profile.pairs[pair][0])] + path
                return bound, orient_restores(actions, self.profile, start_angles)
            bound = result

    def _dfs(self, cp8, co8, pair, klass, parity, g, bound, path):
        estimate = self.h(cp8, co8, pair, klass, parity)
        f = g + estimate
        if f > bound:
            return f
        if estimate == 0:
            return FOUND
        lowest = UNREACHABLE * 64
        for total, step, q, next_class, after, actions, x, y in self._steps(cp8, co8, pair, klass, parity):
            if g + total > bound:
                lowest = min(lowest, g + total)
                continue  # cheap check before recursing
            path.extend(actions)
            result = self._dfs(x, y, q, next_class, after, g + step, bound, path)
            if result == FOUND:
                return FOUND
            del path[-len(actions):]
            lowest = min(lowest, result)
        return lowest


def orient_restores(actions: list, profile: RobotProfile, start_angles: dict) -> list:
    """Each restore (a Turn of the pair a Grip just released) turns its arms back towards 0 from
    where they stand (+90 from 270, -90 from 90), so the arms wind no further than a turn takes them."""
    angle = {face: start_angles.get(face, 0) % 360 for _, faces in profile.pairs for face in faces}
    out = []
    for action in actions:
        if isinstance(action, Turn) and action.air:
            action = Turn({face: 90 if angle[face] == 270 else -90 for face in action.arms}, air=True)
        if isinstance(action, Turn):
            for face, degrees in action.arms.items():
                angle[face] = (angle[face] + degrees) % 360
        out.append(action)
    return out


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

