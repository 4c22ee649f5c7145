"""A simulated run whose firmware settings ask more than the true jaws allow (config
simulated_robot.gripper) ends as a jam: NOT SOLVED, its cube state NOT KNOWN, advice naming
`cube-robot calibrate overlap`, never EXECUTED (NOT VERIFIED), whose exit status is a real robot's."""

from __future__ import annotations

import json
import re

import pytest

from robot import config as config_module
from robot.exit_status import ExitStatus


@pytest.fixture(scope="module")
def jam_tables(_session_tables, tmp_path_factory):
    """The settings below change a regrip's cost: their robot cost table is built in a folder of its own."""
    from conftest import copy_tables

    return copy_tables(tmp_path_factory.mktemp("jam-tables"))


@pytest.mark.firmware
def test_a_run_with_jaw_settings_more_aggressive_than_the_true_jaws_ends_as_a_jam(tmp_path, capsys, jam_tables):
    """The firmware is told its jaws clear the cube at 20 % of their opening and open 20 mm wide (the
    true jaws: 50 % and 12 mm): the next turn starts while a jaw is still in the layer's reach (seed 12
    jammed in the maker's trial that found this)."""
    from conftest import scratch_config

    from robot import cli
    from robot.sim import emulator

    ok, reason = emulator.available()
    if not ok:
        pytest.skip(f"firmware emulator unavailable: {reason}")

    def edit(text: str) -> str:
        text = re.sub(r"(?m)^  dir: .*$", f"  dir: {jam_tables}", text, count=1)
        text = re.sub(r"(?m)^(  jaw_clear_pct:)\s*\d+", r"\1 20", text)
        return re.sub(r"(?m)^(  jaw_open_gap_mm:)\s*\d+", r"\1 20", text)

    path = str(scratch_config(tmp_path, edit))
    config = config_module.load(path)
    assert config.simulated_robot.gripper.true_jaws and config.motion.jaw_clear_pct == 20
    code = cli.main(["run", "--sim", "--firmware", "emulator", "--seed", "12", "--config", path])
    out, err = capsys.readouterr()
    assert code == ExitStatus.NOT_DONE, out[-3000:] + err[-2000:]
    assert re.search(r"JawJam: .*(jammed|cube dropped|began turning) at .*\[pin events: ", out), out[-3000:]
    assert "SIMULATED NOT SOLVED" in out and "EXECUTED (NOT VERIFIED)" not in out
    assert "cube-robot calibrate overlap" in out and "cube-robot doctor" not in out
    logged = [json.loads(line) for line in
              (config_module.project_path(config.run.data_dir) / "solve-log.jsonl").read_text().splitlines()]
    entry = logged[-1]
    assert entry["outcome"] == "NOT SOLVED"
    assert entry["cube_state_after_stop"].startswith("NOT KNOWN")
    assert entry["virtual_cube"].startswith("NOT KNOWN")  # not the facelets of a cube that jammed mid-turn
    assert "calibrate overlap" in entry["advice"] and "motion.jaw_clear_pct" in entry["advice"]
