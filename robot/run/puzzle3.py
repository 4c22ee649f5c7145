"""`cube-robot run --puzzle 3x3x3 --sim`: the 3x3x3 on the same four arms, start press to a checked cube.

    start press -> scan (scan3's views; a refused decode is rescanned, never guessed) -> decode3
    -> robot-aware plan (solve_robot within robot3.search_budget_s) -> the plan's ops carried out once
    -> rescan -> report

On the simulated robot only (robot/sim/robot_sim3.py: a firmware in 3x3x3 mode over the host's link, picked as
the 2x2x2 run picks it: the real firmware in simavr when the toolchain is there, else the mock; the 2x2x2's
serial fault flags put the fault proxy between them); a real robot is not built for it yet, and what the run
cannot honour is refused by name (REFUSED3).  A lost link is resumed from the board's own record (its reset
memory); after a reset the host gives the board back only what it knows for certain (robot/link/reset3.py)
and stops when it cannot, naming the state (stops3.py).
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
from .stops3 import Stop3, describe_op, jam_stop, link_stop, rehearse

__all__ = ["Run3Report", "Stop3", "describe_op", "run_puzzle3", "run_command3", "refused_options3"]

# Options of `cube-robot run` that the 3x3x3 run cannot honour yet, and why (said when refused).
REFUSED3 = (
    ("--port", lambda o: o.port, "no real 3x3x3 robot is supported yet: run it with --sim"),
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
    possible_states: list | None = None  # after a stop: every 54-facelet state its words allow (stops3.py)
    serial_faults: int | None = None  # faults the fault proxy made (None: no proxy)
    link_resumes: int = 0  # streams resumed after a lost link
    replans: list = field(default_factory=list)  # each plan made again after a board reset (what and why)
    plan_ops: int = 0  # the first plan's ops (`ops` counts those carried out of it and any plan made again)
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
                         "mock firmware is sped up unless --realtime, the emulator runs at its own pace)")
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
                                realtime=options.realtime, bad_scan=options.bad_scan, firmware=options.firmware,
                                fault_rate=options.fault_rate, disconnect_at=options.disconnect_at,
                                keep_power=options.keep_power, say=tell_maker, light=options.light)
    budget = config.robot3.search_budget_s if budget_s is None else budget_s
    report = Run3Report(true_state=robot.virtual.facelets(), backend=robot.backend, search_budget_s=budget,
                        time=datetime.now().isoformat(timespec="seconds"),
                        timing_note=None if options.realtime else "SIMULATED sped up: times compressed, not the robot's")
    tell_maker(f"Simulated robot: {robot.backend}.")
    run = _Run3(config, robot, options, tell_maker, report, solve, budget)
    try:
        run.start()
        run.run()
    except Stop3 as stop:
        report.outcome, report.cube_state, report.advice = (STOPPED if stop.estop else NOT_SOLVED), stop.state, stop.advice
        report.stopped, report.possible_states = True, stop.possible
        report.errors.append(str(stop))
    finally:
        robot.close()
        report.ops_done = run.plan_ops_done()
        report.final_true = robot.virtual.facelets()
        report.serial_faults = robot.serial_fault_counts() if robot.proxy is not None else None
        report.link_resumes = robot.resumes
    return report


class _Run3:
    def __init__(self, config: Config, robot, options: RunOptions, tell_maker, report: Run3Report, solve, budget):
        from ..plan3 import Robot3Profile
        from ..scan_sequence3 import ScanSequence3
        from ..vision.regions3 import run_colours3, run_regions3

        self.config, self.robot, self.options, self.tell = config, robot, options, tell_maker
        self.report, self.budget = report, budget
        self.profile = Robot3Profile.from_config(config)
        self.sequence = ScanSequence3.from_config(config)
        # calibrate colours --puzzle 3x3x3's regions and colours (scan3.*_file) when saved, else the pose's guess
        self.regions, self.colours = run_regions3(config, robot.camera.pose, self.sequence), run_colours3(config)
        self.mapping = self.sequence.mapping()
        self.solve = solve
        self.plan = None
        self.ops_before_replan = 0  # plan ops of the first plan carried out before a re-plan
        self.scanned: str | None = None
        self.mark: int | None = None  # len(robot.done_ops) when the scan was read: later ops move a known cube
        self.pressed = 0.0

    def start(self) -> None:
        """The simulated board and the link to it (a link that fails here moved nothing)."""
        from ..link.errors import LinkError

        try:
            self.robot.start()
        except LinkError as exc:
            raise Stop3(f"the simulated robot could not be started: {type(exc).__name__}: {exc}",
                        "not read: the robot did not start (nothing moved; the cube is as it was put in)",
                        "run again") from None

    def plan_ops_done(self) -> int:
        """Plan ops carried out (after a re-plan: the first plan's before it, then the new plan's)."""
        if self.plan is None or self.mark is None:
            return 0
        return self.ops_before_replan + min(len(self.plan.ops), max(0, len(self.robot.done_ops) - self.mark))

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
        scanned = self.scanned = self.scan_until_read()
        self.mark = len(robot.done_ops)
        report.scanned = scanned
        t = time.perf_counter()
        plan = self.solve(scanned, self.budget)
        self.stage("solve", t, time.perf_counter())
        self.plan = plan
        report.moves, report.ops, report.predicted_ms = plan.moves, len(plan.ops), plan.cost_ms
        report.plan_ops = len(plan.ops)
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
            self.restore(self.scanned, self.plan)  # the scan's views assume every gripper at 0, as a plan leaves none
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

    def scan_ops(self, ops) -> None:
        """A scan's ops before the cube was read: a stop names no state (the scan's ops turn only the whole cube)."""
        from ..link.errors import LinkError
        from ..link.reset3 import ArmAcrossAfterResetError
        from ..sim.virtual_robot3 import Jam3

        try:
            try:
                self.robot.do_ops(ops)
            except ArmAcrossAfterResetError as exc:  # a scan turns only the whole cube: put the arms back, scan again
                self.robot.restore_after_reset()
                raise _Refused(f"the board reset during the scan ({exc.args[0].split(':')[0]}); every arm was put "
                               "back at 0 in the air, and the cube is scanned again") from None
        except (LinkError, Jam3) as exc:
            raise Stop3(f"scan attempt {self.report.scan_attempts}: {type(exc).__name__}: {exc}",
                        "not read: the stop came before the scan was read (no plan op ran; the scan's ops turn only "
                        "the whole cube, and a tilt cut part-way leaves it turned part-way as a whole)",
                        "check the cube sits square in the grippers, then run again (the cube is rescanned)") from None

    def scan_once(self, attempt: int | None, prefix: str) -> str:
        """One whole scan: each view's ops then its frame, the finish ops, the decode; its facelets."""
        import numpy as np

        from ..vision.decode3 import decode3
        from ..vision.readings import VisionError

        robot, camera = self.robot, self.robot.camera
        move = self.ops if self.scanned is not None else self.scan_ops  # the check rescan moves a known cube
        robot.before_scan(attempt)
        sampled = []  # each view's stickers are sampled on a thread while the arms present the next view
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="scan3-sample") as sampler:
            for view_index, view in enumerate(self.sequence.views):
                camera.note_state()
                start = camera.motion_started = time.perf_counter()
                move(view.ops)
                camera.motion_ended()
                end = time.perf_counter()
                frame = camera.capture(view.name)
                got = time.perf_counter()
                sampled.append(sampler.submit(self.sample_view, view_index, frame))
                self.stage(f"{prefix}{view.name}: motion", start, end)
                self.stage(f"{prefix}{view.name}: frame wait", end, got)
            t = time.perf_counter()
            move(self.sequence.finish)
            camera.note_state()
            t_decode = time.perf_counter()
            self.stage(f"{prefix}finish: motion", t, t_decode)
            samples: dict = {}
            for future in sampled:
                for final, rgb in future.result():
                    samples.setdefault(final, []).append(rgb)
        readings = np.array([np.median(samples[i], axis=0) for i in range(54)])
        try:
            decoded = decode3(readings, self.colours, self.config)
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
        return rehearse(self.profile, scanned, ops)[-1]

    def restore_ops(self, scanned: str, plan) -> list:
        """The ops that put grippers a plan left at 90 back to 0, a pair at a time."""
        from ..sim.virtual_robot import MechanicalError
        from ..sim.virtual_robot3 import VirtualRobot3

        rehearsal = VirtualRobot3(self.profile, scanned)
        try:
            for op in plan.ops:
                rehearsal.apply_op(op)
        except MechanicalError:  # the plan jams: the run stops there, and nothing is restored
            return []
        ops: list = []
        for _, faces in self.profile.pairs:
            at_90 = [arm for arm in faces if rehearsal.gripper_angle(arm) == 90]
            ops += self.profile.restore_ops(at_90) if at_90 else []
        return ops

    def ops(self, ops, on_done=None, replan: bool = False) -> list:
        """The robot carries out ops once the scan was read: a link error or a jam stops the run naming the state
        from the scan and the ops the board reported done (robot/run/stops3.py).  replan: a reset that left a
        gripper at 90 raises _Replan instead (the state and the arms are known; the plan's rest no longer fits)."""
        from ..link.errors import LinkError
        from ..link.reset3 import ArmAcrossAfterResetError
        from ..sim.virtual_robot3 import Jam3

        robot, scanned, mark = self.robot, self.scanned, self.mark
        assert scanned is not None and mark is not None and self.plan is not None
        total = len(self.plan.ops)
        try:
            return robot.do_ops(ops, on_done)
        except Jam3 as jam:
            after = robot.done_ops[mark:]
            before = after[:max(0, robot.jam_after - mark)]
            raise jam_stop(jam, self.profile, scanned, before, after[len(before):] + robot.maybe_ops, total) from None
        except LinkError as exc:
            if replan and isinstance(exc, ArmAcrossAfterResetError):
                raise _Replan(str(exc)) from None
            raise link_stop(exc, self.profile, scanned, robot.done_ops[mark:], robot.maybe_ops, total) from None

    def replan(self, why: str) -> list:
        """The board reset between ops while a gripper stood at 90: put every arm back at 0 in the air, then plan
        again from the state the host knows for certain (the scan and the ops the board reported done) and run
        that plan (a second such reset stops)."""
        from ..link.errors import LinkError
        from ..sim.virtual_robot3 import Jam3

        robot, plan = self.robot, self.plan
        assert self.scanned is not None and self.mark is not None and plan is not None
        done = len(robot.done_ops) - self.mark
        state = self.state_after(self.scanned, robot.done_ops[self.mark:])
        across = ", ".join(arm for arm in "RLFB" if robot.belief.gripper_angle(arm) == 90)
        try:
            robot.restore_after_reset()
        except (LinkError, Jam3) as exc:  # the arms' motions turn no layer: the cube is as the plan left it
            raise link_stop(exc, self.profile, self.scanned, robot.done_ops[self.mark:self.mark + done], [],
                            len(plan.ops)) from None
        self.tell(f"The board reset after plan op {done} of {len(plan.ops)} with a gripper at 90; every arm was put "
                  "back at 0 in the air (JOG, ZERO) and the cube, known from the scan and the ops the board reported "
                  "done, is planned again.")
        t = time.perf_counter()
        new = self.solve(state, self.budget)
        self.stage("re-plan", t, time.perf_counter())
        self.report.replans.append(f"after plan op {done} of {len(plan.ops)} (the board reset with gripper(s) {across} "
                                   f"at 90, put back at 0 in the air): {new.moves or '(already solved)'} "
                                   f"({len(new.ops)} ops, {new.cost_ms} ms on the model)")
        self.ops_before_replan += done
        self.scanned, self.mark, self.plan = state, len(robot.done_ops), new
        self.report.ops = self.ops_before_replan + len(new.ops)
        return self.ops(new.ops)

    def restore(self, scanned: str, plan) -> None:
        """Grippers a plan left at 90 back to 0 (off the clock, as docs/robot3.md counts a plan)."""
        restore = self.restore_ops(scanned, plan)
        if restore:
            self.ops(restore)

    def execute(self, scanned: str, plan) -> None:
        total, estop = len(plan.ops), self.options.estop_at
        if estop is not None and not 1 <= estop <= total:
            self.tell(f"--estop-at {estop} is outside this plan's ops 1..{total}: that stop is not made in this run")
            estop = None
        if (self.options.disconnect_at or 0) > total:  # as the 2x2x2 run says it: no cable is pulled
            self.tell(f"--disconnect-at {self.options.disconnect_at} is outside this plan's ops 1..{total}: that "
                      "fault is not made in this run")
        ops = plan.ops if estop is None else plan.ops[:max(0, estop - 1)]
        robot = self.robot
        t = time.perf_counter()
        robot.plan_op_done(0)  # --disconnect-at 1: the cable is pulled before the first op
        try:
            try:
                durations = self.ops(ops, robot.plan_op_done, replan=True)
            except _Replan as again:
                if estop is not None:
                    self.tell(f"--estop-at {estop} counted the first plan's ops: after the plan was made again, that "
                              "stop is not made in this run")
                    estop = None
                durations = [None] + self.replan(str(again))  # the measured time of a re-planned run is not one plan's
        except Stop3:
            self.stage("execute (stopped)", t, time.perf_counter())
            raise
        if estop is not None:
            robot.press_estop()  # the board latches it before op `estop` was sent: that op never moves
            self.stage("execute (stopped)", t, time.perf_counter())
            k = len(ops)
            state = self.state_after(scanned, ops)
            raise Stop3(f"emergency stop during plan op {k + 1} of {total} (SIMULATED --estop-at: the e-stop input "
                        "is pressed as that op is due, before it was sent)",
                        f"{state} (after plan op {k} of {total}; op {k + 1}, {describe_op(plan.ops[k])}, did not move)",
                        "check the cube sits straight in the grippers, then run again (the cube is rescanned)",
                        estop=True, possible=[state])
        done_at = time.perf_counter()
        self.stage("execute", t, done_at)
        self.report.button_to_solved_ms = round(self.ms(done_at), 1)
        if robot.uses_emulator and all(d is not None for d in durations):  # the board's `done` lines: measured
            self.report.measured_ms = round(sum(durations), 1)  # (a mock's are its own model: not a measurement)


class _Replan(Exception):
    """The board reset with a gripper at 90: the plan's rest no longer fits (the state is known)."""


class _Refused(Exception):
    """A scan the decoder would not trust (rescanned, never guessed)."""


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
    from ..vision.regions3 import calibration_problem3

    problem = calibration_problem3(config)  # a calibration file that does not fit: said before anything starts
    if problem:
        print(f"cube-robot run --puzzle 3x3x3: {problem} (nothing moved)", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    from ..solver3 import tables as tables3

    problem = tables3.not_built(tables3.directory_for(config))  # else a traceback once the robot has started
    if problem:
        print(f"cube-robot run --puzzle 3x3x3: {problem} (nothing moved)", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    tell_maker = (lambda text: print(simulated(text), file=sys.stderr)) if options.json else \
        (lambda text: print(simulated(text)))
    from . import log

    report = run_puzzle3(config, options.replace(sim=True), tell_maker)
    print(json.dumps(report.to_json()) if options.json else simulated(report.format()))
    log.append(config, report)  # every run goes into the solve log (a failed write is said, never fatal)
    return report.exit_status()
