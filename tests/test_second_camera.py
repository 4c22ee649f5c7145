"""A second camera: views name their camera; views of two cameras are taken at one moment."""

import pytest

from robot import config as config_module
from robot.cli import build_parser
from robot.run.options import RunOptions
from robot.run.simulated import run_simulated
from robot.scan_sequence import TWO_CAMERA_VIEWS, ScanSequence
from robot.vision.cameras import CameraSet, capture_moment
from conftest import scratch_config



def test_views_of_two_cameras_without_motion_between_them_are_one_moment():
    sequence = ScanSequence.from_data(TWO_CAMERA_VIEWS)
    assert sequence.moments() == [[0, 1], [2, 3]] and sequence.cameras == {"main", "second"}
    assert sequence.unseen_facelets() == []
    default = ScanSequence.from_config(config_module.defaults())
    assert default.moments() == [[0], [1], [2], [3]] and default.cameras == {"main"}


def test_a_camera_set_captures_each_view_with_its_camera_and_a_moment_at_once():
    import threading

    sequence = ScanSequence.from_data(TWO_CAMERA_VIEWS)
    both = threading.Barrier(2, timeout=10)  # each capture waits for the other: only together do they return

    class Camera:
        def __init__(self, name):
            self.name = name

        def capture(self, view):
            both.wait()
            return (self.name, view)

    cameras = CameraSet({"main": Camera("main"), "second": Camera("second")}, sequence)
    frames = capture_moment(cameras, [sequence.views[0], sequence.views[1]])
    assert frames == [("main", "top-front"), ("second", "bottom-back")]
    with pytest.raises(ValueError, match="second"):
        CameraSet({"main": Camera("main")}, sequence)


def test_a_simulated_run_with_two_cameras_scans_without_turning_and_solves(tmp_path):
    config = config_module.with_settings(config_module.load(scratch_config(tmp_path)), {"scan.views": TWO_CAMERA_VIEWS})
    args = build_parser().parse_args(["run", "--sim", "--firmware", "mock", "--seed", "1", "--no-verify"])
    report = run_simulated(config, RunOptions.from_args(args), lambda _message: None)
    assert report["solved"] is True, report["errors"]
    assert report["scan_views"] == 2  # U+F and D+B at one moment: the only scan action was the grip
    assert report["plan"]["plan"][0] == {"op": "grip", "pair": "RL"}


def test_two_cameras_syncing_the_virtual_robot_at_once_apply_each_firmware_motion_once(tmp_path):
    """Both cameras of a moment sync the virtual cube on their own threads (robot/sim/robot_sim.py
    sync): the firmware's motions must reach the virtual cube once, not once per camera."""
    import threading

    from robot import cube
    from robot.plan import Grip, Turn
    from robot.sim.robot_sim import SimulatedRobot

    text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    text = text.replace("data_dir: data", f"data_dir: {tmp_path / 'data'}")
    (tmp_path / "config.yaml").write_text(text)
    config = config_module.load(tmp_path / "config.yaml")
    turn = Turn({"R": 90})
    with SimulatedRobot(config, cube.SOLVED, firmware="mock") as robot:
        robot.link.run([Grip("RL"), turn])
        robot.sync()
        expected = robot.virtual.facelets()
        assert expected == cube.apply_moves(cube.SOLVED.to_facelets(), ["R"])
        robot.sync()
        assert robot.virtual.facelets() == expected  # nothing new: nothing applied
        robot.link.run([turn])
        applying, second_in = threading.Event(), threading.Event()
        apply_action = robot.virtual.apply_action

        def slow_apply(action):  # hold the first sync inside while the second one starts
            applying.set()
            second_in.wait(timeout=1.0)  # with the lock the second sync cannot come in: this times out
            apply_action(action)

        robot.virtual.apply_action = slow_apply
        first = threading.Thread(target=robot.sync)
        first.start()
        assert applying.wait(timeout=10)
        second = threading.Thread(target=lambda: (second_in.set(), robot.sync()))
        second.start()
        first.join(10)
        second.join(10)
        robot.virtual.apply_action = apply_action
        assert robot.virtual.facelets() == cube.apply_moves(expected, ["R"])  # one R, not two
