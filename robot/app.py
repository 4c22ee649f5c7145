"""`cube-robot run` and `cube-robot history`: the whole robot, start button to solved cube.

    wait for start -> scan (retry doubtful scans) -> decode -> solve -> execute -> report

With no robot attached (or --sim) the robot is simulated (robot/sim/robot_sim.py):
the real firmware in simavr when the AVR toolchain is installed, else the
Python mock firmware; the report says which.  Every run appends one JSON line
to the solve log (config: run.data_dir).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

from .cli import add_config_argument

RUN_EXAMPLES = """examples:
  cube-robot run                       robot attached: wait for its start button; else simulate
  cube-robot run --sim                 simulated robot, random scramble
  cube-robot run --sim --scramble "R U2 F' L"
  cube-robot run --sim --fault-rate 0.01 --disconnect-at 5
  cube-robot run --sim --estop-at 4    safe stop demo: the report names the cube state
  cube-robot run --sim --bad-scan dark --json"""


class RunFailed(RuntimeError):
    """A run that stopped safely; the message says what to do next."""

    def __init__(self, message: str, advice: str, state: str | None = None):
        super().__init__(message)
        self.advice, self.state = advice, state


def register(subparsers) -> None:
    run = subparsers.add_parser(
        "run", help="solve a cube: scan, plan, execute (simulated when no robot is attached)",
        description="Wait for start, scan the cube, plan the fastest solve and execute it, then report.",
        epilog=RUN_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("--sim", action="store_true", help="use the simulated robot even if one is attached")
    run.add_argument("--port", metavar="PATH", help="the robot's serial port (default: link.port, else auto-detect)")
    run.add_argument("--scramble", metavar="MOVES", help="simulation: scramble the virtual cube with these moves")
    run.add_argument("--seed", type=int, default=None, help="simulation: seed for the random scramble and images")
    run.add_argument("--firmware", choices=("auto", "emulator", "mock"), default="auto",
                     help="simulation: real firmware in simavr, or the Python mock (default: emulator if installed)")
    run.add_argument("--realtime", action="store_true", help="simulation: run at real speed")
    run.add_argument("--fault-rate", type=float, default=0.0, metavar="P",
                     help="simulation: corrupt/drop/duplicate/delay serial bytes with probability P")
    run.add_argument("--disconnect-at", type=int, metavar="N", help="simulation: pull the cable at plan action N")
    run.add_argument("--estop-at", type=int, metavar="N", help="simulation: press e-stop during plan action N")
    run.add_argument("--bad-scan", choices=("dark", "glare"), help="simulation: the first scan gets a bad picture")
    run.add_argument("--no-verify", action="store_true", help="do not re-scan after solving to confirm")
    run.add_argument("--json", action="store_true", help="print the report as one JSON object")
    add_config_argument(run)
    run.set_defaults(handler=run_command)

    history = subparsers.add_parser(
        "history", help="summarise the solve log",
        description="Summarise the solve log (one JSON line per run, in run.data_dir).",
        epilog="examples:\n  cube-robot history\n  cube-robot history --last 5",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    history.add_argument("--last", type=int, default=10, help="list this many recent runs (default 10)")
    add_config_argument(history)
    history.set_defaults(handler=history_command)


def data_dir(config) -> Path:
    from .config import project_path

    return project_path(config["run"]["data_dir"])


# ---------------------------------------------------------------------------
# The run.


def run_command(args) -> int:
    from . import config as config_module

    config = config_module.load(args.config)
    say = (lambda text: print(text, file=sys.stderr)) if args.json else print
    sim_only = [flag for flag, value in (("--scramble", args.scramble), ("--fault-rate", args.fault_rate),
                ("--disconnect-at", args.disconnect_at), ("--estop-at", args.estop_at),
                ("--bad-scan", args.bad_scan), ("--realtime", args.realtime)) if value]
    if sim_only and not args.sim:
        args.sim = True  # these only make sense for the virtual robot
    if not args.sim and not _robot_attached(config, args.port):
        say("No robot answers on any serial port: running the simulated robot (--sim skips this check).")
        args.sim = True
    report = run_simulated(config, args, say) if args.sim else run_hardware(config, args, say)
    _append_log(config, report)
    if args.json:
        print(json.dumps(report))
    else:
        print(format_report(report))
    return 0 if report["solved"] else 1


def _robot_attached(config, port=None) -> bool:
    """True when the given, configured or a detectable port answers as our firmware."""
    from .link import ports
    from .link.driver import LinkSettings

    settings = LinkSettings.from_config(config)
    try:
        if port or settings.port:
            return ports.probe(port or settings.port, settings).ok
        ports.find_robot(settings)
        return True
    except Exception:  # no port, or nothing of ours answers: that is the question asked
        return False


def run_simulated(config, args, say) -> dict:
    import numpy as np

    from . import cube
    from .sim.robot_sim import SimulatedRobot

    rng = np.random.default_rng(args.seed)
    if args.scramble:
        state = cube.SOLVED.apply(cube.parse_moves(args.scramble))
        scramble = args.scramble
    else:
        state = cube.random_state(rng) * cube.ROTATIONS[int(rng.integers(24))]
        scramble = None
    started = dt.datetime.now().isoformat(timespec="seconds")
    report = {"time": started, "mode": "simulated", "scramble": scramble,
              "true_state": state.to_facelets(), "errors": [], "solved": False}
    fault_rate = args.fault_rate if args.fault_rate else (1e-9 if args.disconnect_at else 0.0)
    robot = SimulatedRobot(config, state, firmware=args.firmware, realtime=args.realtime,
                           fault_rate=fault_rate, seed=int(rng.integers(1 << 30)))
    report["firmware"] = robot.backend
    say(f"Simulated robot: {robot.backend}.")

    def finish():
        robot.sync()
        report["solved"] = report.get("execute_ok", False) and robot.virtual.is_solved()
        report["final_state"] = robot.virtual.facelets()
        report["turned_quarters"] = robot.virtual.turned_quarters

    _run_robot(config, robot, args, say, report, finish)
    if robot.proxy is not None:
        from .link.protocol import RT_ESTOP
        from .sim.fault_proxy import TO_DEVICE

        report["serial_faults"] = len(robot.proxy.faults)
        # The proxy corrupts honestly: a damaged byte can become the real-time e-stop byte.
        report["faults_made_estop_byte"] = robot.proxy.created(RT_ESTOP, TO_DEVICE)
    return report


def run_hardware(config, args, say) -> dict:
    """The real robot: serial link to the board, the configured camera and calibrated regions."""
    report = {"time": dt.datetime.now().isoformat(timespec="seconds"), "mode": "hardware",
              "errors": [], "solved": False}
    robot = HardwareRobot(config, args.port)

    def finish():
        verified = report.get("verified_solved")
        report["solved"] = report.get("execute_ok", False) and verified is not False

    return _run_robot(config, robot, args, say, report, finish)


def _run_robot(config, robot, args, say, report, finish) -> dict:
    """Run the pipeline; any failure stops the robot (the link closes) and is reported with advice."""
    try:
        with robot:
            report["firmware"] = robot.backend
            Pipeline(config, robot, say, args).run(report)
            finish()
    except RunFailed as exc:
        report["errors"].append(str(exc))
        report["advice"] = exc.advice
        if exc.state:
            report["cube_state_after_stop"] = exc.state
    except Exception as exc:  # any failure: the robot stopped (closing the link); say what happened
        report["errors"].append(f"{type(exc).__name__}: {exc}")
        report["advice"] = _advice_for(exc)
    return report


class HardwareRobot:
    """A robot on a serial port; a person presses its start button (or Enter here)."""

    calibration = "auto"  # the scan uses calibration/colors.yaml when it exists

    def __init__(self, config, port=None):
        self.config, self.port = config, port
        self.link = self.camera = self.presenter = None
        self.regions = None  # the Scanner loads the calibrated regions (scan.regions_file)
        self.backend = "robot on " + (port or config["link"]["port"] or "an auto-detected port")

    def start(self) -> "HardwareRobot":
        from .link.driver import Link
        from .sim.robot_sim import LinkPresenter
        from .vision.camera import open_camera

        self.link = Link.open(self.config, port=self.port)
        identity = self.link.identity
        self.backend = f"{identity.firmware} {identity.version} on {self.link.url}"
        self.camera = open_camera(self.config)
        self.presenter = LinkPresenter(self.link)
        return self

    def close(self) -> None:
        if self.link is not None:
            self.link.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    def wait_start(self, timeout_s: float) -> bool:
        """The robot's start button, or Enter in the terminal."""
        import threading

        entered = threading.Event()
        if sys.stdin is not None and sys.stdin.isatty():
            threading.Thread(target=lambda: (sys.stdin.readline(), entered.set()), daemon=True).start()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if entered.is_set() or self.link.wait_button(timeout_s=0.2):
                return True
        return False


def _advice_for(exc) -> str:
    from .link.errors import HandshakeError, LinkError
    from .sim.emulator import EmulatorError

    if isinstance(exc, HandshakeError):
        return "check the serial port, the cable and that the board runs cube-robot firmware (cube-robot doctor)"
    if isinstance(exc, LinkError):
        return "check the USB cable and the robot's power, then run again"
    if isinstance(exc, EmulatorError):
        return "the firmware emulator failed: run 'make -C firmware harness' to see the build error"
    return "see the error above; 'cube-robot doctor' checks the whole setup"


class Pipeline:
    """The stages of one run, on any robot that offers link, camera, regions and presenter."""

    def __init__(self, config, robot, say, args):
        self.config, self.robot, self.say, self.args = config, robot, say, args

    def run(self, report: dict) -> None:
        from .plan import replay
        from .solver import Solver
        from .vision.scan import ScanSequence

        robot, say = self.robot, self.say
        say("Waiting for the start button (on the robot, or Enter here)...")
        if not robot.wait_start(self.config["run"]["start_timeout_s"]):
            raise RunFailed("the start button was not pressed in time", "press start on the robot (or Enter)")
        sequence = ScanSequence.from_config(self.config)

        from .link.errors import AlarmError

        try:
            scanned, scan = self._scan(report)
        except AlarmError as exc:
            progress_info = exc.progress.describe() if exc.progress else ""
            raise RunFailed(exc.args[0].splitlines()[0], "release the emergency stop and run again: the cube "
                            "will be scanned again", f"not read yet: the alarm came during the scan. {progress_info}"
                            ) from None
        t = time.perf_counter()
        solver = Solver(self.config)
        report["tables_load_ms"] = round((time.perf_counter() - t) * 1000, 1)
        start_grip = sequence.final_grip or None
        plan = solver.solve(scanned, start_grip=start_grip)
        report["solve_ms"] = round(plan.solve_ms, 3)
        report["plan"] = plan.to_json()
        report["predicted_machine_ms"] = plan.cost_ms
        say(f"Plan: {plan.moves or '(already solved)'}  ({plan.cost_ms} ms predicted, found in {plan.solve_ms:.2f} ms)")

        from .link.errors import DisconnectedError, LinkError
        from .progress import ProgressBar

        bar = ProgressBar(len(plan.actions), "Solving", enabled=None)
        fault_hooks = self._fault_hooks(plan)

        def progress(p):
            bar.update(p.completed, f"{p.completed}/{p.total} actions")
            fault_hooks(p.completed)

        t = time.perf_counter()
        try:
            try:
                result = robot.link.run(plan, progress=progress)
            except DisconnectedError as exc:
                say(f"\nSerial link lost ({exc.args[0].splitlines()[0]}); reconnecting and resuming...")
                report["errors"].append(f"recovered: {type(exc).__name__}")
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
            report["stopped_at_action"] = completed
            raise RunFailed(
                exc.args[0].splitlines()[0], "release the emergency stop, check the cube sits straight in the "
                "grippers, then run again (the cube will be rescanned)", f"{facelets} ({note})") from None
        except LinkError as exc:
            bar.finish()
            raise RunFailed(str(exc), "check the USB cable and power, then run again (the cube is rescanned)") from None
        bar.finish()
        report["execute_ms"] = round((time.perf_counter() - t) * 1000, 1)
        durations = [d for d in result.durations_ms if d is not None]
        report["measured_machine_ms"] = sum(durations[1:])  # the first grip is not timed in the plan
        report["link_stats"] = dict(result.stats) if result.stats else {}
        report["execute_ok"] = True
        if not self.args.no_verify and self.config["run"]["verify_after"]:
            self._verify(report)

    def _scan(self, report):
        from . import cube
        from .vision.scan import Scanner

        attempts = self.config["run"]["scan_attempts"]
        self.scanner = scanner = Scanner(self.config, camera=self.robot.camera, presenter=self.robot.presenter,
                                         calibration=self.robot.calibration, regions=self.robot.regions)
        t = time.perf_counter()
        bad = self.args.bad_scan
        for attempt in range(1, attempts + 1):
            self._set_lighting(bad if attempt == 1 else None)
            result = scanner.scan()
            if result.decoded is not None:
                report["scan_attempts"] = attempt
                report["recognition_ms"] = round((time.perf_counter() - t) * 1000, 1)
                report["scan_read_ms"] = round(result.read_ms, 2)
                report["facelets"] = result.decoded.facelets
                report["confidence"] = round(float(result.decoded.confidence), 3)
                report["scan_images"] = [str(p) for p in result.images]
                report["warnings"] = list(result.warnings)
                self.say(f"Scanned: {result.decoded.facelets} (confidence {result.decoded.confidence:.2f}, "
                         f"attempt {attempt})")
                return result.decoded.facelets, cube.parse_facelets(result.decoded.facelets)
            report["errors"].append(f"scan attempt {attempt}: {result.error}")
            self.say(f"Scan attempt {attempt} doubtful ({result.error}); rescanning...")
        raise RunFailed(f"the cube could not be read in {attempts} attempts: {result.error}",
                        "check the light (no glare, even brightness) and run 'cube-robot calibrate colors'")

    def _set_lighting(self, bad):
        """Simulation: the picture quality of the next scan (a real camera is left alone)."""
        from .sim import render

        camera = self.robot.camera
        if not hasattr(camera, "lighting"):
            return
        if bad == "dark":
            camera.lighting = render.Lighting(brightness=0.015, noise_sigma=6.0)
        elif bad == "glare":
            camera.lighting = render.Lighting(glare_spots=12, glare_strength=1.0)
        else:
            camera.lighting = render.Lighting()

    def _fault_hooks(self, plan):
        """Demonstration faults at plan action N (1-based), fired from the progress callback."""
        fired = set()
        robot, args = self.robot, self.args

        def hook(completed):
            if args.disconnect_at and "disconnect" not in fired and completed >= args.disconnect_at - 1:
                fired.add("disconnect")
                robot.disconnect()
            if args.estop_at and "estop" not in fired and completed >= args.estop_at - 1:
                fired.add("estop")
                robot.press_estop()

        return hook

    def _verify(self, report):
        self._set_lighting(None)
        result = self.scanner.scan()
        if result.decoded is None:
            report["verify"] = f"rescan refused: {result.error}"
            return
        from . import cube

        solved = cube.parse_facelets(result.decoded.facelets).cubie.is_solved()
        report["verify"] = "rescan shows solved" if solved else "rescan shows NOT solved"
        report["verified_solved"] = solved


# ---------------------------------------------------------------------------
# Reports and the solve log.


def format_report(report: dict) -> str:
    lines = ["", "=" * 60, f"cube-robot run ({report.get('mode')}, firmware: {report.get('firmware')})"]
    if report.get("facelets"):
        lines.append(f"  scanned     {report['facelets']}  (confidence {report.get('confidence')}, "
                     f"{report.get('scan_attempts')} attempt(s))")
    if report.get("scan_images"):
        lines.append(f"  pictures    {Path(report['scan_images'][0]).parent}")
    if report.get("plan"):
        lines.append(f"  plan        {report['plan']['moves'] or '(already solved)'}")
    for key, label in (("recognition_ms", "recognition"), ("solve_ms", "solve"),
                       ("predicted_machine_ms", "machine (pred.)"), ("measured_machine_ms", "machine (meas.)"),
                       ("execute_ms", "execute (wall)")):
        if key in report:
            lines.append(f"  {label:<16}{report[key]} ms")
    if report.get("verify"):
        lines.append(f"  check       {report['verify']}")
    for error in report.get("errors", []):
        lines.append(f"  error       {error}")
    if report.get("cube_state_after_stop"):
        lines.append(f"  cube now    {report['cube_state_after_stop']}")
    if report.get("advice"):
        lines.append(f"  next        {report['advice']}")
    lines.append(f"  RESULT      {'SOLVED' if report['solved'] else 'NOT SOLVED'}")
    lines.append("=" * 60)
    return "\n".join(lines)


def _append_log(config, report: dict) -> None:
    folder = data_dir(config)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "solve-log.jsonl", "a") as f:
        f.write(json.dumps(report) + "\n")


def history_command(args) -> int:
    from . import config as config_module

    config = config_module.load(args.config)
    path = data_dir(config) / "solve-log.jsonl"
    if not path.exists():
        print(f"no runs logged yet ({path})")
        return 0
    runs = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        try:
            runs.append(json.loads(line))
        except ValueError:
            print(f"{path}:{number}: skipped a line that is not JSON", file=sys.stderr)
    solved = [r for r in runs if r.get("solved")]
    print(f"{len(runs)} runs, {len(solved)} solved ({len(solved) / max(len(runs), 1):.0%}) -- {path}")
    for key in ("recognition_ms", "solve_ms", "predicted_machine_ms", "measured_machine_ms"):
        values = sorted(r[key] for r in solved if isinstance(r.get(key), (int, float)))
        if values:
            print(f"  {key:<22} median {values[len(values) // 2]}  best {values[0]}  worst {values[-1]}")
    print(f"last {min(args.last, len(runs))}:")
    for r in runs[-args.last:]:
        outcome = "solved" if r.get("solved") else "FAILED: " + "; ".join(r.get("errors", []))[:80]
        print(f"  {r.get('time')}  {r.get('mode', '?'):9} {r.get('predicted_machine_ms', '-'):>6} ms  {outcome}")
    return 0
