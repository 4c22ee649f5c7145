"""The run report (robot/run/report.py) and the solve log / `history` (robot/run/log.py), without a robot."""

import json

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
    assert "next        release the e-stop" in text and "RESULT      NOT SOLVED" in text
    assert "machine (pred.)" not in text  # not reached
    report.solved = True
    assert "RESULT      SOLVED" in report.format()


def test_solve_log_round_trip_and_history(tmp_path):
    config = {"run": {"data_dir": str(tmp_path / "data")}}
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
    assert lines[0].startswith("3 runs, 2 solved (67%)")
    assert any("predicted_machine_ms" in line and "median 900  best 700  worst 900" in line for line in lines)
    assert lines[-1].endswith("FAILED: the start button was not pressed in time") and len(lines) == 5


def test_simulation_flags_make_a_simulated_run():
    assert RunOptions().simulation_flags() == []
    assert RunOptions(estop_at=3, bad_scan="dark").simulation_flags() == ["--estop-at", "--bad-scan"]
