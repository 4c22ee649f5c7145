"""The emulated robot is the robot config.yaml describes (robot/sim/mechanics.py).

A maker sets `motion.arms.<arm>.invert` because that motor is wired the other way round; an
emulated robot made from such a config (`run --sim`, a bring-up command's --sim) must be wired
the same way, or its inverted arms turn backwards: a run with a bring-up config then misread its
own scans (tests/test_first_day.py, the B arm inverted).
"""

from __future__ import annotations

import json

import pytest

from robot import cli
from robot import config as config_module
from robot.bringup import actions
from robot.bringup.bench import Bench
from robot.sim import emulator, mechanics

OK, REASON = emulator.available()
needs_emulator = pytest.mark.skipif(not OK, reason=f"firmware emulator unavailable: {REASON}")
ROOT = config_module.PROJECT_ROOT
INVERTED = "RB"


def inverted_config(tmp_path) -> str:
    """The shipped config with arms R and B inverted, and the run's log in tmp_path."""
    lines = (ROOT / "config.yaml").read_text().splitlines(keepends=True)
    arm = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if line.startswith("    ") and not line.startswith("      ") and stripped[:-1] in "RLFB" and stripped.endswith(":"):
            arm = stripped[0]
        if stripped.startswith("invert:") and arm in INVERTED:
            lines[i] = line.replace("invert: false", "invert: true")
        if stripped.startswith("data_dir:"):
            lines[i] = f"  data_dir: {tmp_path / 'data'}\n"
    path = tmp_path / "config.yaml"
    path.write_text("".join(lines))
    assert [a for a, flag in mechanics.reversed_motors(config_module.load(path)).items() if flag] == list(INVERTED)
    return str(path)


@pytest.mark.parametrize("firmware", [pytest.param("emulator", marks=[pytest.mark.firmware, needs_emulator]), "mock"])
def test_an_inverted_arm_of_the_emulated_robot_turns_as_asked(tmp_path, firmware):
    config = config_module.load(inverted_config(tmp_path))
    with Bench(config, sim=True, firmware=firmware) as bench:
        for arm in "RLB":
            before = bench.arm_angle(arm)
            actions.jog(bench.link, arm, 100, lambda text: None)
            assert bench.arm_angle(arm) - before == 100, f"arm {arm} (inverted: {arm in INVERTED}) turned clockwise"


@pytest.mark.firmware
@needs_emulator
def test_a_simulated_run_with_inverted_arms_solves(tmp_path, capsys):
    config = inverted_config(tmp_path)
    code = cli.main(["run", "--sim", "--firmware", "emulator", "--scramble", "B R' U F2", "--config", config, "--json"])
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert code == 0 and report["solved"] is True and report["scan_attempts"] == 1, err
