"""docs/hardware.md's first-day checklist, run against the emulated robot, ending with a solved run.

One emulator (the real firmware in simavr) stands in for the new robot: its arm B's motor is wired
the other way round and each arm stands a few steps off straight, with a homing sensor.  Each step
runs the command the checklist names (`cube-robot ...` in-process, with --port to the emulator, so
every command resets the board as opening a real Uno's port does) on a copy of config.yaml that the
steps edit as a maker would.  The last step, `run --sim`, needs a camera: it is the simulated run
(the firmware in simavr plus the rendered camera) with the config the bring-up produced.
Not run here: flashing (`make -n flash` only) and `calibrate colors` (it needs a camera and a
solved cube in front of it; the simulated run learns the colours from each scan).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from robot import cli
from robot import config as config_module
from robot.sim import emulator

OK, REASON = emulator.available()
pytestmark = [pytest.mark.firmware, pytest.mark.skipif(not OK, reason=f"firmware emulator unavailable: {REASON}")]
ROOT = config_module.PROJECT_ROOT
REV = config_module.defaults().motion.steps_per_rev
OFF_STRAIGHT = {"R": 7, "L": -4, "F": 3, "B": -9}
SENSOR_AT = 12  # each magnet switches its sensor 12 steps clockwise of the arm's zero
CHECKLIST = ["doctor", "motors on", "jog", "tune grippers", "home", "load", "calibrate colors",
             "calibrate timing", "run"]


def edit(path, key: str, value: str) -> None:
    """Set `section.key` (or `arms.<arm>.key`) of the motion section's lines as a maker would, comments kept."""
    lines = path.read_text().splitlines(keepends=True)
    section, arm = None, None
    for i, line in enumerate(lines):
        stripped, indent = line.strip(), len(line) - len(line.lstrip())
        if indent == 2 and stripped.endswith(":"):
            section = stripped[:-1]
        if indent == 4 and section == "arms" and stripped.endswith(":"):
            arm = stripped[:-1]
        name = stripped.split(":", 1)[0]
        where = f"arms.{arm}.{name}" if section == "arms" and indent == 6 else f"{section}.{name}"
        if where == key:
            comment = line[line.index("#"):] if "#" in line else "\n"
            lines[i] = f"{line[:indent]}{name}: {value}  {comment}"
            path.write_text("".join(lines))
            return
    raise AssertionError(f"no {key} line")


def cube_robot(capsys, monkeypatch, *args, stdin: str = ""):
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_first_day_checklist_ends_with_a_solved_run(tmp_path, capsys, monkeypatch):
    steps = [line.split("`cube-robot ", 1)[1].split("`")[0]
             for line in (ROOT / "docs" / "hardware.md").read_text().split("## First-day checklist", 1)[1].splitlines()
             if "`cube-robot " in line and line[:1].isdigit()]
    assert [s.split()[0] for s in steps] == [s.split()[0] for s in CHECKLIST], steps
    config = tmp_path / "config.yaml"
    text = (ROOT / "config.yaml").read_text()
    text = text.replace("  data_dir: data ", f"  data_dir: {tmp_path / 'data'} ")  # the run's log
    # The saved timing changes the robot-cost table: build it in its own folder, not the shared tables/.
    assert "\n  dir: tables" in text
    text = text.replace("\n  dir: tables", f"\n  dir: {tmp_path / 'tables'}", 1)
    text = text.replace("  save_images: true ", "  save_images: false ")
    config.write_text(text)
    c = str(config)
    with emulator.Emulator() as emu:
        for arm, steps_off in OFF_STRAIGHT.items():
            emu.turn_by_hand(arm, steps_off)
            emu.set_sensor(arm, SENSOR_AT, 15, REV)
        emu.reverse_wiring("B")
        port = emu.port

        # 1. Flash (shown, not run: there is no board to write to).
        made = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT / "firmware"), "-n", "flash",
                               f"PORT={port}"], capture_output=True, text=True, timeout=60)
        assert made.returncode == 0 and f"avrdude -p m328p -c arduino -P {port}" in made.stdout

        # 2. doctor: the firmware answers on the port.
        code, out, _ = cube_robot(capsys, monkeypatch, "doctor", "--port", port, "--config", c)
        assert "cube-robot-fw" in out

        # 3. Drivers on.
        code, out, err = cube_robot(capsys, monkeypatch, "motors", "on", "--port", port, "--config", c)
        assert code == 0 and "Stepper drivers on" in out, err

        # 4. Each arm's direction: B turns the wrong way; the maker sets its invert and checks again.
        for arm in "RLFB":
            before = emu.arm_position(arm)
            code, out, err = cube_robot(capsys, monkeypatch, "jog", arm, "90", "--port", port, "--config", c)
            assert code == 0, err
            turned = emu.arm_position(arm) - before
            if arm == "B":
                assert turned == -REV // 4, "B is wired the other way round"
                edit(config, "arms.B.invert", "true")
                code, _, err = cube_robot(capsys, monkeypatch, "jog", "B", "180", "--port", port, "--config", c)
                assert code == 0, err
                turned = emu.arm_position("B") - before
            assert turned % REV == REV // 4, f"arm {arm} turned {turned} steps"

        # 5. Gripper widths, saved into the config.
        code, out, err = cube_robot(capsys, monkeypatch, "tune", "grippers", "--set", "R.open=1080",
                                    "--set", "L.closed=1920", "--save", "--port", port, "--config", c)
        assert code == 0, err
        arms = config_module.load(c).motion.arms
        assert (arms["R"].servo_open_us, arms["L"].servo_closed_us) == (1080, 1920)

        # 6. Zero the arms with their sensors (offsets found as docs/hardware.md says: -12).
        edit(config, "homing.sensors", "true")
        for arm in "RLFB":
            edit(config, f"arms.{arm}.zero_offset_steps", str(-SENSOR_AT))
        code, out, err = cube_robot(capsys, monkeypatch, "home", "--port", port, "--config", c, "--json")
        assert code == 0, err
        assert json.loads(out)["where"]["positions"] == {a: 0 for a in "RLFB"}
        assert [emu.arm_position(a) % REV for a in "RLFB"] == [0, 0, 0, 0], "every arm physically straight"

        # 7. Put the cube in (Enter), then take it out again.
        code, out, err = cube_robot(capsys, monkeypatch, "load", "--port", port, "--config", c, "--json", stdin="\n")
        assert code == 0 and json.loads(out)["where"]["grippers"] == {"R": "closed", "L": "closed",
                                                                      "F": "open", "B": "open"}, err
        code, _, err = cube_robot(capsys, monkeypatch, "release", "--port", port, "--config", c)
        assert code == 0, err

        # 9. Timing, measured on the emulated robot and saved.
        code, out, err = cube_robot(capsys, monkeypatch, "calibrate", "timing", "--port", port, "--save",
                                    "--repeats", "1", "--config", c)
        assert code == 0, err
        timing = config_module.load(c).robot.timing
        assert all(isinstance(getattr(timing, k), int) for k in ("quarter_turn_ms", "half_turn_ms", "regrip_ms"))

    # 10. Solve: the simulated run (firmware in simavr + rendered camera) with the config made above.
    code, out, err = cube_robot(capsys, monkeypatch, "run", "--sim", "--firmware", "emulator",
                                "--scramble", "R U F' U2", "--config", c, "--json")
    report = json.loads(out)
    assert code == 0 and report["solved"] is True, err
    assert "cube-robot release" in err
