"""robot.square_released_arms: a released pair's arms turn back square before the other pair turns.

With the reference gripper two perpendicular arms both a quarter round meet at the cube's edges
(docs/hardware.md); the safe model keeps at most one pair off square (docs/solver.md).  Here: the
plan's restore (a Turn in the air), its cost, the rule replay checks, and (slow) that the solver's
plans under the setting cost exactly the independent exhaustive optimum
(tests/test_solver_optimality.py's reference, which follows the same rule) and never turn a pair
while an arm of the other stands a quarter round.
"""

import numpy as np
import pytest

from conftest import copy_tables
from robot import config as config_module
from robot import cube
from robot.plan import Grip, Plan, RobotProfile, Turn, action_from_json, replay
from robot.solver import Solver
from robot.solver.costs import CostModel
from robot.solver.tables import turn_face_indices


def square_config(tables_dir=None):
    changes: dict = {"robot.square_released_arms": True}
    if tables_dir is not None:
        changes["tables.dir"] = str(tables_dir)
    return config_module.with_settings(config_module.load(), changes)


def profiles():
    base = config_module.load()
    return RobotProfile.from_config(base), RobotProfile.from_config(square_config())


def test_the_setting_is_off_by_default_and_changes_the_tables_fingerprint_only_when_on():
    today, square = profiles()
    assert not today.square_released and square.square_released
    assert "square_released_arms" not in today.describe()  # tables built before the setting stay valid
    assert square.describe()["square_released_arms"] is True
    assert square.describe() != today.describe()  # so switching it on rebuilds the cost table


def test_the_cost_model_tracks_the_holding_pairs_quarter_arms_only_when_on():
    today, square = profiles()
    off, on = CostModel(today, turn_face_indices), CostModel(square, turn_face_indices)
    assert (off.n_parities, on.n_parities) == (1, 4)
    assert on.n_rows == 4 * off.n_rows
    rl, fb = square.pair_names.index("RL"), square.pair_names.index("FB")
    plain = on.regrip[rl][0][fb][(180,)]
    assert on.hand_over(rl, 0, fb, (180,), 0) == plain
    # R or L (or both) a quarter round: the GRIP waits as before a quarter turn, then they turn back.
    before_quarter = square.regrip_kind_cost("FB", "RL", (90,), (90,))
    for parity in (1, 2, 3):
        assert on.hand_over(rl, 0, fb, (180,), parity) == before_quarter + square.quarter_turn_ms
    masks = {tuple(sorted(o.turn.arms.items())): o.mask for o in on.turns[rl]}
    assert masks[(("L", 90), ("R", 180))] == 0b10 and masks[(("R", -90),)] == 0b01
    assert all(o.mask == 0 for options in off.turns for o in options)


def test_replay_checks_the_rule_and_charges_the_restore():
    today, square = profiles()
    clash = [Grip("RL"), Turn({"R": 90}), Grip("FB"), Turn({"F": 90})]
    restored = [Grip("RL"), Turn({"R": 90}), Grip("FB"), Turn({"R": -90}, air=True), Turn({"F": 90})]
    state = cube.SOLVED
    replay(state, clash, today)  # today's model: allowed
    with pytest.raises(ValueError, match="stands a quarter round"):
        replay(state, clash, square)
    final, cost = replay(state, restored, square)
    assert final == state.apply("R F")  # the restore does not move the cube
    assert cost == 80 + square.regrip_kind_cost("FB", "RL", (90,), (90,)) + 80 + 80
    with pytest.raises(ValueError, match="in the air"):
        replay(state, restored, today)  # no restores without the setting
    with pytest.raises(ValueError, match="only an arm a quarter round"):
        replay(state, [Grip("RL"), Turn({"R": 180}), Grip("FB"), Turn({"R": -90}, air=True)], square)
    # A restore only right after the GRIP that released its arms.
    with pytest.raises(ValueError, match="in the air"):
        replay(state, [Grip("RL"), Turn({"R": 180}), Grip("FB"), Turn({"F": 180}), Turn({"R": -90}, air=True)],
               square)
    # Arms that start a quarter round count too.
    with pytest.raises(ValueError, match="arm F"):
        replay(state, [Grip("RL"), Turn({"R": 180})], square, start_angles={"F": 90})


def test_a_turn_in_the_air_moves_no_face_and_keeps_its_flag_in_json():
    restore = Turn({"R": -90, "L": 90}, air=True)
    assert restore.moves() == [] and "in the air" in restore.notation()
    assert action_from_json(restore.to_json()) == restore
    assert action_from_json(Turn({"R": 90}).to_json()) == Turn({"R": 90}) != Turn({"R": 90}, air=True)
    plan = Plan("x" * 24, [Grip("RL"), Turn({"R": 90}), Grip("FB"), Turn({"R": -90}, air=True), Turn({"F": 2 * 90})],
                0)
    assert plan.moves == "R F2"
    assert (plan.turn_count, plan.restore_count, plan.regrip_count) == (2, 1, 1)


@pytest.fixture(scope="module")
def square_solver(tmp_path_factory):
    """Tables built for the default config (the setting off); with it on they are rebuilt."""
    folder = copy_tables(tmp_path_factory.mktemp("square") / "tables")
    messages: list = []
    solver = Solver(square_config(folder), log=messages.append)
    assert any("was built for robot profile" in m and "rebuilding" in m for m in messages), messages
    return solver


def arm_angles(actions, start=None) -> list:
    """Where every arm stands (mod 360) after each action."""
    angle = {face: 0 for face in "RLFB"} | dict(start or {})
    out = []
    for action in actions:
        if isinstance(action, Turn):
            for face, degrees in action.arms.items():
                angle[face] = (angle[face] + degrees) % 360
        out.append(dict(angle))
    return out


@pytest.mark.slow
def test_square_plans_are_optimal_and_never_meet(square_solver):
    """The exhaustive reference (tests/test_solver_optimality.py) under the same rule; every plan
    replays under the rule (no pair turns while an arm of the other stands a quarter round), its
    restores turn each arm back towards 0, and it costs the sum of its actions."""
    from test_solver_optimality import Exhaustive

    solver = square_solver
    profile = solver.profile
    assert profile.square_released and solver.tables.robot_cost.shape[0] == 8
    reference = Exhaustive(profile)
    names = profile.pair_names
    rng = np.random.default_rng(21)
    restores = 0
    for _ in range(60):
        state = cube.random_state(rng)
        facelets = state.to_facelets()
        for start, pairs in (("any", [0, 1]), ("RL", [names.index("RL")]), ("FB", [names.index("FB")])):
            plan = solver.solve(facelets, start_grip=start)
            assert plan.cost_ms == reference.optimum(facelets, pairs) == profile.plan_cost(plan.actions), facelets
            final, cost = replay(state, plan.actions, profile)
            assert final.is_solved() and cost == plan.cost_ms
            restores += plan.restore_count
            for action, after in zip(plan.actions, arm_angles(plan.actions)):
                if isinstance(action, Turn) and action.air:
                    assert all(after[face] == 0 for face in action.arms), plan.actions
        # FB holds at the start with both arms a quarter round (the default 4-view scan's end).
        start_angles = {"F": 270, "B": 90}
        plan = solver.solve(facelets, start_grip="FB", start_angles=start_angles)
        assert plan.cost_ms == reference.optimum(facelets, [names.index("FB")], arms=0b11), facelets
        final, cost = replay(state, plan.actions, profile, start_angles=start_angles)
        assert final.is_solved() and cost == plan.cost_ms
        # With FB off square RL cannot start: 'any' starts with FB.
        assert solver.solve(facelets, start_grip="any", start_angles=start_angles).start_pair == "FB"
    assert restores > 60  # the rule binds: most plans turn a released arm back
