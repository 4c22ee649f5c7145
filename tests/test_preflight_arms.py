"""The run's pre-flight "motors and homing" check (robot/arms/doctor_checks.py) on the hardware
path: the mock firmware on a pty and the real firmware in simavr, each with a file camera
(tests/test_app_hardware.py's `setup`).  Opening the port resets the board, so every run starts with
the drivers off and the arms' positions unknown: with homing sensors the run homes them before the
start button; without, it needs the user's word (`--arms-straight`, or `y` on a terminal); anything
else is NOT STARTED, named with its fix, before anything moves.
"""

from __future__ import annotations

import io
import threading
import time
from types import SimpleNamespace

import pytest
from test_app_hardware import setup  # noqa: F401  (the fixture: config, mock, sequence, scrambled)

from robot import cli
from robot import config as config_module
from robot.bringup.connection import SIM_HAND_OFFSETS, ConnectedRobot
from robot.cli import build_parser
from robot.link import protocol as P
from robot.run.options import RunOptions
from robot.run.hardware import run_hardware
from robot.run.robot import ask_arms_straight
from robot.sim import emulator, pinlog

OK, REASON = emulator.available()
needs_emulator = pytest.mark.skipif(not OK, reason=f"firmware emulator unavailable: {REASON}")
ROW = "motors and homing: drivers and arms:"


def with_changes(config, tmp_path, name: str, **lines) -> config_module.Config:
    """The setup's config with `motion` lines changed (homing.sensors, idle_off_s, a zero offset)."""
    text = config.path.read_text()
    for old, new in lines.items():
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / name
    path.write_text(text)
    return config_module.load(path)


def sensors_config(config, tmp_path, zero_offset: int = -12):
    """Homing sensors on; every arm's zero `zero_offset` steps from its sensor's edge."""
    text = config.path.read_text().replace("sensors: false", "sensors: true", 1)
    text = text.replace("zero_offset_steps: 0 ", f"zero_offset_steps: {zero_offset} ")
    path = tmp_path / "sensors.yaml"
    path.write_text(text)
    return config_module.load(path)


def press_start_when(mock_or_emu, ready, timeout_s: float = 600):
    """A person presses start once `ready()` (e.g. the pre-flight's homing is done; the pre-flight may
    first build the solver tables, which takes long on a loaded machine: the deadline is generous)."""
    def press():
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not ready():
            time.sleep(0.01)
        if isinstance(mock_or_emu, emulator.Emulator):
            pressed = mock_or_emu.press("start")
            while mock_or_emu.cycle() - pressed < pinlog.CYCLES_PER_SECOND // 20:
                time.sleep(0.002)
            mock_or_emu.release("start")
        else:
            mock_or_emu.press_start()
    threading.Thread(target=press, daemon=True).start()


def run(config, port, *flags, tell_maker=None):
    args = build_parser().parse_args(["run", "--port", port, *flags, "--config", str(config.path)])
    return run_hardware(config, RunOptions.from_args(args), tell_maker or (lambda text: None))


def sent(mock, prefix: str) -> list[str]:
    """The commands the mock received that start with `prefix` (framed lines: "SEQ COMMAND*CRC")."""
    commands = []
    for raw in list(mock.received_lines):
        try:
            payload = P.unframe(raw)
        except P.FrameError:  # blank lines and the like
            continue
        command = payload.split(" ", 1)[1] if " " in payload else payload
        if command.startswith(prefix):
            commands.append(command)
    return commands


# ---------------------------------------------------------------------------
# Without homing sensors: the user's word


def test_without_sensors_or_confirmation_the_run_is_not_started_and_names_the_fix(setup):
    config, mock, _, _ = setup
    report = run(config, mock.url)  # stdin is not a terminal: nobody can confirm
    assert report.result() == "NOT STARTED" and report.exit_status() == 4
    [row] = [e for e in report["errors"] if e.startswith(ROW)]
    assert "positions are unknown (R, L, F, B" in row and "--arms-straight" in row and "cube-robot home" in row
    assert "motion.homing.sensors" in row  # the other way: fit sensors
    assert not mock.executed and not sent(mock, "ZERO")  # nothing moved, nothing zeroed


def test_arms_straight_zeroes_the_arms_then_the_run_goes_on(setup):
    config, mock, sequence, _ = setup
    messages = []
    press_start_when(mock, lambda: bool(sent(mock, "ZERO")))
    report = run(config, mock.url, "--arms-straight", "--no-verify", tell_maker=messages.append)
    assert report.result() == "EXECUTED (NOT VERIFIED)", report["errors"]
    assert sent(mock, "ZERO") == ["ZERO RLFB"]
    assert any("confirmed straight (--arms-straight)" in m for m in messages)
    table = next(m for m in messages if "motors and homing" in m)
    assert "confirmed straight by you" in table.split("motors and homing", 1)[1].splitlines()[0]


def test_the_terminal_prompt_takes_only_yes():
    class Terminal(io.StringIO):
        def isatty(self):
            return True
    for answer, expected in (("y\n", True), ("yes\n", True), ("\n", False), ("n\n", False), ("", False)):
        err = io.StringIO()
        assert ask_arms_straight("RLFB", Terminal(answer), err) is expected, answer
        assert "Do all of them stand straight? [y/N]" in err.getvalue()
    piped, err = io.StringIO("y\n"), io.StringIO()
    assert ask_arms_straight("RL", piped, err) is False and piped.read() == "y\n" and err.getvalue() == ""


def test_drivers_gone_off_while_waiting_for_start_stop_the_run_before_anything_moves(setup, tmp_path):
    config, mock, _, _ = setup
    config = with_changes(config, tmp_path, "idle.yaml", **{"idle_off_s: 300": "idle_off_s: 1"})
    mock.time_scale = 1.0  # the idle time passes in real seconds
    zeroed = []
    press_start_when(mock, lambda: (zeroed.append(1) if sent(mock, "ZERO") else None) or (zeroed and not mock.arms.motors_on))
    report = run(config, mock.url, "--arms-straight")
    assert report.result() == "NOT STARTED", report["errors"]
    assert any("no longer ready at the start press" in e and "drivers are off" in e and "idle_off_s" in e
               for e in report["errors"]), report["errors"]
    assert not mock.executed


# ---------------------------------------------------------------------------
# With homing sensors: the run homes the arms (mock and firmware)


def test_with_sensors_the_run_homes_each_arm_before_the_start_button(setup, tmp_path):
    config, mock, sequence, _ = setup
    config = sensors_config(config, tmp_path)
    ConnectedRobot.set_up_mechanics(mock, config)  # arms off straight by hand; each sensor 12 steps clockwise of zero
    rev = config.motion.steps_per_rev
    homes = [f"HOME {arm}" for arm in P.ARMS]
    press_start_when(mock, lambda: [c for _, c in mock.executed if c.startswith("HOME")] == homes)
    report = run(config, mock.url, "--no-verify")
    assert report.result() == "EXECUTED (NOT VERIFIED)", report["errors"]
    commands = [c for _, c in mock.executed]
    assert commands[:5] == ["OPEN RLFB"] + homes  # in the air, before the scan's first grip
    assert [mock.arm_position(a) % (rev // 4) for a in P.ARMS] == [0, 0, 0, 0]
    assert not sent(mock, "ZERO")


def test_a_missing_sensor_is_named_with_the_arm_and_the_fix(setup, tmp_path):
    config, mock, _, _ = setup
    config = sensors_config(config, tmp_path)
    ConnectedRobot.set_up_mechanics(mock, config)
    mock.remove_sensor("F")
    report = run(config, mock.url)
    assert report.result() == "NOT STARTED"
    [row] = [e for e in report["errors"] if e.startswith(ROW)]
    assert "homing arm F failed: alarm HOME_NOT_FOUND" in row and "arm F's sensor" in row and "reset-alarm" in row
    # R and L homed; F's HOME ended in the alarm (no `done`); B was never tried.
    assert [c for _, c in mock.executed if c.startswith("HOME")] == ["HOME R", "HOME L"]
    assert mock.alarm == P.AlarmCode.HOME_NOT_FOUND


def test_nothing_is_homed_when_an_earlier_check_failed(setup, tmp_path):
    config, mock, _, _ = setup
    config = sensors_config(config, tmp_path)
    ConnectedRobot.set_up_mechanics(mock, config)
    (tmp_path / "regions.yaml").unlink()
    report = run(config, mock.url)
    assert report.result() == "NOT STARTED"
    [row] = [e for e in report["errors"] if e.startswith(ROW)]
    assert "the checks above failed, so nothing was moved" in row
    assert not mock.executed and all(mock.arm_position(a) != 0 for a in P.ARMS)


@pytest.mark.firmware
@needs_emulator
def test_the_firmware_in_simavr_is_homed_at_the_configured_offset_by_the_run(setup, tmp_path):
    config, mock, sequence, _ = setup
    config = sensors_config(config, tmp_path, zero_offset=-12)
    rev = config.motion.steps_per_rev
    with emulator.Emulator() as emu:
        ConnectedRobot.set_up_mechanics(emu, config)  # each sensor's edge 12 steps clockwise of the arm's zero
        t0 = emu.cycle()
        # Pressed once the run asks for it (the homing done): all arms at zero was also true while the
        # last arm's seek passed its zero, and a press then came in the middle of the homing.
        said = []
        press_start_when(emu, lambda: any("Waiting for the start button" in m for m in list(said)))
        report = run(config, emu.port, "--no-verify", tell_maker=said.append)
        assert report.result() == "EXECUTED (NOT VERIFIED)", report["errors"]
        # On the pins, before the scan: each arm seeks its sensor's edge (12 steps clockwise of its zero)
        # from where the hand left it, backs off past the release, approaches, then moves by its offset.
        events = emu.pin_events()
        backoff = rev // 16
        for arm, off in SIM_HAND_OFFSETS.items():
            moves = [m.steps for m in pinlog.arm_motions(events, start_cycle=t0)[arm]]
            assert moves[:4] == [12 - off, -(1 + backoff), backoff + 1, -12], (arm, moves)


@pytest.mark.firmware
@needs_emulator
def test_doctor_reads_the_arms_and_says_what_a_run_will_do(setup, tmp_path, capsys):
    config, _, _, _ = setup
    with emulator.Emulator() as emu:
        cli.main(["doctor", "--port", emu.port, "--config", str(config.path)])
        out = capsys.readouterr().out
        row = next(line for line in out.splitlines() if line.startswith("motors and homing"))
        assert "drivers off, positions unknown (R, L, F, B)" in row and "--arms-straight" in row
        sensors = sensors_config(config, tmp_path)
        emu.stick_sensor("R")
        cli.main(["doctor", "--port", emu.port, "--config", str(sensors.path)])
        row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("motors and homing"))
        assert " warn " in row and "homing input active" in row and "sensor_active" in row


def test_the_check_reports_ready_arms_without_moving_them():
    from robot.arms.doctor_checks import check_arms

    class Link:
        def where(self):
            return P.Where(True, {a: 0 for a in P.ARMS}, {a: "open" for a in P.ARMS}, False)

        def run(self, actions):
            raise AssertionError("ready arms are not moved")
    config = config_module.defaults()
    [result] = check_arms(config, SimpleNamespace(link=Link()))
    assert result.status == "ok" and "straight" in result.detail


def test_ctrl_c_while_the_preflight_homes_sends_the_stop_first(setup, tmp_path):
    import _thread

    config, mock, _, _ = setup
    config = sensors_config(config, tmp_path)
    ConnectedRobot.set_up_mechanics(mock, config)
    mock.remove_sensor("R")  # R seeks for 1.25 turns: long enough to be interrupted
    mock.time_scale = 1.0

    def homing_runs():
        answer = []  # asked on the board's thread: its action starts on its own clock
        mock.call(lambda: answer.append(mock._running is not None and mock._running[1].startswith("HOME")))
        return answer == [True]

    def ctrl_c_once_homing_runs():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not homing_runs():  # the seek is under way
            time.sleep(0.002)
        _thread.interrupt_main()

    threading.Thread(target=ctrl_c_once_homing_runs, daemon=True).start()
    report = run(config, mock.url)
    assert report.result() == "EMERGENCY STOP" and report.exit_status() == 130
    mock.call(lambda: None)
    assert mock.alarm == P.AlarmCode.ESTOP_BYTE, "the stop byte reached the board"
    assert not [c for _, c in mock.executed if c.startswith("HOME")], "the homing was stopped, not finished"
    assert "not read yet" in report["cube_state_after_stop"]
