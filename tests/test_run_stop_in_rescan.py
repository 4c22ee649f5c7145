"""Ctrl-C during the check rescan, after the whole plan ran: the report says so, and history agrees with it."""

import pytest
from conftest import scratch_config

from robot import config as config_module
from robot.run import log
from robot.run.options import RunOptions
from robot.run.report import INTERRUPTED, STOPPED
from robot.run.simulated import run_simulated
from robot.sim import emulator
from robot.sim.robot_sim import SimulatedRobot

OK, REASON = emulator.available()
FIRMWARES = ["mock", pytest.param("emulator", marks=[pytest.mark.firmware, pytest.mark.skipif(
    not OK, reason=f"emulator unavailable: {REASON}")])]


def _stopped_in_rescan(tmp_path, monkeypatch, firmware="mock"):
    """A simulated run whose Ctrl-C comes while the check rescan's first view is being moved to."""
    before_scan = SimulatedRobot.before_scan

    def ctrl_c_in_the_rescan(robot, attempt):
        before_scan(robot, attempt)
        if attempt is None:  # the check rescan: interrupt its first view's motion, as a Ctrl-C there does
            inner = robot.view_mover
            move_to = inner.move_to

            def interrupted(view):
                move_to(view)
                raise KeyboardInterrupt

            inner.move_to = interrupted

    monkeypatch.setattr(SimulatedRobot, "before_scan", ctrl_c_in_the_rescan)
    config = config_module.load(scratch_config(tmp_path))
    return config, run_simulated(config, RunOptions(sim=True, seed=3, firmware=firmware), lambda _text: None)


@pytest.mark.parametrize("firmware", FIRMWARES)
def test_ctrl_c_in_the_check_rescan_says_the_plan_ran_and_no_layer_was_stopped(tmp_path, monkeypatch, firmware):
    config, report = _stopped_in_rescan(tmp_path, monkeypatch, firmware)
    total = len(report.plan["plan"])
    assert report.result() == STOPPED and report.exit_status() == 130
    assert report.execute_ok is True and report.stopped_at_action == total
    state = report.cube_state_after_stop
    assert f"after plan action {total} of {total}" in state
    assert "the plan ran to the end" in state and "during the check rescan" in state
    assert "the virtual cube is solved" in state  # this simulation's truth: the plan solved it
    assert "part-way" not in report.advice and "part-way" not in state  # no layer turn was interrupted
    assert "during the check rescan" in report.result_line()
    text = report.format()
    assert "cube now" in text and "the virtual cube is solved" in text


def test_history_shows_no_solve_time_for_a_run_it_counts_as_not_solved(tmp_path, monkeypatch):
    config, report = _stopped_in_rescan(tmp_path, monkeypatch)
    assert report.button_to_solved_ms is not None  # the plan's last `done` came: the report has the time
    log.append(config, report)
    path = log.log_path(config)
    runs = log.read(path, warn=lambda text: None)
    lines = log.summary(runs, path, last=10)
    assert not any("button_to_solved_ms" in line for line in lines)  # no solved run to rank
    [row] = [line for line in lines if "EMERGENCY STOP" in line]
    assert f"{report.button_to_solved_ms:g}" not in row


def test_ctrl_c_as_the_check_rescan_begins_while_nothing_moves_says_so(tmp_path, monkeypatch):
    before_scan = SimulatedRobot.before_scan

    def ctrl_c_before_the_rescan_moves(robot, attempt):
        before_scan(robot, attempt)
        if attempt is None:
            raise KeyboardInterrupt

    monkeypatch.setattr(SimulatedRobot, "before_scan", ctrl_c_before_the_rescan_moves)
    config = config_module.load(scratch_config(tmp_path))
    report = run_simulated(config, RunOptions(sim=True, seed=3, firmware="mock"), lambda _text: None)
    assert report.result() == INTERRUPTED and report.exit_status() == 130
    assert report.result_line().startswith("SIMULATED INTERRUPTED: Ctrl-C during the check rescan (the plan had "
                                           "run to the end), while nothing was moving")
    assert "the virtual cube is solved" in report.cube_state_after_stop and "part-way" not in report.advice
