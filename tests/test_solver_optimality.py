"""Optimality: solver plans cost exactly what an independent exhaustive method says is optimal.

The reference here shares no code with robot/solver: it works on facelet
arrays (robot.cube.FACELET_MOVES only), enumerates every state by
breadth-first search, canonicalises by recolouring, and computes the exact
cost-to-go of every (holding pair, kind of the turn just made, state) by value
iteration (Bellman-Ford sweeps until nothing changes) instead of the solver's
bucketed Dijkstra over classes of kinds; each regrip costs what the profile
says for the turns on either side of it (plan.RobotProfile.regrip_kind_cost).
With robot.square_released_arms (profile.square_released) a node also carries
which arms of the holding pair stand a quarter round, and a regrip that releases
any such arm is followed by their quarter turn back in the air (the regrip then
costs as before a quarter turn): tests/test_solver_square.py.
Takes a few minutes.
"""

import itertools

import numpy as np
import pytest

from conftest import copy_tables
from robot import config as config_module
from robot import cube
from robot.plan import RobotProfile
from robot.solver import Solver

pytestmark = pytest.mark.slow

D3, B4, L3 = (cube.facelet_index(n) for n in ("D3", "B4", "L3"))
KEPT = [i for i in range(24) if i not in (D3, B4, L3)]  # the DBL stickers are fixed once recoloured
COLOUR = {face: i for i, face in enumerate(cube.FACES)}  # U R F D L B -> 0..5; opposite = +3 mod 6


def recolour(facelets: np.ndarray) -> np.ndarray:
    """Rename colours so the DBL corner reads D, B, L (a 2x2x2 has no centres)."""
    n = len(facelets)
    mapping = np.zeros((n, 6), dtype=np.uint8)
    rows = np.arange(n)
    for facelet, face in ((D3, "D"), (B4, "B"), (L3, "L")):
        colour = facelets[:, facelet]
        mapping[rows, colour] = COLOUR[face]
        mapping[rows, (colour + 3) % 6] = (COLOUR[face] + 3) % 6
    return mapping[rows[:, None], facelets]


def pack(facelets: np.ndarray) -> np.ndarray:
    keys = np.zeros(len(facelets), dtype=np.int64)
    for i in KEPT:
        keys = (keys << 3) | facelets[:, i].astype(np.int64)
    return keys


def turn(facelets: np.ndarray, move: str) -> np.ndarray:
    return facelets[:, np.array(cube.FACELET_MOVES[move])]


class Exhaustive:
    def __init__(self, profile: RobotProfile):
        self.square = profile.square_released
        solved = np.array([[COLOUR[c] for c in cube.SOLVED_FACELETS]], dtype=np.uint8)
        generators = sorted({face for _, faces in profile.pairs for face in faces})
        # Breadth-first enumeration of every canonical state.
        frontier, seen_keys, all_states = solved, pack(solved), [solved]
        while len(frontier):
            found = np.concatenate([recolour(turn(frontier, m)) for m in generators])
            keys, first = np.unique(pack(found), return_index=True)
            new = ~np.isin(keys, seen_keys, assume_unique=True)  # both sets of distinct keys: no hashing
            frontier = found[first[new]]
            seen_keys = np.concatenate([seen_keys, keys[new]])
            all_states.append(frontier)
        states = np.concatenate(all_states)
        order = np.argsort(seen_keys)
        self.keys = seen_keys[order]
        states = states[order]
        assert len(self.keys) == 3_674_160
        quarter = {m: np.searchsorted(self.keys, pack(recolour(turn(states, m)))) for m in generators}
        del states
        # Successor arrays, durations and kinds of every turn of every pair.
        angle_power = {90: 1, 180: 2, -90: 3}
        self.names = profile.pair_names
        self.pairs = []
        for _, faces in profile.pairs:
            options = []
            for angles in itertools.product((0,) + profile.turn_angles, repeat=len(faces)):
                if not any(angles):
                    continue
                succ = np.arange(len(self.keys))
                for face, angle in zip(faces, angles):
                    for _ in range(angle_power[angle] if angle else 0):
                        succ = quarter[face][succ]
                duration = max(profile.half_turn_ms if abs(a) == 180 else profile.quarter_turn_ms
                               for a in angles if a)
                kind = tuple(sorted({abs(a) for a in angles if a}))  # what a regrip next to it sees
                # Which of the pair's arms end a quarter round further (bit i: arm i), when tracked.
                flips = sum(1 << i for i, a in enumerate(angles) if abs(a) == 90) if self.square else 0
                options.append((succ, duration, kind, flips))
            self.pairs.append(options)
        self.kinds = sorted({kind for options in self.pairs for _, _, kind, _ in options})
        # Value iteration over (pair, kind of the turn just made, quarter arms of the holding pair,
        # state): cost-to-go = min over a turn (its duration) or a regrip then a turn (the profile's
        # cost of that regrip between those two kinds of turn, plus the turn's duration; with arms
        # a quarter round released: the regrip before a quarter turn, then a quarter turn back in
        # the air), + the cost-to-go after it.  int32: a million times the longest plan fits.
        big = 10**9
        n = len(self.keys)
        solved_index = np.searchsorted(self.keys, pack(recolour(solved)))[0]
        self.solved_index = solved_index
        self.arm_sets = range(4 if self.square else 1)  # bit i: the holding pair's arm i a quarter round
        cost = {(p, k, b): np.full(n, big, dtype=np.int32)
                for p in range(len(self.pairs)) for k in self.kinds for b in self.arm_sets}
        for value in cost.values():
            value[solved_index] = 0
        self.profile = profile
        changed = True
        while changed:
            changed = False
            own, taken = self._then(cost)
            for (p, before, b), value in cost.items():
                best = self._best(p, before, b, own, taken)
                if (best < value).any():
                    cost[p, before, b] = np.minimum(value, best)
                    changed = True
        self.cost = cost
        own, taken = self._then(cost)
        # No turn before the first regrip; `start[b][p]`: pair p holds with those arms a quarter round.
        self.start = [[self._best(p, None, b, own, taken) for p in range(len(self.pairs))] for b in self.arm_sets]

    def _then(self, cost):
        """own[p, b]: the best turn by holding pair p whose arms b stand a quarter round, plus the
        cost-to-go after it; taken[q, kind]: the same for a turn of that kind by q just after it took
        the cube (its arms square)."""
        own, taken = {}, {}
        for q, options in enumerate(self.pairs):
            for succ, duration, kind, flips in options:
                for b in self.arm_sets:
                    value = cost[q, kind, b ^ flips][succ] + duration
                    own[q, b] = value if (q, b) not in own else np.minimum(own[q, b], value)
                    if b == 0:
                        taken[q, kind] = value if (q, kind) not in taken else np.minimum(taken[q, kind], value)
        return own, taken

    def _best(self, p, before, b, own, taken):
        best = own[p, b].copy()
        for (q, kind), value in taken.items():
            if q == p:
                continue
            if b:  # the released arms turn back a quarter in the air before q's turn
                extra = self.profile.regrip_kind_cost(self.names[q], self.names[p], before, (90,)) \
                    + self.profile.quarter_turn_ms
            else:
                extra = self.profile.regrip_kind_cost(self.names[q], self.names[p], before, kind)
            np.minimum(best, value + extra, out=best)
        best[self.solved_index] = 0
        return best

    def optimum(self, facelets: str, start_pairs, arms: int = 0) -> int:
        """From the start: no turn before the first regrip (`before` None); `arms`: the start pair's
        arms a quarter round (bit i: its arm i)."""
        array = np.array([[COLOUR[c] for c in facelets]], dtype=np.uint8)
        index = np.searchsorted(self.keys, pack(recolour(array)))[0]
        return min(int(self.start[arms][p][index]) for p in start_pairs)


@pytest.fixture(scope="module")
def setup():
    config = config_module.load()
    profile = RobotProfile.from_config(config)
    return Solver(config), profile, Exhaustive(profile)


def test_reference_reproduces_state_count_and_known_values(setup):
    solver, profile, reference = setup
    assert reference.optimum(cube.SOLVED_FACELETS, [0, 1]) == 0
    one_quarter = cube.apply_moves(cube.SOLVED_FACELETS, "R")
    assert reference.optimum(one_quarter, [0]) == profile.quarter_turn_ms  # RL holds: R' fixes it
    # FB holds: a regrip with no turn before it, then the quarter turn.
    assert reference.optimum(one_quarter, [1]) == \
        profile.quarter_turn_ms + profile.regrip_kind_cost("RL", "FB", None, (90,))


@pytest.mark.parametrize("start", ["any", "RL", "FB"])
def test_plans_are_optimal_on_random_states(setup, start):
    solver, profile, reference = setup
    rng = np.random.default_rng({"any": 11, "RL": 12, "FB": 13}[start])
    names = profile.pair_names
    start_pairs = range(len(names)) if start == "any" else [names.index(start)]
    for _ in range(120):
        state = cube.random_state(rng)
        facelets = state.to_facelets()
        plan = solver.solve(facelets, start_grip=start)
        assert plan.cost_ms == reference.optimum(facelets, start_pairs), facelets
        if start != "any":
            assert plan.start_pair == start


def test_plans_are_optimal_when_a_regrip_depends_on_the_turn_before_it(tmp_path):
    """A fast servo: the taking jaws may start closing earlier before a quarter turn's end than before
    a half turn's, so a regrip's cost depends on the turn before it and the table has a row per
    class of the last turn (solver/costs.py).  Still exactly the reference's optimum."""
    config = config_module.with_settings(config_module.load(), {
        "motion.servo_speed_us_per_ms": 8.0, "tables.dir": str(copy_tables(tmp_path / "tables", names=("coords.npz",)))})
    profile = RobotProfile.from_config(config)
    costs = {ms for (_, _, before, after), ms in profile.regrips if before and after}
    assert len(costs) > 1, costs  # the neighbours matter with these settings
    solver, reference = Solver(config, log=lambda m: None), Exhaustive(profile)
    assert solver.tables.robot_cost.shape[0] > len(profile.pairs)
    rng = np.random.default_rng(14)
    for _ in range(40):
        state = cube.random_state(rng)
        facelets = state.to_facelets()
        for start, pairs in (("any", [0, 1]), ("RL", [0]), ("FB", [1])):
            plan = solver.solve(facelets, start_grip=start)
            assert plan.cost_ms == reference.optimum(facelets, pairs) == profile.plan_cost(plan.actions), facelets
