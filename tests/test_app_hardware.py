"""`cube-robot run` on the hardware path: a serial port, a camera and calibrated regions.

The board is the Python mock firmware on a pty (it speaks the real protocol)
and the camera is a folder of pictures of the scrambled cube, so this checks
the wiring of the hardware path without hardware: the start button, the scan
through the configured camera and regions file, the plan streamed over the
port exactly once.
"""

import threading
import time

import pytest

from robot import config as config_module
from robot import cube
from robot.cli import build_parser
from robot.run.options import RunOptions
from robot.run.robot import run_hardware
from robot.link import protocol
from robot.plan import RobotProfile, replay
from robot.sim import render
from robot.sim.mock_firmware import MockFirmware
from robot.vision.scan import ScanSequence


@pytest.fixture
def setup(tmp_path):
    base = config_module.load()
    scrambled = cube.SOLVED.apply("R U2 F' L B2 D")
    sequence = ScanSequence.from_config(base)
    frames, regions = render.render_scan(scrambled.to_facelets(), sequence, render.Pose.from_config(base), seed=4)
    folder = tmp_path / "camera"
    folder.mkdir()
    import cv2
    for view, frame in frames.items():
        cv2.imwrite(str(folder / f"{view}.png"), frame)
    regions.save(tmp_path / "regions.yaml")
    text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    for old, new in (('device: "0"', f'device: "{folder}"'),
                     ("regions_file: calibration/regions.yaml", f"regions_file: {tmp_path / 'regions.yaml'}"),
                     ("colours_file: calibration/colors.yaml", f"colours_file: {tmp_path / 'none.yaml'}"),
                     ("images_dir: runs/scans", f"images_dir: {tmp_path / 'scans'}"),
                     ("data_dir: data", f"data_dir: {tmp_path / 'data'}")):
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "config.yaml"
    path.write_text(text)
    config = config_module.load(path)
    mock = MockFirmware(transport="pty", motion=config["motion"], time_scale=0.02).start()
    yield config, mock, sequence, scrambled
    mock.stop()


def test_hardware_path_scans_solves_and_streams_once(setup):
    config, mock, sequence, scrambled = setup

    def press_start_when_connected():
        # A person presses start once the robot is ready (the host has configured the board).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(b"SERVO" in line for line in mock.received_lines):
            time.sleep(0.01)
        mock.press_start()

    threading.Thread(target=press_start_when_connected, daemon=True).start()
    args = build_parser().parse_args(["run", "--port", mock.url, "--no-verify", "--config", str(config.path)])
    report = run_hardware(config, RunOptions.from_args(args), lambda message: None)
    assert report["errors"] == [], report
    assert report["mode"] == "hardware" and report["solved"] is True
    assert report["firmware"].startswith(protocol.FIRMWARE_NAME)
    # What the board executed: the scan's actions, then the plan, each exactly once.
    executed = [protocol.command_action(command) for _, command in mock.executed]
    scan_actions = list(sequence.all_actions())
    plan = report["plan"]["plan"]
    assert len(executed) == len(scan_actions) + len(plan)
    profile = RobotProfile.from_config(config)
    state, _ = replay(scrambled, executed, profile)
    assert state.is_solved()
