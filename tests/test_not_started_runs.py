"""A run that does not start (no robot answers on the named port) still ends in one RESULT line, is
kept in the solve log marked NOT STARTED, and `history` counts it apart from the runs that started."""

import contextlib
import io
import json
import os

from conftest import scratch_config

from robot import cli
from robot.run import log


def cube_robot(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_a_named_port_that_does_not_answer_ends_in_one_result_line_and_is_logged(tmp_path):
    config = scratch_config(tmp_path, lambda text: text.replace("handshake_timeout_ms: 3000",
                                                                "handshake_timeout_ms: 200", 1))
    master, slave = os.openpty()  # a port where nothing answers
    port = os.ttyname(slave)
    try:
        code, out, err = cube_robot("run", "--port", port, "--config", str(config))
    finally:
        os.close(slave)
        os.close(master)
    assert code == 4
    results = [line for line in out.splitlines() if "RESULT" in line]
    assert len(results) == 1, out
    assert results[0].split("RESULT", 1)[1].strip().startswith(f"NOT STARTED: the robot's port {port}")
    assert results[0].endswith("; nothing moved") and "SIMULATED" not in out + err
    assert "make -C firmware flash" in out  # the fix is in the report

    [logged] = [json.loads(line) for line in (tmp_path / "data" / "solve-log.jsonl").read_text().splitlines()]
    assert logged["outcome"] == "NOT STARTED" and logged["simulated"] is False
    assert port in logged["errors"][0] and logged["cube_state_after_stop"] == "as it was put in: nothing moved"

    code, out, err = cube_robot("history", "--config", str(config))
    assert code == 0
    assert "real robot: 1 run; none to rate; 1 NOT STARTED (nothing moved): not in the rate" in out
    assert f"NOT STARTED: the robot's port {port}" in out


def test_history_counts_runs_that_did_not_start_apart(tmp_path):
    runs = [{"time": "t1", "mode": "hardware", "outcome": "SOLVED"},
            {"time": "t2", "mode": "hardware", "outcome": "NOT SOLVED", "errors": ["alarm ESTOP_INPUT"]},
            {"time": "t3", "mode": "hardware", "outcome": "NOT STARTED", "errors": ["no answer on /dev/ttyACM0"]}]
    lines = log.summary(runs, tmp_path / "solve-log.jsonl", last=3)
    # The success rate is of the runs that started: a robot that was not plugged in did not fail a solve.
    assert "real robot: 3 runs; solved 1 of 2 (50%); 1 NOT STARTED (nothing moved): not in the rate" in lines
    assert lines[-1].endswith("NOT STARTED: no answer on /dev/ttyACM0")
