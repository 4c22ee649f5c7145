"""Tables, camera and handshake are ready before the start press, each made once.

The hardware path runs against the mock firmware on a pty with a folder camera (as in
tests/test_app_hardware.py); what happens before and after the start press is recorded in order.
"""

import pytest

from robot import config as config_module
from robot.run import robot as robot_module
from robot.run.ready import HeldCamera, hold_camera
from robot.solver import Solver
from robot.solver import tables as tables_module
from robot.vision.camera import Camera, FileCamera

from conftest import scratch_config
from test_app_hardware import _run, setup  # noqa: F401  (the fixture)


def test_hardware_run_loads_tables_and_opens_the_camera_once_before_the_start_press(setup, monkeypatch):  # noqa: F811
    config, mock, _sequence, _scrambled = setup
    events = []
    real_load, real_open, real_close = tables_module.load, FileCamera.open, FileCamera.close
    real_wait = robot_module.HardwareRobot.wait_start

    monkeypatch.setattr(tables_module, "load", lambda *a, **k: (events.append("tables"), real_load(*a, **k))[1])
    monkeypatch.setattr(FileCamera, "open", lambda self: (events.append("camera open"), real_open(self))[1])
    monkeypatch.setattr(FileCamera, "close", lambda self: (events.append("camera close"), real_close(self))[1])

    def wait_start(self, timeout_s):
        events.append(f"start pressed (handshake done: {self.link.identity is not None})")
        return real_wait(self, timeout_s)

    monkeypatch.setattr(robot_module.HardwareRobot, "wait_start", wait_start)
    report = _run(config, mock)  # with the rescan after the solve: a second scan on the same open camera
    assert report["execute_ok"] is True, report["errors"]
    # One table load (the pre-flight's, reused by the solver), one camera open for the scan and the
    # rescan, all before the press; the camera is closed once, at the end.
    assert events == ["camera open", "tables", "start pressed (handshake done: True)", "camera close"]


def test_held_camera_stays_open_through_with_blocks_until_released():
    log = []

    class Probe(Camera):
        lighting = "normal"

        def open(self):
            log.append("open")
            return self

        def close(self):
            log.append("close")

        def capture(self, view):
            return view

    class Robot:
        camera = Probe()

    robot = Robot()
    held = hold_camera(robot)
    assert hold_camera(robot) is held and robot.camera is held  # wrapped once
    for _ in range(3):
        with held as camera:
            assert camera.capture("top-front") == "top-front"
    held.lighting = "dark"  # the sim sets its camera's lighting through the wrapper
    assert held.camera.lighting == "dark"
    assert log == ["open"]
    held.release()
    held.release()
    assert log == ["open", "close"]
    assert isinstance(held, HeldCamera)


def test_solver_refuses_tables_built_for_another_robot():
    config = config_module.defaults()
    tables = tables_module.load(config)
    other = config_module.with_settings(config_module.defaults(), {"robot.timing.regrip_ms": 300})
    with pytest.raises(ValueError, match="another robot profile"):
        Solver(other, tables=tables)
    assert Solver(config, tables=tables).tables is tables


IMPORTED_AFTER_THE_PRESS = r'''
import sys
from robot import config as config_module
from robot.cli import build_parser
from robot.run import pipeline
from robot.run.options import RunOptions
from robot.run.simulated import run_simulated

at_press = {}
wait_start = pipeline.Pipeline._wait_start
def timed_wait_start(self):
    pressed = wait_start(self)
    at_press["modules"] = set(sys.modules)
    return pressed
pipeline.Pipeline._wait_start = timed_wait_start
config = config_module.load(sys.argv[1])
args = build_parser().parse_args(["run", "--sim", "--firmware", "mock", "--seed", "2", "--no-verify"])
report = run_simulated(config, RunOptions.from_args(args), lambda _message: None)
assert report["solved"], report["errors"]
print(" ".join(sorted(set(sys.modules) - at_press["modules"])))
'''


def test_a_fresh_run_imports_nothing_of_the_scan_after_the_start_press(tmp_path):
    """A `cube-robot run` is a fresh process: the scan's modules are imported before the press, not on
    the clock (robot/run/ready.py import_scan_modules)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", IMPORTED_AFTER_THE_PRESS, str(scratch_config(tmp_path))],
                          capture_output=True, text=True, cwd=config_module.PROJECT_ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    late = done.stdout.split()
    assert not [m for m in late if m.startswith(("robot.vision", "concurrent.futures", "numpy"))], late
