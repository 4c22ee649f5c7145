"""One run on any robot: wait for start -> scan (retry doubtful scans) -> solve -> execute -> check.

    report = RunReport(time=..., mode=...)
    run_robot(config, robot, options, say, report, finish)   # never raises; the report says what happened

Any failure stops the robot (leaving the `with robot:` block closes the link)
and is reported with advice and, when known, the cube's state.
"""

from __future__ import annotations

import time

from ..checks import RobotNotReady
from ..paths import make_advice
from .options import RunOptions
from .report import NOT_STARTED, STOPPED, RunReport
from .waterfall import Waterfall


# The cube state claimed by a stop before the start press: nothing before it turns a layer (the
# pre-flight homes arms in the air; loading only opens and closes grippers).  bench/faults.py checks
# this claim against the simulated cube as it was put in.
CUBE_AS_PUT_IN = "as it was put in: no layer turned, not read yet"
CUBE_STATE_NOT_KNOWN = "NOT KNOWN"  # the stop cannot name one state (e.g. an action refused, later ones ran)
CUBE_NOT_STARTED = "as it was put in: nothing moved"  # a run that did not start (no robot, a failed check)


class RunFailed(RuntimeError):
    """A run that stopped safely; the message says what to do next."""

    def __init__(self, message: str, advice: str, state: str | None = None):
        super().__init__(message)
        self.advice, self.state = advice, state


def run_robot(config, robot, options: RunOptions, say, report: RunReport, finish) -> RunReport:
    """Run the pipeline on `robot`, then finish(); any failure is reported with advice."""
    pipeline = Pipeline(config, robot, say, options)
    try:
        with robot:
            report.firmware = robot.backend
            try:
                pipeline.run(report)
                finish()
            except KeyboardInterrupt:
                pipeline.learn_after_stop(emergency_stop(robot))  # the real-time stop byte first
                raise
    except KeyboardInterrupt:  # Ctrl-C: an emergency stop; report what is known, then the run is logged
        report.outcome = STOPPED
        report.errors.append("emergency stop: Ctrl-C; the stop byte was sent to the robot")
        report.cube_state_after_stop = pipeline.cube_state_now()
        report.stopped_at_action = pipeline.completed if pipeline.plan is not None else None
        report.advice = ("check the cube sits straight in the grippers (turn a layer stopped part-way to the "
                         "nearest quarter), run 'cube-robot link reset-alarm', then run again (the cube is rescanned)")
    except RobotNotReady as exc:  # the named robot or a pre-flight check: nothing moved
        report.errors.extend(getattr(exc, "failed", None) or [str(exc)])
        report.advice = "fix what the failed checks name, then run again ('cube-robot doctor' runs the same checks)"
        report.outcome = NOT_STARTED
        report.cube_state_after_stop = CUBE_NOT_STARTED
    except RunFailed as exc:
        report.errors.append(str(exc))
        report.advice = exc.advice
        if exc.state:
            report.cube_state_after_stop = exc.state
        elif not pipeline.started:  # e.g. nobody pressed start: nothing turned the cube
            report.cube_state_after_stop = f"{CUBE_AS_PUT_IN} (the start button was not pressed)"
    except Exception as exc:  # any failure: the robot stopped (closing the link); say what happened
        report.errors.append(f"{type(exc).__name__}: {exc}")
        report.advice = advice_for(exc)
        if not pipeline.started:  # nothing turned the cube yet: the state is known
            report.cube_state_after_stop = f"{CUBE_AS_PUT_IN} (the stop came before the start button was pressed)"
    finally:
        if report.firmware is None:  # the robot did not start (a pre-flight check failed): name it all the same
            report.firmware = getattr(robot, "backend", None)
        pipeline.wind_up(report)
    return report


def emergency_stop(robot):
    """Send the real-time stop byte (the firmware decelerates, flushes its queue and latches an alarm),
    then learn from the board what completed; returns the link's last stream progress, or None."""
    link = getattr(robot, "link", None)
    if link is not None:
        try:
            return link.stop_and_learn()
        except Exception:  # the link is already gone: closing it stops the robot too
            pass
    return None


def advice_for(exc) -> str:
    from ..link.errors import HandshakeError, LinkError
    from ..sim.emulator import EmulatorError

    if isinstance(exc, HandshakeError):
        return "check the serial port, the cable and that the board runs cube-robot firmware (cube-robot doctor)"
    if isinstance(exc, LinkError):
        return "check the USB cable and the robot's power, then run again"
    if isinstance(exc, EmulatorError):
        return f"the firmware emulator failed: run '{make_advice('harness')}' to see the build error"
    return "see the error above; 'cube-robot doctor' checks the whole setup"


def link_lost_line(exc, when: str) -> str:
    """The live line when the link is lost mid-run, for the person at the robot: what happened, what
    to do now, and that the run goes on by itself (the link's exception also names an API call for
    programs, `api_hint`, which is not theirs)."""
    return (f"\nSerial link lost {when}: {exc.args[0].splitlines()[0]}. Reconnecting: plug the USB cable "
            "back in if it came out and leave the cube in the grippers; the run goes on by itself once the "
            "robot answers...")


class ResumingPresenter:
    """A LinkPresenter whose view stream is resumed after a lost connection (as the plan's is)."""

    def __init__(self, inner, say, report: RunReport):
        self.inner, self.say, self.report = inner, say, report

    def present(self, view) -> None:
        from ..link.errors import DisconnectedError, SilentBoardError

        try:
            self.inner.present(view)
        except (DisconnectedError, SilentBoardError) as exc:
            self.say(link_lost_line(exc, "during a scan"))
            self.inner.link.resume()
            self.report.errors.append(f"recovered: {type(exc).__name__} during a scan (the link was resumed)")
            if self.inner.after:
                self.inner.after()

    @property
    def last_charged(self):  # the inner presenter's (robot/link/presenter.py LinkPresenter)
        return getattr(self.inner, "last_charged", None)

    @property
    def still_since(self):  # the inner presenter's; None after a resumed view (the board may have reset)
        return getattr(self.inner, "still_since", None)


def stop_advice(exc) -> str:
    """What to do after a stop while the plan ran, by its cause."""
    from ..link.errors import (AlarmError, CommandRejectedError, CubeStateUncertainError, DisconnectedError,
                               HandshakeError, PortError, RefusedMidStreamError, SilentBoardError)
    from ..link.protocol import ALARM_TEXT, AlarmCode

    rerun = "then run again (the cube will be rescanned)"
    if isinstance(exc, RefusedMidStreamError):
        why = exc.code.name if exc.code is not None else "its answer lost"
        return (f"the firmware refused {exc.command!r} ({why}) while later actions were already queued, "
                f"and action(s) {exc.ran_after} ran: check the cube sits straight in the grippers and the firmware "
                f"version (cube-robot doctor), {rerun}")
    if isinstance(exc, CubeStateUncertainError):
        part = getattr(exc, "cut_part", None)
        if part is None:  # not a cut: the board came back without its memory
            return ("the board lost its memory (a power cycle, or another program reset it): the cube state "
                    f"is not known for sure; check the cube sits straight in the grippers, {rerun}")
        progress = exc.progress
        command = progress.commands[progress.interrupted] if progress and progress.interrupted is not None else ""
        done, total = part
        square = command.startswith("GRIP") or (command.startswith("TURN") and done in (0, total))
        clear = "clear the alarm (cube-robot link reset-alarm)"
        if square:
            return (f"the board reset during {command}, but its memory says no layer was left between positions: "
                    f"check the cube sits straight in the grippers, {clear}, {rerun}")
        return (f"the board reset during {command or 'a move'} (the layer stopped between positions): turn that "
                "layer by hand to the nearest quarter position so the cube sits straight, then run "
                "'cube-robot run --resume' (it clears that alarm and rescans the cube)")
    if isinstance(exc, AlarmError):
        if exc.code == AlarmCode.ESTOP_INPUT:
            return f"release the emergency stop, check the cube sits straight in the grippers, {rerun}"
        if exc.code == AlarmCode.ESTOP_BYTE:
            return ("the board received the stop byte '!' (the host sends it on a stop; otherwise line noise "
                    f"made it): check the cube sits straight in the grippers and the USB cable, {rerun}")
        if exc.code in (AlarmCode.HOME_NOT_FOUND, AlarmCode.HOME_STUCK):
            return (f"alarm {exc.code.name} ({ALARM_TEXT[exc.code]}): check that arm's homing sensor and its "
                    f"wiring (cube-robot home), clear the alarm (cube-robot link reset-alarm), {rerun}")
        return (f"alarm {exc.code.name} ({ALARM_TEXT.get(exc.code, 'unknown alarm')}): check the cube sits straight "
                f"in the grippers, clear the alarm (cube-robot link reset-alarm), {rerun}")
    if isinstance(exc, CommandRejectedError):
        return (f"the firmware refused {exc.command!r} ({exc.code.name}): the actions before it completed; "
                f"check the firmware version (cube-robot doctor) and the config, {rerun}")
    if isinstance(exc, HandshakeError):
        return f"the board came back but the link is too noisy to talk to it: check the USB cable, {rerun}"
    if isinstance(exc, (DisconnectedError, SilentBoardError, PortError)):
        return f"the serial port did not come back: reconnect the USB cable and check the robot's power, {rerun}"
    return f"check the USB cable and the robot's power, {rerun}"


def action_label(action) -> str:
    """A plan action as the plan prints it: 'grip RL', 'R+L\''."""
    from ..plan import Grip

    return f"grip {action.pair}" if isinstance(action, Grip) else action.notation()


def interrupted_note(index: int, action, stopped: str) -> str:
    """What a stop part-way through plan action `index` means for the cube, and what to do."""
    from ..plan import Grip

    if isinstance(action, Grip):
        return (f"action {index + 1} ({action_label(action)}) {stopped} stopped part-way: a grip turns no layer; "
                "check the cube sits straight in the grippers")
    return (f"action {index + 1} ({action_label(action)}) {stopped} stopped part-way: turn that layer by hand to "
            "the nearest quarter position")


def interrupted_action(progress) -> dict:
    """The JSON of the action a stop interrupted: which, and (after a reset) how far it got."""
    from ..link.stream import describe_part

    k = progress.interrupted
    data = {"action": k + 1, "command": progress.commands[k], "completed_before": progress.completed}
    if progress.interrupted_part is not None:
        done, total = progress.interrupted_part
        data.update(parts_done=done, parts_total=total, where=describe_part(progress.commands[k], done, total))
    return data


class Pipeline:
    """The stages of one run, on any robot (robot/run/robot.py Robot)."""

    def __init__(self, config, robot, say, options: RunOptions):
        self.config, self.robot, self.say, self.options = config, robot, say, options
        # How far the run got, for the cube state after an emergency stop (cube_state_now).
        self.scan = self.plan = self.profile = self.scan_taken = self.scan_result = self.ready = None
        self.completed = 0  # plan actions the robot confirmed done
        self.started = False  # the start button was pressed
        self.executing = False

    def learn_after_stop(self, progress) -> None:
        """After the stop byte: the plan actions the board completed, `done` lines lost or unread included."""
        from ..link.protocol import action_command

        if progress is not None and self.executing and self.plan is not None \
                and progress.commands == [action_command(a) for a in self.plan.actions]:
            self.completed = max(self.completed, progress.completed)

    def cube_state_now(self) -> str:
        """The cube's state as far as it is known, in words (for a stop at any moment)."""
        from ..plan import replay

        if self.scan is None:
            when = "before the scan finished" if self.started else "before the start button was pressed"
            return f"not read yet: the stop came {when} (the cube is as it was put in)"
        if self.plan is None:
            return f"{self.scan.to_facelets(self.scan_colours)} (as scanned; no plan action ran)"
        state, _ = replay(self.scan, self.plan.actions[:self.completed], self.profile)
        note = f"after plan action {self.completed} of {len(self.plan.actions)}"
        if self.executing and self.completed < len(self.plan.actions):
            note += "; " + interrupted_note(self.completed, self.plan.actions[self.completed], "may have been")
        return f"{state.to_facelets(self.scan_colours)} ({note})"

    def run(self, report: RunReport) -> None:
        from ..vision.scan import ScanSequence

        from .ready import prepare

        robot = self.robot
        if getattr(robot, "link", None) is not None:  # the link's live messages (a reconnect, a noisy line)
            robot.link.reconnect_log = lambda text: self.say(f"\n{text}")
        sequence = ScanSequence.from_config(self.config)
        # Tables, camera and handshake before the start press: nothing of them is timed after it.
        self.ready = ready = prepare(self.config, robot)
        pressed_at = self._wait_start()
        if getattr(robot.presenter, "still_since", None) is not None:
            robot.presenter.still_since = pressed_at  # the button on the robot's frame shook it: settle from here
        self.started = True
        self.waterfall = Waterfall(pressed_at)  # every stage on this clock (robot/run/waterfall.py)
        report.waterfall = self.waterfall.stages
        self._run(report, sequence, ready.solver, pressed_at=pressed_at)

    def wind_up(self, report: RunReport) -> None:
        """After the run, whatever happened (after any stop, never before it): release the camera and
        name the scan's pictures, which were written while the plan ran (robot/vision/adaptive.py)."""
        from ..vision.adaptive import wait_pictures

        if self.ready is not None:
            self.ready.release()
        # Stop bytes the link found to be line noise and cleared (robot/link/driver.py _noise_stop): they
        # came before a stop, whose error stays last (the result line names it).
        noise = getattr(getattr(self.robot, "link", None), "noise_stops", None) or []
        at = len(report.errors) - 1 if report.advice and report.errors else len(report.errors)
        report.errors[at:at] = noise
        if self.scan_result is not None:
            report.scan_images = [str(p) for p in wait_pictures(self.scan_result)]
            self._name_readings(report)
            if getattr(self.scan_result, "picture_error", None):
                report.warnings = (report.warnings or []) + [self.scan_result.picture_error]

    def _name_readings(self, report: RunReport) -> None:
        """The scan's readings file, beside its pictures, and the command that decodes it as the run did."""
        from pathlib import Path

        from ..vision.scan import READINGS_FILE

        if not report.scan_images:
            return
        readings = Path(report.scan_images[0]).parent / READINGS_FILE
        if readings.exists():
            report.scan_readings = str(readings)
            uncalibrated = " --no-calibration" if getattr(self.scanner, "calibration", None) is None else ""
            report.scan_replay = f"cube-robot vision decode{uncalibrated} {readings}"

    def _wait_start(self) -> float:
        # A simulated robot presses its own emulated button (robot.start_note says so).
        self.say(getattr(self.robot, "start_note", None) or "Waiting for the start button (on the robot, or Enter here)...")
        if not self.robot.wait_start(self.config["run"]["start_timeout_s"]):
            raise RunFailed("the start button was not pressed in time", "press start on the robot (or Enter)")
        return time.perf_counter()  # timing mark: button_to_solved_ms starts here

    def _run(self, report: RunReport, sequence, solver, pressed_at: float) -> None:
        from ..link.errors import AlarmError, LinkError, RefusedMidStreamError
        from ..plan import charged_from, replay
        from ..progress import ProgressBar

        robot, say = self.robot, self.say
        report.tables_load_ms = self.ready.tables_load_ms

        try:
            scanned, scan = self._scan(report)
        except AlarmError as exc:
            progress_info = exc.progress.describe() if exc.progress else ""
            raise RunFailed(exc.args[0].splitlines()[0], "release the emergency stop and run again: the cube "
                            "will be scanned again", f"not read yet: the alarm came during the scan. {progress_info}"
                            ) from None
        self.scan, self.scan_colours = scan.cubie, scan.colours
        taken = self.scan_taken or sequence  # an adaptive scan may stop before the last view
        start_grip = taken.final_grip or None
        t = time.perf_counter()
        plan = solver.solve(scanned, start_grip=start_grip)
        self.waterfall.add("solve", t, time.perf_counter())
        report.solve_ms = round(plan.solve_ms, 3)
        report.plan = plan.to_json()
        report.predicted_machine_ms = plan.cost_ms
        self.plan, self.profile = plan, solver.profile
        for flag, at in (("--estop-at", self.options.estop_at), ("--disconnect-at", self.options.disconnect_at)):
            if at is not None and not 1 <= at <= len(plan.actions):
                message = (f"{flag} {at} is outside this plan's actions 1..{len(plan.actions)}: "
                           "that fault is not made in this run")
                say(message)
                report.warnings = (report.warnings or []) + [message]
        say(f"Plan: {plan.moves or '(already solved)'}  ({plan.cost_ms} ms predicted, found in {plan.solve_ms:.2f} ms)")

        bar = ProgressBar(len(plan.actions), "Solving", enabled=None)

        first_done = []

        def progress(p):
            if p.completed and not first_done:
                first_done.append(time.perf_counter())
            self.completed = p.completed
            bar.update(p.completed, f"{p.completed}/{p.total} actions")
            robot.action_done(p.completed)

        t = time.perf_counter()
        self.executing = True
        try:
            result = self._execute(plan, progress, report)
        except LinkError as exc:
            bar.finish()
            report.link_stats = dict(robot.link.stats)
            progress_info = exc.progress
            completed = progress_info.completed if progress_info else 0
            state, _ = replay(scan.cubie, plan.actions[:completed], solver.profile)
            facelets = state.to_facelets(scan.colours)
            note = f"after plan action {completed} of {len(plan.actions)}"
            if isinstance(exc, RefusedMidStreamError):  # no prefix of the plan is the cube: name what is known
                refused = f"action {exc.action}" if exc.action is not None else f"{exc.command!r}"
                state_said = (f"{CUBE_STATE_NOT_KNOWN}: {facelets} {note}; then {refused} was refused and did "
                              f"nothing, and action(s) {exc.ran_after} ran after it")
            else:
                if progress_info is not None and progress_info.interrupted is not None:
                    k = progress_info.interrupted
                    report.interrupted_action = interrupted_action(progress_info)
                    where = report.interrupted_action.get("where")  # a reset cut it: the board says how far
                    note += (f"; action {k + 1} ({action_label(plan.actions[k])}) was cut by a reset: {where}"
                             if where else "; " + interrupted_note(k, plan.actions[k], "was"))
                state_said = f"{facelets} ({note})"
            report.stopped_at_action = completed
            message = exc.args[0].splitlines()[0] if isinstance(exc, AlarmError) else str(exc)
            raise RunFailed(message, stop_advice(exc), state_said) from None
        bar.finish()
        self.executing, self.completed = False, len(plan.actions)
        done_at = time.perf_counter()  # timing mark: the last action's `done` has arrived
        learn = getattr(robot.presenter, "learn", None)
        if learn is not None:  # the plan moved the cube past the presenter: which pair holds now, from the
            learn()  # board (a plan resumed after a lost cable may have left it otherwise than it says)
        report.execute_ms = round((done_at - t) * 1000, 1)
        report.button_to_solved_ms = round((done_at - pressed_at) * 1000, 1)
        if first_done:
            self.waterfall.add("execute: first action", t, first_done[0])
        # Measured like the plan's cost: the free first grip is not counted; a lost `done` line is.
        charged = result.durations_ms[charged_from(plan.actions):]
        unknown = sum(1 for d in charged if d is None)
        report.measured_machine_ms = None if unknown else sum(charged)  # never a partial sum
        self.waterfall.add("execute", t, done_at, report.measured_machine_ms)  # floor: the plan's arm time
        report.unknown_time_actions = unknown or None
        report.link_stats = dict(result.stats) if result.stats else {}
        report.execute_ok = True
        if self.options.verify and self.config["run"]["verify_after"]:
            t = time.perf_counter()
            self._verify(report)
            self._mark_scan("verify: ")
            self.waterfall.add("verify", t, time.perf_counter())
            report.link_stats.update(robot.link.stats)  # a reconnect (and board reset) during the rescan
        else:
            reason = "--no-verify" if not self.options.verify else "run.verify_after is false"
            report.verify = f"not checked: {reason}"

    def _execute(self, plan, progress, report: RunReport):
        """Stream the plan; a lost port is resumed (the board may have reset) and said so only if it worked."""
        from ..link.errors import DisconnectedError, SilentBoardError

        link = self.robot.link
        try:
            return link.run(plan, progress=progress)
        except (DisconnectedError, SilentBoardError) as exc:
            self.say(link_lost_line(exc, "while the plan ran"))
            result = link.resume()
            report.errors.append(f"recovered: {type(exc).__name__} (the link was resumed)")
            return result

    def _scan(self, report: RunReport):
        from .. import cube
        from ..vision import adaptive
        from ..vision.scan import Scanner

        attempts = self.config["run"]["scan_attempts"]
        presenter = self.robot.presenter
        if presenter is not None and hasattr(presenter, "link"):  # a lost cable mid-scan is resumed too
            presenter = ResumingPresenter(presenter, self.say, report)
        self.scanner = scanner = Scanner(self.config, camera=self.robot.camera, presenter=presenter,
                                         calibration=self.robot.calibration, regions=self.robot.regions)
        t = time.perf_counter()
        for attempt in range(1, attempts + 1):
            self.robot.before_scan(attempt)
            result = adaptive.scan(scanner)  # stops after the view that makes the decoder sure
            self._mark_scan(f"scan {attempt}: " if attempt > 1 else "")
            if result.decoded is not None:
                report.scan_attempts = attempt
                self.scan_taken = result.sequence  # None: every view
                self.scan_result = result  # its pictures may still be being written
                report.scan_views = len((result.sequence or scanner.sequence).views)
                report.recognition_ms = round((time.perf_counter() - t) * 1000, 1)
                report.scan_read_ms = round(result.read_ms, 2)
                report.facelets = result.decoded.facelets
                report.confidence = round(float(result.decoded.confidence), 3)
                report.scan_images = [str(p) for p in result.images]
                report.warnings = list(result.warnings)
                self.say(f"Scanned: {result.decoded.facelets} (confidence {result.decoded.confidence:.2f}, "
                         f"attempt {attempt})")
                return result.decoded.facelets, cube.parse_facelets(result.decoded.facelets)
            report.errors.append(f"scan attempt {attempt}: {result.error}")
            report.failed_scan_images = (report.failed_scan_images or []) + [
                {"attempt": attempt, "error": str(result.error), "images": [str(p) for p in result.images]}]
            self.say(f"Scan attempt {attempt} doubtful ({result.error}); rescanning...")
        raise RunFailed(f"the cube could not be read in {attempts} attempts: {result.error}",
                        "check the light (no glare, even brightness) and run 'cube-robot calibrate colours'")

    def _mark_scan(self, prefix: str = "") -> None:
        """The last scan's stages (camera open, each view's motion and frame, decode) in the waterfall."""
        from ..plan import RobotProfile

        self.waterfall.add_scan(getattr(self.scanner, "marks", None), RobotProfile.from_config(self.config),
                                prefix, getattr(self.robot.camera, "timing", None))

    def _verify(self, report: RunReport):
        from .. import cube

        self.robot.before_scan(None)
        result = self.scanner.scan()  # its presenter resumes after a lost connection, like the plan
        report.verify_images = [str(p) for p in result.images] or None
        if result.decoded is None:
            report.verify = f"rescan refused: {result.error}"
            return
        solved = cube.parse_facelets(result.decoded.facelets).cubie.is_solved()
        report.verify = "rescan shows solved" if solved else "rescan shows NOT solved"
        report.verified_solved = solved
