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
from typing import Any, Callable

from ..config_types import Config
from ..exit_status import ExitStatus
from . import report as report_words
from .options import RunOptions
from .report3 import NOT_SOLVED, SOLVED, STOPPED, Run3Report, by_centres, is_solved3, net3  # noqa: F401
from .stops3 import Stop3, describe_op, jam_stop, link_stop, rehearse

__all__ = ["Run3Report", "Stop3", "describe_op", "run_puzzle3", "run_command3", "refused_options3"]

# Options of `cube-robot run` that the 3x3x3 run cannot honour yet, and why (said when refused).
REFUSED3 = (
    ("--port", lambda o: o.port, "no real 3x3x3 robot is supported yet: run it with --sim"),
    ("--resume", lambda o: o.resume, "a simulated robot starts with no alarm"),
    ("--arms-straight", lambda o: o.arms_straight, "the simulated arms start square"),
)



def refused_options3(options: RunOptions) -> list[str]:
    """'--flag: why' for every given option the 3x3x3 run cannot honour."""
    return [f"{flag}: {why}" for flag, given, why in REFUSED3 if given(options)]


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
                        light=robot.camera.light_note,
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
        self.cycle_at_press: int | None = None  # the emulator's cycle at the start press (its lag: emulator_lag)

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
        emu = getattr(robot, "emu", None)
        self.cycle_at_press = emu.cycle() if emu is not None else None
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

    def scan_ops(self, ops, on_sent=None) -> None:
        """A scan's ops before the cube was read: a stop names no state (the scan's ops turn only the whole cube)."""
        from ..link.errors import LinkError
        from ..link.reset3 import ArmAcrossAfterResetError
        from ..sim.virtual_robot3 import Jam3

        try:
            try:
                self.robot.do_ops(ops, on_sent=on_sent)
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
        """One whole scan: each view's ops then its frame, the finish ops (the decode runs meanwhile); its facelets."""
        robot, camera = self.robot, self.robot.camera
        move = self.ops if self.scanned is not None else self.scan_ops  # the check rescan moves a known cube
        robot.before_scan(attempt)
        sampled: list = []  # each view's stickers are sampled on a thread while the arms present the next view
        waiting: list = []  # a frame to sample, handed to the sampler once the next view's first line went out
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="scan3-sample") as sampler:

            def sample_waiting() -> None:  # the sampler's CPU would delay the next line if it started first
                sampled.extend(sampler.submit(self.sample_view, k, frame) for k, frame in waiting)
                waiting.clear()

            for view_index, view in enumerate(self.sequence.views):
                if view_index == 0:  # later views: the last capture recorded the state, and nothing moved since
                    camera.note_state()
                start = camera.motion_started = time.perf_counter()
                move(view.ops, on_sent=sample_waiting)
                camera.motion_ended()
                end = time.perf_counter()
                # Still since the view's last `done` arrived (the settle counts from then), not since the
                # simulation's replay of the pins that followed it.
                frame = camera.capture(view.name, still_since=robot.last_done_at if view.ops else None)
                got = time.perf_counter()
                waiting.append((view_index, frame))
                self.stage(f"{prefix}{view.name}: motion", start, end)
                self.stage(f"{prefix}{view.name}: frame wait", end, got)
            decoding: list = []

            def decode_while_finishing() -> None:  # every frame is in: decode while the arms go back to rest
                sample_waiting()
                decoding.append(sampler.submit(self.decode_samples, list(sampled)))

            t = time.perf_counter()
            move(self.sequence.finish, on_sent=decode_while_finishing)
            if not decoding:  # a resumed link's lines are not first sends
                decode_while_finishing()
            camera.note_state()
            t_decode = time.perf_counter()
            self.stage(f"{prefix}finish: motion", t, t_decode)
            try:
                return decoding[0].result()
            finally:
                self.stage(f"{prefix}decode", t_decode, time.perf_counter())  # what the finish motion did not cover

    @staticmethod
    def _median_readings(sampled) -> Any:
        import numpy as np

        samples: dict = {}
        for future in sampled:
            for final, rgb in future.result():
                samples.setdefault(final, []).append(rgb)
        return np.array([np.median(samples[i], axis=0) for i in range(54)])

    def decode_samples(self, sampled) -> str:
        """The scan's 54 facelets from every view's samples (on the sampler, after them); a refusal: _Refused."""
        from ..vision.decode3 import decode3
        from ..vision.readings import VisionError

        try:
            return decode3(self._median_readings(sampled), self.colours, self.config).facelets
        except VisionError as exc:
            raise _Refused(str(exc)) from None

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

    def ops(self, ops, on_done=None, replan: bool = False, on_sent=None) -> list:
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
            return robot.do_ops(ops, on_done, on_sent=on_sent)
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
        last = robot.last_done_at  # the last `done` came in: the robot's part ends there, not after the sim's replay
        done_at = last if ops and last is not None and last >= t else time.perf_counter()
        self.stage("execute", t, done_at)
        self.report.button_to_solved_ms = round(self.ms(done_at), 1)
        self.emulator_lag()
        if robot.uses_emulator and all(d is not None for d in durations):  # the board's `done` lines: measured
            self.report.measured_ms = round(sum(durations), 1)  # (a mock's are its own model: not a measurement)


    def emulator_lag(self) -> None:
        """How far the emulated board's clock fell behind the host's since the start press (simavr --realtime
        runs flat out to catch up when the host starves it: the host's slowness, not the robot's)."""
        from ..sim import pinlog

        emu = getattr(self.robot, "emu", None)
        if emu is None or self.cycle_at_press is None:
            return
        cycle = emu.cycle()
        wall_ms = self.ms(time.perf_counter())
        self.report.emulator_lag_ms = round(wall_ms - (cycle - self.cycle_at_press) * 1000.0 / pinlog.CYCLES_PER_SECOND, 1)


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
