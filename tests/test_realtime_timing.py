"""A --realtime simulated run's button_to_solved_ms and waterfall against the wall clock and the arm times."""

import time

import pytest

from robot import config as config_module
from robot.cli import build_parser
from robot.plan import Grip, RobotProfile
from robot.run.options import RunOptions
from robot.run.simulated import run_simulated
from robot.run.waterfall import format_waterfall
from robot.scan_sequence import ScanSequence
from robot.sim import robot_sim
from conftest import scratch_config

@pytest.fixture
def config(tmp_path):
    return config_module.load(scratch_config(tmp_path, lambda text: text.replace("save_images: true", "save_images: false")))


def test_realtime_button_to_solved_lies_between_the_arm_time_and_the_wall_clock(config, monkeypatch):
    marks = {}
    wait_start, close = robot_sim.SimulatedRobot.wait_start, robot_sim.SimulatedRobot.close

    def timed_wait_start(self, timeout_s):
        pressed = wait_start(self, timeout_s)
        marks["press_seen"] = time.perf_counter()  # the pipeline's own mark comes after this
        return pressed

    def timed_close(self):
        marks["closing"] = time.perf_counter()  # the last `done` came before this
        return close(self)

    monkeypatch.setattr(robot_sim.SimulatedRobot, "wait_start", timed_wait_start)
    monkeypatch.setattr(robot_sim.SimulatedRobot, "close", timed_close)
    args = build_parser().parse_args(["run", "--sim", "--realtime", "--firmware", "mock", "--seed", "5",
                                      "--no-verify"])
    report = run_simulated(config, RunOptions.from_args(args), lambda _message: None)
    assert report["solved"] is True, report["errors"]

    wall_ms = (marks["closing"] - marks["press_seen"]) * 1000
    profile = RobotProfile.from_config(config)
    sequence = ScanSequence.from_config(config)
    taken = sequence.views[:report["scan_views"]]  # an adaptive scan stops once the cube is known
    assert 1 <= len(taken) <= len(sequence.views)
    scan_actions = [action for view in taken for action in view.actions]
    # The sim loads the cube as `cube-robot load` does (robot.start_grip 'any': RL holds at the press),
    # so the scan's first GRIP to RL costs no arm time (the firmware finishes it at once).
    assert config.robot.start_grip == "any" and not config.motion.homing.sensors
    assert scan_actions[0] == Grip("RL")
    scan_arm_ms = sum(profile.cost(action) for action in scan_actions[1:])
    measured = report["button_to_solved_ms"]
    # Never faster than the arms: the scan's motions and the plan's (as the firmware timed them).
    assert measured >= scan_arm_ms + report["measured_machine_ms"]
    # One clock: the pipeline's marks sit inside the test's (how far inside depends on the host's load,
    # so no margin is asserted).
    assert measured <= wall_ms

    stages = {s["stage"]: s for s in report["waterfall"]}
    timing = config.camera
    assert stages[f"{taken[0].name}: motion"]["floor_ms"] == 0  # the loaded cube: its first grip is free
    for view in taken:
        motion, frame = stages[f"{view.name}: motion"], stages[f"{view.name}: frame"]
        assert motion["end_ms"] - motion["start_ms"] >= motion["floor_ms"] - 1.0  # real-time arms
        # The view's picture was exposed after its motion ended and the cube settled (never a stale frame);
        # a view that moved nothing (the cube held since it was loaded) settles from the press (0 ms): the
        # button is on the robot's frame.
        moved = motion["floor_ms"] > 0
        assert frame["start_ms"] >= (motion["end_ms"] if moved else 0.0) + timing.settle_ms - 0.2
        settle_ms = timing.settle_ms
        wait = stages[f"{view.name}: frame wait"]
        assert wait["end_ms"] - wait["start_ms"] >= wait["floor_ms"] - 0.2  # (settle +) exposure + delivery
        # The settle counts from the motion's last `done` or the press (a little before the wait starts).
        frame_ms = timing.exposure_ms + timing.delivery_ms
        assert frame_ms - 0.2 <= wait["floor_ms"] <= frame_ms + settle_ms + 0.2
    assert all(0 <= s["start_ms"] <= s["end_ms"] <= measured + 0.2 for s in report["waterfall"])
    text = report.format()
    assert "waterfall" in text and "top-front: motion" in text and "#" in text


def test_format_waterfall_draws_each_stage_on_one_ms_scale():
    stages = [{"stage": "scan", "start_ms": 0.0, "end_ms": 500.0},
              {"stage": "execute", "start_ms": 500.0, "end_ms": 1000.0}]
    lines = format_waterfall(stages, width=20)
    assert "1000 ms" in lines[0]
    scan_bar = lines[1].split("|")[1]
    execute_bar = lines[2].split("|")[1]
    assert scan_bar == "#" * 10 + " " * 10
    assert execute_bar == " " * 10 + "#" * 10
