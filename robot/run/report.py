"""The report of one run: what happened, in the order it happened, and its text form.

A RunReport is written to the solve log as one JSON line (robot/run/log.py) and
printed by `cube-robot run` (`format_report`, or `--json`).  Unset (None)
entries are left out of the JSON; reading it like that JSON (`report["solved"]`,
`report.get("verify")`, `"advice" in report`) is supported for tests and tools.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class RunReport:
    time: str  # when the run started (ISO, seconds)
    mode: str  # "simulated" or "hardware"
    scramble: str | None = None  # simulation: the scramble asked for (null in the JSON: a random one)
    true_state: str | None = None  # simulation: the cube put in the robot
    errors: list = field(default_factory=list)
    solved: bool = False
    firmware: str | None = None  # what answered on the link
    # The scan.
    scan_attempts: int | None = None
    recognition_ms: float | None = None
    scan_read_ms: float | None = None
    facelets: str | None = None
    confidence: float | None = None
    scan_images: list | None = None
    warnings: list | None = None
    # The plan.
    tables_load_ms: float | None = None
    solve_ms: float | None = None
    plan: dict | None = None
    predicted_machine_ms: int | None = None
    # The execution.
    execute_ms: float | None = None
    measured_machine_ms: int | None = None
    link_stats: dict | None = None
    execute_ok: bool | None = None
    verify: str | None = None
    verified_solved: bool | None = None
    # Simulation: the virtual cube and the serial faults made.
    final_state: str | None = None
    turned_quarters: int | None = None
    serial_faults: int | None = None
    faults_made_estop_byte: int | None = None
    # A stop.
    stopped_at_action: int | None = None
    advice: str | None = None
    cube_state_after_stop: str | None = None

    def to_json(self) -> dict:
        data = {}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if value is not None or (item.name == "scramble" and self.mode == "simulated"):
                data[item.name] = value
        return data

    # Read like its JSON line.
    def __getitem__(self, key: str):
        return self.to_json()[key]

    def __contains__(self, key: str) -> bool:
        return key in self.to_json()

    def get(self, key: str, default=None):
        return self.to_json().get(key, default)

    def format(self) -> str:
        return format_report(self)


def format_report(report: RunReport) -> str:
    lines = ["", "=" * 60, f"cube-robot run ({report.mode}, firmware: {report.firmware})"]
    if report.facelets:
        lines.append(f"  scanned     {report.facelets}  (confidence {report.confidence}, "
                     f"{report.scan_attempts} attempt(s))")
    if report.scan_images:
        lines.append(f"  pictures    {Path(report.scan_images[0]).parent}")
    if report.plan:
        lines.append(f"  plan        {report.plan['moves'] or '(already solved)'}")
    for key, label in (("recognition_ms", "recognition"), ("solve_ms", "solve"),
                       ("predicted_machine_ms", "machine (pred.)"), ("measured_machine_ms", "machine (meas.)"),
                       ("execute_ms", "execute (wall)")):
        if getattr(report, key) is not None:
            lines.append(f"  {label:<16}{getattr(report, key)} ms")
    if report.verify:
        lines.append(f"  check       {report.verify}")
    for error in report.errors:
        lines.append(f"  error       {error}")
    if report.cube_state_after_stop:
        lines.append(f"  cube now    {report.cube_state_after_stop}")
    if report.advice:
        lines.append(f"  next        {report.advice}")
    lines.append(f"  RESULT      {'SOLVED' if report.solved else 'NOT SOLVED'}")
    lines.append("=" * 60)
    return "\n".join(lines)
