"""`cube-robot calibrate overlap` (robot/calibrate/overlap.py): the guided bisections find the jaws' clear and
contact points and the open gap the turning layer implies; rehearsed with --sim, the virtual robot's true
jaws (config simulated_robot.gripper) answer from their jam check, and nothing is saved."""

from __future__ import annotations

import os
import stat

import pytest

from robot import cli
from robot import config as config_module
from robot.bringup.connection import ConnectedRobot
from robot.calibrate import overlap
from robot.sim import emulator

ROOT = config_module.PROJECT_ROOT
WIDTHS = {"motion.servo_open_us": 1300, "motion.servo_closed_us": 1700}


def rehearse(firmware: str, **truth) -> tuple[dict, overlap.Measured]:
    config = config_module.with_settings(config_module.load(), {
        **WIDTHS, **{f"simulated_robot.gripper.{key}": value for key, value in truth.items()}})
    with ConnectedRobot(config, sim=True, firmware=firmware) as robot:
        link = robot.link
        link.request("MOTORS ON")
        link.run(["OPEN RLFB"])
        trials = overlap._simulated_trials(robot, link, config, "FB", lambda text: None)
        link.run(["GRIP RL"])
        measured = overlap.measure(trials, config.camera.pose.cube_mm, lambda text: None)
    return overlap.settings_from(measured), measured


def assert_finds_the_truth(values: dict, clear: int, contact: int, open_gap: float) -> None:
    step = overlap.RESOLUTION * 100
    assert clear <= values["jaw_clear_pct"] <= clear + step + 1  # on the safe side: later
    assert contact - step - 1 <= values["jaw_contact_pct"] <= contact  # on the safe side: earlier
    assert open_gap - 1.5 <= values["jaw_open_gap_mm"] <= open_gap  # rounded down: the safe side


@pytest.mark.parametrize("truth", [dict(clear_pct=50, contact_pct=70, open_gap_mm=12.0),
                                   dict(clear_pct=35, contact_pct=85, open_gap_mm=16.0)])
def test_the_rehearsal_on_the_mock_finds_the_true_jaws_within_its_resolution(truth):
    values, _ = rehearse("mock", **truth)
    assert_finds_the_truth(values, truth["clear_pct"], truth["contact_pct"], truth["open_gap_mm"])


@pytest.mark.firmware
@pytest.mark.skipif(not emulator.available()[0], reason=f"firmware emulator unavailable: {emulator.available()[1]}")
def test_the_rehearsal_on_the_real_firmware_finds_the_true_jaws_from_its_pin_log():
    values, _ = rehearse("emulator", clear_pct=40, contact_pct=75, open_gap_mm=14.0)
    assert_finds_the_truth(values, 40, 75, 14.0)


def test_bisection_ends_within_the_resolution_on_either_side_of_the_edge():
    lo, hi = overlap.bisect_travel(lambda f: f < 0.3)
    assert lo < 0.3 <= hi and hi - lo <= overlap.RESOLUTION


def test_answers_that_cannot_be_true_are_refused_by_name():
    bad = overlap.Measured(clear=(0.6, 0.62), contact=(0.2, 0.22), layer=(0.5, 0.52), reach_mm=10.36)
    with pytest.raises(overlap.OverlapCalibrationError, match="answers disagree"):
        overlap.settings_from(bad)


def test_open_jaws_too_near_the_turning_layer_are_refused_by_name_not_saved_as_a_gap_inside_its_reach():
    """Jaws 10.7 mm off the cube clear the 10.4 mm reach, but measured to 1/64 of the travel and rounded down
    they read as 10 mm: refused, with what to do."""
    measured = overlap.Measured(clear=(0.49, 0.5), contact=(0.29, 0.3), layer=(0.97, 0.985), reach_mm=10.36)
    with pytest.raises(overlap.OverlapCalibrationError, match=r"inside a turning layer's reach .*tune grippers"):
        overlap.settings_from(measured)


def test_saving_rewrites_only_the_three_jaw_lines_and_refuses_a_read_only_config(tmp_path):
    path = tmp_path / "config.yaml"
    original = (ROOT / "config.yaml").read_text()
    path.write_text(original)
    overlap.save(path, {"jaw_clear_pct": 55, "jaw_contact_pct": 66, "jaw_open_gap_mm": 13})
    loaded = config_module.load(path)
    assert (loaded.motion.jaw_clear_pct, loaded.motion.jaw_contact_pct, loaded.motion.jaw_open_gap_mm) == (55, 66, 13)
    changed = [(a, b) for a, b in zip(original.splitlines(), path.read_text().splitlines()) if a != b]
    assert len(changed) == 3 and all("jaw_" in a and a.split("#")[1:] == b.split("#")[1:] for a, b in changed)
    os.chmod(path, stat.S_IRUSR)
    before = path.read_text()
    with pytest.raises(overlap.OverlapCalibrationError, match="read-only"):
        overlap.save(path, {"jaw_clear_pct": 60, "jaw_contact_pct": 66, "jaw_open_gap_mm": 13})
    assert path.read_text() == before


def test_the_sim_rehearsal_says_simulated_saves_nothing_and_refuses_save(tmp_path, capsys):
    path = tmp_path / "config.yaml"
    path.write_text((ROOT / "config.yaml").read_text())
    before = path.read_bytes()
    code = cli.main(["calibrate", "overlap", "--sim", "--firmware", "mock", "--config", str(path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "not saved" in out and "jaw_clear_pct" in out
    assert all(line.startswith("SIMULATED") for line in out.splitlines() if line.strip())
    code = cli.main(["calibrate", "overlap", "--sim", "--firmware", "mock", "--save", "--config", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and "not saved" in err and not out  # refused before anything moved
    assert path.read_bytes() == before
