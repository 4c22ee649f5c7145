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


def _is_simulated(run: dict) -> bool:
    return bool(run.get("simulated", run.get("mode") == "simulated"))


def _outcome(run: dict) -> str:
    if run.get("outcome"):
        return run["outcome"]
    return "SOLVED" if run.get("solved") else "NOT SOLVED"  # lines logged before outcomes were named


def _reason(run: dict) -> str:
    """Why a run did not end SOLVED, in a few words."""
    if run.get("verified_solved") is False:
        return "the rescan after the solve shows an unsolved cube"
    if run.get("errors"):
        return "; ".join(str(e) for e in run["errors"])
    return run.get("verify") or "no reason logged"


def _rankable(run: dict, key: str) -> bool:
    """A time history may rank: measured, and not a partial sum (a lost action time makes it unknown)."""
    if key == "measured_machine_ms" and run.get("unknown_time_actions"):
        return False
    return isinstance(run.get(key), (int, float))


def summary(runs: list[dict], path: Path, last: int) -> list[str]:
    """The `history` lines: real and simulated runs apart; success rate, median/best/worst times of solved
    runs (never a time with an unmeasured action), then the last runs with the reason of every failure."""
    lines = [f"{len(runs)} runs -- {path}"]
    for title, group in (("real robot", [r for r in runs if not _is_simulated(r)]),
                         ("SIMULATED", [r for r in runs if _is_simulated(r)])):
        if not group:
            continue
        solved = [r for r in group if _outcome(r) == "SOLVED"]
        lines.append(f"{title}: {len(group)} runs, {len(solved)} solved ({len(solved) / len(group):.0%})")
        for key in ("recognition_ms", "solve_ms", "predicted_machine_ms", "measured_machine_ms"):
            values = sorted(r[key] for r in solved if _rankable(r, key))
            if values:
                lines.append(f"  {key:<22} median {values[len(values) // 2]}  best {values[0]}  worst {values[-1]}")
        unknown = sum(1 for r in solved if r.get("unknown_time_actions"))
        if unknown:
            lines.append(f"  measured_machine_ms unknown in {unknown} run(s) (an action's time was lost): not ranked")
    lines.append(f"last {min(last, len(runs))}:")
    for r in runs[-last:] if last > 0 else []:
        outcome = _outcome(r)
        text = outcome if outcome == "SOLVED" else f"{outcome}: {_reason(r)}"[:160]
        kind = "SIMULATED" if _is_simulated(r) else "real"
        lines.append(f"  {r.get('time')}  {kind:9} {r.get('predicted_machine_ms', '-'):>6} ms  {text}")
    return lines
