"""Health checks at the top: how `cube-robot doctor` shows them.

Each package keeps its checks beside what they check (robot/link/doctor_checks.py,
robot/solver/doctor_checks.py, robot/vision/doctor_checks.py,
robot/sim/doctor_checks.py, robot/arms/doctor_checks.py); a check is
`check(config, args) -> list[Result]` (robot/checks.py, the model every layer
can import).  The `doctor` command (robot/doctor/commands.py, its CHECKS) and the
run's pre-flight (robot/doctor/preflight.py, PREFLIGHT_CHECKS) list and run them.
"""

from __future__ import annotations


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
