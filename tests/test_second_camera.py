"""A second camera (issue 13): views name their camera; views of two cameras are taken at one moment."""

import pytest

from robot import config as config_module
from robot.cli import build_parser
from robot.run.options import RunOptions
from robot.run.simulated import run_simulated
from robot.scan_sequence import TWO_CAMERA_VIEWS, ScanSequence
from robot.vision.cameras import CameraSet, capture_moment



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
    text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    text = text.replace("images_dir: runs/scans", f"images_dir: {tmp_path / 'scans'}")
    text = text.replace("data_dir: data", f"data_dir: {tmp_path / 'data'}")
    (tmp_path / "config.yaml").write_text(text)
    config = config_module.load(tmp_path / "config.yaml")
    config["scan"]["views"] = TWO_CAMERA_VIEWS
    args = build_parser().parse_args(["run", "--sim", "--firmware", "mock", "--seed", "1", "--no-verify"])
    report = run_simulated(config, RunOptions.from_args(args), lambda _message: None)
    assert report["solved"] is True, report["errors"]
    assert report["scan_views"] == 2  # U+F and D+B at one moment: the only scan action was the grip
    assert report["plan"]["plan"][0] == {"op": "grip", "pair": "RL"}
