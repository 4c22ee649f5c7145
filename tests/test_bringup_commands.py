"""The bring-up commands (robot/bringup) end to end: the CLI against the real firmware in simavr.

The test owns the emulator and passes its pty with --port, so it can read the pin log and the
harness's modelled arms afterwards; each command opens the port, which resets the board as it
resets a real Uno (settings, drivers and grippers start over; the mechanics stay).  A few cases
use --sim (the command starts its own emulated robot) and the mock firmware.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from robot import cli
from robot import config as config_module
from robot import firmware_header
from robot.arms import readiness
from robot.bringup import tune
from robot.link import protocol as P
from robot.sim import emulator, pinlog

OK, REASON = emulator.available()
needs_emulator = pytest.mark.skipif(not OK, reason=f"firmware emulator unavailable: {REASON}")
ROOT = config_module.PROJECT_ROOT
REV = config_module.defaults().motion.steps_per_rev
ENABLE = pinlog.load_pin_map()["ENABLE"].label
SERVO_JITTER_US = 8


@pytest.fixture
def emu():
    with emulator.Emulator() as e:
        yield e


def write_config(tmp_path, **changes) -> str:
    """The shipped config.yaml with `motion.arms.R.invert: true`-style line edits."""
    text = (ROOT / "config.yaml").read_text()
    data_changes = dict(changes)
    path = tmp_path / "config.yaml"
    lines = text.splitlines(keepends=True)
    section = arm = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if indent == 2 and stripped.endswith(":"):
            section = stripped[:-1]
        if indent == 4 and section == "arms" and stripped.endswith(":"):
            arm = stripped[:-1]
        key = stripped.split(":", 1)[0]
        for dotted, value in data_changes.items():
            parts = dotted.split(".")
            if (len(parts) == 2 and parts[0] == section and key == parts[1] and indent == 4) or \
                    (len(parts) == 3 and parts[0] == "arms" and parts[1] == arm and key == parts[2] and indent == 6):
                lines[i] = line[:indent] + f"{key}: {value}\n"
    path.write_text("".join(lines))
    return str(path)


class TerminalInput(io.StringIO):
    """What a person types at a terminal (a command that needs one checks isatty)."""

    def isatty(self):
        return True


def run(args, capsys, stdin: str = "", monkeypatch=None, terminal: bool = False) -> tuple[int, str, str]:
    if monkeypatch is not None:
        monkeypatch.setattr(sys, "stdin", (TerminalInput if terminal else io.StringIO)(stdin))
    code = cli.main(args)
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------
# jog, grip, motors


@needs_emulator
def test_jog_inverted_arm_makes_exact_steps_and_says_what_it_switched_on(emu, tmp_path, capsys, monkeypatch):
    config = write_config(tmp_path, **{"arms.F.invert": "true"})
    emu.reverse_wiring("F")  # F's motor is wired the other way: invert corrects it
    t = emu.cycle()
    code, out, err = run(["jog", "F", "90", "--port", emu.port, "--config", config], capsys, monkeypatch=monkeypatch)
    assert code == 0, err
    assert "Switched the stepper drivers on" in out and "Opened gripper F first" in out
    assert "Arm F turned +100 steps (+90.0 deg)" in out
    events = emu.pin_events()
    assert pinlog.net_steps(events, start_cycle=t) == {"R": 0, "L": 0, "F": -100, "B": 0}, "DIR inverted"
    assert emu.arm_position("F") == 100, "the arm itself turned clockwise"
    code, out, _ = run(["jog", "R", "--steps", "-7", "--port", emu.port, "--config", config, "--json"], capsys)
    result = json.loads(out)
    assert code == 0 and result["steps"] == -7 and result["where"]["motors_on"] is True
    assert emu.arm_position("R") == -7 and pinlog.net_steps(emu.pin_events(), start_cycle=t)["R"] == -7


@needs_emulator
def test_jog_with_the_cube_takes_it_with_the_arms_pair(emu, capsys):
    # Just powered up: nobody knows where R and L stand, so their grippers must not close on the cube.
    code, out, err = run(["jog", "L", "-90", "--with-cube", "--port", emu.port], capsys)
    assert code == 1 and "the position of arm(s) R, L is unknown" in err and "cube-robot home --arms RL" in err, err
    assert "--arms-straight" in err
    assert emu.arm_position("L") == 0 and "grippers: R never set, L never set" in out + err  # nothing moved
    # The board forgets positions when a command opens its port: the user's word that they stand straight.
    code, out, err = run(["jog", "L", "-90", "--with-cube", "--arms-straight", "--port", emu.port, "--json"], capsys)
    assert code == 0, err
    assert "R, L taken as straight, on your word" in err
    result = json.loads(out)
    assert result["where"]["grippers"] == {"R": "closed", "L": "closed", "F": "open", "B": "open"}
    assert emu.arm_position("L") == -100


def test_jog_and_grip_arguments_are_checked(capsys):
    assert cli.main(["jog", "X", "90"]) == 2
    assert cli.main(["jog", "R"]) == 2
    assert cli.main(["jog", "R", "90", "--steps", "3"]) == 2
    err = capsys.readouterr().err
    assert "'X' is not an arm" in err and "give DEGREES or --steps N" in err


def test_bad_targets_and_widths_are_refused_before_anything_connects(tmp_path, capsys):
    # A port that does not exist: a command that connected first would fail on the port (exit 4, NOT STARTED).
    port = str(tmp_path / "no-such-port")
    most = firmware_header.limits()["JOG_STEPS_MAX"]
    cases = [
        (["jog", "R", "--steps", str(most + 1)], f"{most + 1} steps is more than one jog may turn ({most} steps"),
        (["jog", "R", "100000"], "more than one jog may turn"),
        (["jog", "R", "0"], "0 steps: nothing to turn"),
        (["grip", "RF", "open"], "'RF' is not one gripper, a pair (RL, FB) or 'all'"),
        (["tune", "grippers", "--set", "X.open=1000"], "use ARM.open=US or ARM.closed=US"),
        (["tune", "grippers", "--set", "R.open=99999"], "outside"),
    ]
    for args, message in cases:
        assert cli.main([*args, "--port", port]) == 2, args
        err = capsys.readouterr().err
        assert message in err and "no-such-port" not in err, (args, err)
    assert cli.main(["grip", "LR", "open", "--port", port]) == 4, "a pair in either order is a pair: it connects"
    assert "no-such-port" in capsys.readouterr().err


@needs_emulator
def test_grip_uses_each_grippers_own_widths(emu, tmp_path, capsys):
    config = write_config(tmp_path, **{"arms.R.servo_closed_us": "1800", "arms.L.servo_closed_us": "1900"})
    code, out, err = run(["grip", "RL", "close", "--port", emu.port, "--config", config], capsys)
    assert code == 0, err
    assert "Closed grippers R, L (R 1800 us, L 1900 us)" in out
    t = emu.cycle()
    pulses = wait_for_pulses(emu, t, "RL")
    assert all(abs(w - 1800) <= SERVO_JITTER_US for w in pulses["R"]), pulses["R"]
    assert all(abs(w - 1900) <= SERVO_JITTER_US for w in pulses["L"]), pulses["L"]
    code, out, _ = run(["grip", "FX", "open", "--port", emu.port, "--config", config], capsys)
    assert code == 2  # not a gripper: refused before connecting


def wait_for_pulses(emu, after, arms, frames=2):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        pulses = {a: [p.width_us for p in ps if p.start_cycle > after]
                  for a, ps in pinlog.servo_pulses(emu.pin_events()).items() if a in arms}
        if all(len(w) >= frames for w in pulses.values()):
            return pulses
        time.sleep(0.005)
    raise AssertionError("no servo frames")


@needs_emulator
def test_motors_on_and_off_drive_enable(emu, capsys):
    t = emu.cycle()
    code, out, _ = run(["motors", "on", "--port", emu.port], capsys)
    assert code == 0 and "Stepper drivers on" in out
    code, out, _ = run(["motors", "off", "--port", emu.port, "--json"], capsys)
    assert code == 0 and json.loads(out)["where"]["motors_on"] is False
    enable = [e.level for e in emu.pin_events() if e.pin == ENABLE and e.cycle > t]
    # Power-up (the harness starts the CPU when the port is first opened): high; MOTORS ON: low; the
    # second command's open resets the board: high again; its MOTORS OFF keeps it high.
    assert enable == [1, 0, 1], enable


# ---------------------------------------------------------------------------
# home, load, release


@needs_emulator
def test_home_by_eye_squares_each_arm(emu, capsys, monkeypatch):
    for arm, off in {"R": 7, "L": -4, "F": 0, "B": 12}.items():
        emu.turn_by_hand(arm, off)
    answers = "-7\n\n+\n-\n4\n\n\n-\n-\n-2\n\n"  # R: -7; L: +5 -5 +4; F: straight; B: -5 -5 -2
    code, out, err = run(["home", "--port", emu.port], capsys, answers, monkeypatch, terminal=True)
    assert code == 0, err
    assert [emu.arm_position(a) for a in "RLFB"] == [0, 0, 0, 0]
    assert "Confirmed straight: R, L, F, B" in out


@needs_emulator
def test_home_with_sensors_ends_at_each_zero_offset(emu, tmp_path, capsys):
    offsets = {"R": -10, "L": -25, "F": -8, "B": -40}
    config = write_config(tmp_path, **{"homing.sensors": "true"},
                          **{f"arms.{a}.zero_offset_steps": str(o) for a, o in offsets.items()})
    for arm, off in offsets.items():
        emu.set_sensor(arm, -off, 15, REV)  # the sensor switches `-off` steps clockwise of straight
        emu.turn_by_hand(arm, {"R": 31, "L": -70, "F": 3, "B": 150}[arm])
    code, out, err = run(["home", "--port", emu.port, "--config", config, "--json"], capsys)
    assert code == 0, err
    assert [emu.arm_position(a) % REV for a in "RLFB"] == [0, 0, 0, 0]
    result = json.loads(out)
    assert result["method"] == "sensors" and result["where"]["positions"] == {a: 0 for a in "RLFB"}


@needs_emulator
@pytest.mark.parametrize("fault, alarm", [("missing", "HOME_NOT_FOUND"), ("stuck", "HOME_STUCK")])
def test_home_names_a_missing_or_stuck_sensor(emu, tmp_path, capsys, fault, alarm):
    config = write_config(tmp_path, **{"homing.sensors": "true"})
    if fault == "stuck":
        emu.stick_sensor("B")
    code, out, err = run(["home", "--arms", "R", "--port", emu.port, "--config", config], capsys)
    assert code == 1  # the robot answered and latched an alarm: not done (as a run that stops)
    assert alarm in err


@needs_emulator
def test_load_then_release(emu, capsys, monkeypatch):
    code, out, err = run(["load", "--pair", "FB", "--port", emu.port, "--json"], capsys, "\n", monkeypatch)
    assert code == 0, err
    assert json.loads(out)["where"]["grippers"] == {"R": "open", "L": "open", "F": "closed", "B": "closed"}
    assert "put the cube between them" in err
    code, out, err = run(["release", "--port", emu.port, "--json"], capsys)
    assert code == 0 and json.loads(out)["where"]["grippers"] == {a: "open" for a in "RLFB"}


def test_load_release_on_the_mock_with_sim(capsys, monkeypatch):
    code, out, err = run(["load", "--sim", "--firmware", "mock", "--json"], capsys, "", monkeypatch)
    assert code == 0, err
    result = json.loads(out)
    assert result["simulated"] and "mock" in result["robot"] and result["pair"] == "RL"
    assert "pressing the emulated start button" in err


# ---------------------------------------------------------------------------
# tune grippers


@needs_emulator
def test_tune_set_moves_the_gripper_and_rewrites_only_those_lines(emu, tmp_path, capsys):
    config = write_config(tmp_path)
    before = open(config).read().splitlines()
    code, out, err = run(["tune", "grippers", "--set", "R.open=1100", "--set", "b.closed=1850", "--save",
                          "--port", emu.port, "--config", config, "--json"], capsys)
    assert code == 0, err
    after = open(config).read().splitlines()
    changed = [(b, a) for b, a in zip(before, after) if b != a]
    assert len(before) == len(after) and len(changed) == 2
    assert changed[0][1].split("#")[0].strip() == "servo_open_us: 1100"
    assert changed[1][1].split("#")[0].strip() == "servo_closed_us: 1850"
    assert all(b.split("#")[1] == a.split("#")[1] for b, a in changed), "comments kept"
    loaded = config_module.load(config).motion.arms
    assert (loaded["R"].servo_open_us, loaded["B"].servo_closed_us) == (1100, 1850)
    assert json.loads(out)["saved"] == ["B.closed", "R.open"]
    pulses = wait_for_pulses(emu, emu.cycle(), "RB")
    assert all(abs(w - 1100) <= SERVO_JITTER_US for w in pulses["R"])
    assert all(abs(w - 1850) <= SERVO_JITTER_US for w in pulses["B"])


@needs_emulator
def test_tune_keys_nudge_live_and_quit_without_saving_changes_nothing(emu, tmp_path, capsys, monkeypatch):
    config = write_config(tmp_path)
    text = open(config).read()
    code, out, _ = run(["tune", "grippers", "--port", emu.port, "--config", config], capsys, "+++\nq\n", monkeypatch)
    assert code == 1 and "tuning OPEN = 1330 us" in out and "Not saved" in out  # the default 1300 + 3 x 10
    assert open(config).read() == text
    pulses = wait_for_pulses(emu, emu.cycle(), "R")
    assert all(abs(w - 1330) <= SERVO_JITTER_US for w in pulses["R"]), "the nudges went to the robot live"
    code, out, _ = run(["tune", "grippers", "--port", emu.port, "--config", config], capsys, "c]no[s\n", monkeypatch)
    assert code == 0
    arms = config_module.load(config).motion.arms
    assert (arms["R"].servo_closed_us, arms["L"].servo_open_us) == (1750, 1250)  # 1700 + 50, 1300 - 50
    assert arms["R"].servo_open_us is None, "untouched widths stay null (pair-wide)"


def test_tune_refuses_bad_widths_and_missing_lines(tmp_path):
    with pytest.raises(tune.TuneError, match="use ARM.open=US"):
        tune.parse_setting("R.opn=1100")
    widths = tune.Widths.from_motion(config_module.defaults().motion)
    with pytest.raises(tune.TuneError, match="outside 500..2500"):
        widths.set("R", "open", 2600, (500, 2500))
    widths.set("L", "closed", 1900)
    with pytest.raises(tune.TuneError, match="no motion.arms.L.servo_closed_us line"):
        tune.rewrite_gripper_widths("motion:\n  idle_off_s: 300\n", widths, "c.yaml")


# ---------------------------------------------------------------------------
# Ctrl-C, readiness


@needs_emulator
def test_ctrl_c_during_a_jog_sends_the_stop_first_and_reports_the_state(tmp_path):
    with emulator.Emulator(realtime=True) as emu:
        t = emu.cycle()
        proc = subprocess.Popen([sys.executable, "-m", "robot", "jog", "R", "--steps", "6400", "--port", emu.port],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while not pinlog.step_events(emu.pin_events(), start_cycle=t)["R"] and time.monotonic() < deadline:
            time.sleep(0.01)
        interrupted_at = emu.cycle()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == 130, (out, err)
        assert "sent the e-stop ('!') first" in err and "alarm ESTOP_BYTE latched" in err
        assert "drivers on; arms: R unknown" in err and "grippers: R open" in err
        steps = [c for c, _ in pinlog.step_events(emu.pin_events(), start_cycle=t)["R"]]
        assert len(steps) < 6400, "the jog was stopped"
        # From the signal to the last step: Python's reaction, the `!` byte, then a bounded deceleration.
        assert pinlog.cycles_to_ms(max(steps) - interrupted_at) < 500


def test_readiness_names_what_keeps_the_arms_from_a_run():
    where = P.Where(False, {"R": 0, "L": None, "F": 25, "B": 100}, {a: "open" for a in "RLFB"}, False)
    problems = readiness.arms_problems(where, 400)
    assert len(problems) == 3
    assert "drivers are off" in problems[0] and "L is unknown" in problems[1] and "F at 25 steps" in problems[2]
    ready = P.Where(True, {"R": 0, "L": 100, "F": 200, "B": 300}, {a: "closed" for a in "RLFB"}, False)
    assert readiness.arms_problems(ready, 400) == []


def test_widths_tuned_on_the_emulator_are_never_saved(tmp_path, capsys):
    # --sim with --save is refused before anything runs: the widths would be the emulator's servos'.
    config = write_config(tmp_path)
    before = open(config).read()
    code, out, err = run(["tune", "grippers", "--sim", "--set", "R.open=1100", "--save", "--config", config], capsys)
    assert code == 2 and "not saved" in err and "emulator's, not your robot's" in err and config in err
    assert open(config).read() == before
