"""The run report (robot/run/report.py) and the solve log / `history` (robot/run/log.py), without a robot."""

import json

import pytest

from robot import config as config_module
from robot.run import log
from robot.run.options import RunOptions
from robot.run.report import RunReport, format_report


def test_report_json_leaves_out_what_did_not_happen():
    simulated = RunReport(time="2026-01-01T00:00:00", mode="simulated", true_state="U" * 24)
    data = simulated.to_json()
    assert data["scramble"] is None  # a random scramble is said, not left out
    assert "facelets" not in data and "advice" not in data and data["errors"] == []
    hardware = RunReport(time="2026-01-01T00:00:00", mode="hardware")
    assert "scramble" not in hardware.to_json() and "scramble" not in hardware
    hardware.errors.append("LinkError: no answer")
    hardware.advice = "check the cable"
    assert hardware["advice"] == "check the cable" and hardware.get("verify", "-") == "-"
    assert json.loads(json.dumps(hardware.to_json()))["errors"] == ["LinkError: no answer"]


def test_report_text_names_errors_state_and_result():
    report = RunReport(time="t", mode="simulated", firmware="Python mock firmware", facelets="F" * 24,
                       confidence=0.9, scan_attempts=2, plan={"moves": ""}, solve_ms=0.5,
                       cube_state_after_stop="UUUU... (after plan action 2 of 9)", advice="release the e-stop")
    report.errors.append("ALARM ESTOP_INPUT")
    text = format_report(report)
    assert "cube-robot run (simulated, firmware: Python mock firmware)" in text
    assert "plan        (already solved)" in text and "solve           0.5 ms" in text
    assert "error       ALARM ESTOP_INPUT" in text and "cube now    UUUU... (after plan action 2 of 9)" in text
    assert "next        release the e-stop" in text
    assert "RESULT      SIMULATED NOT SOLVED: ALARM ESTOP_INPUT" in text
    assert "machine (pred.)" not in text  # not reached
    body = [line for line in text.splitlines() if line and not line.startswith("=")]
    assert len(body) >= 7 and all(line.startswith("SIMULATED | ") for line in body)
    report.solved = True
    assert "RESULT      SIMULATED SOLVED" in report.format() and report.exit_status() == 0
    assert report.to_json()["simulated"] is True and report.to_json()["outcome"] == "SOLVED"


def test_hardware_outcomes_and_exit_statuses():
    report = RunReport(time="t", mode="hardware", execute_ok=True, verify="rescan refused: too dark")
    assert report.result() == "EXECUTED (NOT VERIFIED)" and report.exit_status() == 3
    assert "RESULT      EXECUTED (NOT VERIFIED): rescan refused: too dark" in report.format()
    assert "SIMULATED" not in report.format() and report.to_json()["simulated"] is False
    report.verified_solved = False
    assert report.result() == "NOT SOLVED" and report.exit_status() == 1
    report.verified_solved, report.solved = True, True
    assert report.result() == "SOLVED" and "VERIFIED" in report.result_line()


def test_unknown_machine_time_is_said_and_never_ranked(tmp_path):
    report = RunReport(time="t", mode="hardware", solved=True, execute_ok=True, verified_solved=True,
                       predicted_machine_ms=1750, unknown_time_actions=2)
    assert "machine (meas.) unknown: the time of 2 actions was not measured" in report.format()
    config = config_module.with_settings(config_module.defaults(), {"run.data_dir": str(tmp_path / "data")})
    report.measured_machine_ms = 80  # a partial sum (as logged before lost times were marked): never ranked
    log.append(config, report)
    log.append(config, RunReport(time="t2", mode="hardware", solved=True, measured_machine_ms=1800))
    log.append(config, RunReport(time="t3", mode="simulated", solved=True, measured_machine_ms=900))
    failed = RunReport(time="t4", mode="hardware", execute_ok=True, verify="not checked: --no-verify")
    log.append(config, failed)
    lines = log.summary(log.read(log.log_path(config), print), log.log_path(config), last=10)
    real = lines.index("real robot: 3 runs; solved 2 of 3 (67%)")
    simulated = lines.index("SIMULATED realtime: 1 run; solved 1 of 1 (100%)")
    assert real < simulated
    measured = [line for line in lines if "measured_machine_ms" in line and "median" in line]
    assert measured[0].strip() == "measured_machine_ms    median 1800  best 1800  worst 1800"  # real: 80 ms lost
    assert "best 900" in measured[1]  # the simulated run is ranked apart
    assert any("unknown in 1 run " in line for line in lines)
    assert lines[-1].endswith("EXECUTED (NOT VERIFIED): not checked: --no-verify") and " real " in lines[-1]


def test_solve_log_round_trip_and_history(tmp_path):
    config = config_module.with_settings(config_module.defaults(), {"run.data_dir": str(tmp_path / "data")})
    for ms, solved in ((900, True), (700, True), (None, False)):
        report = RunReport(time="t", mode="simulated", solved=solved, predicted_machine_ms=ms)
        if not solved:
            report.errors.append("the start button was not pressed in time")
        log.append(config, report)
    path = log.log_path(config)
    with open(path, "a") as f:
        f.write("not json\n")
    warnings = []
    runs = log.read(path, warnings.append)
    assert len(runs) == 3 and warnings == [f"{path}:4: skipped a line that is not JSON"]
    lines = log.summary(runs, path, last=2)
    assert lines[1].startswith("SIMULATED realtime: 3 runs; solved 2 of 3 (67%)")
    assert any("predicted_machine_ms" in line and "median 800  best 700  worst 900" in line for line in lines)
    assert lines[-1].endswith("NOT SOLVED: the start button was not pressed in time") and len(lines) == 6


def test_simulation_flags_make_a_simulated_run():
    assert RunOptions().simulation_flags() == []
    assert RunOptions(estop_at=3, bad_scan="dark").simulation_flags() == ["--estop-at", "--bad-scan"]


def test_exit_statuses_are_documented_where_users_look():
    from robot.cli import build_parser
    from robot.config import PROJECT_ROOT
    from robot.run.report import EXIT_STATUS

    run_parser = build_parser()._subparsers._group_actions[0].choices["run"]
    help_text = run_parser.format_help()
    readme = (PROJECT_ROOT / "README.md").read_text()
    running = (PROJECT_ROOT / "docs" / "running.md").read_text()
    for outcome, status in EXIT_STATUS.items():
        assert f"  {status:<4} {outcome}" in help_text
        assert f"{status} {outcome}" in readme, outcome
        assert f"| {status} | {outcome} |" in running, outcome
    assert "SIMULATED" in running and "VERIFIED" in running and "SIMULATED" in readme


def test_history_last_refuses_a_negative_count(capsys):
    from robot import cli

    with pytest.raises(SystemExit) as stop:
        cli.main(["history", "--last", "-1"])
    assert stop.value.code == 2
    assert "-1 is negative: give how many runs to list" in capsys.readouterr().err


def test_result_line_does_not_say_the_outcome_twice():
    report = RunReport(time="t", mode="simulated", outcome="EMERGENCY STOP")
    report.errors.append("emergency stop: Ctrl-C; the stop byte was sent to the robot")
    assert report.result_line() == "SIMULATED EMERGENCY STOP: Ctrl-C; the stop byte was sent to the robot"
    other = RunReport(time="t", mode="real", outcome="EMERGENCY STOP")
    other.errors.append("ALARM ESTOP_INPUT")  # a reason that does not repeat the outcome is kept whole
    assert other.result_line() == "EMERGENCY STOP: ALARM ESTOP_INPUT"
