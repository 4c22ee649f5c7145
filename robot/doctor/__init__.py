"""Health checks: what every check returns, and how `cube-robot doctor` shows it.

Each package keeps its checks beside what they check (robot/link/doctor_checks.py,
robot/solver/doctor_checks.py, robot/vision/doctor_checks.py,
robot/sim/doctor_checks.py); a check is `check(config, args) -> list[Result]`.
The `doctor` command (robot/doctor/commands.py) lists and runs them.  This
module imports nothing, so every check can import it.
"""

from __future__ import annotations

from dataclasses import dataclass

OK, WARN, FAIL, INFO = "ok", "warn", "FAIL", "info"


@dataclass(frozen=True)
class Result:
    item: str  # what was checked, e.g. "/dev/ttyACM0"
    status: str  # OK / WARN / FAIL / INFO
    detail: str  # what was found, and what to do about it


def format_table(rows) -> str:
    """The doctor's table: rows of (check title, Result)."""
    headers = ("check", "item", "status", "detail")
    table = [headers] + [(title, r.item, r.status, r.detail) for title, r in rows]
    widths = [max(len(str(row[i])) for row in table) for i in range(3)]
    lines = []
    for row in table:
        lines.append("  ".join(str(row[i]).ljust(widths[i]) for i in range(3)) + "  " + str(row[3]))
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 6)
    return "\n".join(lines)
