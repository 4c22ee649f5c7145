"""The solve log (one JSON line per run, in run.data_dir) and its summary, `cube-robot history`."""

from __future__ import annotations

import json
from pathlib import Path

LOG_NAME = "solve-log.jsonl"


def log_path(config) -> Path:
    from ..config import project_path

    return project_path(config["run"]["data_dir"]) / LOG_NAME


def append(config, report) -> None:
    """Add one run (a RunReport) to the log."""
    path = log_path(config)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(report.to_json()) + "\n")


def read(path: Path, warn) -> list[dict]:
    """The logged runs; a line that is not JSON is skipped with warn(text) naming it."""
    runs = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        try:
            runs.append(json.loads(line))
        except ValueError:
            warn(f"{path}:{number}: skipped a line that is not JSON")
    return runs


def summary(runs: list[dict], path: Path, last: int) -> list[str]:
    """The `history` lines: success rate, median/best/worst times of solved runs, the last runs."""
    solved = [r for r in runs if r.get("solved")]
    lines = [f"{len(runs)} runs, {len(solved)} solved ({len(solved) / max(len(runs), 1):.0%}) -- {path}"]
    for key in ("recognition_ms", "solve_ms", "predicted_machine_ms", "measured_machine_ms"):
        values = sorted(r[key] for r in solved if isinstance(r.get(key), (int, float)))
        if values:
            lines.append(f"  {key:<22} median {values[len(values) // 2]}  best {values[0]}  worst {values[-1]}")
    lines.append(f"last {min(last, len(runs))}:")
    for r in runs[-last:]:
        outcome = "solved" if r.get("solved") else "FAILED: " + "; ".join(r.get("errors", []))[:80]
        lines.append(f"  {r.get('time')}  {r.get('mode', '?'):9} {r.get('predicted_machine_ms', '-'):>6} ms  {outcome}")
    return lines
