"""The panel's history (robot/panel/history_api.py) of a solve log in a temporary folder: real and
simulated runs (realtime and sped up) kept apart by the log's own rules, the chart series, and URLs
only to files inside the runs folder (never `..`, an absolute path elsewhere, or a symlink out)."""

from __future__ import annotations

import json

from robot import config as config_module
from robot.panel import history_api
from robot.run.log import LOG_NAME, summary


def _config(tmp_path):
    return config_module.with_settings(config_module.load(), {
        "run.data_dir": str(tmp_path / "data"), "scan.images_dir": str(tmp_path / "runs" / "scans")})


def _write_log(config, runs, extra_lines=()):
    path = tmp_path_of(config) / LOG_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(run) + "\n" for run in runs) + "".join(extra_lines))
    return path


def tmp_path_of(config):
    return config_module.project_path(config.run.data_dir)


def _scan_folder(config, name="20260101-120000-000001"):
    folder = config_module.project_path(config.scan.images_dir) / name
    folder.mkdir(parents=True)
    for file in ("01-U.png", "net.png", "readings.json"):
        (folder / file).write_text("x")
    return folder


def test_real_and_simulated_runs_are_kept_apart_and_only_runs_folder_files_get_urls(tmp_path):
    config = _config(tmp_path)
    scan = _scan_folder(config)
    secret = tmp_path / "secret.png"
    secret.write_text("not to be served")
    (scan / "link-out.png").symlink_to(secret)
    real = {"time": "2026-01-01T12:00:00", "mode": "hardware", "simulated": False, "outcome": "SOLVED",
            "solved": True, "button_to_solved_ms": 9100.5, "measured_machine_ms": 5000,
            "scan_images": [str(scan / "01-U.png"), str(scan / "net.png"), str(secret),
                            str(scan / ".." / ".." / ".." / "secret.png"), str(scan / "link-out.png"),
                            "/etc/passwd"],
            "scan_readings": str(scan / "readings.json")}
    simulated_fast = {"time": "2026-01-01T12:05:00", "mode": "simulated", "simulated": True, "outcome": "SOLVED",
                      "solved": True, "button_to_solved_ms": 800, "timing_note": "SIMULATED and sped up: ...",
                      "scan_readings": "/etc/passwd"}
    simulated_stop = {"time": "2026-01-01T12:06:00", "mode": "simulated", "simulated": True,
                      "outcome": "EMERGENCY STOP", "errors": ["emergency stop: the stop button"],
                      "button_to_solved_ms": 4000}
    real_refused = {"time": "2026-01-01T12:07:00", "mode": "hardware", "outcome": "NOT SOLVED",
                    "verified_solved": False}
    path = _write_log(config, [real, simulated_fast, simulated_stop, real_refused], ['{"time": "2026-01-01T1'])

    answer = history_api.history(config, runs_url="/runs/")
    assert answer["log"] == str(path)
    runs = answer["runs"]
    assert [(r["simulated"], r["sped_up"]) for r in runs] == [(False, False), (True, True), (True, False),
                                                              (False, False)]
    first = runs[0]
    # Only the two pictures inside the runs folder: not `..`, not an absolute path elsewhere, not a symlink out.
    assert first["pictures"] == ["/runs/20260101-120000-000001/01-U.png", "/runs/20260101-120000-000001/net.png"]
    assert first["readings"] == "/runs/20260101-120000-000001/readings.json"
    assert runs[1]["readings"] is None
    assert not any("secret" in url or "passwd" in url for r in runs for url in r["pictures"])
    assert first["reason"] is None and first["button_to_solved_ms"] == 9100.5
    # A stopped run's time is not a solve time; its reason is the log's.
    assert runs[2]["button_to_solved_ms"] is None and runs[2]["reason"] == "the stop button"
    assert runs[3]["reason"] == "the rescan after the solve shows an unsolved cube"

    series = answer["series"]
    assert series["solve_times"] == [
        {"time": real["time"], "ms": 9100.5, "simulated": False, "sped_up": False},
        {"time": simulated_fast["time"], "ms": 800, "simulated": True, "sped_up": True}]
    assert series["failures"] == {
        "real": {"NOT SOLVED: the rescan after the solve shows an unsolved cube": 1},
        "simulated": {"EMERGENCY STOP: the stop button": 1}}
    # The torn last line and the paths left out are said, as `cube-robot history` says the torn line.
    assert any("torn record" in text for text in answer["warnings"])
    assert any("outside the runs folder" in text for text in answer["warnings"])
    runs_logged = [real, simulated_fast, simulated_stop, real_refused]
    assert answer["summary"] == summary(runs_logged, path, len(runs_logged))


def test_urls_are_quoted_and_missing_files_are_not_linked(tmp_path):
    config = _config(tmp_path)
    scan = _scan_folder(config, "a b#c")
    run = {"time": "t", "mode": "hardware", "outcome": "SOLVED", "solved": True,
           "scan_images": [str(scan / "01-U.png"), str(scan / "gone.png")],
           "failed_scan_images": [{"attempt": 1, "error": "doubtful", "images": [str(scan / "net.png")]}]}
    _write_log(config, [run])
    answer = history_api.history(config, runs_url="/runs")
    row = answer["runs"][0]
    assert row["pictures"] == ["/runs/a%20b%23c/01-U.png"]
    assert row["refused_scan_pictures"] == ["/runs/a%20b%23c/net.png"]
    assert any("gone" in text for text in answer["warnings"])


def test_no_log_yet_and_the_last_runs_only(tmp_path):
    config = _config(tmp_path)
    empty = history_api.history(config)
    assert empty["runs"] == [] and empty["series"]["solve_times"] == []
    assert "no solve log yet" in empty["warnings"][0]
    runs = [{"time": f"t{i}", "mode": "simulated", "outcome": "SOLVED", "solved": True, "button_to_solved_ms": i}
            for i in range(1, 6)]
    _write_log(config, runs)
    answer = history_api.history(config, last=2)
    assert [r["number"] for r in answer["runs"]] == [4, 5]
    assert len(answer["series"]["solve_times"]) == 5  # the charts draw every run
    assert history_api.runs_folder(config) == tmp_path / "runs" / "scans"
