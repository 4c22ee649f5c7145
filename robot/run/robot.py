"""The robot a run drives: the interface, and the real robot on a serial port.

The simulated robot (robot/sim/robot_sim.py SimulatedRobot) offers the same
interface; its demonstration faults (bad light, a pulled cable, the e-stop)
live there, behind the hooks below (before_scan, plan_ready, action_done), so
the pipeline never asks which robot it has.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Literal, Protocol

from ..checks import PreflightFailed, RobotNotReady
from ..config_types import Config
from ..paths import make_advice

if TYPE_CHECKING:
    from ..link.driver import Link
    from ..solver.tables import SolverTables
    from ..vision.camera import Camera
    from ..vision.cameras import CameraSet
    from ..vision.colour import Calibration
    from ..vision.regions import Regions
    from ..arms.view_mover import ArmViewMover
    from .ready import HeldCamera


class Robot(Protocol):
    """What the pipeline (robot/run/pipeline.py) and robot/run/ready.py need of a robot."""

    # Read by the run (properties: a robot may keep narrower types, or compute them).
    @property
    def backend(self) -> str: ...  # what answers on the link, for the report

    @property
    def link(self) -> Link | None: ...  # connected after __enter__ (None before, or when it never started)

    @property
    def camera(self) -> Camera | CameraSet | HeldCamera | None: ...  # held open for the run once prepared (ready.py)

    @property
    def view_mover(self) -> ArmViewMover | None: ...  # puts the cube in each scan view (None before start)

    @property
    def regions(self) -> Regions | None: ...  # sticker regions, or None: the Scanner loads scan.regions_file

    @property
    def calibration(self) -> Calibration | Literal["auto"] | None: ...  # "auto": scan.colours_file if it exists

    @property
    def tables(self) -> SolverTables | None: ...  # the tables the pre-flight loaded (None: the run loads them)

    @property
    def start_note(self) -> str: ...  # said while waiting for the start press

    def __enter__(self) -> Robot: ...  # connect (the link closes on exit, which stops the robot)

    def __exit__(self, *exc: object) -> None: ...

    def wait_start(self, timeout_s: float) -> bool: ...  # True once start is pressed

    def before_scan(self, attempt: int | None) -> None: ...  # attempt 1, 2, ...; None: the check rescan

    def plan_ready(self, actions: int) -> list[str]: ...  # warnings about the plan found (its action count)

    def action_done(self, completed: int) -> None: ...  # plan actions completed so far

    # The cube the scan read, before it is solved: None when nobody reviews it (the run goes on at once),
    # else the cube a person confirmed, as read or corrected (the panel's net); the pipeline validates it
    # as `cube-robot solve` does, and leaves the person's time out of button->solved.
    def review_scan(self, facelets: str, confidence: float) -> str | None: ...


class StopPressed(KeyboardInterrupt):
    """A person's stop from elsewhere than the terminal (the panel's Stop button), handled as Ctrl-C is."""

    words = "Stop (pressed in the panel)"


def stop_name(exc: BaseException) -> str:
    """How a run's report names the stop that interrupted it."""
    return exc.words if isinstance(exc, StopPressed) else "Ctrl-C"


class StopSent(KeyboardInterrupt):
    """A Ctrl-C for which the robot sent the stop byte itself (while it started)."""


class HardwareRobot:
    """A robot on a serial port; a person presses its start button (or Enter here)."""

    calibration: Literal["auto"] = "auto"  # the scan uses scan.colours_file when it exists
    start_note = "Waiting for the start button (on the robot, or Enter here)..."

    def __init__(self, config: Config, port=None, tell_maker=None, arms_straight: bool = False, resume: bool = False,
                 probed=None):
        self.config, self.port, self.resume = config, port, resume
        self.probed = probed  # the Link choose_robot's probe left open on `port`: opened once (a Uno resets)
        self.arms_straight = arms_straight  # `run --arms-straight`: the user's word (robots without sensors)
        self.tell_maker = tell_maker or (lambda text: None)
        self.link: Link | None = None
        self.camera: HeldCamera | None = None  # held from the pre-flight to the end of the run
        self.view_mover: ArmViewMover | None = None
        self.tables: SolverTables | None = None
        self.regions: Regions | None = None  # the Scanner loads the calibrated regions (scan.regions_file)
        self.backend = "robot on " + (port or config.link.port or "an auto-detected port")

    def start(self, preflight: bool = True) -> "HardwareRobot":
        """Open the link and the camera, then (preflight=False: a caller that checks at each run) the checks."""
        from ..link.driver import Link
        from ..vision.camera import open_camera
        from ..arms.view_mover import ArmViewMover
        from .ready import HeldCamera

        from ..link.errors import AlarmError, LinkError
        from ..link.protocol import AlarmCode

        port = self.port or self.config.link.port
        try:
            probed, self.probed = self.probed, None  # Link.open owns it now (and closes it if it fails)
            link = self.link = Link.open(self.config, port=self.port, configure=not self.resume, probed=probed)
        except LinkError as exc:
            if isinstance(exc, AlarmError) and exc.code == AlarmCode.RESET_DURING_MOTION:
                raise PreflightFailed([f"{port}: a board reset cut a move in an earlier run (alarm RESET_DURING_MOTION; "
                                       "the last run's report names the layer): turn that layer square by hand, then "
                                       "'cube-robot run --resume'"]) from None
            raise PreflightFailed([f"firmware handshake: {port}: {exc}: check the USB cable and the robot's power, "
                                   f"or flash the firmware ({make_advice('flash', f'PORT={port}')})"]) from None
        if self.resume:
            try:
                self._clear_cut_alarm()
                link.configure()
            except BaseException:
                self.close()
                raise
        identity = link.connection.known_identity()  # open() returned after the handshake
        self.backend = f"{identity.firmware} {identity.version} on {link.url}"
        # Held open from the pre-flight's first frame to the end of the run (robot/run/ready.py).
        self.camera = HeldCamera(self._cameras(open_camera))
        self.view_mover = ArmViewMover(link)
        try:
            if preflight:
                self.preflight()
        except KeyboardInterrupt as exc:  # while the pre-flight homes: the stop byte first (none if idle)
            stop = not board_idle(self)
            if stop:
                emergency_stop(self)
            self.close()  # `with` does not call __exit__ when __enter__ fails
            if stop:
                raise StopSent() from exc
            raise
        except BaseException:
            self.close()
            raise
        return self

    def _cameras(self, open_camera):
        """camera.*, or with views that name the second camera, both (robot/vision/cameras.py)."""
        from ..scan_sequence import ScanSequence
        from ..vision.cameras import CameraSet

        camera = open_camera(self.config)
        sequence = ScanSequence.from_config(self.config)
        if "second" not in sequence.cameras:
            return camera
        device = self.config.scan.second_camera.device
        if not device:
            self.close()
            raise PreflightFailed(["second camera: scan views name camera 'second' but scan.second_camera.device "
                                   "is empty: set it, or take those views with the main camera"])
        return CameraSet({"main": camera, "second": open_camera(self.config, device=device)}, sequence)

    def _clear_cut_alarm(self) -> None:
        """`run --resume`: the user has squared the layer a reset cut; clear RESET_DURING_MOTION only."""
        from ..link.protocol import AlarmCode

        link = self._started_link()
        alarm = link.status().alarm
        if alarm == AlarmCode.RESET_DURING_MOTION:
            self.tell_maker("--resume: you squared the interrupted layer; clearing RESET_DURING_MOTION (the cube is rescanned)")
            link.clear_alarm()
        elif alarm != AlarmCode.NONE:
            raise PreflightFailed([f"alarm {alarm.name} is latched: --resume clears only RESET_DURING_MOTION (a "
                                   "reset mid-move); check the robot, then 'cube-robot link reset-alarm'"])
        else:
            self.tell_maker("--resume: no interrupted move is latched; a normal run (the cube is rescanned)")

    def preflight(self) -> None:
        """robot/doctor/preflight.py: every check before the start button; raises PreflightFailed naming
        each failed check with its fix (nothing has moved yet)."""
        from types import SimpleNamespace

        from ..doctor import format_table
        from ..doctor.preflight import failures, run_checks

        self.tell_maker("Pre-flight checks...")
        context = SimpleNamespace(link=self.link, camera=self.camera, port=self.port, build_tables=True,
                                  tell_maker=self.tell_maker, confirm_arms_straight=self.confirm_arms_straight, tables=None)
        rows = run_checks(self.config, context)
        self.tables = context.tables  # loaded by the tables check: the run's solver reuses them
        self.tell_maker(format_table(rows))
        failed = failures(rows)
        if failed:
            raise PreflightFailed(failed)

    def _started_link(self) -> Link:
        assert self.link is not None, "start() opened it"
        return self.link

    def confirm_arms_straight(self, arms: str) -> bool:
        """The user's word that these arms stand straight: --arms-straight, else `y` on a terminal."""
        if self.arms_straight:
            self.tell_maker(f"Arms {', '.join(arms)} confirmed straight (--arms-straight).")
            return True
        return ask_arms_straight(arms)

    def close(self) -> None:
        if self.camera is not None:
            self.camera.release()
        if self.link is not None:
            self.link.close()
        if self.probed is not None:  # never started: the probe's connection is still open
            self.probed.close()
            self.probed = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    def wait_start(self, timeout_s: float) -> bool:
        """The robot's start button, or Enter in the terminal."""
        import threading

        entered = threading.Event()

        def read_enter() -> None:
            sys.stdin.readline()
            entered.set()

        if sys.stdin is not None and sys.stdin.isatty():
            threading.Thread(target=read_enter, daemon=True).start()
        link = self._started_link()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if entered.is_set() or link.wait_button(timeout_s=0.2):
                self.check_arms_still_ready()
                return True
        return False

    def check_arms_still_ready(self) -> None:
        """The drivers may have gone off while waiting (motion.idle_off_s): then the positions are lost and
        nothing may turn; RobotNotReady names it (nothing has moved)."""
        from ..arms.readiness import arms_problems

        problems = arms_problems(self._started_link().where(), self.config.motion.steps_per_rev)
        if problems:
            raise RobotNotReady("the arms are no longer ready at the start press: " + "; ".join(problems)
                                + " (the drivers switch off after motion.idle_off_s without an action): run again")

    def before_scan(self, attempt: int | None) -> None:
        pass  # a real camera is left as it is

    def plan_ready(self, actions: int) -> list[str]:
        return []

    def action_done(self, completed: int) -> None:
        pass

    def review_scan(self, facelets: str, confidence: float) -> str | None:
        return None  # the terminal's run takes what the scan read


def board_idle(robot: Robot) -> bool:
    """The board says it is idle with nothing queued or running: a stop byte would stop nothing (and
    latch an alarm for nothing).  False when it cannot be asked or answers otherwise."""
    from ..link import protocol as P

    if robot.link is None:
        return False
    try:
        status = robot.link.status()
    except Exception:  # no answer: the stop byte is sent all the same
        return False
    return status.state == P.State.IDLE and not status.queued and not status.running


def emergency_stop(robot: Robot):
    """Send the real-time stop byte (the firmware decelerates, flushes its queue and latches an alarm),
    then learn from the board what completed; returns the link's last stream progress, or None."""
    if robot.link is not None:
        try:
            return robot.link.stop_and_learn()
        except Exception:  # the link is already gone: closing it stops the robot too
            pass
    return None


# What answers on a port that is not simply absent or silent: something is there and it is not right.
_SOMETHING_ANSWERED = ("wrong firmware", "wrong baud", "error")


class PortNotReady(RobotNotReady):
    """No robot to drive: the named port does not answer as our firmware, or auto-detection found a wrong
    answer or several robots.  str() is the problem and its fix; `problem`, `fix` and `answered` (what
    answered, for the report's header) apart for the NOT STARTED report."""

    def __init__(self, problem: str, fix: str | None, answered: str):
        super().__init__(f"{problem}\n  fix: {fix}" if fix else problem)
        self.problem, self.fix, self.answered = problem, fix, answered


def choose_robot(config: Config, port=None):
    """The robot to drive: its open, handshaken Link (the probe's own connection, so the port is opened
    once: each open resets a real Uno), or None to simulate.  The caller closes the Link.

    Simulation only when no port is named anywhere (neither --port nor link.port) and nothing
    answers on any port.  A named port that does not answer as our firmware (silent, another
    firmware, another protocol version) raises PortNotReady naming the port, what answered
    and the fix; so does an auto-detected port where something wrong answers.
    """
    from ..link import ports
    from ..link.driver import Link, LinkSettings

    settings = LinkSettings.from_config(config)
    fix = "check the USB cable and the robot's power; flash the firmware with '" + make_advice("flash", "PORT={}") + "'"
    named = port or settings.port
    if named:
        probe = ports.probe(named, settings, keep=Link)
        if probe.ok:
            return probe.connection
        source = "--port" if port else "link.port in config.yaml"
        answered = f"none on {named} ({probe.kind})"
        if probe.kind == "cannot open":  # the answer names the fix; flashing a port that is not there cannot help
            raise PortNotReady(f"{probe.answer} (port from {source}; the --sim flag runs the simulated robot "
                               "instead)", None, answered)
        raise PortNotReady(f"the robot's port {named} (from {source}) does not answer as the cube-robot firmware: "
                           f"{probe.said()}", f"{fix.format(named)} (the --sim flag runs the simulated robot instead)",
                           answered)
    results = [ports.probe(device, settings, description, keep=Link) for device, description in ports.list_ports()]
    found = [r for r in results if r.ok]
    if len(found) == 1:
        return found[0].connection
    ports.close_kept(found)
    if len(found) > 1:
        raise PortNotReady("the cube-robot firmware answers on several ports ("
                           + ", ".join(r.port for r in found) + "): name one with --port or link.port", None,
                           "several robots: " + ", ".join(r.port for r in found))
    wrong = [r for r in results if r.kind in _SOMETHING_ANSWERED]
    if wrong:
        raise PortNotReady("no port answers as the cube-robot firmware, but something answers on "
                           + "; ".join(f"{r.port}: {r.said()}" for r in wrong),
                           f"{fix.format(wrong[0].port)} (the --sim flag runs the simulated robot)", "none")
    return None


def choose_port(config: Config, port=None) -> str | None:
    """The port to drive, or None to simulate (choose_robot, its connection closed again)."""
    link = choose_robot(config, port)
    if link is None:
        return None
    link.close()
    return link.url


def robot_attached(config: Config, port=None) -> bool:
    """True when the given, configured or a detectable port answers as our firmware."""
    try:
        return choose_port(config, port) is not None
    except RobotNotReady:
        return False


def ask_arms_straight(arms: str, stdin=None, stderr=None) -> bool:
    """On a terminal, ask whether the arms stand straight (y); without one, nobody can answer: False."""
    stdin, stderr = stdin or sys.stdin, stderr or sys.stderr
    if stdin is None or not stdin.isatty():
        return False
    print(f"The board does not know where arms {', '.join(arms)} stand (it reset when the port opened). "
          "Do all of them stand straight? [y/N] ", end="", file=stderr, flush=True)
    return stdin.readline().strip().lower() in ("y", "yes")
