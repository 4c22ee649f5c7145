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

from ..cube import facelet_name
from ..exit_status import ExitStatus
from . import events

# What a run ended as, and `cube-robot run`'s exit status for it (documented in `run --help`,
# README "Everyday commands" and docs/running.md).  SOLVED on a real robot means VERIFIED: the
# rescan after the solve saw a solved cube.  A simulated run says SIMULATED on every line.
# INTERRUPTED: Ctrl-C while nothing moved (before the start press, or the board idle with nothing queued):
# no stop byte, no alarm; not a failed solve.
SOLVED, EXECUTED, NOT_SOLVED, NOT_STARTED, STOPPED, INTERRUPTED = (
    "SOLVED", "EXECUTED (NOT VERIFIED)", "NOT SOLVED", "NOT STARTED", "EMERGENCY STOP", "INTERRUPTED")
EXIT_STATUS = {SOLVED: ExitStatus.OK, NOT_SOLVED: ExitStatus.NOT_DONE, EXECUTED: ExitStatus.NOT_VERIFIED,
               NOT_STARTED: ExitStatus.NOT_STARTED, STOPPED: ExitStatus.INTERRUPTED,
               INTERRUPTED: ExitStatus.INTERRUPTED}
NOT_CHECKED = "not checked: "  # report.verify when no rescan ran: the reason follows
EXIT_STATUS_HELP = """exit status:
  0    SOLVED: a real robot's rescan after the solve saw a solved cube (VERIFIED), or a
       simulated run's virtual cube ended solved (the report then says SIMULATED on every line;
       with --no-verify too: the virtual cube is the simulation's truth)
  1    NOT SOLVED: the run stopped, or the rescan saw an unsolved cube; the report says why
  2    bad config or arguments
  3    EXECUTED (NOT VERIFIED), on a real robot: the plan ran but no rescan confirmed it
       (--no-verify, run.verify_after: false, or the rescan could not read the cube)
  4    NOT STARTED: the robot is not ready (the named port does not answer as our firmware,
       or a pre-flight check failed); nothing moved
  130  EMERGENCY STOP: Ctrl-C stopped the robot; the report names the cube state
  130  INTERRUPTED: Ctrl-C while nothing moved: no stop byte was sent, no alarm latched"""


def plural(count: int, word: str) -> str:
    """'1 run', '3 runs'."""
    return f"{count} {word if count == 1 else word + 's'}"


def without_outcome(outcome: str, error: str) -> str:
    """An error as the reason after its outcome: 'EMERGENCY STOP: emergency stop: Ctrl-C' says it twice."""
    said = outcome.lower() + ": "
    return error[len(said):] if error.lower().startswith(said) else error


@dataclass
class RunReport:
    time: str  # when the run started (ISO, seconds)
    mode: str  # "simulated" or "hardware"
    scramble: str | None = None  # simulation: the scramble asked for (null in the JSON: a random one)
    true_state: str | None = None  # simulation: the cube put in the robot
    errors: list = field(default_factory=list)
    solved: bool = False  # SOLVED as the outcome says (a real robot: verified by the rescan)
    outcome: str | None = None  # SOLVED / EXECUTED (NOT VERIFIED) / NOT SOLVED / ...; None: from `solved`
    simulated: bool | None = None  # True for a simulated run (marks the solve log line)
    firmware: str | None = None  # what answered on the link
    # The scan.
    scan_attempts: int | None = None
    recognition_ms: float | None = None
    scan_read_ms: float | None = None
    facelets: str | None = None
    confidence: float | None = None
    scan_images: list | None = None
    scan_readings: str | None = None  # the scan's 24 readings (readings.json beside its pictures)
    scan_replay: str | None = None  # the command that decodes them again as the run did
    corrected: dict | None = None  # {"scanned", "stickers"}: a person corrected the scanned cube (the panel)
    failed_scan_images: list | None = None  # [{"attempt": n, "error": ..., "images": [...]}] of doubtful scans
    warnings: list | None = None
    # The plan.
    scan_views: int | None = None  # views the scan took (an adaptive scan stops when it is sure)
    tables_load_ms: float | None = None  # before the start press (0: the pre-flight had loaded them)
    solve_ms: float | None = None
    plan: dict | None = None
    predicted_machine_ms: int | None = None
    # The execution.
    execute_ms: float | None = None
    measured_machine_ms: int | None = None  # sum of every action's time; None when any is unknown
    unknown_time_actions: int | None = None  # actions whose time the link could not measure
    button_to_solved_ms: float | None = None  # start press -> the last action's `done` (one clock), less review_ms
    review_ms: float | None = None  # a person checked the scanned cube (the panel) this long before it was solved
    waterfall: list | None = None  # [{"stage", "start_ms", "end_ms"[, "floor_ms"]}] from the press (run/waterfall.py)
    timing_note: str | None = None  # what the times mean, when they are not the real robot's (a sped-up sim)
    # Simulation: the board's clock and the host's over the run, and their ratio (the speed-up measured).
    sim_board_ms: float | None = None
    sim_wall_ms: float | None = None
    sim_speedup: float | None = None
    link_stats: dict | None = None
    execute_ok: bool | None = None
    verify: str | None = None
    verified_solved: bool | None = None
    verify_images: list | None = None  # the rescan's pictures (its folder also keeps its raw frames and readings)
    # Simulation: the virtual cube and the serial faults made.
    final_state: str | None = None
    turned_quarters: int | None = None
    serial_faults: int | None = None
    faults_made_estop_byte: int | None = None
    sim_light: str | None = None  # the simulated lamp on every scan (None: none)
    # A stop.
    stopped_at_action: int | None = None
    advice: str | None = None
    cube_state_after_stop: str | None = None
    # The action a stop interrupted: {"action", "command", "completed_before"} and, after a board reset,
    # "parts_done" (null: unknown) of "parts_total" (a TURN's steps, a GRIP's 2 phases) and "where" in words.
    interrupted_action: dict | None = None
    virtual_cube: str | None = None  # simulation: the virtual cube's true facelets (robot frame) at the end

    def __post_init__(self):
        if self.simulated is None:
            self.simulated = self.mode == "simulated"

    # Built from the run's events (robot/run/events.py): the report is a subscriber.
    @classmethod
    def start(cls, event: events.RunStarted) -> "RunReport":
        return cls(time=event.time, mode=event.mode, scramble=event.scramble, true_state=event.true_state)

    @classmethod
    def replay(cls, recorded) -> "RunReport":
        """The report of a run from its recorded events (the first is its RunStarted)."""
        recorded = list(recorded)
        report = cls.start(recorded[0])
        for event in recorded[1:]:
            report.apply(event)
        return report

    def subscribe(self, bus: events.EventBus) -> "RunReport":
        bus.subscribe(self.apply)
        return self

    def apply(self, event: events.Event) -> None:
        """Fold one event into the report."""
        fold = _FOLDS.get(type(event))
        if fold is not None:
            fold(self, event)

    def result(self) -> str:
        """The outcome: SOLVED, EXECUTED (NOT VERIFIED), NOT SOLVED, NOT STARTED, EMERGENCY STOP or INTERRUPTED."""
        if self.outcome is not None:
            return self.outcome
        if self.solved:
            return SOLVED
        if self.execute_ok and self.verified_solved is None:
            return EXECUTED
        return NOT_SOLVED

    def exit_status(self) -> int:
        return EXIT_STATUS[self.result()]

    def result_line(self) -> str:
        reason = ""
        if self.result() == EXECUTED:
            reason = f": {self.verify or 'no rescan after the solve'}"
        elif self.result() == NOT_SOLVED and self.verified_solved is False:
            reason = ": the rescan after the solve shows an unsolved cube"
        elif self.result() != SOLVED and self.errors:
            # A stop's error is the last; of pre-flight checks the first failed is the cause (later ones
            # fail because of it, e.g. the arms are not readied when the camera failed).
            error = self.errors[0] if self.result() == NOT_STARTED else self.errors[-1]
            reason = f": {without_outcome(self.result(), error)}"
            if self.result() == NOT_STARTED and "nothing moved" not in reason:
                reason += "; nothing moved"
        elif self.result() == SOLVED and not self.simulated:
            reason = " (VERIFIED: the rescan saw a solved cube)"
        elif self.result() == SOLVED:  # the simulation's truth, whatever the rescan did: say so
            reason = f" (read from the virtual cube{self._rescan_words()})"
        return ("SIMULATED " if self.simulated else "") + self.result() + reason

    def _rescan_words(self) -> str:
        if self.verify is None:
            return ""
        if self.verify.startswith(NOT_CHECKED):
            return "; no rescan: " + self.verify[len(NOT_CHECKED):]
        if self.verified_solved:
            return "; the rescan saw it solved too"
        return f"; {self.verify}"

    def to_json(self) -> dict:
        data = {}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if value is not None or (item.name == "scramble" and self.mode == "simulated"):
                data[item.name] = value
        data["outcome"] = self.result()
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


def _stopped(report: RunReport, e: events.Stopped) -> None:
    report.errors.extend(e.errors)
    for name, value in (("advice", e.advice), ("cube_state_after_stop", e.cube_state),
                        ("stopped_at_action", e.stopped_at_action), ("interrupted_action", e.interrupted_action),
                        ("outcome", e.outcome)):
        if value is not None:
            setattr(report, name, value)


def _noise_stops(report: RunReport, e: events.NoiseStops) -> None:
    # They came before a stop, whose error stays last (the result line names it).
    at = len(report.errors) - 1 if report.advice and report.errors else len(report.errors)
    report.errors[at:at] = list(e.texts)


def _views_decoded(report: RunReport, e: events.ViewsDecoded) -> None:
    report.scan_attempts, report.scan_views = e.attempt, e.views
    report.recognition_ms, report.scan_read_ms = e.recognition_ms, e.read_ms
    report.facelets, report.confidence = e.facelets, e.confidence
    report.scan_images, report.warnings = list(e.images), list(e.warnings)


def _cube_corrected(report: RunReport, e: events.CubeCorrected) -> None:
    report.facelets = e.facelets  # the cube solved
    report.corrected = {"scanned": e.scanned, "stickers": list(e.stickers)}


def _scan_refused(report: RunReport, e: events.ScanRefused) -> None:
    report.errors.append(f"scan attempt {e.attempt}: {e.error}")
    report.failed_scan_images = (report.failed_scan_images or []) + [
        {"attempt": e.attempt, "error": e.error, "images": list(e.images)}]


def _plan_found(report: RunReport, e: events.PlanFound) -> None:
    report.solve_ms, report.plan, report.predicted_machine_ms = e.solve_ms, e.plan, e.predicted_ms


def _link_stats(report: RunReport, e: events.LinkStats) -> None:
    if report.link_stats is None:
        report.link_stats = {}
    report.link_stats.update(e.stats)


def _executed(report: RunReport, e: events.Executed) -> None:
    report.execute_ms, report.button_to_solved_ms = e.execute_ms, e.button_to_solved_ms
    report.measured_machine_ms, report.unknown_time_actions = e.measured_machine_ms, e.unknown_time_actions
    report.review_ms = e.review_ms
    report.link_stats = dict(e.link_stats)
    report.execute_ok = True


def _checked(report: RunReport, e: events.Checked) -> None:
    if e.images is not None:
        report.verify_images = list(e.images) or None
    report.verify, report.verified_solved = e.verify, e.verified_solved


def _pictures_saved(report: RunReport, e: events.PicturesSaved) -> None:
    report.scan_images = list(e.images)
    if e.readings is not None:
        report.scan_readings, report.scan_replay = e.readings, e.replay


def _result(report: RunReport, e: events.Result) -> None:
    report.solved = e.solved
    if e.final_state is not None:
        report.final_state, report.turned_quarters = e.final_state, e.turned_quarters


def _simulation_measured(report: RunReport, e: events.SimulationMeasured) -> None:
    report.virtual_cube = e.virtual_cube
    for name, value in (("sim_board_ms", e.board_ms), ("sim_wall_ms", e.wall_ms), ("sim_speedup", e.speedup),
                        ("timing_note", e.timing_note), ("serial_faults", e.serial_faults),
                        ("faults_made_estop_byte", e.faults_made_estop_byte), ("sim_light", e.light)):
        if value is not None:
            setattr(report, name, value)


_FOLDS = {
    events.RobotNamed: lambda report, e: setattr(report, "firmware", e.firmware),
    events.TablesReady: lambda report, e: setattr(report, "tables_load_ms", e.load_ms),
    events.StartPressed: lambda report, e: setattr(report, "waterfall", []),
    events.StageEnded: lambda report, e: report.waterfall.append(
        {"stage": e.stage, "start_ms": e.start_ms, "end_ms": e.end_ms}
        | ({"floor_ms": e.floor_ms} if e.floor_ms is not None else {})),
    events.ScanRefused: _scan_refused,
    events.ViewsDecoded: _views_decoded,
    events.CubeCorrected: _cube_corrected,
    events.PlanFound: _plan_found,
    events.RunWarning: lambda report, e: setattr(report, "warnings", (report.warnings or []) + [e.text]),
    events.LinkRecovered: lambda report, e: report.errors.append(e.text),
    events.LinkStats: _link_stats,
    events.Executed: _executed,
    events.Checked: _checked,
    events.Stopped: _stopped,
    events.NoiseStops: _noise_stops,
    events.PicturesSaved: _pictures_saved,
    events.Result: _result,
    events.SimulationMeasured: _simulation_measured,
}


def speed_words(speedup: float) -> str:
    """How fast a simulation ran, from its measured ratio of board time to host wall time."""
    return f"{speedup:.1f}x faster than real time" if speedup >= 1.05 else f"at {speedup:.2f}x real time"


def compressed_button_to_solved(report: RunReport, button_to_solved_ms: float) -> str:
    """A sped-up simulation's start press -> solved, never shown as if the robot were that fast."""
    machine = report.measured_machine_ms if report.measured_machine_ms is not None else report.predicted_machine_ms
    ran = (f"the simulation ran {speed_words(report.sim_speedup)}" if report.sim_speedup
           else "the simulation was sped up (by how much was not measured)")
    return (f"{button_to_solved_ms / 1000:.1f} s wall (compressed: {ran}"
            + (f"; machine time {machine / 1000:.1f} s" if machine is not None else "") + ")")


def format_report(report: RunReport) -> str:
    lines = [f"cube-robot run ({report.mode}, firmware: {report.firmware})"]
    if report.corrected:
        lines.append(f"  scanned     {report.corrected['scanned']}  (confidence {report.confidence})")
        lines.append(f"  corrected   {report.facelets}  (by hand in the panel: stickers "
                     f"{', '.join(facelet_name(i) for i in report.corrected['stickers'])})")
    elif report.facelets:
        lines.append(f"  scanned     {report.facelets}  (confidence {report.confidence}, "
                     f"{plural(report.scan_attempts or 0, 'attempt')}"
                     + (f", {plural(report.scan_views, 'view')}" if report.scan_views else "") + ")")
    if report.scan_images:
        lines.append(f"  pictures    {Path(report.scan_images[0]).parent}"
                     + (" (raw frames and readings.json too)" if report.scan_readings else ""))
    if report.scan_replay:
        lines.append(f"  replay      {report.scan_replay}")
    for attempt in report.failed_scan_images or []:
        lines.append(f"  doubtful    attempt {attempt['attempt']}: {', '.join(attempt['images']) or '(none saved)'}")
    if report.plan:
        lines.append(f"  plan        {report.plan['moves'] or '(already solved)'}")
    for key, label in (("recognition_ms", "recognition"), ("solve_ms", "solve"),
                       ("predicted_machine_ms", "machine (pred.)"), ("measured_machine_ms", "machine (meas.)"),
                       ("execute_ms", "execute (wall)"), ("button_to_solved_ms", "button->solved")):
        if key == "button_to_solved_ms" and report.button_to_solved_ms is not None and report.timing_note:
            lines.append(f"  {label:<16}{compressed_button_to_solved(report, report.button_to_solved_ms)}")
        elif getattr(report, key) is not None:
            lines.append(f"  {label:<16}{getattr(report, key)} ms"
                         + (f" (a person's review of the cube, {report.review_ms / 1000:.1f} s, left out)"
                            if key == "button_to_solved_ms" and report.review_ms else ""))
        elif key == "measured_machine_ms" and report.unknown_time_actions:
            lines.append(f"  {label:<16}unknown: the time of {plural(report.unknown_time_actions, 'action')} "
                         "was not measured (not ranked by history)")
    if report.waterfall:
        from .waterfall import format_waterfall

        lines.append("  waterfall   (ms from the start press" + (f"; {report.timing_note}" if report.timing_note else "")
                     + ")")
        lines.extend(f"    {line}" for line in format_waterfall(report.waterfall))
    if report.sim_light:
        lines.append(f"  light       {report.sim_light}")
    if report.verify:
        lines.append(f"  check       {report.verify}")
    if report.verify_images:
        lines.append(f"  check pics  {Path(report.verify_images[0]).parent}")
    for warning in report.warnings or []:
        lines.append(f"  warning     {warning}")
    for error in report.errors:
        lines.append(f"  error       {error}")
    if report.cube_state_after_stop:
        lines.append(f"  cube now    {report.cube_state_after_stop}")
    if report.interrupted_action and "where" in report.interrupted_action:
        cut = report.interrupted_action
        lines.append(f"  cut action  {cut['action']} ({cut['command']}): {cut['where']}")
    if report.advice:
        lines.append(f"  next        {report.advice}")
    lines.append(f"  RESULT      {report.result_line()}")
    lines = ["=" * 60, *lines, "=" * 60]
    if report.simulated:  # never mistaken for a real robot's result, line by line (its rules too)
        return "\n".join(f"SIMULATED | {line}" for line in lines)
    return "\n".join(["", *lines])
