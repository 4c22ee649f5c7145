"""`history`'s statistics are the true ones, and a failure's reason is shown whole."""

import statistics

from robot.run import log

LONG_REASON = ("the named port /dev/ttyUSB9 does not answer: check the cable and the robot's power, or name "
               "another port with --port; the robot's firmware must be cube-robot's (cube-robot flash) and its "
               "baud rate the config's")


def _run(time, **extra):
    return {"time": time, "mode": "hardware", "simulated": False} | extra


def test_the_median_of_two_solved_runs_is_their_mean(tmp_path):
    runs = [_run("t1", outcome="SOLVED", recognition_ms=286.8), _run("t2", outcome="SOLVED", recognition_ms=146.0)]
    lines = log.summary(runs, tmp_path / "log.jsonl", last=10)
    [row] = [line for line in lines if line.strip().startswith("recognition_ms")]
    assert row.split() == ["recognition_ms", "median", f"{statistics.median([286.8, 146.0]):g}", "best", "146.0",
                           "worst", "286.8"]


def test_a_long_failure_reason_is_shown_whole(tmp_path):
    runs = [_run("t1", outcome="NOT STARTED", errors=[LONG_REASON])]
    text = "\n".join(log.summary(runs, tmp_path / "log.jsonl", last=10))
    assert " ".join(text.split()).count(" ".join(LONG_REASON.split())) == 1
