"""button_to_solved_ms: start press -> last `done`, on one clock."""

import time

from robot import config as config_module
from robot.cli import build_parser
from robot.run.options import RunOptions
from robot.run.simulated import run_simulated
from conftest import scratch_config


def test_button_to_solved_is_within_the_wall_clock_and_covers_scan_and_execute(tmp_path):
    config = config_module.load(scratch_config(tmp_path))
    args = build_parser().parse_args(["run", "--sim", "--firmware", "mock", "--seed", "3"])
    started = time.perf_counter()
    report = run_simulated(config, RunOptions.from_args(args), lambda _message: None)
    wall_ms = (time.perf_counter() - started) * 1000
    assert report["solved"] is True, report["errors"]
    # One clock: the span cannot exceed the run's wall time, and it contains scan, tables, solve and execute.
    assert 0 < report["button_to_solved_ms"] <= wall_ms
    assert report["button_to_solved_ms"] >= report["recognition_ms"] + report["execute_ms"]
    assert "button->solved" in report.format()
