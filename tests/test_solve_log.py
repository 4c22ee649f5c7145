"""The solve log (robot/run/log.py): records appended whole, a full disk never loses the run's result,
a torn line is read past and never swallows the next record; `history` shows what was measured and
keeps real, realtime simulated and sped-up simulated runs apart."""

from __future__ import annotations

import errno
import json
import os

from conftest import scratch_config

from robot import cli
from robot import config as config_module
from robot.run import log
from robot.run.report import RunReport


def log_config(tmp_path):
    return config_module.with_settings(config_module.defaults(), {"run.data_dir": str(tmp_path / "data")})


def full_disk(monkeypatch, folder, after_bytes=25):
    """os.write into files under `folder` writes `after_bytes` and then fails as on a full disk."""
    real_write = os.write

    def write(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(folder)):
            if len(data) > after_bytes:
                return real_write(fd, bytes(data[:after_bytes]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)


def test_a_record_is_one_write_of_the_whole_line(tmp_path, monkeypatch):
    config = log_config(tmp_path)
    log.append(config, RunReport(time="t1", mode="simulated", solved=True))
    real_write, writes = os.write, []

    def write(fd, data):
        writes.append(bytes(data))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    report = RunReport(time="t2", mode="hardware", errors=["ALARM ESTOP_INPUT"])
    assert log.append(config, report) is True
    assert writes == [(json.dumps(report.to_json()) + "\n").encode()]


def test_a_full_disk_leaves_no_torn_line_and_says_so(tmp_path, monkeypatch):
    config = log_config(tmp_path)
    log.append(config, RunReport(time="t1", mode="simulated", solved=True))
    path = log.log_path(config)
    before = path.read_bytes()
    full_disk(monkeypatch, tmp_path)
    said = []
    report = RunReport(time="t2", mode="simulated", solved=True)
    assert log.append(config, report, said.append) is False
    monkeypatch.undo()
    assert path.read_bytes() == before, "the part written is taken back"
    needed = len(json.dumps(report.to_json())) + 2
    assert said == [f"cube-robot: this run is not in the solve log (no space left in {path.parent}: the record "
                    f"needs {needed} bytes there); its result is reported all the same"]
    log.append(config, RunReport(time="t3", mode="simulated", solved=True))
    assert [r["time"] for r in log.read(path, said.append)] == ["t1", "t3"] and len(said) == 1


def test_a_torn_last_line_does_not_swallow_the_next_record(tmp_path):
    config = log_config(tmp_path)
    log.append(config, RunReport(time="t1", mode="simulated", solved=True))
    path = log.log_path(config)
    with open(path, "a") as f:  # a run killed while its line was written
        f.write(json.dumps(RunReport(time="t2", mode="simulated").to_json())[:40])
    log.append(config, RunReport(time="t3", mode="hardware", solved=True))
    warnings = []
    runs = log.read(path, warnings.append)
    assert [r["time"] for r in runs] == ["t1", "t3"]
    assert warnings == [f"{path}:2: skipped a torn record (a run whose line was cut short)"]


def test_history_reads_a_record_appended_onto_a_torn_line(tmp_path):
    # Logs written before records started on a new line: the torn run is lost, the one after it is not.
    path = tmp_path / "solve-log.jsonl"
    whole = [json.dumps(RunReport(time=t, mode="simulated", solved=True).to_json()) for t in ("t1", "t2", "t3")]
    path.write_text(whole[0] + "\n" + whole[1][:30] + whole[2] + "\n")
    warnings = []
    assert [r["time"] for r in log.read(path, warnings.append)] == ["t1", "t3"]
    assert warnings == [f"{path}:2: skipped a torn record (a run whose line was cut short); "
                        "read the run written after it on the same line"]


def test_a_run_with_a_full_data_dir_still_says_its_result_and_exit_status(tmp_path, monkeypatch, capsys):
    config_path = scratch_config(tmp_path)
    (tmp_path / "data").mkdir()
    log_file = tmp_path / "data" / log.LOG_NAME
    log_file.write_text('{"time": "earlier", "mode": "simulated", "outcome": "SOLVED"}\n')
    full_disk(monkeypatch, tmp_path / "data")
    code = cli.main(["run", "--sim", "--firmware", "mock", "--scramble", "R U", "--no-verify",
                     "--config", str(config_path)])
    monkeypatch.undo()
    out, err = capsys.readouterr()
    assert code == 0 and "RESULT      SIMULATED SOLVED" in out, out  # the run's own status
    assert "this run is not in the solve log (no space left in " in err and "Traceback" not in err
    assert log_file.read_text() == '{"time": "earlier", "mode": "simulated", "outcome": "SOLVED"}\n'


def test_history_shows_measured_times_and_keeps_sped_up_simulations_apart(tmp_path, capsys):
    config_path = scratch_config(tmp_path)
    config = log_config(tmp_path)
    fast_note = "SIMULATED and sped up: the robot ran 50x faster than real time"
    log.append(config, RunReport(time="real1", mode="hardware", solved=True, predicted_machine_ms=2300,
                                 measured_machine_ms=2410, button_to_solved_ms=5120.5))
    log.append(config, RunReport(time="stop1", mode="hardware", predicted_machine_ms=2300,
                                 outcome="EMERGENCY STOP", errors=["emergency stop: Ctrl-C"]))
    log.append(config, RunReport(time="rt1", mode="simulated", solved=True, predicted_machine_ms=2000,
                                 measured_machine_ms=2050, button_to_solved_ms=4000.0))
    log.append(config, RunReport(time="fast1", mode="simulated", solved=True, predicted_machine_ms=2000,
                                 measured_machine_ms=41, button_to_solved_ms=90.0, timing_note=fast_note))
    assert cli.main(["history", "--config", str(config_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    real = lines.index("real robot: 2 runs; solved 1 of 2 (50%)")
    realtime = lines.index("SIMULATED realtime: 1 run; solved 1 of 1 (100%)")
    fast = lines.index("SIMULATED sped up (times compressed, not the robot's): 1 run; solved 1 of 1 (100%)")
    assert real < realtime < fast
    measured = [line.strip() for line in lines if line.strip().startswith("measured_machine_ms")]
    assert measured == ["measured_machine_ms    median 2410  best 2410  worst 2410",
                        "measured_machine_ms    median 2050  best 2050  worst 2050",
                        "measured_machine_ms    median 41  best 41  worst 41"], "never averaged together"
    rows = {line.split()[0]: line for line in lines if line.startswith("  ") and line.split()[0] in
            ("real1", "stop1", "rt1", "fast1")}
    # Each run line: time, puzzle (lines without one are the 2x2x2's), kind, start press to solved, machine time.
    assert all(row.split()[1] == "2x2x2" for row in rows.values())
    assert rows["real1"].split()[2:7] == ["real", "5120.5", "ms", "2410", "ms"]
    assert rows["stop1"].split()[2:7] == ["real", "-", "ms", "-", "ms"], "no prediction shown as a time"
    assert "2300" not in rows["stop1"] and rows["stop1"].endswith("EMERGENCY STOP: Ctrl-C")
    assert rows["rt1"].split()[2] == "SIMULATED" and rows["fast1"].split()[2:4] == ["SIM", "fast"]
