"""Every line a `--sim` rehearsal prints is marked SIMULATED at its start (docs/hardware.md: "every
line marked SIMULATED"), the lines of its failures and refusals too, and what the solver tables say
while a simulated run loads them.  (The rehearsals' ordinary output: tests/test_first_day_sim.py.)"""

from __future__ import annotations

import io
import json
import re
import sys

import numpy as np
import pytest

from conftest import copy_tables, scratch_config
from robot import cli

MARK = "SIMULATED | "


def unmarked(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.startswith(MARK)]


def cube_robot(capsys, monkeypatch, *args, stdin: str = ""):
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args, said", [
    (["home", "--sim", "--firmware", "mock"], "needs a person at a terminal"),
    (["grip", "X", "open", "--sim", "--firmware", "mock"], "'X' is not an arm"),
    (["jog", "Q", "90", "--sim"], "'Q' is not an arm"),
    (["tune", "grippers", "--sim", "--save", "--set", "R.open=1100"], "not saved"),
    (["calibrate", "timing", "--sim", "--save"], "not saved"),
    (["calibrate", "timing", "--sim", "--repeats", "0"], "--repeats must be at least 1"),
    (["calibrate", "colours", "--sim", "--port", "/dev/ttyACM0"], "--port cannot go with it"),
    (["doctor", "--sim", "--port", "/dev/ttyACM0"], "--port names a real one"),
])
def test_a_rehearsal_refused_says_so_on_marked_lines(args, said, capsys, monkeypatch):
    code, out, err = cube_robot(capsys, monkeypatch, *args)
    assert code == 2, out + err
    assert said in err and err.startswith(f"{MARK}cube-robot "), err
    assert unmarked(out) == [] and unmarked(err) == [], out + err


def test_a_failed_bringup_command_says_why_on_a_marked_line(capsys, monkeypatch):
    from robot.arms import actions

    def refused(*args, **kwargs):
        raise actions.BringupError("the drivers did not switch on")
    monkeypatch.setattr(actions, "set_motors", refused)
    code, out, err = cube_robot(capsys, monkeypatch, "motors", "on", "--sim", "--firmware", "mock")
    assert code == 1, out + err
    assert f"{MARK}cube-robot motors: the drivers did not switch on" in err.splitlines()
    assert unmarked(out) == [] and unmarked(err) == [], out + err


def test_calibrate_colours_sim_without_answers_says_why_on_a_marked_line(tmp_path, capsys, monkeypatch):
    def edit(text):
        return text.replace("preview_dir: runs/preview", f"preview_dir: {tmp_path / 'preview'}")
    code, out, err = cube_robot(capsys, monkeypatch, "calibrate", "colours", "--sim", "--firmware", "mock",
                                "--no-window", "--config", str(scratch_config(tmp_path, edit)))
    assert code == 1, out + err
    [line] = err.splitlines()
    assert line.startswith(f"{MARK}cube-robot calibrate colours: no answer for 'solved_ready'"), line
    assert unmarked(out) == [], out


def test_a_simulated_run_rebuilding_a_stale_table_says_so_on_marked_lines(tmp_path, capsys, monkeypatch):
    from robot.solver import tables as tables_module

    folder = copy_tables(tmp_path / "tables")
    valid = np.load(folder / "robot-cost.npy")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"]["robot-cost.npy"]["profile"]["quarter_turn_ms"] += 10  # built for other timings
    (folder / "manifest.json").write_text(json.dumps(manifest))
    rebuilt = []

    def build_cost_table(coords, profile, progress):  # the real build takes a while: the right table, at once
        rebuilt.append(profile)
        return valid
    monkeypatch.setattr(tables_module, "build_cost_table", build_cost_table)
    config = scratch_config(tmp_path, lambda text: re.sub(r"\n  dir: .*\n", f"\n  dir: {folder}\n", text, count=1))
    code, out, err = cube_robot(capsys, monkeypatch, "run", "--sim", "--firmware", "mock", "--seed", "3",
                                "--config", str(config))
    assert code == 0 and rebuilt, out + err
    assert f"{MARK}tables: robot-cost.npy was built for robot profile" in err and "rebuilding" in err, err
    assert unmarked(err) == [], err
