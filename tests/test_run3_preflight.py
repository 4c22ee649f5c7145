"""run --puzzle 3x3x3: what the run needs and cannot find is said by name before anything starts (exit 2,
nothing moved), never a traceback from the middle of the run."""

from __future__ import annotations

from dataclasses import replace

from robot import config as config_module
from robot.exit_status import ExitStatus
from robot.run.options import RunOptions
from robot.run.puzzle3 import run_command3


def test_missing_3x3x3_tables_are_said_before_the_run_with_the_command_that_builds_them(tmp_path, capsys):
    config = config_module.load()
    config = replace(config, tables=replace(config.tables, dir=str(tmp_path / "no-tables")))
    status = run_command3(config, RunOptions(sim=True, firmware="mock", seed=1))
    out, err = capsys.readouterr()
    assert status == ExitStatus.BAD_CONFIG
    assert "cube-robot tables build --puzzle 3x3x3" in err and "(nothing moved)" in err
    assert "Start pressed" not in out and "Simulated robot" not in out  # refused before the robot was made
    assert not (tmp_path / "no-tables").exists()  # nothing written


def test_a_disconnect_past_the_plan_is_said_not_made(session_tables3):
    """As the 2x2x2 run says it: a --disconnect-at past the plan's ops pulls no cable, and the maker is told so."""
    from robot.run import puzzle3

    said: list[str] = []
    report = puzzle3.run_puzzle3(config_module.load(), RunOptions(sim=True, firmware="mock", seed=6, disconnect_at=999),
                                 said.append, budget_s=0.2)
    assert report.outcome == puzzle3.SOLVED, report.format()
    assert any(f"--disconnect-at 999 is outside this plan's ops 1..{report.ops}" in line for line in said), said


def test_a_realtime_reports_button_time_is_not_called_sped_up():
    """--realtime (no timing_note): the clock line says real time, not that the mock is sped up."""
    from robot.run.report3 import Run3Report

    line = next(text for text in Run3Report("", "SIMULATED mock", button_to_solved_ms=9794.0).format().splitlines() if "button ->" in text)
    assert "sped up" not in line and "real time" in line, line
    fast = Run3Report("", "SIMULATED mock", button_to_solved_ms=800.0, timing_note="SIMULATED sped up: times compressed, not the robot's")
    assert "sped up" in next(text for text in fast.format().splitlines() if "button ->" in text)
