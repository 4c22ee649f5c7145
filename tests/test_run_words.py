"""`cube-robot run` and `history` say what is true: where a simulated SOLVED comes from, advice that a
simulated run can follow, a Ctrl-C while nothing moves (no stop, no alarm), and counts that agree."""

import json
import os
import re
import select
import signal
import subprocess
import sys
import time

import pytest
from conftest import scratch_config

from robot import cli
from robot import config as config_module
from robot import cube
from robot.config import PROJECT_ROOT
from robot.link import protocol as P
from robot.run import log
from robot.run.options import RunOptions
from robot.run.pipeline import ON_A_REAL_ROBOT, Pipeline, run_robot
from robot.run.events import EventBus
from robot.run.report import INTERRUPTED, STOPPED, RunReport

README = (PROJECT_ROOT / "README.md").read_text()
RUNNING = (PROJECT_ROOT / "docs" / "running.md").read_text()


def _cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _run_help() -> str:
    return cli.build_parser()._subparsers._group_actions[0].choices["run"].format_help()


def _readme_exit_row(number: int) -> str:
    table = README.split("### Exit statuses", 1)[1].split("\n#", 1)[0]
    [row] = [line for line in table.splitlines() if line.startswith(f"| {number} |")]
    return row


# -- a simulated --no-verify run: SOLVED from the virtual cube, and the words say so --------------------

def test_a_simulated_no_verify_run_says_its_solved_comes_from_the_virtual_cube(tmp_path, capsys):
    config = scratch_config(tmp_path)
    code, out, err = _cli(capsys, "run", "--sim", "--firmware", "mock", "--scramble", "R U", "--no-verify",
                          "--config", str(config))
    [result] = [line for line in out.splitlines() if "RESULT" in line]
    assert code == 0
    # The virtual robot is gone: a plain `cube-robot release` would look for a real one.
    assert "still holds the cube: `cube-robot release` opens" not in out + err
    assert ("SIMULATED | The virtual robot ended with the run; on a real robot the grippers would still hold the "
            "cube and `cube-robot release` would open them.") in out + err
    assert result.split("RESULT", 1)[1].strip() == "SIMULATED SOLVED (read from the virtual cube; no rescan: --no-verify)"
    # What README, docs/running.md and `run --help` say about exit 3 and --no-verify agrees with that.
    row3 = _readme_exit_row(3)
    assert "on a real robot" in row3 and "simulated" in row3 and "virtual cube" in row3, row3
    help_text = " ".join(_run_help().split())
    assert "3 EXECUTED (NOT VERIFIED), on a real robot" in help_text
    assert "with --no-verify too: the virtual cube is the simulation's truth" in help_text
    [running3] = [line for line in RUNNING.splitlines() if line.startswith("| 3 | EXECUTED")]
    assert "on a real robot" in running3 and "virtual cube" in running3


# -- advice a simulated run can follow ---------------------------------------------------------------

def test_a_simulated_stop_gives_its_robot_commands_as_what_a_real_robot_would_need(tmp_path, capsys):
    config = scratch_config(tmp_path)
    code, out, err = _cli(capsys, "run", "--sim", "--firmware", "mock", "--scramble", "R U F' L", "--estop-at", "2",
                          "--config", str(config))
    assert code == 1, out
    [advice] = [line for line in out.splitlines() if "  next  " in line]
    assert advice.split("next", 1)[1].strip().startswith(ON_A_REAL_ROBOT), advice
    # The link's own hint ("clear the alarm with `cube-robot link reset-alarm`") is for bring-up commands.
    assert "clear the alarm with" not in out + err, out
    [logged] = [json.loads(line) for line in (tmp_path / "data" / log.LOG_NAME).read_text().splitlines()]
    assert logged["advice"].startswith(ON_A_REAL_ROBOT)


def test_a_real_robot_run_keeps_its_advice_and_its_closing_line(tmp_path, capsys, monkeypatch):
    from robot.run import hardware, robot as robot_module

    assert Pipeline(config_module.defaults(), None, print, RunOptions()).advice("run X") == "run X"
    assert Pipeline(config_module.defaults(), None, print, RunOptions(sim=True)).advice("run X") == (
        ON_A_REAL_ROBOT + "run X")

    class Probed:
        url = "/dev/ttyACM7"

    def executed(config, options, tell_maker, bus, probed):
        return RunReport(time="t", mode="hardware", execute_ok=True, verify="not checked: --no-verify")

    monkeypatch.setattr(robot_module, "choose_robot", lambda config, port: Probed())
    monkeypatch.setattr(hardware, "run_hardware", executed)
    code, out, err = _cli(capsys, "run", "--no-verify", "--config", str(scratch_config(tmp_path)))
    assert code == 3
    assert "The robot still holds the cube: `cube-robot release` opens all grippers." in out
    assert "SIMULATED" not in out + err


# -- Ctrl-C while nothing moves ----------------------------------------------------------------------

class _Link:
    def __init__(self, state):
        self.state, self.stops = state, 0
        self.noise_stops = []

    def status(self):
        return P.Status(self.state, 0, 0, 0, 0, P.AlarmCode.NONE)

    def stop_and_learn(self):
        self.stops += 1


class _Robot:
    backend = "a robot that needs no port"
    view_mover = None

    def __init__(self, link):
        self.link = link

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


@pytest.mark.parametrize("streaming, board, stop_sent", [
    (False, P.State.IDLE, False),  # idle, nothing queued: a stop would stop nothing
    (False, P.State.RUN, True),  # the board moves
    (True, P.State.IDLE, True),  # a stream was under way: a line may be on its way to the board
])
def test_ctrl_c_sends_the_stop_byte_only_when_something_may_move(monkeypatch, streaming, board, stop_sent):
    def interrupted(pipeline):
        pipeline.started, pipeline.executing = True, streaming
        raise KeyboardInterrupt

    monkeypatch.setattr(Pipeline, "run", interrupted)
    link = _Link(board)
    bus = EventBus()
    report = RunReport(time="t", mode="hardware").subscribe(bus)
    run_robot(config_module.defaults(), _Robot(link), RunOptions(), lambda text: None, bus, lambda: None)
    assert link.stops == (1 if stop_sent else 0)
    assert report.result() == (STOPPED if stop_sent else INTERRUPTED) and report.exit_status() == 130
    if stop_sent:
        assert report.result_line() == "EMERGENCY STOP: Ctrl-C; the stop byte was sent to the robot"
    else:
        assert report.result_line() == ("INTERRUPTED: Ctrl-C while nothing was moving (the board was idle with "
                                        "nothing queued): no stop byte was sent and no alarm is latched")
        assert "reset-alarm" not in report.advice


@pytest.fixture
def robot_on_a_port(tmp_path):
    """The Python mock firmware on a pty, a folder of pictures as the camera, regions calibrated."""
    import cv2

    from robot.sim import render
    from robot.sim.mock_firmware import MockFirmware
    from robot.vision import camera_geometry
    from robot.vision.scan import ScanSequence

    base = config_module.load()
    sequence = ScanSequence.from_config(base)
    frames, regions = render.render_scan(cube.SOLVED.apply("R U2 F'").to_facelets(), sequence,
                                         camera_geometry.Pose.from_config(base), seed=4)
    folder = tmp_path / "camera"
    folder.mkdir()
    for view, frame in frames.items():
        cv2.imwrite(str(folder / f"{view}.png"), frame)
    regions.save(tmp_path / "regions.yaml")

    def edit(text):
        for old, new in (('device: "0"', f'device: "{folder}"'),
                         ("regions_file: calibration/regions.yaml", f"regions_file: {tmp_path / 'regions.yaml'}"),
                         ("colours_file: calibration/colors.yaml", f"colours_file: {tmp_path / 'none.yaml'}")):
            assert old in text
            text = text.replace(old, new)
        return text

    config_path = scratch_config(tmp_path, edit)
    mock = MockFirmware(transport="pty", motion=config_module.load(config_path).motion, time_scale=0.02).start()
    yield config_path, mock
    mock.stop()


def _read_until(proc, text: str, limit_s: float = 120.0) -> str:
    """The process's output up to `text` (the limit only ends a hung test)."""
    output = b""
    deadline = time.monotonic() + limit_s
    while text.encode() not in output:
        assert time.monotonic() < deadline and proc.poll() is None, output.decode()
        if select.select([proc.stdout], [], [], 1.0)[0]:
            output += os.read(proc.stdout.fileno(), 65536)
    return output.decode()


def test_ctrl_c_at_the_start_press_sends_no_stop_latches_no_alarm_and_is_logged_apart(robot_on_a_port, tmp_path):
    config_path, mock = robot_on_a_port
    proc = subprocess.Popen([sys.executable, "-m", "robot", "run", "--port", mock.url, "--arms-straight",
                             "--config", str(config_path)], cwd=PROJECT_ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    before = _read_until(proc, "Waiting for the start button")
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=120)
    output = before + rest.decode()
    assert proc.returncode == 130, output
    [result] = [line for line in output.splitlines() if "RESULT" in line]
    assert result.split("RESULT", 1)[1].strip() == (
        "INTERRUPTED: Ctrl-C before the start press, while nothing was moving: no stop byte was sent and no "
        "alarm is latched")
    assert "reset-alarm" not in output and "EMERGENCY STOP" not in output and "the stop byte was sent" not in output
    assert mock.alarm == P.AlarmCode.NONE, "the board received a stop byte"
    [logged] = [json.loads(line) for line in (tmp_path / "data" / log.LOG_NAME).read_text().splitlines()]
    assert logged["outcome"] == INTERRUPTED
    history = subprocess.run([sys.executable, "-m", "robot", "history", "--config", str(config_path)],
                             capture_output=True, text=True, cwd=PROJECT_ROOT)
    assert ("real robot: 1 run; none to rate; 1 INTERRUPTED by Ctrl-C while nothing moved: not in the rate"
            in history.stdout.splitlines()), history.stdout


# -- history: counts that agree, reasons said once, plurals ------------------------------------------

def test_history_counts_agree_and_say_a_reason_once(tmp_path):
    path = tmp_path / log.LOG_NAME
    runs = [{"time": "t1", "mode": "hardware", "outcome": "SOLVED"},
            {"time": "t2", "mode": "hardware", "outcome": "EMERGENCY STOP",
             "errors": ["emergency stop: Ctrl-C; the stop byte was sent to the robot"]},
            {"time": "t3", "mode": "hardware", "outcome": "NOT STARTED", "errors": ["no answer on /dev/ttyACM0"]},
            {"time": "t4", "mode": "hardware", "outcome": "INTERRUPTED",
             "errors": ["Ctrl-C before the start press, while nothing was moving: no stop byte was sent"]}]
    lines = log.summary(runs, path, last=4)
    assert lines[0] == f"4 runs logged -- {path}"
    assert lines[1] == ("real robot: 4 runs; solved 1 of 2 (50%); 1 NOT STARTED (nothing moved), "
                        "1 INTERRUPTED by Ctrl-C while nothing moved: not in the rate")
    assert not any("not counted as runs" in line for line in lines)
    assert lines[-3].endswith("EMERGENCY STOP: Ctrl-C; the stop byte was sent to the robot"), lines[-3]
    assert lines[-1].endswith("INTERRUPTED: Ctrl-C before the start press, while nothing was moving: "
                              "no stop byte was sent")
    one = log.summary(runs[:1], path, last=1)
    assert one[0] == f"1 run logged -- {path}" and one[1] == "real robot: 1 run; solved 1 of 1 (100%)"


def test_run_report_counts_in_the_singular_and_the_plural():
    report = RunReport(time="t", mode="hardware", facelets="U" * 24, confidence=1.0, scan_attempts=1, scan_views=1,
                       predicted_machine_ms=1, unknown_time_actions=1)
    text = report.format()
    assert "1 attempt, 1 view)" in text and "the time of 1 action was not measured" in text
    report.scan_attempts, report.scan_views, report.unknown_time_actions = 2, 3, 2
    text = report.format()
    assert "2 attempts, 3 views)" in text and "the time of 2 actions was not measured" in text
    assert not re.search(r"\b1 (runs|turns|actions|views|attempts)\b", text)
