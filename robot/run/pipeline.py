"""One run on any robot: wait for start -> scan (retry doubtful scans) -> solve -> execute -> check.

    report = RunReport(time=..., mode=...)
    run_robot(config, robot, options, say, report, finish)   # never raises; the report says what happened

Any failure stops the robot (leaving the `with robot:` block closes the link)
and is reported with advice and, when known, the cube's state.
"""

from __future__ import annotations

import time

from .options import RunOptions
from .report import RunReport


class RunFailed(RuntimeError):
    """A run that stopped safely; the message says what to do next."""

    def __init__(self, message: str, advice: str, state: str | None = None):
        super().__init__(message)
        self.advice, self.state = advice, state


def run_robot(config, robot, options: RunOptions, say, report: RunReport, finish) -> RunReport:
    """Run the pipeline on `robot`, then finish(); any failure is reported with advice."""
    try:
        with robot:
            report.firmware = robot.backend
            Pipeline(config, robot, say, options).run(report)
            finish()
    except RunFailed as exc:
        report.errors.append(str(exc))
        report.advice = exc.advice
        if exc.state:
            report.cube_state_after_stop = exc.state
    except Exception as exc:  # any failure: the robot stopped (closing the link); say what happened
        report.errors.append(f"{type(exc).__name__}: {exc}")
        report.advice = advice_for(exc)
    return report


def advice_for(exc) -> str:
    from ..link.errors import HandshakeError, LinkError
    from ..sim.emulator import EmulatorError

    if isinstance(exc, HandshakeError):
        return "check the serial port, the cable and that the board runs cube-robot firmware (cube-robot doctor)"
    if isinstance(exc, LinkError):
        return "check the USB cable and the robot's power, then run again"
    if isinstance(exc, EmulatorError):
        return "the firmware emulator failed: run 'make -C firmware harness' to see the build error"
    return "see the error above; 'cube-robot doctor' checks the whole setup"


class Pipeline:
    """The stages of one run, on any robot (robot/run/robot.py Robot)."""

    def __init__(self, config, robot, say, options: RunOptions):
        self.config, self.robot, self.say, self.options = config, robot, say, options

    def run(self, report: RunReport) -> None:
        from ..link.errors import AlarmError, DisconnectedError, LinkError
        from ..plan import charged_from, replay
        from ..progress import ProgressBar
        from ..solver import Solver
        from ..vision.scan import ScanSequence

        robot, say = self.robot, self.say
        say("Waiting for the start button (on the robot, or Enter here)...")
        if not robot.wait_start(self.config["run"]["start_timeout_s"]):
            raise RunFailed("the start button was not pressed in time", "press start on the robot (or Enter)")
        sequence = ScanSequence.from_config(self.config)

        try:
            scanned, scan = self._scan(report)
        except AlarmError as exc:
            progress_info = exc.progress.describe() if exc.progress else ""
            raise RunFailed(exc.args[0].splitlines()[0], "release the emergency stop and run again: the cube "
                            "will be scanned again", f"not read yet: the alarm came during the scan. {progress_info}"
                            ) from None
        t = time.perf_counter()
        solver = Solver(self.config)
        report.tables_load_ms = round((time.perf_counter() - t) * 1000, 1)
        start_grip = sequence.final_grip or None
        plan = solver.solve(scanned, start_grip=start_grip)
        report.solve_ms = round(plan.solve_ms, 3)
        report.plan = plan.to_json()
        report.predicted_machine_ms = plan.cost_ms
        say(f"Plan: {plan.moves or '(already solved)'}  ({plan.cost_ms} ms predicted, found in {plan.solve_ms:.2f} ms)")

        bar = ProgressBar(len(plan.actions), "Solving", enabled=None)

        def progress(p):
            bar.update(p.completed, f"{p.completed}/{p.total} actions")
            robot.action_done(p.completed)

        t = time.perf_counter()
        try:
            try:
                result = robot.link.run(plan, progress=progress)
            except DisconnectedError as exc:
                say(f"\nSerial link lost ({exc.args[0].splitlines()[0]}); reconnecting and resuming...")
                report.errors.append(f"recovered: {type(exc).__name__}")
                result = robot.link.resume()
        except AlarmError as exc:
            bar.finish()
            progress_info = exc.progress
            completed = progress_info.completed if progress_info else 0
            state, _ = replay(scan.cubie, plan.actions[:completed], solver.profile)
            facelets = state.to_facelets(scan.colours)
            note = f"after plan action {completed} of {len(plan.actions)}"
            if progress_info is not None and progress_info.interrupted is not None:
                k = progress_info.interrupted
                note += (f"; action {k + 1} ({progress_info.commands[k]}) was stopped part-way: "
                         "turn that layer by hand to the nearest quarter position")
            report.stopped_at_action = completed
            raise RunFailed(
                exc.args[0].splitlines()[0], "release the emergency stop, check the cube sits straight in the "
                "grippers, then run again (the cube will be rescanned)", f"{facelets} ({note})") from None
        except LinkError as exc:
            bar.finish()
            raise RunFailed(str(exc), "check the USB cable and power, then run again (the cube is rescanned)") from None
        bar.finish()
        report.execute_ms = round((time.perf_counter() - t) * 1000, 1)
        # Measured like the plan's cost: the free first grip is not counted; a lost `done` line is.
        report.measured_machine_ms = sum(d for d in result.durations_ms[charged_from(plan.actions):] if d is not None)
        report.link_stats = dict(result.stats) if result.stats else {}
        report.execute_ok = True
        if self.options.verify and self.config["run"]["verify_after"]:
            self._verify(report)

    def _scan(self, report: RunReport):
        from .. import cube
        from ..vision.scan import Scanner

        attempts = self.config["run"]["scan_attempts"]
        self.scanner = scanner = Scanner(self.config, camera=self.robot.camera, presenter=self.robot.presenter,
                                         calibration=self.robot.calibration, regions=self.robot.regions)
        t = time.perf_counter()
        for attempt in range(1, attempts + 1):
            self.robot.before_scan(attempt)
            result = scanner.scan()
            if result.decoded is not None:
                report.scan_attempts = attempt
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
            self.say(f"Scan attempt {attempt} doubtful ({result.error}); rescanning...")
        raise RunFailed(f"the cube could not be read in {attempts} attempts: {result.error}",
                        "check the light (no glare, even brightness) and run 'cube-robot calibrate colours'")

    def _verify(self, report: RunReport):
        from .. import cube

        self.robot.before_scan(None)
        result = self.scanner.scan()
        if result.decoded is None:
            report.verify = f"rescan refused: {result.error}"
            return
        solved = cube.parse_facelets(result.decoded.facelets).cubie.is_solved()
        report.verify = "rescan shows solved" if solved else "rescan shows NOT solved"
        report.verified_solved = solved
