"""The simulated robot starts with the cube loaded as `cube-robot load` leaves it, and the scan's
waterfall charges no arm time for a GRIP to the pair that already holds."""

import pytest

from robot import config as config_module
from robot import cube
from robot.plan import Grip, Turn
from robot.sim.robot_sim import SimulatedRobot
from robot.arms.view_mover import ArmViewMover, charged_actions, holding_after, holding_from_grippers
from robot.vision.scan import ScanView
from conftest import scratch_config


def test_a_grip_to_the_pair_that_holds_is_not_charged():
    actions = [Grip("RL"), Turn({"R": 180, "L": 180}), Grip("FB"), Grip("FB"), Turn({"F": 90, "B": -90})]
    assert charged_actions(actions, "RL") == actions[1:3] + actions[4:]
    assert charged_actions(actions, "FB") == actions[:3] + actions[4:]  # FB lets go when RL takes the cube
    assert charged_actions(actions, None) == actions[:3] + actions[4:]  # unknown: the first grip is charged
    assert holding_after(actions, "RL") == "FB"
    assert holding_after(actions[1:2], "RL") == "RL"


class FakeLink:
    def __init__(self, fail=False):
        self.sent, self.fail = [], fail

    def run(self, actions):
        self.sent.append(actions)
        if self.fail:
            raise OSError("cable pulled")


def test_arm_view_mover_follows_the_holding_pair_and_forgets_it_after_a_failed_stream():
    link = FakeLink()
    view_mover = ArmViewMover(link, holding="RL")
    view_mover.move_to(ScanView("a", (Grip("RL"), Turn({"R": 180, "L": 180})), ("U1",)))
    assert view_mover.last_charged == [Turn({"R": 180, "L": 180})] and view_mover.holding == "RL"
    view_mover.move_to(ScanView("b", (Grip("FB"),), ("U1",)))
    assert view_mover.last_charged == [Grip("FB")] and view_mover.holding == "FB"
    view_mover.move_to(ScanView("c", (Turn({"F": 90, "B": -90}),), ("U1",)))
    assert view_mover.last_charged == [Turn({"F": 90, "B": -90})] and view_mover.holding == "FB"  # a turn keeps it
    # The GRIP to the pair that holds is a no-op in the firmware: not sent (no round trip); the rest is.
    assert link.sent == [[Turn({"R": 180, "L": 180})], [Grip("FB")], [Turn({"F": 90, "B": -90})]]
    moved_at = view_mover.still_since
    assert moved_at is not None  # the arms are still since the last `done`
    view_mover.move_to(ScanView("d", (Grip("FB"),), ("U1",)))  # nothing to do: nothing sent, nothing moved
    assert len(link.sent) == 3 and view_mover.last_charged == [] and view_mover.still_since == moved_at

    class SilentLink(FakeLink):
        def status(self):
            from robot.link.errors import LinkError

            raise LinkError("no answer")

    unsure = ArmViewMover(SilentLink(), holding="RL")
    unsure.learn()  # the board did not say: nothing is assumed (the first GRIP is sent)
    assert unsure.holding is None and unsure.still_since is None

    failing = ArmViewMover(FakeLink(fail=True), holding="RL")
    with pytest.raises(OSError):
        failing.move_to(ScanView("a", (Grip("FB"),), ("U1",)))
    assert failing.holding is None  # the stream stopped part way: which pair holds is not known
    assert failing.still_since is None  # ... nor whether an arm is still moving


def test_the_holding_pair_is_read_from_the_boards_gripper_states():
    closed, opened = "closed", "open"
    assert holding_from_grippers({"R": closed, "L": closed, "F": opened, "B": opened}) == "RL"
    assert holding_from_grippers({"R": opened, "L": opened, "F": closed, "B": closed}) == "FB"
    assert holding_from_grippers({"R": closed, "L": closed, "F": closed, "B": opened}) is None  # F closing too
    assert holding_from_grippers({"R": closed, "L": closed, "F": closed, "B": closed}) is None  # both hold
    assert holding_from_grippers({"R": closed, "L": None, "F": opened, "B": opened}) is None  # never commanded


def sim_config(tmp_path, sensors=False):
    def with_sensors(text):
        if sensors:
            assert "    sensors: false" in text
            text = text.replace("    sensors: false", "    sensors: true", 1)
            text = text.replace("zero_offset_steps: 0 ", "zero_offset_steps: -12 ")  # off the sensor's edge
        return text
    return config_module.load(scratch_config(tmp_path, with_sensors))


def test_the_simulated_cube_is_loaded_into_the_start_pair_before_the_press(tmp_path):
    config = sim_config(tmp_path)
    assert config.robot.start_grip == "any"  # `cube-robot load` then closes RL
    with SimulatedRobot(config, cube.SOLVED, firmware="mock") as robot:
        assert robot.loaded_pair == "RL" and robot.view_mover.holding == "RL"
        # What the firmware did (not what we told it): RL closed on the cube, FB open.
        assert robot.virtual.holding_pair() == "RL"
        assert not any(robot.virtual.closed[face] for face in "FB")
        assert "`cube-robot load`" in robot.start_note and "RL holds" in robot.start_note
        # Before the press the run asks the board itself (WHERE, STATUS): RL holds, the arms are still.
        robot.view_mover.holding = robot.view_mover.still_since = None
        robot.view_mover.learn()
        assert robot.view_mover.holding == "RL" and robot.view_mover.still_since is not None


def test_with_homing_sensors_the_cube_goes_into_open_grippers(tmp_path):
    config = sim_config(tmp_path, sensors=True)
    with SimulatedRobot(config, cube.SOLVED, firmware="mock") as robot:
        assert robot.loaded_pair is None and robot.view_mover.holding is None
        assert not any(robot.virtual.closed.values())
        assert "open grippers" in robot.start_note


def test_the_rescan_after_the_plan_knows_which_pair_the_plan_left_holding(tmp_path):
    from robot.cli import build_parser
    from robot.plan import RobotProfile
    from robot.run.options import RunOptions
    from robot.run.simulated import run_simulated

    config = sim_config(tmp_path)
    regrip_ms = RobotProfile.from_config(config).cost(Grip("RL"))
    last_pairs = set()
    for seed in range(1, 9):
        args = build_parser().parse_args(["run", "--sim", "--firmware", "mock", "--seed", str(seed)])
        report = run_simulated(config, RunOptions.from_args(args), lambda _message: None)
        assert report["solved"] is True, report["errors"]
        grips = [a["pair"] for a in report["plan"]["plan"] if a["op"] == "grip"]
        last_pairs.add(grips[-1])
        stages = {s["stage"]: s for s in report["waterfall"]}
        first = stages["verify: top-front: motion"]  # the rescan's first view: GRIP RL
        assert first["floor_ms"] == (0 if grips[-1] == "RL" else regrip_ms), seed
        if last_pairs == {"RL", "FB"}:
            return
    raise AssertionError(f"no seed's plan ended with each pair holding: {last_pairs}")
