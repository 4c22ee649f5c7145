"""Every bring-up command with --sim on both emulated robots (the real firmware in simavr, and the
Python mock), with --json; every command's --help has examples and the common options; the
refusals a user meets at the command line (an alarm latched, nothing pressed, bad targets).

Each --sim command builds a fresh emulated robot (robot/bringup/connection.py): its arms stand off
straight by SIM_HAND_OFFSETS and, with homing sensors configured, each sensor sits where the arm's
zero offset puts its zero.
"""

from __future__ import annotations

import io
import json
import sys

import pytest

from robot import cli
from robot import config as config_module
from robot.bringup.connection import SIM_HAND_OFFSETS
from robot.sim import emulator

OK, REASON = emulator.available()
BACKENDS = [pytest.param("emulator", marks=[pytest.mark.firmware,
                                            pytest.mark.skipif(not OK, reason=f"emulator unavailable: {REASON}")]),
            "mock"]
COMMANDS = ["jog", "grip", "motors", "home", "load", "release", "tune grippers"]
ROOT = config_module.PROJECT_ROOT


class TerminalInput(io.StringIO):
    """What a person types at a terminal (a command that needs one checks isatty)."""

    def isatty(self):
        return True


def cube_robot(capsys, monkeypatch, *args, stdin: str = "", terminal: bool = False):
    monkeypatch.setattr(sys, "stdin", (TerminalInput if terminal else io.StringIO)(stdin))
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def sim(capsys, monkeypatch, backend, *args, stdin: str = "", config: str | None = None, terminal: bool = False):
    extra = ["--config", config] if config else []
    code, out, err = cube_robot(capsys, monkeypatch, *args, "--sim", "--firmware", backend, "--json", *extra,
                                stdin=stdin, terminal=terminal)
    result = json.loads(out)  # --json: one object on stdout, the commentary on stderr
    assert result["simulated"] is True and result["robot"].startswith("SIMULATED"), result
    assert ("simavr" if backend == "emulator" else "mock") in result["robot"]
    return code, result, err


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_examples_and_the_common_options(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(command.split() + ["--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    assert "examples:" in out and f"cube-robot {command}" in out.split("examples:", 1)[1]
    for option in ("--config", "--port", "--sim", "--json", "--firmware"):
        assert option in out, option


@pytest.mark.parametrize("backend", BACKENDS)
def test_motors_jog_grip_release_on_the_emulated_robot(backend, capsys, monkeypatch):
    code, result, err = sim(capsys, monkeypatch, backend, "motors", "on")
    assert code == 0 and result["where"]["motors_on"] is True and "Stepper drivers on" in err
    code, result, err = sim(capsys, monkeypatch, backend, "motors", "off")
    assert code == 0 and result["where"]["motors_on"] is False
    code, result, err = sim(capsys, monkeypatch, backend, "jog", "L", "-90")
    assert code == 0 and result["steps"] == -100 and result["where"]["grippers"]["L"] == "open", err
    assert "Switched the stepper drivers on" in err and "Opened gripper L first" in err
    code, result, err = sim(capsys, monkeypatch, backend, "grip", "FB", "close")
    assert code == 0 and result["where"]["grippers"] == {"R": None, "L": None, "F": "closed", "B": "closed"}
    code, result, err = sim(capsys, monkeypatch, backend, "release")
    assert code == 0 and result["where"]["grippers"] == {a: "open" for a in "RLFB"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_home_by_eye_on_the_emulated_robot_is_told_where_the_arms_stand(backend, capsys, monkeypatch):
    # The simulation says where each arm really stands; the user jogs it back and confirms.
    answers = "".join(f"{-off}\n\n" for off in SIM_HAND_OFFSETS.values())
    code, result, err = sim(capsys, monkeypatch, backend, "home", stdin=answers, terminal=True)
    assert code == 0 and result["method"] == "by eye", err
    assert f"arm R stands {SIM_HAND_OFFSETS['R']} steps clockwise of straight" in err
    assert "Simulated arms now at (steps from straight): R 0, L 0, F 0, B 0." in err
    assert result["where"]["positions"] == {a: 0 for a in "RLFB"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_home_with_sensors_on_the_emulated_robot_ends_straight(backend, tmp_path, capsys, monkeypatch):
    text = (ROOT / "config.yaml").read_text().replace("sensors: false", "sensors: true", 1)
    text = text.replace("zero_offset_steps: 0 ", "zero_offset_steps: -20 ")
    config = tmp_path / "config.yaml"
    config.write_text(text)
    code, result, err = sim(capsys, monkeypatch, backend, "home", config=str(config))
    assert code == 0 and result["method"] == "sensors", err
    assert "move by its zero offset (-20 steps)" in err
    assert "Simulated arms now at (steps from straight): R 0, L 0, F 0, B 0." in err


@pytest.mark.parametrize("backend", BACKENDS)
def test_load_and_tune_on_the_emulated_robot(backend, tmp_path, capsys, monkeypatch):
    code, result, err = sim(capsys, monkeypatch, backend, "load", "--pair", "FB")
    assert code == 0 and result["where"]["grippers"] == {"R": "open", "L": "open", "F": "closed", "B": "closed"}
    config = tmp_path / "config.yaml"
    config.write_text((ROOT / "config.yaml").read_text())
    before = config.read_text()
    code, result, err = sim(capsys, monkeypatch, backend, "tune", "grippers", "--set", "F.open=1050",
                            config=str(config))
    closed = config_module.load(str(config)).motion.servo_closed_us  # the width it had: only F.open changed
    assert code == 0 and result["widths"]["F"] == {"open_us": 1050, "closed_us": closed}, err
    assert config.read_text() == before, "without --save nothing is written"
    # The keys' `s` (save and quit) on the emulated robot: the widths are the emulator's, so not saved.
    code, result, err = sim(capsys, monkeypatch, backend, "tune", "grippers", stdin="+\ns\n", config=str(config))
    assert code == 0 and result["saved"] == [] and "not saved" in err and "emulator's" in err, err
    assert config.read_text() == before


# ---------------------------------------------------------------------------
# Refusals at the command line


@pytest.mark.parametrize("args, message", [
    (["grip", "X", "open"], "'X' is not an arm (R, L, F, B), a pair (RL, FB) or 'all'"),
    (["grip", "RR", "open"], "'RR' is not an arm"),
    (["home", "--arms", "RQ"], "'RQ' is not an arm"),
    (["jog", "R", "0.4"], "that is 0 steps: nothing to turn"),
    (["tune", "grippers", "--set", "R.wide=1000"], "R.wide=1000"),
])
def test_bad_targets_are_refused_by_name_on_the_mock(args, message, capsys, monkeypatch):
    code, out, err = cube_robot(capsys, monkeypatch, *args, "--sim", "--firmware", "mock")
    assert code == 2 and message in err, err  # a bad argument: refused before the robot starts
    assert "Robot:" not in out + err


def test_load_gives_up_when_nobody_presses_start(tmp_path, capsys, monkeypatch):
    class SilentTerminal(io.StringIO):  # a terminal where nobody presses Enter (so no simulated press)
        def isatty(self):
            return True
    config = tmp_path / "config.yaml"
    config.write_text((ROOT / "config.yaml").read_text().replace("start_timeout_s: 600", "start_timeout_s: 1"))
    monkeypatch.setattr(sys, "stdin", SilentTerminal(""))
    code = cli.main(["load", "--sim", "--firmware", "mock", "--json", "--config", str(config)])
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert code == 1 and "nobody pressed Enter or the start button within 1 s" in result["error"]
    assert result["where"]["grippers"] == {a: "open" for a in "RLFB"}, "the grippers stay open: no cube was held"


@pytest.mark.firmware
@pytest.mark.skipif(not OK, reason=f"emulator unavailable: {REASON}")
@pytest.mark.parametrize("command", [["jog", "R", "90"], ["grip", "R", "close"], ["motors", "on"], ["home"],
                                     ["release"]])
def test_every_moving_command_is_refused_while_the_estop_is_held(command, capsys, monkeypatch):
    with emulator.Emulator() as emu:
        emu.press("estop")
        code, out, err = cube_robot(capsys, monkeypatch, *command, "--port", emu.port, "--json", stdin="\n" * 8,
                                    terminal=True)
        result = json.loads(out)
        # The board refuses its settings while the e-stop is latched: not ready, nothing moved (NOT STARTED,
        # as a run whose pre-flight finds the alarm).
        assert code == 4 and result["ok"] is False
        assert "ESTOP" in result["error"], result["error"]
        assert all(v == 0 for v in (emu.arm_position(a) for a in "RLFB"))


@pytest.mark.firmware
@pytest.mark.skipif(not OK, reason=f"emulator unavailable: {REASON}")
def test_ctrl_c_during_homing_sends_the_stop_first_and_reports_the_state(tmp_path):
    """Ctrl-C in any moving command goes through the same handler: here `home` seeking a sensor
    that is not there (it would seek 1.25 turns at one turn per second)."""
    import signal
    import subprocess
    import time

    from robot.sim import pinlog

    config = tmp_path / "config.yaml"
    config.write_text((ROOT / "config.yaml").read_text().replace("sensors: false", "sensors: true", 1))
    with emulator.Emulator(realtime=True) as emu:
        t = emu.cycle()
        proc = subprocess.Popen([sys.executable, "-m", "robot", "home", "--arms", "F", "--port", emu.port,
                                 "--config", str(config)], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while not pinlog.step_events(emu.pin_events(), start_cycle=t)["F"] and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == 130, (out, err)
        assert "sent the e-stop ('!') first" in err and "alarm ESTOP_BYTE latched" in err
        assert "F unknown" in err and "grippers: R never set, L never set, F open" in err
        steps = len(pinlog.step_events(emu.pin_events(), start_cycle=t)["F"])
        rev = config_module.load(config).motion.steps_per_rev
        assert 0 < steps < rev * 5 // 4, "the seek was stopped before its 1.25 turns"


@pytest.mark.parametrize("backend", BACKENDS)
def test_jog_in_the_air_is_refused_while_the_arms_pair_holds_the_cube(backend, capsys, monkeypatch):
    """After `load`, opening one gripper of the holding pair would leave the cube in the other one."""
    from robot.arms import actions
    from robot.bringup.connection import ConnectedRobot

    config = config_module.load()
    with ConnectedRobot(config, sim=True, firmware=backend) as robot:
        actions.load(robot.link, "RL", lambda: None, lambda text: None)
        before = robot.arm_angle("R")
        with pytest.raises(actions.BringupError, match="pair RL holds the cube: .*--with-cube.*cube-robot release"):
            actions.jog(robot.link, "R", 100, lambda text: None)
        assert robot.link.where().grippers == {"R": "closed", "L": "closed", "F": "open", "B": "open"}
        assert robot.arm_angle("R") == before
        with pytest.raises(actions.BringupError, match="position of arm.s. R, L is unknown"):
            actions.jog(robot.link, "R", 100, lambda text: None, with_cube=True)  # nobody said where R, L stand
        actions.jog(robot.link, "R", 100, lambda text: None, with_cube=True, arms_straight=True)  # the layer turn
        assert robot.arm_angle("R") == before + 100
        actions.jog(robot.link, "F", 100, lambda text: None)  # F's pair is open: in the air


def test_every_line_of_a_simulated_command_says_simulated(capsys, monkeypatch):
    """As a simulated run's report: a turn time measured on the emulated robot is never read as the bench's."""
    code, out, err = cube_robot(capsys, monkeypatch, "jog", "R", "90", "--sim", "--firmware", "mock")
    lines = [line for line in out.splitlines() if line.strip()]
    assert code == 0 and any("Arm R turned" in line for line in lines), out + err
    assert all(line.startswith("SIMULATED | ") for line in lines), out
