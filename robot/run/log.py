"""The solve log (one JSON line per run, in run.data_dir) and its summary, `cube-robot history`.

A record is appended whole: one write of the whole line, flushed to the disk; a write that fails
part-way is cut back off, so a full disk leaves no torn line.  A torn last line left by something
else (a killed run, an older version) does not swallow the next record: it starts on a new line,
and `history` reads past the torn one and says so.  Writing the log never loses the run: a log
that cannot be written is said in one line and the run goes on to its result.
"""

from __future__ import annotations

import errno
import json
import os
import statistics
import sys
from pathlib import Path

from ..config_types import Config
from .events import RunEnded, RunStarted
from .report import INTERRUPTED, NOT_STARTED, RunReport, plural, without_outcome

LOG_NAME = "solve-log.jsonl"


def log_path(config: Config) -> Path:
    from ..config import project_path

    return project_path(config.run.data_dir) / LOG_NAME


def _append_line(path: Path, line: str) -> None:
    """Append `line` (ending in a newline) to `path` in one write and flush it; OSError leaves the file as it was."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        data = (("\n" if torn else "") + line).encode()  # a torn last line keeps its own line
        try:
            written = os.write(fd, data)
            if written != len(data):  # a short write: the disk filled up part-way
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            os.fsync(fd)
        except OSError:
            if os.fstat(fd).st_size <= size + len(data):  # only our bytes came after `size`: take them back
                try:
                    os.ftruncate(fd, size)
                except OSError:
                    pass
            raise
    finally:
        os.close(fd)


def append(config: Config, report, warn=None) -> bool:
    """Add one run (a RunReport) to the log.  A log that cannot be written never stops the caller: it is
    said with warn(text) (default: a line on stderr) and False is returned; True when logged."""
    path = log_path(config)
    line = json.dumps(report.to_json()) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _append_line(path, line)
        return True
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            why = f"no space left in {path.parent}: the record needs {len(line.encode()) + 1} bytes there"
        else:
            why = f"cannot write {path}: {exc.strerror or exc}"
        (warn or (lambda text: print(text, file=sys.stderr)))(
            f"cube-robot: this run is not in the solve log ({why}); its result is reported all the same")
        return False


class SolveLog:
    """A subscriber of a run's events (robot/run/events.py): builds the run's report from them and
    appends it to the log when the run ends (RunEnded)."""

    def __init__(self, config: Config, warn=None):
        self.config, self.warn = config, warn
        self.report: RunReport | None = None

    def __call__(self, event) -> None:
        if isinstance(event, RunStarted):
            self.report = RunReport.start(event)
        elif self.report is not None:
            self.report.apply(event)
            if isinstance(event, RunEnded):
                append(self.config, self.report, self.warn)
                self.report = None


RECORD_START = '{"time": '  # every record's first key (RunReport.to_json)


def _recover(line: str) -> dict | None:
    """A record that was appended onto a torn line (by a version that did not start it on a new line)."""
    start = line.find(RECORD_START, 1)
    while start != -1:
        try:
            run = json.loads(line[start:])
        except ValueError:
            pass
        else:
            if isinstance(run, dict) and "mode" in run:
                return run
        start = line.find(RECORD_START, start + 1)
    return None


def read(path: Path, warn) -> list[dict]:
    """The logged runs; a line that is not a whole record is skipped with warn(text) naming it."""
    runs = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        try:
            run = json.loads(line)
        except ValueError:
            run = None
        if isinstance(run, dict):
            runs.append(run)
        elif not line.startswith("{"):
            warn(f"{path}:{number}: skipped a line that is not JSON")
        elif (after := _recover(line)) is not None:
            runs.append(after)
            warn(f"{path}:{number}: skipped a torn record (a run whose line was cut short); "
                 "read the run written after it on the same line")
        else:
            warn(f"{path}:{number}: skipped a torn record (a run whose line was cut short)")
    return runs


def run_is_simulated(run: dict) -> bool:
    return bool(run.get("simulated", run.get("mode") == "simulated"))


def run_sped_up(run: dict) -> bool:
    """A simulated run whose times are compressed (not --realtime): the report's timing_note says so, and
    only for such a run (run/simulated.py)."""
    return run_is_simulated(run) and bool(run.get("timing_note"))


def run_outcome(run: dict) -> str:
    if run.get("outcome"):
        return run["outcome"]
    return "SOLVED" if run.get("solved") else "NOT SOLVED"  # lines logged before outcomes were named


def run_reason(run: dict) -> str:
    """Why a run did not end SOLVED, in a few words."""
    if run.get("verified_solved") is False:
        return "the rescan after the solve shows an unsolved cube"
    if run.get("errors"):
        return "; ".join(without_outcome(run_outcome(run), str(e)) for e in run["errors"])
    return run.get("verify") or "no reason logged"


def run_rankable(run: dict, key: str) -> bool:
    """A time history may rank: measured, and not a partial sum (a lost action time makes it unknown)."""
    if key == "measured_machine_ms" and run.get("unknown_time_actions"):
        return False
    return isinstance(run.get(key), (int, float))


def _measured(run: dict, key: str) -> str:
    return f"{run[key]:g}" if run_rankable(run, key) else "-"


def run_puzzle(run: dict) -> str:
    """The puzzle a run solved: lines logged before the 3x3x3 run have no `puzzle` and were all 2x2x2."""
    return str(run.get("puzzle") or "2x2x2")


# A 3x3x3 run's rate and times are not a 2x2x2's: its runs are their own groups.
GROUPS = (("real robot", lambda r: not run_is_simulated(r)),
          ("SIMULATED realtime", lambda r: run_is_simulated(r) and not run_sped_up(r) and run_puzzle(r) == "2x2x2"),
          ("SIMULATED sped up (times compressed, not the robot's)",
           lambda r: run_is_simulated(r) and run_sped_up(r) and run_puzzle(r) == "2x2x2"),
          ("SIMULATED 3x3x3 realtime", lambda r: run_is_simulated(r) and not run_sped_up(r) and run_puzzle(r) == "3x3x3"),
          ("SIMULATED 3x3x3 sped up (times compressed, not the robot's)",
           lambda r: run_is_simulated(r) and run_sped_up(r) and run_puzzle(r) == "3x3x3"))


def summary(runs: list[dict], path: Path, last: int) -> list[str]:
    """The `history` lines: real, realtime simulated and sped-up simulated runs apart; success rate,
    median/best/worst times of solved runs (never a time with an unmeasured action), then the last runs
    with what was measured (start press to solved, machine time) and the reason of every failure."""
    lines = [f"{plural(len(runs), 'run')} logged -- {path}"]
    for title, belongs in GROUPS:
        group = [r for r in runs if belongs(r)]
        if not group:
            continue
        # Nothing moved in these (or nothing was moving when Ctrl-C came): not failed solves, not in the rate.
        not_started = sum(1 for r in group if run_outcome(r) == NOT_STARTED)
        interrupted = sum(1 for r in group if run_outcome(r) == INTERRUPTED)
        rated = len(group) - not_started - interrupted
        solved = [r for r in group if run_outcome(r) == "SOLVED"]
        apart = ([f"{not_started} NOT STARTED (nothing moved)"] if not_started else []) + (
            [f"{interrupted} INTERRUPTED by Ctrl-C while nothing moved"] if interrupted else [])
        rate = f"solved {len(solved)} of {rated} ({len(solved) / rated:.0%})" if rated else "none to rate"
        lines.append(f"{title}: {plural(len(group), 'run')}; {rate}"
                     + (f"; {', '.join(apart)}: not in the rate" if apart else ""))
        for key in ("recognition_ms", "solve_ms", "predicted_machine_ms", "measured_machine_ms",
                    "button_to_solved_ms"):
            values = sorted(r[key] for r in solved if run_rankable(r, key))
            if values:
                median = statistics.median(values)  # of an even count: the mean of the middle two
                median = f"{median:.3f}".rstrip("0").rstrip(".")  # 800.0 -> 800, 216.39999 -> 216.4
                lines.append(f"  {key:<22} median {median}  best {values[0]}  worst {values[-1]}")
        unknown = sum(1 for r in solved if r.get("unknown_time_actions"))
        if unknown:
            lines.append(f"  measured_machine_ms unknown in {plural(unknown, 'run')} (an action's time was lost): not ranked")
    lines.append(f"last {min(last, len(runs))} (measured: start press -> solved, machine time; "
                 "- not measured or not solved):")
    for r in runs[-last:] if last > 0 else []:
        outcome = run_outcome(r)
        text = outcome if outcome == "SOLVED" else f"{outcome}: {run_reason(r)}"  # whole: a cut reason misleads
        kind = ("SIM fast" if run_sped_up(r) else "SIMULATED") if run_is_simulated(r) else "real"
        # Start press -> solved only for a run counted as solved (a stop in the check rescan has a time too).
        to_solved = _measured(r, "button_to_solved_ms") if outcome == "SOLVED" else "-"
        lines.append(f"  {r.get('time')}  {run_puzzle(r)}  {kind:9} {to_solved:>7} ms "
                     f"{_measured(r, 'measured_machine_ms'):>6} ms  {text}")
    return lines
