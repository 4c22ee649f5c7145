"""The panel's history (GET /api/history): the solve log as `cube-robot history` reads it, as data for a
table and two charts (button-to-solved over time; failures by reason), real and simulated runs apart,
realtime and sped-up simulated runs apart.

Which runs are simulated or sped up, each run's outcome and the reason it did not end SOLVED are
robot/run/log.py's rules, imported, so the page and `cube-robot history` never disagree.  A run's
pictures and readings become URLs under the runs URL only when the file really lies inside the runs
folder (`runs_folder`: the scans' folder, symlinks followed); any other path in the log is left out.
"""

from __future__ import annotations

import collections
import os
from pathlib import Path
from urllib.parse import quote

from ..config import project_path
from ..config_types import Config
from ..run import log
from ..run.log import run_is_simulated, run_outcome, run_rankable, run_reason, run_sped_up
from ..run.report import SOLVED


def runs_folder(config: Config) -> Path:
    """The folder the panel serves under /runs/: the scans' folder (scan.images_dir), where each scan's
    pictures and readings are kept; never its parent (an absolute images_dir's parent may be a home folder)."""
    return project_path(config.scan.images_dir)


class _Urls:
    """Paths from the log -> URLs under runs_url, for existing files inside the runs folder only."""

    def __init__(self, folder: Path, runs_url: str):
        self.folder = Path(os.path.realpath(folder))
        self.base = runs_url if runs_url.endswith("/") else runs_url + "/"
        self.outside = self.missing = 0

    def url(self, path: object) -> str | None:
        if not isinstance(path, str) or not path:
            return None
        real = Path(os.path.realpath(project_path(path)))  # a symlink out of the folder is outside it
        if not real.is_relative_to(self.folder) or real == self.folder:
            self.outside += 1
            return None
        if not real.is_file():
            self.missing += 1
            return None
        return self.base + "/".join(quote(part) for part in real.relative_to(self.folder).parts)

    def urls(self, paths: object) -> list[str]:
        if not isinstance(paths, list):
            return []
        return [url for url in (self.url(path) for path in paths) if url is not None]


def _run(number: int, run: dict, urls: _Urls) -> dict:
    outcome = run_outcome(run)
    refused = run.get("failed_scan_images")
    return {
        "number": number,  # its place in the log (1: the oldest)
        "time": run.get("time"),
        "mode": run.get("mode"),
        "simulated": run_is_simulated(run),
        "sped_up": run_sped_up(run),
        "outcome": outcome,
        # Start press -> solved only for a run counted as solved, and never a sum with an unmeasured action.
        "button_to_solved_ms": (run["button_to_solved_ms"] if outcome == SOLVED and run_rankable(run, "button_to_solved_ms")
                                else None),
        "measured_machine_ms": run["measured_machine_ms"] if run_rankable(run, "measured_machine_ms") else None,
        "reason": None if outcome == SOLVED else run_reason(run),
        "facelets": run.get("facelets"),
        "pictures": urls.urls(run.get("scan_images")),
        "check_pictures": urls.urls(run.get("verify_images")),
        "refused_scan_pictures": [url for attempt in (refused if isinstance(refused, list) else [])
                                  if isinstance(attempt, dict) for url in urls.urls(attempt.get("images"))],
        "readings": urls.url(run.get("scan_readings")),
    }


def history(config: Config, runs_url: str = "/runs/", last: int | None = None) -> dict:
    """The solve log as {"log", "runs" (the last `last`, oldest first; all when None), "series"
    {"solve_times", "failures" {"real", "simulated"}}, "summary" (the lines `cube-robot history`
    prints), "warnings"}.  Reads only."""
    path = log.log_path(config)
    warnings: list[str] = []
    if not path.exists():
        runs: list[dict] = []
        warnings.append(f"no solve log yet at {path}: each run is logged when it ends")
    else:
        try:
            runs = log.read(path, warnings.append)
        except OSError as exc:
            runs = []
            warnings.append(f"cannot read the solve log {path}: {exc.strerror or exc}")
    urls = _Urls(runs_folder(config), runs_url)
    rows = [_run(number, run, urls) for number, run in enumerate(runs, start=1)]
    solve_times = [{"time": row["time"], "ms": row["button_to_solved_ms"], "simulated": row["simulated"],
                    "sped_up": row["sped_up"]} for row in rows if row["button_to_solved_ms"] is not None]
    failures: dict[str, collections.Counter] = {"real": collections.Counter(), "simulated": collections.Counter()}
    for row in rows:
        if row["outcome"] != SOLVED:  # as `history` words it: the outcome, then why
            failures["simulated" if row["simulated"] else "real"][f"{row['outcome']}: {row['reason']}"] += 1
    if urls.outside:
        warnings.append(f"{urls.outside} picture or readings path(s) in the log lie outside the runs folder "
                        f"{runs_folder(config)} (scan.images_dir): not linked")
    if urls.missing:
        warnings.append(f"{urls.missing} picture or readings file(s) named in the log are gone: not linked")
    shown = rows if last is None else rows[-last:] if last > 0 else []
    return {
        "log": str(path),
        "runs": shown,
        "series": {"solve_times": solve_times,
                   "failures": {kind: dict(counts.most_common()) for kind, counts in failures.items()}},
        "summary": log.summary(runs, path, len(runs) if last is None else last) if runs else [],
        "warnings": warnings,
    }
