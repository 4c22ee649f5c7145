"""Health checks: what every check returns, and how `cube-robot doctor` shows it.

Each package keeps its checks beside what they check (robot/link/doctor_checks.py,
robot/solver/doctor_checks.py, robot/vision/doctor_checks.py,
robot/sim/doctor_checks.py); a check is `check(config, args) -> list[Result]`.
The `doctor` command (robot/doctor/command.py) lists and runs them.  This
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
