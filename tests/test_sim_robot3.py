"""The virtual 3x3x3 on four arms (robot/sim/virtual_robot3.py): moved only by gripper and step events,
with docs/robot3.md's jam rules, each caught with its evidence."""

import numpy as np
import pytest

from robot import config as config_module
from robot.plan3 import Robot3Profile
from robot.sim.virtual_robot import MechanicalError
from robot.sim.virtual_robot3 import NOT_MODELLED, Jam3, VirtualRobot3, apply_events, op_events
from robot.solver3 import cube3
from robot3_checker import IllegalPlan, RobotReplay, check_plan

STEPS = 400
Q = STEPS // 4


@pytest.fixture(scope="module")
def profile():
    return Robot3Profile.from_config(config_module.defaults())


def scrambled(text):
    return cube3.to_facelets(cube3.apply(cube3.solved(), cube3.parse_moves(text)))


def robot(profile, facelets=cube3.SOLVED_FACELETS):
    return VirtualRobot3(profile, facelets, steps_per_rev=STEPS)


def test_a_solver_plan_replayed_as_arm_events_solves_the_cube_as_the_checker_says(profile, session_tables3):
    from robot.solver3 import robot_search

    facelets = cube3.to_facelets(cube3.random_state(np.random.default_rng(26)))
    plan = robot_search.solve_robot(facelets, config_module.defaults(), time_limit=0.3)
    assert check_plan(facelets, plan.ops, plan.cost_ms, profile) == plan.cost_ms  # the checker's verdict: solves
    assert any(op["op"] == "tilt" for op in plan.ops)
    virtual = robot(profile, facelets)
    events = op_events(plan.ops, profile, STEPS)
    assert {kind for _, kind, _, _ in events} == {"grip", "turn"}
    apply_events(virtual, events)
    assert virtual.is_solved() and not virtual.jams
    assert all(virtual.closed.values())
    # step by step, the virtual cube and the checker's sticker model agree (same colours in every place)
    virtual, checker = robot(profile, facelets), RobotReplay(facelets, profile)
    centres = [facelets[9 * f + 4] for f in range(6)]
    for i, op in enumerate(plan.ops):
        virtual.apply_op(op)
        checker.step(i, op)
        assert [centres.index(c) for c in virtual.facelets()] == list(checker.colours)


def test_a_plan_the_checker_refuses_jams_the_virtual_cube(profile):
    facelets = scrambled("R U")
    ops = [{"op": "turn", "arms": {"R": 90}}, {"op": "turn", "arms": {"F": 90}}]  # R at 90 blocks F's layer
    with pytest.raises(IllegalPlan):
        check_plan(facelets, ops, 0, profile)
    virtual = robot(profile, facelets)
    virtual.apply_op(ops[0])
    with pytest.raises(Jam3) as jam:
        virtual.apply_op(ops[1])
    assert jam.value.rule == "blocked"


def test_a_closed_arm_turns_only_its_outer_layer(profile):
    virtual = robot(profile)
    virtual.turn_arm("R", Q, at_ms=0.0)
    assert virtual.facelets() == scrambled("R")
    virtual.turn_arm("R", -Q, at_ms=100.0)
    virtual.turn_arm("F", 2 * Q, at_ms=200.0)  # R is back at 0: F's layer turns
    assert virtual.facelets() == scrambled("F2") and virtual.history == [("R", 90), ("R", -90), ("F", 180)]


def test_a_tilt_turns_the_whole_cube(profile):
    virtual = robot(profile, scrambled("U"))
    virtual.set_gripper("F", False, 0.0)
    virtual.set_gripper("B", False, 0.0)
    virtual.turn_arm("R", Q, 95.0)
    virtual.turn_arm("L", -Q, 95.0)  # the same way in space
    virtual.set_gripper("F", True, 175.0)
    virtual.set_gripper("B", True, 175.0)
    virtual.finish()
    # the whole cube turned about R: U's layer is now at the back, every face's centre moved
    assert virtual.history == [("tilt", "R", 90)]
    assert virtual.facelets()[4] == "F" and virtual.facelets()[9 * 5 + 4] == "U"  # F came up, U went back
    assert virtual.gripper_angle("R") == 90 and virtual.gripper_angle("L") == 90


def test_jam_a_layer_turning_while_a_gripper_of_the_other_pair_stands_at_90(profile):
    virtual = robot(profile)
    virtual.turn_arm("F", Q, 10.0)  # F's gripper now stands at 90 across R's layer
    with pytest.raises(Jam3) as jam:
        virtual.turn_arm("R", Q, 123.5)
    evidence = jam.value.evidence
    assert jam.value.rule == "blocked" and evidence["arm"] == "R" and evidence["at_ms"] == 123.5
    assert evidence["grippers"]["F"] == "closed at 90" and evidence["grippers"]["B"] == "closed at 0"
    assert "arm R" in str(jam.value) and "F closed at 90" in str(jam.value) and "123.5 ms" in str(jam.value)
    assert isinstance(jam.value, MechanicalError) and virtual.jams == [jam.value]


def test_jam_a_layer_turning_while_a_gripper_of_the_other_pair_is_open(profile):
    virtual = robot(profile)
    virtual.set_gripper("B", False, 0.0)
    virtual.turn_arm("R", Q, 50.0)  # nothing yet: a tilt if L turns the same way at once
    with pytest.raises(Jam3) as jam:
        virtual.set_gripper("B", True, 200.0)  # L never followed: R turned its layer alone, the middle unsupported
    assert jam.value.rule == "unsupported" and jam.value.evidence["arm"] == "R"
    assert jam.value.evidence["at_ms"] == 50.0 and jam.value.evidence["grippers"]["B"] == "open at 0"
    # the same, caught at the end of the events (a sync's end)
    virtual = robot(profile)
    virtual.set_gripper("F", False)
    virtual.set_gripper("B", False)
    virtual.turn_arm("L", Q)
    with pytest.raises(Jam3, match="middle slice is unsupported"):
        virtual.finish()


def test_jam_a_tilt_while_the_other_pair_is_closed(profile):
    virtual = robot(profile)
    virtual.set_gripper("F", False, 0.0)  # B still closed on the cube
    virtual.turn_arm("R", Q, 95.0)
    with pytest.raises(Jam3) as jam:
        virtual.turn_arm("L", -Q, 95.0)
    assert jam.value.rule == "tilt-closed" and "B" in str(jam.value)
    assert jam.value.evidence["grippers"]["B"] == "closed at 0" and jam.value.evidence["at_ms"] == 95.0
    # a plan's tilt op with the other pair fully closed (the mock knows what was meant)
    with pytest.raises(Jam3) as jam:
        robot(profile).apply_op({"op": "tilt", "arms": {"F": 90, "B": -90}})
    assert jam.value.rule == "tilt-closed" and "R, L" in str(jam.value)


def test_jam_a_gripper_closing_between_positions(profile):
    virtual = robot(profile)
    virtual.set_gripper("R", False, 0.0)
    virtual.turn_arm("R", Q // 3, 10.0)  # an open arm may stop anywhere
    with pytest.raises(Jam3) as jam:
        virtual.set_gripper("R", True, 80.0)
    assert jam.value.rule == "between-positions" and jam.value.evidence["arm"] == "R"
    assert f"{Q // 3} steps past a quarter" in jam.value.evidence["grippers"]["R"]
    assert jam.value.evidence["at_ms"] == 80.0


def test_jam_the_last_holding_gripper_opens(profile):
    virtual = robot(profile)
    virtual.set_gripper("F", False)
    with pytest.raises(Jam3, match="falls") as jam:
        virtual.set_gripper("R", False, 5.0)
    assert jam.value.rule == "dropped"


def test_tilt_partners_must_start_together(profile):
    virtual = robot(profile)
    virtual.set_gripper("F", False, 0.0)
    virtual.set_gripper("B", False, 0.0)
    virtual.turn_arm("R", Q, 100.0)
    with pytest.raises(Jam3, match="unsupported"):  # L turned a whole second later: not one tilt
        virtual.turn_arm("L", -Q, 1100.0)


def test_the_docstring_says_what_a_rigid_simulation_does_not_show():
    from robot.sim import virtual_robot3

    assert "slipping during a tilt" in " ".join(virtual_robot3.__doc__.split()) and "slipping during a tilt" in NOT_MODELLED
    assert "SIMULATED" in NOT_MODELLED
