"""What a health check returns, and the failures that keep a robot from starting.

A check is `check(config, context) -> list[Result]`; each package keeps its checks beside what
they check (robot/<package>/doctor_checks.py).  The registries that list and run them are at the
top (robot/doctor/: `cube-robot doctor`, and the run's pre-flight).  This module imports nothing,
so every layer can use it.
"""

from __future__ import annotations

from dataclasses import dataclass

OK, WARN, FAIL, INFO = "ok", "warn", "FAIL", "info"


@dataclass(frozen=True)
class Result:
    item: str  # what was checked, e.g. "/dev/ttyACM0"
    status: str  # OK / WARN / FAIL / INFO
    detail: str  # what was found, and what to do about it


class RobotNotReady(RuntimeError):
    """The named robot does not answer as our firmware (or a pre-flight check failed): nothing moved."""


class PreflightFailed(RobotNotReady):
    """Pre-flight checks failed before the start button: each line names the check and its fix."""

    def __init__(self, failed: list[str]):
        super().__init__("pre-flight failed, nothing moved:\n  " + "\n  ".join(failed))
        self.failed = failed
