"""One run on any robot: wait for start -> scan (retry doubtful scans) -> solve -> execute -> check.

    bus = EventBus()
    report = RunReport.start(started).subscribe(bus)   # started: the run's events.RunStarted; the report folds them
    bus.publish(started)
    run_robot(config, robot, options, tell_maker, bus, finish)   # never raises; the events say what happened

Any failure stops the robot (leaving the `with robot:` block closes the link)
and is reported with advice and, when known, the cube's state.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable

from ..checks import PreflightFailed, RobotNotReady
from ..errors import DeviceError
from . import events as ev
from .events import EventBus, ProgressLine
from .options import RunOptions
from .report import INTERRUPTED, NOT_CHECKED, NOT_SOLVED, NOT_STARTED, STOPPED
from .waterfall import Waterfall

from .robot import Robot, StopSent, board_idle, emergency_stop, stop_name
from .stop_words import (action_label, advice_for, alarm_words, interrupted_action, interrupted_note, link_lost_line,
                         stop_advice)

if TYPE_CHECKING:
    from ..arms.view_mover import ArmViewMover
    from ..link.driver import Link
    from ..plan import Plan, RobotProfile
    from ..scan_sequence import ScanSequence
    from ..vision.decode import DecodeResult
    from ..vision.scan import Scanner, ScanResult
    from .ready import Ready


# The cube state claimed by a stop before the start press: nothing before it turns a layer (the
# pre-flight homes arms in the air; loading only opens and closes grippers).  bench/faults.py checks
# this claim against the simulated cube as it was put in.
CUBE_AS_PUT_IN = "as it was put in: no layer turned, not read yet"
CUBE_STATE_NOT_KNOWN = "NOT KNOWN"  # the stop cannot name one state (e.g. an action refused, later ones ran)
CUBE_NOT_STARTED = "as it was put in: nothing moved"  # a run that did not start (no robot, a failed check)

# A simulated run's advice: its virtual robot is gone when the run ends, so a command that talks to the
# robot (reset-alarm, release, run --resume) would find none; the advice is what to do on a real robot.
ON_A_REAL_ROBOT = "SIMULATED: the virtual robot ended with the run; on a real robot you would now: "


# The commands a stop's advice names, and what a person at the panel (which holds the port) does instead.
KEPT_ROBOT_WORDS = (("run 'cube-robot link reset-alarm'", "press Clear alarm in the panel"),
                    ("(cube-robot link reset-alarm)", "(Clear alarm in the panel)"),
                    ("'cube-robot run --resume' (it clears that alarm and rescans the cube)",
                     "press Clear alarm, then Start, in the panel (the cube is rescanned)"))


# After this host's own stop byte (not line noise): no cable to check.
HOST_STOP_ADVICE = ("check the cube sits straight in the grippers (turn a layer stopped part-way to the nearest "
                    "quarter), clear the alarm (cube-robot link reset-alarm), then run again (the cube is rescanned)")


class RunFailed(RuntimeError):
    """A run that stopped safely; the message says what to do next."""

    def __init__(self, message: str, advice: str, state: str | None = None, outcome: str | None = None):
        super().__init__(message)
        self.advice, self.state, self.outcome = advice, state, outcome


def run_robot(config, robot: Robot, options: RunOptions, tell_maker: Callable[[str], None], bus: EventBus,
              finish: Callable[[], None]) -> None:
    """Run the pipeline on `robot`, then finish(); any failure is published (a Stopped event) with advice."""
    pipeline = Pipeline(config, robot, tell_maker, options, bus)
    publish = bus.publish
    progress_line = bus.subscribe(ProgressLine())  # the live bar while the plan streams (a terminal only)
    named = False  # the robot's backend is in the report
    try:
        with robot:
            publish(ev.RobotNamed(robot.backend))
            named = True
            try:
                pipeline.run()
                finish()
            except KeyboardInterrupt:
                # A stop that would stop nothing latches no alarm: only while actions stream, or when the
                # board is not idle with nothing queued, the real-time stop byte goes first.
                pipeline.stopped_nothing = not pipeline.streaming and board_idle(robot)
                if not pipeline.stopped_nothing:
                    pipeline.learn_after_stop(emergency_stop(robot))
                if pipeline.executing and pipeline.execute_started is not None:  # the stage the stop cut short
                    pipeline.waterfall.add("execute (stopped)", pipeline.execute_started, time.perf_counter())
                raise
    except KeyboardInterrupt as exc:  # Ctrl-C (or the panel's Stop): report what is known, then the run is logged
        who = stop_name(exc)
        if not named:  # it came while the robot started, which stopped it itself (StopSent: with the stop byte)
            pipeline.stopped_nothing = not isinstance(exc, StopSent)
        stopped_at = pipeline.completed if pipeline.plan is not None else None
        if pipeline.stopped_nothing:
            when = ("while the robot was starting (before the start press)" if not named else
                    "before the start press, while nothing was moving" if not pipeline.started else
                    "while nothing was moving (the board was idle with nothing queued)")
            if pipeline.verifying:
                when = "during the check rescan (the plan had run to the end), " + when
            publish(ev.Stopped(
                errors=(f"{who} {when}: no stop byte was sent and no alarm is latched",), outcome=INTERRUPTED,
                cube_state=pipeline.cube_state_now(), stopped_at_action=stopped_at,
                advice="nothing to clear: run again when ready" + (" (the cube is rescanned)" if pipeline.started
                                                                   else "")))
        elif pipeline.verifying:  # the plan had run to the end: the rescan's motions turn the whole cube
            publish(ev.Stopped(
                errors=(f"emergency stop: {who} during the check rescan (the plan had run to the end); the stop "
                        "byte was sent to the robot",), outcome=STOPPED,
                cube_state=pipeline.cube_state_now(), stopped_at_action=stopped_at,
                advice=pipeline.advice("check the cube sits straight in the grippers (the rescan turns the whole "
                                       "cube, so no layer was left between positions), run 'cube-robot link "
                                       "reset-alarm', then run again to check it (the cube is rescanned)")))
        else:
            publish(ev.Stopped(
                errors=(f"emergency stop: {who}; the stop byte was sent to the robot",), outcome=STOPPED,
                cube_state=pipeline.cube_state_now(), stopped_at_action=stopped_at,
                advice=pipeline.advice("check the cube sits straight in the grippers (turn a layer stopped "
                                       "part-way to the nearest quarter), run 'cube-robot link reset-alarm', then "
                                       "run again (the cube is rescanned)")))
    except RobotNotReady as exc:  # the named robot or a pre-flight check: nothing moved
        failed = exc.failed if isinstance(exc, PreflightFailed) else []
        publish(ev.Stopped(
            errors=tuple(failed or [str(exc)]), outcome=NOT_STARTED, cube_state=CUBE_NOT_STARTED,
            advice="fix what the failed checks name, then run again ('cube-robot doctor' runs the same checks)"))
    except RunFailed as exc:
        state = exc.state
        if not state and not pipeline.started:  # e.g. nobody pressed start: nothing turned the cube
            state = f"{CUBE_AS_PUT_IN} (the start button was not pressed)"
        publish(ev.Stopped(errors=(str(exc),), advice=pipeline.advice(exc.advice), cube_state=state or None,
                           outcome=exc.outcome))
    except Exception as exc:  # any failure: the robot stopped (closing the link); say what happened
        if isinstance(exc, DeviceError) and exc.jam:  # a simulated jam (sim/jaws.py JawJam), whenever seen
            publish(ev.Stopped(
                errors=(f"{type(exc).__name__}: {exc}",), advice=pipeline.advice(advice_for(exc)), outcome=NOT_SOLVED,
                cube_state=f"{CUBE_STATE_NOT_KNOWN}: the cube jammed (a layer may have stopped between positions)",
                stopped_at_action=pipeline.completed if pipeline.plan is not None else None))
            return
        publish(ev.Stopped(
            errors=(f"{type(exc).__name__}: {exc}",), advice=advice_for(exc),
            cube_state=None if pipeline.started else
            f"{CUBE_AS_PUT_IN} (the stop came before the start button was pressed)"))
    finally:
        if not named:  # the robot did not start (a pre-flight check failed): name it all the same
            publish(ev.RobotNamed(robot.backend))
        pipeline.wind_up()
        bus.unsubscribe(progress_line)


class ResumingViewMover:
    """An ArmViewMover whose view stream is resumed after a lost connection (as the plan's is)."""

    def __init__(self, inner: ArmViewMover, tell_maker: Callable[[str], None], publish: Callable[[ev.Event], None]):
        self.inner, self.tell_maker, self.publish = inner, tell_maker, publish
        self.moving = False  # a view's actions are being streamed

    def move_to(self, view) -> None:
        from ..link.errors import DisconnectedError, SilentBoardError

        interrupted = False
        try:
            self.moving = True  # a Ctrl-C now may come while the board moves
            self.inner.move_to(view)
        except KeyboardInterrupt:
            interrupted = True  # the board may still move: the stop that follows must know it (run_robot)
            raise
        except (DisconnectedError, SilentBoardError) as exc:
            self.tell_maker(link_lost_line(exc, "during a scan"))
            self.inner.link.resume()
            self.publish(ev.LinkRecovered(f"recovered: {type(exc).__name__} during a scan (the link was resumed)"))
            if self.inner.after:
                self.inner.after()
        finally:
            self.moving = interrupted

    @property
    def last_charged(self) -> list:  # the inner view mover's
        return self.inner.last_charged

    @property
    def still_since(self) -> float | None:  # the inner view_mover's; None after a resumed view (the board may have reset)
        return self.inner.still_since


def scan_findings(result) -> dict:
    """What a watcher draws of a decoded scan: the stickers seen and read past, the colours seen, and each
    view's region colours (a sticker seen in two views is kept from one of them)."""
    readings, decoded = result.readings, result.decoded
    view_colours: dict[str, list] = {}
    for sample, source in zip(readings.samples, readings.source):
        if sample is not None and source is not None:
            view, region = source
            regions = view_colours.setdefault(view, [])
            regions.extend([None] * (region + 1 - len(regions)))
            regions[region] = [int(round(float(v))) for v in sample.rgb]
    return {"seen": tuple(i for i, s in enumerate(readings.samples) if s is not None),
            "unread": tuple(decoded.unread),
            "colours_rgb": {k: [int(round(float(v))) for v in rgb] for k, rgb in decoded.centres_rgb.items()},
            "view_colours": view_colours}


class Pipeline:
    """The stages of one run, on any robot (robot/run/robot.py Robot); what happens is published on `bus`
    (robot/run/events.py), whose subscribers (the report, the progress line, the solve log) watch it."""

    def __init__(self, config, robot: Robot, tell_maker: Callable[[str], None], options: RunOptions,
                 bus: EventBus | None = None):
        self.config, self.robot, self.tell_maker, self.options = config, robot, tell_maker, options
        self.bus = bus if bus is not None else EventBus()
        self.publish = self.bus.publish
        # How far the run got, for the cube state after an emergency stop (cube_state_now).
        self.scan = None
        self.plan: Plan | None = None
        self.profile: RobotProfile | None = None
        self.scan_taken: ScanSequence | None = None
        self.scan_result: ScanResult | None = None
        self.ready: Ready | None = None
        self.scanner: Scanner | None = None
        self.completed = 0  # plan actions the robot confirmed done
        self.started = False  # the start button was pressed
        self.executing = False
        self.verifying = False  # the check rescan after the whole plan ran
        self.view_mover: ResumingViewMover | None = None
        self.stopped_nothing = False  # a Ctrl-C came while nothing moved: no stop byte was sent
        self.scan_confidence = 0.0  # the decoder's, for the scan the run goes on with
        self.corrected = False  # a person corrected the scanned cube
        self.execute_started: float | None = None  # when the plan's stream began (perf_counter)
        self.review_s = 0.0  # how long a person took to check the scanned cube (left out of button->solved)
        self.scan_prefix = ""  # the scan being taken, as its waterfall names it ("scan 2: ", "verify: ")

    def _link(self) -> Link:
        link = self.robot.link
        assert link is not None, "the stages after the start press run on a started robot"
        return link

    def _scanner(self) -> Scanner:
        assert self.scanner is not None, "scanned before"
        return self.scanner

    @property
    def streaming(self) -> bool:
        """Actions are being streamed (the plan, or a view's): the board may be moving, or about to."""
        return self.executing or (self.view_mover is not None and self.view_mover.moving)

    def advice(self, text: str) -> str:
        """Advice after a stop, for this run's reader: a simulated run's robot is gone (ON_A_REAL_ROBOT); a
        robot the panel holds is still there, its port held by the panel (its Clear alarm button clears)."""
        if self.options.robot_kept:
            for command, button in KEPT_ROBOT_WORDS:
                text = text.replace(command, button)
            if "Clear alarm" not in text:  # the port is not reopened, so nothing resets the board's alarm
                text = text.replace("then run again", "then press Clear alarm and Start in the panel")
            return text.replace("then run again", "then Start again")
        return ON_A_REAL_ROBOT + text if self.options.sim else text

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
        elif self.verifying:
            note += ("; the plan ran to the end: the stop came during the check rescan, whose motions turn the "
                     "whole cube, not a layer")
        return self._as_corrected(f"{state.to_facelets(self.scan_colours)} ({note})")

    def _as_corrected(self, state: str) -> str:
        """A cube state worked out from a cube a person corrected is only as right as the correction."""
        if not self.corrected:
            return state
        return f"{state}; worked out from the cube as corrected by hand, which may not be the cube in the robot"

    def run(self) -> None:
        from ..vision.scan import ScanSequence

        from .ready import prepare

        robot = self.robot
        if robot.link is not None:  # the link's live messages (a reconnect, a noisy line)
            robot.link.reconnect_log = lambda text: self.tell_maker(f"\n{text}")
        sequence = ScanSequence.from_config(self.config)
        # Tables, camera and handshake before the start press: nothing of them is timed after it.
        self.ready = ready = prepare(self.config, robot)
        pressed_at = self._wait_start()
        if robot.view_mover is not None and robot.view_mover.still_since is not None:
            robot.view_mover.still_since = pressed_at  # the button on the robot's frame shook it: settle from here
        self.started = True
        self.publish(ev.StartPressed())
        self.waterfall = Waterfall(pressed_at, self.publish)  # every stage on this clock (robot/run/waterfall.py)
        self._run(sequence, ready, pressed_at=pressed_at)

    def wind_up(self) -> None:
        """After the run, whatever happened (after any stop, never before it): release the camera and
        name the scan's pictures, which were written while the plan ran (robot/vision/adaptive.py)."""
        from ..vision.adaptive import wait_pictures

        if self.ready is not None:
            self.ready.release()
        # Stop bytes the link found to be line noise and cleared (robot/link/driver.py _noise_stop).
        link = self.robot.link
        noise = link.noise_stops if link is not None else []
        if noise:
            self.publish(ev.NoiseStops(tuple(noise)))
        if self.scan_result is not None:
            images = [str(p) for p in wait_pictures(self.scan_result)]
            readings, replay = self._readings(images)
            self.publish(ev.PicturesSaved(tuple(images), readings, replay))
            if self.scan_result.picture_error:
                self.publish(ev.RunWarning(self.scan_result.picture_error))

    def _readings(self, images: list[str]) -> tuple[str | None, str | None]:
        """The scan's readings file, beside its pictures, and the command that decodes it as the run did."""
        from pathlib import Path

        from ..vision.scan import READINGS_FILE

        if not images:
            return None, None
        readings = Path(images[0]).parent / READINGS_FILE
        if not readings.exists():
            return None, None
        uncalibrated = " --no-calibration" if self.scanner is None or self.scanner.calibration is None else ""
        return str(readings), f"cube-robot vision decode{uncalibrated} {readings}"

    def _wait_start(self) -> float:
        self.tell_maker(self.robot.start_note)  # a simulated robot presses its own emulated button, and says so
        if not self.robot.wait_start(self.config.run.start_timeout_s):
            raise RunFailed("the start button was not pressed in time", "press start on the robot (or Enter)")
        return time.perf_counter()  # timing mark: button_to_solved_ms starts here

    def _run(self, sequence, ready: Ready, pressed_at: float) -> None:
        from ..link.errors import AlarmError, LineNumberingError, LinkError, RefusedMidStreamError
        from ..plan import charged_from, replay

        robot, tell_maker, publish = self.robot, self.tell_maker, self.publish
        solver = ready.solver
        publish(ev.TablesReady(ready.tables_load_ms))

        try:
            scanned, scan = self._scan()
        except AlarmError as exc:
            progress_info = exc.progress.describe() if exc.progress else ""
            raise RunFailed(self._alarm_said(exc), "release the emergency stop and run again: the cube "
                            "will be scanned again", f"not read yet: the alarm came during the scan. {progress_info}",
                            self._stop_outcome(exc)) from None
        self.scan, self.scan_colours = scan.cubie, scan.colours  # read: a stop while a person reviews it names it
        t = time.perf_counter()
        reviewed = robot.review_scan(scanned, self.scan_confidence)
        if reviewed is None:  # nobody reviews: the run goes on with the cube read
            reviewed = scanned
        else:  # a person checked the cube: their time is not the robot's
            self.review_s = time.perf_counter() - t
            self.waterfall.add("review (a person checks the cube)", t, time.perf_counter())
        if reviewed != scanned:  # a person corrected the net (the panel): validated as `solve` validates
            scanned, scan = reviewed, self._corrected(scanned, reviewed)
        self.scan, self.scan_colours = scan.cubie, scan.colours
        taken = self.scan_taken or sequence  # an adaptive scan may stop before the last view
        start_grip = taken.final_grip or None
        publish(ev.StageStarted("solve"))
        t = time.perf_counter()
        plan = solver.solve(scanned, start_grip=start_grip)
        self.waterfall.add("solve", t, time.perf_counter())
        self.plan, self.profile = plan, solver.profile
        publish(ev.PlanFound(moves=plan.moves, actions=len(plan.actions), solve_ms=round(plan.solve_ms, 3),
                             predicted_ms=plan.cost_ms, plan=plan.to_json()))
        for message in robot.plan_ready(len(plan.actions)):  # e.g. a simulated fault this plan cannot have
            tell_maker(message)
            publish(ev.RunWarning(message))
        tell_maker(f"Plan: {plan.moves or '(already solved)'}  ({plan.cost_ms} ms predicted, found in {plan.solve_ms:.2f} ms)")

        first_done: list[float] = []
        total = len(plan.actions)

        def progress(p):
            if p.completed and not first_done:
                first_done.append(time.perf_counter())
            self.completed = p.completed
            publish(ev.ActionDone(p.completed, p.total))
            robot.action_done(p.completed)

        def sent(action: int) -> None:
            publish(ev.ActionSent(action, total))

        publish(ev.StageStarted("execute"))
        t = self.execute_started = time.perf_counter()
        self.executing = True
        try:
            result = self._execute(plan, progress, sent)
        except LinkError as exc:
            progress_info = exc.progress
            completed = progress_info.completed if progress_info else 0
            publish(ev.StreamEnded(completed, total))
            publish(ev.LinkStats(dict(self._link().stats)))
            state, _ = replay(scan.cubie, plan.actions[:completed], solver.profile)
            facelets = state.to_facelets(scan.colours)
            note = f"after plan action {completed} of {total}"
            cut = None
            if progress_info is not None and progress_info.unknown_after:  # an unseen reset: only confirmed ones count
                also = f"; action(s) {list(progress_info.ran_after)} ran after them" if progress_info.ran_after else ""
                state_said = (f"{CUBE_STATE_NOT_KNOWN}: {facelets} {note} (each reported done by the board){also}; "
                              f"which {'other ' if also else ''}later actions ran is not known")
            elif isinstance(exc, RefusedMidStreamError):  # no prefix of the plan is the cube: name what is known
                refused = f"action {exc.action}" if exc.action is not None else f"{exc.command!r}"
                state_said = (f"{CUBE_STATE_NOT_KNOWN}: {facelets} {note}; then {refused} was refused and did "
                              f"nothing, and action(s) {exc.ran_after} ran after it")
            elif isinstance(exc, LineNumberingError):  # later actions may or may not have run
                state_said = (f"{CUBE_STATE_NOT_KNOWN}: {facelets} {note} (reported done); which later actions "
                              "ran is not known")
            else:
                if progress_info is not None and progress_info.interrupted is not None:
                    k = progress_info.interrupted
                    cut = interrupted_action(progress_info)
                    where = cut.get("where")  # a reset cut it: the board says how far
                    note += (f"; action {k + 1} ({action_label(plan.actions[k])}) was cut by a reset: {where}"
                             if where else "; " + interrupted_note(k, plan.actions[k], "was"))
                state_said = f"{facelets} ({note})"
            publish(ev.Stopped(stopped_at_action=completed, interrupted_action=cut))
            self.waterfall.add("execute (stopped)", t, time.perf_counter())  # the stage the stop cut short
            message = self._alarm_said(exc) if isinstance(exc, AlarmError) else str(exc)
            advice = (HOST_STOP_ADVICE if self._host_stopped(exc) else stop_advice(exc))
            raise RunFailed(message, advice, self._as_corrected(state_said), self._stop_outcome(exc)) from None
        publish(ev.StreamEnded(total, total))
        self.executing, self.completed = False, total
        done_at = time.perf_counter()  # timing mark: the last action's `done` has arrived
        if robot.view_mover is not None:  # the plan moved the cube past the view_mover: which pair holds now, from
            robot.view_mover.learn()  # the board (a plan resumed after a lost cable may have left it otherwise)
        if first_done:
            self.waterfall.add("execute: first action", t, first_done[0])
        # Measured like the plan's cost: the free first grip is not counted; a lost `done` line is.
        charged = result.durations_ms[charged_from(plan.actions):]
        unknown = sum(1 for d in charged if d is None)
        measured = None if unknown else sum(charged)  # never a partial sum
        self.waterfall.add("execute", t, done_at, measured)  # floor: the plan's arm time
        publish(ev.Executed(execute_ms=round((done_at - t) * 1000, 1),
                            button_to_solved_ms=round((done_at - pressed_at - self.review_s) * 1000, 1),
                            review_ms=round(self.review_s * 1000, 1) if self.review_s else None,
                            measured_machine_ms=measured, unknown_time_actions=unknown or None,
                            link_stats=dict(result.stats) if result.stats else {}))
        if self.options.verify and self.config.run.verify_after:
            publish(ev.StageStarted("verify"))
            t = time.perf_counter()
            try:
                self._verify()
            except AlarmError as exc:  # e.g. an emergency stop during the rescan: the plan had run to the end
                raise RunFailed(self._alarm_said(exc), "check the cube sits straight in the grippers (the rescan "
                                "turns the whole cube, so no layer was left between positions), clear the alarm "
                                "(cube-robot link reset-alarm), then run again to check it (the cube is rescanned)",
                                self.cube_state_now(), self._stop_outcome(exc)) from None
            self._mark_scan("verify: ")
            self.waterfall.add("verify", t, time.perf_counter())
            publish(ev.LinkStats(dict(self._link().stats)))  # a reconnect (and board reset) during the rescan
        else:
            reason = "--no-verify" if not self.options.verify else "run.verify_after is false"
            publish(ev.Checked(NOT_CHECKED + reason))

    def _host_stopped(self, exc) -> bool:
        """The alarm is the stop byte this host sent from another thread (the panel's Emergency stop)."""
        from ..link.errors import AlarmError
        from ..link.protocol import AlarmCode

        link = self.robot.link
        return (isinstance(exc, AlarmError) and exc.code == AlarmCode.ESTOP_BYTE and link is not None
                and link.estop_sent)

    def _alarm_said(self, exc) -> str:
        if self._host_stopped(exc):
            who = "the panel's Emergency stop" if self.options.robot_kept else "this host"
            return f"emergency stop: {who} sent the stop byte; {alarm_words(exc)}"
        return alarm_words(exc)

    def _stop_outcome(self, exc) -> str | None:
        """EMERGENCY STOP when this host's stop byte stopped the run, as after Ctrl-C; else the alarm's reason."""
        return STOPPED if self._host_stopped(exc) else None

    def _corrected(self, scanned: str, corrected: str):
        """The cube a person corrected, parsed as `cube-robot solve` parses one (an illegal one stops the run
        here, naming the problem; nothing has turned a layer)."""
        from .. import cube

        try:
            parsed = cube.parse_facelets(corrected)
        except cube.CubeError as exc:
            raise RunFailed(f"the corrected cube is not legal: {exc}", "correct the stickers the message names, "
                            "or run again to rescan", f"{scanned} (as scanned; no plan action ran)") from None
        changed = [i for i, (a, b) in enumerate(zip(scanned, corrected)) if a != b]
        self.publish(ev.CubeCorrected(scanned=scanned, facelets=corrected, stickers=tuple(changed)))
        self.tell_maker(f"Corrected by hand: {corrected} (stickers {', '.join(cube.facelet_name(i) for i in changed)} "
                        "changed)")
        self.corrected = True
        return parsed

    def _execute(self, plan, progress, sent: Callable[[int], None]):
        """Stream the plan; a lost port is resumed (the board may have reset) and said so only if it worked."""
        from ..link.errors import DisconnectedError, SilentBoardError

        link = self._link()
        try:
            return link.run(plan, progress=progress, sent=sent)
        except (DisconnectedError, SilentBoardError) as exc:
            self.tell_maker(link_lost_line(exc, "while the plan ran"))
            result = link.resume()
            self.publish(ev.LinkRecovered(f"recovered: {type(exc).__name__} (the link was resumed)"))
            return result

    def _scan(self):
        from .. import cube
        from ..vision import adaptive
        from ..vision.scan import Scanner

        attempts = self.config.run.scan_attempts
        view_mover = self.robot.view_mover
        if view_mover is not None:  # a lost cable mid-scan is resumed too
            self.view_mover = ResumingViewMover(view_mover, self.tell_maker, self.publish)
        self.scanner = scanner = Scanner(self.config, camera=self.robot.camera, view_mover=self.view_mover,
                                         calibration=self.robot.calibration, regions=self.robot.regions,
                                         on_frame=self._frame_taken, on_decode=self._view_decoded)
        self.publish(ev.StageStarted("scan"))
        t = time.perf_counter()
        for attempt in range(1, attempts + 1):
            self.robot.before_scan(attempt)
            self.scan_prefix = f"scan {attempt}: " if attempt > 1 else ""
            result = adaptive.scan(scanner)  # stops after the view that makes the decoder sure
            self._mark_scan(self.scan_prefix)
            if result.decoded is not None:
                self.scan_taken = result.sequence  # None: every view
                self.scan_result = result  # its pictures may still be being written
                self.publish(ev.ViewsDecoded(
                    attempt=attempt, views=len((result.sequence or scanner.sequence).views),
                    recognition_ms=round((time.perf_counter() - t) * 1000, 1), read_ms=round(result.read_ms, 2),
                    facelets=result.decoded.facelets, confidence=round(float(result.decoded.confidence), 3),
                    images=tuple(str(p) for p in result.images), warnings=tuple(result.warnings),
                    **scan_findings(result)))
                self.scan_confidence = float(result.decoded.confidence)
                self.tell_maker(f"Scanned: {result.decoded.facelets} (confidence {result.decoded.confidence:.2f}, "
                         f"attempt {attempt})")
                return result.decoded.facelets, cube.parse_facelets(result.decoded.facelets)
            self.publish(ev.ScanRefused(attempt, str(result.error), tuple(str(p) for p in result.images)))
            self.tell_maker(f"Scan attempt {attempt} doubtful ({result.error}); rescanning...")
        raise RunFailed(f"the cube could not be read in {attempts} attempts: {result.error}",
                        "check the light (no glare, even brightness) and run 'cube-robot calibrate colours'")

    def _frame_taken(self, view: str, times: dict | None) -> None:
        """The scanner's on_frame: a view's frame, published as it is taken (with its times, when known)."""
        if times is not None:
            self.publish(ev.FrameTaken(self.scan_prefix + view, self.waterfall.ms(times["exposure_start"]),
                                       self.waterfall.ms(times["delivered_at"])))

    def _view_decoded(self, view: str, views: int, decoded: DecodeResult | None, error: Exception | None) -> None:
        """The scanner's on_decode: the views so far, decoded (an adaptive scan's after each view)."""
        self.publish(ev.ViewDecoded(
            self.scan_prefix + view, views, decoded.facelets if decoded is not None else None,
            round(float(decoded.confidence), 3) if decoded is not None else None,
            str(error) if error is not None else None))

    def _mark_scan(self, prefix: str = "") -> None:
        """The last scan's stages (camera open, each view's motion and frame, decode) in the waterfall."""
        from ..plan import RobotProfile

        camera = self.robot.camera
        self.waterfall.add_scan(self._scanner().marks, RobotProfile.from_config(self.config), prefix,
                                camera.timing if camera is not None else None)

    def _verify(self) -> None:
        from .. import cube

        self.verifying = True
        self.robot.before_scan(None)
        self.scan_prefix = "verify: "
        result = self._scanner().scan()  # its view mover resumes after a lost connection, like the plan
        self.verifying = False
        images = tuple(str(p) for p in result.images)
        if result.decoded is None:
            self.publish(ev.Checked(f"rescan refused: {result.error}", images=images))
            return
        solved = cube.parse_facelets(result.decoded.facelets).cubie.is_solved()
        self.publish(ev.Checked("rescan shows solved" if solved else "rescan shows NOT solved", solved, images))
        if not solved and self.corrected:  # the plan was right for the cube given: that cube was not this one
            self.publish(ev.Stopped(advice="the cube corrected by hand was not the cube in the robot: run again and "
                                           "correct only stickers the camera misread (compare the net with the "
                                           "cube itself)"))
