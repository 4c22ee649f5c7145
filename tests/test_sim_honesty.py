"""The simulated robot says what happened and leaves nothing behind: the speed-up a sped-up run
reports is the one measured, the emulator's temporary folders go on every exit, a Ctrl-C reaches
only the host, a stop that moved nothing latches no alarm, and tests write nothing into the repo."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from robot import cli
from robot import config as config_module
from robot.sim import emulator

OK, REASON = emulator.available()
needs_emulator = pytest.mark.skipif(not OK, reason=f"emulator unavailable: {REASON}")
ROOT = config_module.PROJECT_ROOT


def test_a_run_with_the_shipped_config_writes_nothing_into_the_repository(capsys, monkeypatch):
    from robot.run import log as run_log

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code = cli.main(["run", "--sim", "--firmware", "mock", "--seed", "3", "--no-verify", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["scan_images"], report
    written = [Path(p) for p in report["scan_images"]] + [run_log.log_path(config_module.load())]
    assert all(path.exists() and not path.is_relative_to(ROOT) for path in written), written


# ---------------------------------------------------------------------------
# The emulator's temporary folders, and signals


@pytest.fixture
def emu_tmp(tmp_path, monkeypatch):
    """The temporary folder the emulators make theirs in (tempfile's, and TMPDIR for a subprocess)."""
    import tempfile

    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def emu_folders(folder: Path) -> list[Path]:
    return sorted(folder.glob(emulator.FOLDER_PREFIX + "*"))


class Terminal:
    """A command run in its own process group with a pty as its stdin, as a shell runs it in a
    terminal (so a Ctrl-C is a SIGINT to that group)."""

    def __init__(self, args, tmpdir: Path):
        import os
        import pty
        import subprocess

        self.master, slave = pty.openpty()
        env = dict(os.environ, TMPDIR=str(tmpdir), PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "robot", *args], cwd=ROOT, stdin=slave,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)
        os.close(slave)
        self.output = b""

    def wait_for(self, text: str, limit_s: float = 120.0) -> None:
        """Read the command's output until `text` appears (the limit only ends a hung test)."""
        import os
        import select
        import time

        deadline = time.monotonic() + limit_s
        fd = self.proc.stdout.fileno()
        while text.encode() not in self.output:
            assert time.monotonic() < deadline and self.proc.poll() is None, self.output.decode()
            if select.select([fd], [], [], 1.0)[0]:
                self.output += os.read(fd, 65536)

    def signal(self, sig, group: bool = True) -> tuple[int, str]:
        import os

        if group:
            os.killpg(self.proc.pid, sig)
        else:
            self.proc.send_signal(sig)
        rest, _ = self.proc.communicate(timeout=120)
        os.close(self.master)
        return self.proc.returncode, (self.output + rest).decode()


@pytest.mark.firmware
@needs_emulator
def test_a_run_that_stops_before_the_start_leaves_no_emulator_folder(emu_tmp, monkeypatch):
    from robot.run.options import RunOptions
    from robot.checks import PreflightFailed
    from robot.run.report import NOT_STARTED
    from robot.run.simulated import run_simulated
    from robot.sim.robot_sim import SimulatedRobot

    def preflight_fails(robot):
        assert emu_folders(emu_tmp), "the emulator runs, in its folder"
        raise PreflightFailed(["motors and homing: arm R: no sensor found"])
    monkeypatch.setattr(SimulatedRobot, "prepare_arms", preflight_fails)
    report = run_simulated(config_module.defaults(), RunOptions(sim=True, seed=3, firmware="emulator"),
                           tell_maker=lambda *a, **k: None)
    assert report.result() == NOT_STARTED
    assert emu_folders(emu_tmp) == []


@pytest.mark.firmware
@needs_emulator
def test_a_terminated_command_removes_its_emulator_folder(emu_tmp):
    import signal

    term = Terminal(["home", "--sim", "--firmware", "emulator"], emu_tmp)
    term.wait_for("Arm R [")
    assert len(emu_folders(emu_tmp)) == 1
    code, output = term.signal(signal.SIGTERM, group=False)
    assert code == 128 + signal.SIGTERM, output
    assert emu_folders(emu_tmp) == [], output


@pytest.mark.firmware
@needs_emulator
def test_the_folder_of_a_killed_host_goes_at_the_next_start_and_nothing_else_does(emu_tmp):
    import os
    import signal
    import subprocess

    term = Terminal(["home", "--sim", "--firmware", "emulator"], emu_tmp)
    term.wait_for("Arm R [")
    term.signal(signal.SIGKILL, group=False)  # nothing can clean up after SIGKILL
    [stale] = emu_folders(emu_tmp)
    foreign = emu_tmp / (emulator.FOLDER_PREFIX + "not-ours")  # no owner file: not made by this program
    foreign.mkdir()
    with subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE) as alive:
        busy = emu_tmp / (emulator.FOLDER_PREFIX + "in-use")  # its owner still runs
        busy.mkdir()
        (busy / emulator.OWNER_FILE).write_text(str(alive.pid))
        with emulator.Emulator() as emu:
            made = Path(emu._dir)
            assert not stale.exists()
            assert foreign.is_dir() and busy.is_dir() and made.is_dir()
        alive.stdin.close()
    assert os.path.isdir(foreign) and not made.exists()


@pytest.mark.firmware
@needs_emulator
def test_a_bench_that_fails_to_start_leaves_no_emulator_folder(emu_tmp, monkeypatch):
    from robot.bringup.connection import ConnectedRobot

    def wiring_fails(mechanics, config):
        assert emu_folders(emu_tmp), "the emulator runs, in its folder"
        raise emulator.EmulatorError("harness refused 'wiring R reversed'")
    monkeypatch.setattr(ConnectedRobot, "set_up_mechanics", staticmethod(wiring_fails))
    with pytest.raises(emulator.EmulatorError):
        ConnectedRobot(config_module.defaults(), sim=True, firmware="emulator").start()
    assert emu_folders(emu_tmp) == []


# ---------------------------------------------------------------------------
# Ctrl-C in a terminal, and commands without one


@pytest.mark.firmware
@needs_emulator
def test_ctrl_c_in_a_terminal_during_a_simulated_move_reaches_only_the_host(emu_tmp):
    import signal

    import time

    from robot.sim import pinlog

    term = Terminal(["jog", "R", "--steps", "6400", "--sim", "--realtime", "--firmware", "emulator"], emu_tmp)
    term.wait_for("Opened gripper R first")
    [folder] = emu_folders(emu_tmp)
    log = pinlog.LogReader(folder / "pins.log")
    deadline = time.monotonic() + 60  # only ends a hung test
    while not pinlog.step_events(log.events())["R"]:  # arm R steps: the jog is under way
        assert time.monotonic() < deadline and term.proc.poll() is None
        time.sleep(0.01)  # polls the pin log, which the emulator writes on its own
    code, output = term.signal(signal.SIGINT)  # to the command's process group, as a terminal does
    assert code == 130, output
    assert "sent the e-stop ('!') first" in output and "alarm ESTOP_BYTE latched" in output, output
    assert "could not be read" not in output and "SerialException" not in output, output
    assert emu_folders(emu_tmp) == []


@pytest.mark.firmware
@needs_emulator
@pytest.mark.parametrize("command, prompt", [(["load"], "put the cube between them"), (["home"], "Arm R [")])
def test_ctrl_c_at_a_prompt_stops_in_order_and_latches_no_alarm(command, prompt, emu_tmp):
    import signal

    term = Terminal([*command, "--sim", "--firmware", "emulator"], emu_tmp)
    term.wait_for(prompt)
    code, output = term.signal(signal.SIGINT)
    assert code == 130, output
    assert "nothing was moving, so no stop was sent and no alarm is latched" in output, output
    assert "state IDLE; drivers on" in output and "latched;" not in output, output
    assert "e-stop" not in output and "SerialException" not in output, output
    assert emu_folders(emu_tmp) == []


def test_home_by_eye_without_a_terminal_says_so_at_the_start_and_moves_nothing(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # as `cube-robot home --sim </dev/null`
    code = cli.main(["home", "--sim", "--firmware", "mock"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", out
    [line] = err.splitlines()
    assert "needs a person at a terminal" in line and "nothing moved" in line
    assert "motion.homing.sensors" in line and "cube-robot run --arms-straight" in line


def test_load_without_a_terminal_goes_on_and_says_what_it_assumed(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # as `cube-robot load --sim </dev/null`
    code = cli.main(["load", "--sim", "--firmware", "mock", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["pair"] == "RL", err
    assert "stdin is not a terminal: going on without a person at the keyboard" in err
    assert "Cube held by pair RL" in err


def test_home_by_eye_in_simulation_says_how_far_off_the_arms_were_left(capsys, monkeypatch):
    from robot.bringup.connection import SIM_HAND_OFFSETS

    class TerminalInput(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.setattr(sys, "stdin", TerminalInput("+\n\n\n\n\n"))  # R: one small step; then Enter for each
    code = cli.main(["home", "--sim", "--firmware", "mock"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "`+` turns it 5 steps clockwise seen from outside that arm's face, `-` anticlockwise" in out
    left = dict(SIM_HAND_OFFSETS, R=SIM_HAND_OFFSETS["R"] + 5)
    assert ("Confirmed straight: R, L, F, B (their positions are now 0); but the simulated arms were left off "
            f"straight by {', '.join(f'{a} {o:+d}' for a, o in left.items())} steps (+ is clockwise)." in out), out


# ---------------------------------------------------------------------------
# How fast a sped-up simulated run ran: measured, not assumed


def _sped_up_run(firmware: str):
    from robot.run.options import RunOptions
    from robot.run.simulated import run_simulated

    return run_simulated(config_module.defaults(), RunOptions(sim=True, seed=3, firmware=firmware, verify=False),
                         tell_maker=lambda *a, **k: None)


def _assert_reports_the_measured_speed_up(report) -> float:
    assert report.solved and report.sim_board_ms > 0 and report.sim_wall_ms > 0, report.errors
    speedup = report.sim_board_ms / report.sim_wall_ms  # what the run recorded
    assert report.sim_speedup == pytest.approx(speedup, abs=0.01)
    text = report.format()
    assert f"the simulation ran {report.sim_speedup:.1f}x faster than real time (measured: " in text, text
    machine = report.measured_machine_ms / 1000
    assert (f"button->solved  {report.button_to_solved_ms / 1000:.1f} s wall (compressed: the simulation ran "
            f"{report.sim_speedup:.1f}x faster than real time; machine time {machine:.1f} s)") in text, text
    return speedup


@pytest.mark.firmware
@needs_emulator
def test_a_sped_up_emulator_run_reports_the_speed_up_it_measured():
    report = _sped_up_run("emulator")
    _assert_reports_the_measured_speed_up(report)
    assert "ran 50x faster" not in report.format()  # the mock's scale is not the emulator's speed


def test_a_sped_up_mock_run_reports_the_speed_up_its_board_clock_shows(monkeypatch):
    import time

    from robot.sim.mock_firmware import MockFirmware

    # A board clock running 3x the wall clock: the report follows the clock, not the mock's time_scale (50x).
    monkeypatch.setattr(MockFirmware, "clock_ms", lambda self: time.monotonic() * 3000)
    report = _sped_up_run("mock")
    speedup = _assert_reports_the_measured_speed_up(report)
    assert speedup == pytest.approx(3.0, rel=0.05)


def test_tune_grippers_by_keys_without_a_terminal_says_so_at_the_start_and_moves_nothing(capsys, monkeypatch):
    from robot.bringup import connection

    def no_robot(*args, **kwargs):
        raise AssertionError("tune grippers connected to the robot without any keys to tune with")
    monkeypatch.setattr(connection, "ConnectedRobot", no_robot)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # as `cube-robot tune grippers --sim </dev/null`
    code = cli.main(["tune", "grippers", "--sim", "--firmware", "mock"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", out
    [line] = err.splitlines()
    assert "needs a person at a terminal, and stdin is not one" in line and "nothing moved" in line
    assert "cube-robot tune grippers --set R.open=1100" in line


def test_tune_grippers_keys_on_stdin_are_still_read(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("+\nq\n"))  # keys given by a script, not a terminal
    code = cli.main(["tune", "grippers", "--sim", "--firmware", "mock"])
    out = capsys.readouterr().out
    opened = config_module.defaults().motion.servo_open_us + 10  # one '+' adds 10 us to the default width
    assert code == 1 and f"tuning OPEN = {opened} us" in out and "Not saved" in out, out
