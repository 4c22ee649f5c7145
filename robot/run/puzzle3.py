"""`cube-robot run --puzzle 3x3x3 --sim`: the 3x3x3 on the same four arms, start press to a checked cube.

    start press -> scan (scan3's views; a refused decode is rescanned, never guessed) -> decode3
    -> robot-aware plan (solve_robot within robot3.search_budget_s) -> the plan's ops carried out once
    -> rescan -> report

On the simulated robot only (robot/sim/robot_sim3.py: the Python op executor by default, the real firmware
in simavr in 3x3x3 mode over the host's link with --firmware emulator); the serial fault flags and a real
robot are not built for it yet, so they are refused by name (REFUSED3).
The honesty rules and outcome words are the 2x2x2 run's (run/report.py): every line SIMULATED; with a rescan,
SOLVED only when it saw every face of one colour; without one (--no-verify, or the rescan refused) the
outcome is read from the virtual cube and says so, as a simulated 2x2x2 run's is; every stop names the cube
state as 54 facelets (letters named by the centres the scan saw) or says why it cannot.  Each run is
appended to the solve log (run/log.py) with `"puzzle": "3x3x3"`.
"""

from __future__ import annotations

import time
from datetime import datetime
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from ..config_types import Config
from ..exit_status import ExitStatus
from . import report as report_words
from .options import RunOptions

# Options of `cube-robot run` that the 3x3x3 run cannot honour yet, and why (said when refused).
NO_LINK3 = ("the serial fault flags are not built for the 3x3x3 run yet (its firmware link, --firmware emulator, "
            "runs without faults)")
REFUSED3 = (
    ("--port", lambda o: o.port, "no real 3x3x3 robot is supported yet: run it with --sim"),
    ("--fault-rate", lambda o: o.fault_rate, NO_LINK3),
    ("--disconnect-at", lambda o: o.disconnect_at, NO_LINK3),
    ("--keep-power", lambda o: o.keep_power, NO_LINK3),
    ("--firmware mock", lambda o: o.firmware == "mock", "the 3x3x3 run takes the firmware in simavr (--firmware "
     "emulator) or the Python op executor (auto); the mock firmware's 3x3x3 mode is not wired into it"),
    ("--resume", lambda o: o.resume, "a simulated robot starts with no alarm"),
    ("--arms-straight", lambda o: o.arms_straight, "the simulated arms start square"),
    ("--light", lambda o: o.light, "the 3x3x3 renderer takes no lamp preset yet"),
)

# The 2x2x2 run's outcome words: an e-stop is EMERGENCY STOP, any other stop NOT SOLVED (Run3Report.stopped).
SOLVED, NOT_SOLVED, STOPPED = report_words.SOLVED, report_words.NOT_SOLVED, report_words.STOPPED


def refused_options3(options: RunOptions) -> list[str]:
    """'--flag: why' for every given option the 3x3x3 run cannot honour."""
    return [f"{flag}: {why}" for flag, given, why in REFUSED3 if given(options)]


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
    time: str | None = None  # when the run started (ISO, seconds), as a solve log record starts
    timing_note: str | None = None  # set when the times are compressed (not --realtime): history groups by it

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
        lines = [f"3x3x3 run: {self.outcome}", f"robot: {self.backend}",
                 f"cube put in (true colours, as it was put in): {self.true_state}"]
        if self.scanned:
            # The scan's views tilt the whole cube and leave it turned: the same cube, in another frame.
            lines += [f"scanned (attempt {self.scan_attempts}): {self.scanned} (the same cube after the scan's "
                      "whole-cube turns, letters named by the centres seen)", net3(self.scanned)]
        lines += [f"scan attempt {k} refused: {why}" for k, why in enumerate(self.refusals, start=1)]
        if self.moves is not None:
            lines.append(f"plan: {self.moves or '(already solved)'} ({self.ops} ops, {self.predicted_ms} ms arm time "
                         f"on the model, found in {self.solve_ms:.0f} ms, budget {self.search_budget_s} s)")
            lines.append(f"ops carried out: {self.ops_done} of {self.ops}")
        if self.measured_ms is not None:
            lines.append(f"plan arm time: predicted {self.predicted_ms} ms, measured {self.measured_ms:.0f} ms "
                         f"(the firmware's `done` lines, {self.ops_done} of {self.ops} ops)")
        if self.button_to_solved_ms is not None:
            lines.append(f"button -> last op done: {self.button_to_solved_ms:.0f} ms (SIMULATED clock: the "
                         "executor is sped up unless --realtime, the emulator runs at its own pace)")
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


class Stop3(Exception):
    """The run stopped; `state` names the cube (54 facelets and what they are) or why it is not known."""

    def __init__(self, message: str, state: str, advice: str, estop: bool = False):
        super().__init__(message)
        self.state, self.advice, self.estop = state, advice, estop


def start_state(options: RunOptions, rng) -> str:
    """The cube put in: the scramble's, or a uniformly random one (true colours, cube3 layout)."""
    from ..solver3 import cube3

    if options.scramble:
        state = cube3.apply(cube3.solved(), cube3.parse_moves(options.scramble))
    else:
        state = cube3.random_state(rng)
    return cube3.to_facelets(state)


def run_puzzle3(config: Config, options: RunOptions, tell_maker: Callable[[str], None], solve=None,
                robot=None, budget_s: float | None = None) -> Run3Report:
    """One 3x3x3 run on the simulated robot.  solve(facelets, budget_s) -> Plan3 replaces the robot-aware
    search (tests); robot: a SimulatedRobot3 to run on (default: one built from the options)."""
    import numpy as np

    from ..sim.robot_sim3 import SimulatedRobot3

    refused = refused_options3(options)
    if refused:
        raise ValueError("run --puzzle 3x3x3 cannot take " + "; ".join(refused))
    rng = np.random.default_rng(options.seed)
    if robot is None:
        robot = SimulatedRobot3(config, start_state(options, rng), seed=int(rng.integers(1 << 30)),
                                realtime=options.realtime, bad_scan=options.bad_scan,
                                firmware="emulator" if options.firmware == "emulator" else "executor")
    budget = config.robot3.search_budget_s if budget_s is None else budget_s
    report = Run3Report(true_state=robot.virtual.facelets(), backend=robot.backend, search_budget_s=budget,
                        time=datetime.now().isoformat(timespec="seconds"),
                        timing_note=None if options.realtime else "SIMULATED sped up: times compressed, not the robot's")
    tell_maker(f"Simulated robot: {robot.backend}.")
    run = _Run3(config, robot, options, tell_maker, report, solve, budget)
    try:
        run.run()
    except Stop3 as stop:
        report.outcome, report.cube_state, report.advice = (STOPPED if stop.estop else NOT_SOLVED), stop.state, stop.advice
        report.stopped = True
        report.errors.append(str(stop))
    finally:
        report.ops_done = run.done
        report.final_true = robot.virtual.facelets()
        robot.close()
    return report


class _Run3:
    def __init__(self, config: Config, robot, options: RunOptions, tell_maker, report: Run3Report, solve, budget):
        from ..plan3 import Robot3Profile
        from ..scan_sequence3 import ScanSequence3
        from ..vision.camera_geometry3 import scan_regions3

        self.config, self.robot, self.options, self.tell = config, robot, options, tell_maker
        self.report, self.budget = report, budget
        self.profile = Robot3Profile.from_config(config)
        self.sequence = ScanSequence3.from_config(config)
        self.regions = scan_regions3(robot.camera.pose, self.sequence)
        self.mapping = self.sequence.mapping()
        self.solve = solve
        self.done = 0  # plan ops carried out
        self.pressed = 0.0

    def ms(self, t: float) -> float:
        return (t - self.pressed) * 1000.0

    def stage(self, name: str, start: float, end: float) -> None:
        self.report.stages.append((name, self.ms(start), self.ms(end)))

    def run(self) -> None:
        from ..solver3 import robot_search

        report, robot = self.report, self.robot
        if self.solve is None:  # the tables are loaded before the start press: nothing of them is timed
            solutions = robot_search.default_solutions(self.config)
            self.solve = lambda facelets, budget: robot_search.solve_robot(facelets, self.config, budget, solutions)
        robot.camera.open()
        robot.before_scan(1)
        robot.prerender_scan(self.sequence)  # the simulation's CPU, before the start press: not the robot's time
        robot.prerender_wait()
        self.tell("Start pressed (the simulated button).")
        self.pressed = time.perf_counter()
        scanned = self.scan_until_read()
        report.scanned = scanned
        t = time.perf_counter()
        plan = self.solve(scanned, self.budget)
        self.stage("solve", t, time.perf_counter())
        report.moves, report.ops, report.predicted_ms = plan.moves, len(plan.ops), plan.cost_ms
        report.solve_ms = round(plan.solve_ms, 1)
        report.floor = {"scan_arm_ms": self.sequence.arm_ms(self.profile) * report.scan_attempts,
                        "search_budget_ms": self.budget * 1000.0, "plan_arm_ms": plan.cost_ms}
        self.tell(f"Plan: {plan.moves or '(already solved)'} ({len(plan.ops)} ops, {plan.cost_ms} ms predicted, "
                  f"found in {plan.solve_ms:.0f} ms)")
        report.plan_start_true = robot.virtual.facelets()
        if self.options.verify:
            robot.before_scan(None)
            robot.prerender_scan(self.sequence, plan.ops + self.restore_ops(scanned, plan))
        self.execute(scanned, plan)
        if not self.options.verify:  # a simulation's truth is the virtual cube, as the 2x2x2's (exit 3: real only)
            report.checked = report_words.NOT_CHECKED + "--no-verify"
            report.outcome = SOLVED if is_solved3(robot.virtual.facelets()) else NOT_SOLVED
            return
        t = time.perf_counter()
        try:
            self.restore(scanned, plan)  # the scan's views assume every gripper at 0, as a plan leaves none
            seen = self.scan_once(None, "verify: ")
        except _Refused as exc:
            report.checked = f"rescan refused: {exc}"
            report.outcome = SOLVED if is_solved3(robot.virtual.facelets()) else NOT_SOLVED
        else:
            solved = is_solved3(seen)
            report.checked = ("rescan shows solved" if solved else f"rescan shows NOT solved: {seen}")
            report.outcome = SOLVED if solved else NOT_SOLVED
            if not solved:
                report.cube_state = f"{seen} (as the rescan read it)"
        self.stage("verify", t, time.perf_counter())

    # -- scanning ---------------------------------------------------------------

    def scan_until_read(self) -> str:
        attempts = self.config.run.scan_attempts
        for attempt in range(1, attempts + 1):
            self.report.scan_attempts = attempt
            prefix = f"scan {attempt}: " if attempt > 1 else ""
            try:
                facelets = self.scan_once(attempt, prefix)
            except _Refused as exc:
                self.report.refusals.append(str(exc))
                self.tell(f"Scan attempt {attempt} refused ({exc}); rescanning...")
                continue
            self.tell(f"Scanned: {facelets} (attempt {attempt})")
            return facelets
        # Only whole scans turned the cube (tilts), and each ends with every gripper back at 0.
        raise Stop3(f"the cube could not be read in {attempts} attempts: {self.report.refusals[-1]}",
                    "not read: every scan was refused (no plan op ran; the scans only tilted the whole cube)",
                    "check the light (no glare, even brightness), then run again (the cube is rescanned)")

    def scan_once(self, attempt: int | None, prefix: str) -> str:
        """One whole scan: each view's ops then its frame, the finish ops, the decode; its facelets."""
        import numpy as np

        from ..vision.decode3 import decode3
        from ..vision.readings import VisionError

        robot, camera = self.robot, self.robot.camera
        robot.before_scan(attempt)
        sampled = []  # each view's stickers are sampled on a thread while the arms present the next view
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="scan3-sample") as sampler:
            for view_index, view in enumerate(self.sequence.views):
                camera.note_state()
                start = camera.motion_started = time.perf_counter()
                for op in view.ops:
                    robot.do_op(op)
                camera.motion_ended()
                end = time.perf_counter()
                frame = camera.capture(view.name)
                got = time.perf_counter()
                sampled.append(sampler.submit(self.sample_view, view_index, frame))
                self.stage(f"{prefix}{view.name}: motion", start, end)
                self.stage(f"{prefix}{view.name}: frame wait", end, got)
            t = time.perf_counter()
            for op in self.sequence.finish:
                robot.do_op(op)
            camera.note_state()
            t_decode = time.perf_counter()
            self.stage(f"{prefix}finish: motion", t, t_decode)
            samples: dict = {}
            for future in sampled:
                for final, rgb in future.result():
                    samples.setdefault(final, []).append(rgb)
        readings = np.array([np.median(samples[i], axis=0) for i in range(54)])
        try:
            decoded = decode3(readings, None, self.config)
        except VisionError as exc:
            raise _Refused(str(exc)) from None
        finally:
            self.stage(f"{prefix}decode", t_decode, time.perf_counter())
        return decoded.facelets

    # -- the plan ---------------------------------------------------------------

    def sample_view(self, view_index: int, frame) -> list:
        """(final facelet, sRGB) of every region of one view's frame."""
        from ..vision.regions import sample_sticker

        quads = self.regions.quads(self.sequence.views[view_index].name)
        return [(final, sample_sticker(frame, quads[region]).rgb)
                for v, region, final in self.mapping if v == view_index]

    def state_after(self, scanned: str, ops) -> str:
        """The scanned cube after `ops`, by the same rules as the virtual robot (a rehearsal, not the truth)."""
        from ..sim.virtual_robot3 import VirtualRobot3

        rehearsal = VirtualRobot3(self.profile, scanned)
        for op in ops:
            rehearsal.apply_op(op)
        return rehearsal.facelets()

    def restore_ops(self, scanned: str, plan) -> list:
        """The ops that put grippers a plan left at 90 back to 0, a pair at a time."""
        from ..sim.virtual_robot import MechanicalError
        from ..sim.virtual_robot3 import VirtualRobot3

        rehearsal = VirtualRobot3(self.profile, scanned)
        try:
            for op in plan.ops:
                rehearsal.apply_op(op)
        except MechanicalError:  # the plan jams: the executor will stop there, and nothing is restored
            return []
        ops: list = []
        for _, faces in self.profile.pairs:
            at_90 = [arm for arm in faces if rehearsal.gripper_angle(arm) == 90]
            ops += self.profile.restore_ops(at_90) if at_90 else []
        return ops

    def restore(self, scanned: str, plan) -> None:
        """Grippers a plan left at 90 back to 0 (off the clock, as docs/robot3.md counts a plan)."""
        from ..sim.virtual_robot3 import Jam3

        for op in self.restore_ops(scanned, plan):
            try:
                self.robot.do_op(op)
            except Jam3 as jam:
                raise Stop3(f"jam while the grippers went back to 0 before the rescan ({describe_op(op)}): {jam}",
                            f"NOT KNOWN: {self.state_after(scanned, plan.ops)} if the plan ran as planned (it ran to "
                            "the end); the grippers' restore jammed", "free the cube, then run again (it is rescanned)"
                            ) from None

    def execute(self, scanned: str, plan) -> None:
        from ..link.errors import CommandRejectedError, LinkError
        from ..sim.virtual_robot3 import Jam3

        total, estop = len(plan.ops), self.options.estop_at
        t, measured = time.perf_counter(), 0.0
        try:
            for k, op in enumerate(plan.ops):
                if estop is not None and k + 1 == estop:
                    self.stage("execute (stopped)", t, time.perf_counter())
                    state = self.state_after(scanned, plan.ops[:k])
                    raise Stop3(f"emergency stop during plan op {k + 1} of {total} (SIMULATED --estop-at: the "
                                "executor stops before that op moves)",
                                f"{state} (after plan op {k} of {total}; op {k + 1}, {describe_op(op)}, did not move)",
                                "check the cube sits straight in the grippers, then run again (the cube is rescanned)",
                                estop=True)
                measured += self.robot.do_op(op)
                self.done = k + 1
                if self.robot.link is not None:  # the firmware's `done` lines: a measurement, not the model
                    self.report.measured_ms = round(measured, 1)
        except LinkError as exc:  # the firmware refused the op's line (it did nothing), or the link failed
            self.stage("execute (stopped)", t, time.perf_counter())
            state = self.state_after(scanned, plan.ops[:self.done])
            refused = isinstance(exc, CommandRejectedError)
            raise Stop3(f"plan op {self.done + 1} of {total} ({describe_op(plan.ops[self.done])}): "
                        f"{type(exc).__name__}: {exc}",
                        f"{'' if refused else 'NOT KNOWN: '}{state} (after plan op {self.done} of {total}; op "
                        f"{self.done + 1} {'was refused by the board and did nothing' if refused else 'may have run'})",
                        "SIMULATED: a plan the board refuses is a bug of the plan or the board's rules: report it"
                        ) from None
        except Jam3 as jam:
            self.stage("execute (stopped)", t, time.perf_counter())
            state = self.state_after(scanned, plan.ops[:self.done])
            raise Stop3(f"jam in plan op {self.done + 1} of {total} ({describe_op(plan.ops[self.done])}): {jam}",
                        f"NOT KNOWN: {state} after plan op {self.done} of {total}; op {self.done + 1} jammed "
                        f"({jam.rule}) and may have turned a layer part-way",
                        "free the cube, turn any layer left part-way to the nearest quarter, then run again "
                        "(the cube is rescanned)") from None
        done_at = time.perf_counter()
        self.stage("execute", t, done_at)
        self.report.button_to_solved_ms = round(self.ms(done_at), 1)


class _Refused(Exception):
    """A scan the decoder would not trust (rescanned, never guessed)."""


def describe_op(op: dict) -> str:
    arms = op["arms"]
    if op["op"] in ("open", "close"):
        return f"{op['op']} {' '.join(arms)}"
    return f"{op['op']} " + " + ".join(f"{arm} {angle:+d}" for arm, angle in arms.items())


def run_command3(config: Config, options: RunOptions) -> int:
    """`cube-robot run --puzzle 3x3x3`: refuses what it cannot honour by name, else runs and prints the report."""
    import json
    import sys

    from ..cli_common import simulated

    refused = refused_options3(options)
    if not options.sim and not options.simulation_flags() and not options.port:
        refused.append("(no --sim): the 3x3x3 runs only on the simulated robot so far: add --sim")
    if refused:
        print("cube-robot run --puzzle 3x3x3: cannot take " + "; ".join(refused) + " (nothing moved)",
              file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    tell_maker = (lambda text: print(simulated(text), file=sys.stderr)) if options.json else \
        (lambda text: print(simulated(text)))
    from . import log

    report = run_puzzle3(config, options.replace(sim=True), tell_maker)
    print(json.dumps(report.to_json()) if options.json else simulated(report.format()))
    log.append(config, report)  # every run goes into the solve log (a failed write is said, never fatal)
    return report.exit_status()
