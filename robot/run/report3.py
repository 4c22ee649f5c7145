"""The 3x3x3 run's report (SIMULATED): what one run did, in the 2x2x2 run's outcome words (run/report.py),
and the 54-facelet helpers it is told in (robot/run/puzzle3.py runs it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..exit_status import ExitStatus
from . import report as report_words

# The 2x2x2 run's outcome words: an e-stop is EMERGENCY STOP, any other stop NOT SOLVED (Run3Report.stopped).
SOLVED, NOT_SOLVED, STOPPED = report_words.SOLVED, report_words.NOT_SOLVED, report_words.STOPPED


def net3(facelets: str) -> str:
    """The 54 facelets drawn as a net (U above, L F R B across, D below)."""
    rows = lambda face: [" ".join(facelets[9 * face + 3 * r: 9 * face + 3 * r + 3]) for r in range(3)]  # noqa: E731
    u, r, f, d, l_, b = (rows(k) for k in range(6))
    pad = " " * 6
    return "\n".join([pad + line for line in u] + [" ".join(x) for x in zip(l_, f, r, b)] + [pad + line for line in d])


def is_solved3(facelets: str) -> bool:
    return all(len(set(facelets[9 * k: 9 * k + 9])) == 1 for k in range(6))


def by_centres(facelets: str, centres_of: str) -> str:
    """`facelets` (any letters) with each letter renamed to the face whose centre has it in `centres_of`
    (how the decoder names a scan's colours): for comparing the virtual cube with a named state."""
    names = {centres_of[9 * k + 4]: "URFDLB"[k] for k in range(6)}
    return "".join(names.get(c, "?") for c in facelets)


@dataclass
class Run3Report:
    """What one 3x3x3 run did (SIMULATED): its outcome, the cube at each point, its stages."""

    true_state: str  # the virtual cube as put in (true colours; simulation only)
    backend: str
    outcome: str | None = None
    scanned: str | None = None  # the 54 facelets the scan decoded (letters named by the centres seen)
    scan_attempts: int = 0
    refusals: list = field(default_factory=list)  # why each refused scan was refused
    moves: str | None = None
    ops: int = 0
    ops_done: int = 0
    predicted_ms: int | None = None  # the plan's arm time on the model
    solve_ms: float | None = None
    search_budget_s: float | None = None
    cube_state: str | None = None  # after a stop: 54 facelets and what they are, or why not known
    checked: str | None = None  # what the rescan saw
    errors: list = field(default_factory=list)
    advice: str | None = None
    stages: list = field(default_factory=list)  # (name, start ms, end ms) from the start press
    floor: dict = field(default_factory=dict)  # the floor's parts, ms: the scan's arm time, frame waits, ...
    button_to_solved_ms: float | None = None  # start press -> the plan's last op done
    plan_start_true: str | None = None  # the virtual cube when the plan started (simulation truth)
    final_true: str | None = None  # the virtual cube at the end (simulation truth)
    stopped: bool = False  # the run stopped before its end (an e-stop, a jam, a refused line, no scan read)
    measured_ms: float | None = None  # the plan's arm time as the board's `done` lines measured it (firmware)
    emulator_lag_ms: float | None = None  # host clock minus the emulated board's, start press -> end (simavr)
    possible_states: list | None = None  # after a stop: every 54-facelet state its words allow (stops3.py)
    serial_faults: int | None = None  # faults the fault proxy made (None: no proxy)
    link_resumes: int = 0  # streams resumed after a lost link
    replans: list = field(default_factory=list)  # each plan made again after a board reset (what and why)
    plan_ops: int = 0  # the first plan's ops (`ops` counts those carried out of it and any plan made again)
    time: str | None = None  # when the run started (ISO, seconds), as a solve log record starts
    timing_note: str | None = None  # set when the times are compressed (not --realtime): history groups by it
    light: str | None = None  # the simulated lamp on every scan's pictures (None: no lamp)

    def stage_ms(self) -> dict:
        out: dict = {}
        for name, start, end in self.stages:
            out[name] = out.get(name, 0.0) + (end - start)
        return out

    def exit_status(self) -> int:
        return report_words.EXIT_STATUS.get(self.outcome or "", ExitStatus.NOT_DONE)

    def result_line(self) -> str:
        """The RESULT line, in the 2x2x2 run's words (run/report.py RunReport.result_line)."""
        outcome, checked = self.outcome or NOT_SOLVED, self.checked or ""
        if self.stopped and self.errors:
            reason = f": {report_words.without_outcome(outcome, self.errors[-1])}"
        elif checked.startswith(report_words.NOT_CHECKED) or checked.startswith("rescan refused"):
            why = checked[len(report_words.NOT_CHECKED):] if checked.startswith(report_words.NOT_CHECKED) else checked
            reason = f" (read from the virtual cube; no rescan: {why})" if outcome == SOLVED else \
                f": read from the virtual cube; no rescan: {why}"
        elif outcome == SOLVED:
            reason = " (the rescan saw every face of one colour)"
        else:
            reason = ": the rescan after the solve shows an unsolved cube"
        return f"SIMULATED {outcome}{reason}"

    def to_json(self) -> dict:
        """A solve log record (run/log.py): `time` first, `mode`, `puzzle`, `outcome` as the 2x2x2's."""
        out = {"time": self.time, "mode": "simulated", "puzzle": "3x3x3", **self.__dict__}
        out["simulated"], out["solved"], out["verify"] = True, self.outcome == SOLVED, self.checked
        out["button_to_solved_ms"] = self.button_to_solved_ms if self.outcome == SOLVED else None
        out["predicted_machine_ms"], out["measured_machine_ms"] = self.predicted_ms, self.measured_ms
        out["stages"] = [{"stage": n, "start_ms": round(s, 1), "end_ms": round(e, 1)} for n, s, e in self.stages]
        return out

    def format(self) -> str:
        lines = [f"3x3x3 run: {self.outcome}", f"robot: {self.backend}"] + ([f"light: {self.light}"] if self.light else []) \
            + [f"cube put in (true colours, as it was put in): {self.true_state}"]
        if self.scanned:
            # The scan's views tilt the whole cube and leave it turned: the same cube, in another frame.
            lines += [f"scanned (attempt {self.scan_attempts}): {self.scanned} (the same cube after the scan's "
                      "whole-cube turns, letters named by the centres seen)", net3(self.scanned)]
        lines += [f"scan attempt {k} refused: {why}" for k, why in enumerate(self.refusals, start=1)]
        if self.moves is not None:
            lines.append(f"plan: {self.moves or '(already solved)'} ({self.plan_ops} ops, {self.predicted_ms} ms arm time "
                         f"on the model, found in {self.solve_ms:.0f} ms, budget {self.search_budget_s} s)")
            lines += [f"re-planned {text}" for text in self.replans]
            lines.append(f"ops carried out: {self.ops_done} of {self.ops}" +
                         (" (the first plan's until the reset, then the new plan's)" if self.replans else ""))
        if self.measured_ms is not None:
            lines.append(f"plan arm time: predicted {self.predicted_ms} ms, measured {self.measured_ms:.0f} ms "
                         f"(the firmware's `done` lines, {self.ops_done} of {self.ops} ops)")
        if self.button_to_solved_ms is not None:
            lines.append(f"button -> last op done: {self.button_to_solved_ms:.0f} ms (SIMULATED clock: the "
                         + ("mock firmware is sped up unless --realtime, the emulator runs at its own pace)"
                            if self.timing_note else "real time, --realtime)"))
        if self.checked:
            lines.append(f"check: {self.checked}")
        lines += [f"error: {e}" for e in self.errors]
        if self.cube_state:
            lines.append(f"cube state: {self.cube_state}")
        if self.advice:
            lines.append(f"advice: {self.advice}")
        for name, ms in self.stage_ms().items():
            lines.append(f"  {name:34} {ms:8.1f} ms")
        lines.append(f"RESULT {self.result_line()}")
        return "\n".join(lines)
