"""A whole simulated robot: firmware (real in simavr, or the mock), serial link, mechanics, camera.

    with SimulatedRobot(config, state) as robot:   # state: the scrambled cube in the robot frame
        robot.link                                  # a connected robot.link.Link
        robot.camera, robot.regions, robot.view_mover   # for robot.vision.scan.Scanner
        robot.sync(); robot.virtual.is_solved()

The virtual cube (robot/sim/virtual_robot.py) moves only from what the firmware
actually did: with the emulator, from step and servo pulses decoded from the
pin log; with the mock firmware, from the actions it reports executing.  The
camera renders that cube (robot/sim/render.py) as the configured camera would
see it.
"""

from __future__ import annotations

import bisect
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .. import firmware_header
from ..config_types import Config
from ..link.driver import Link
from ..link.protocol import command_action
from ..plan import RobotProfile
from ..vision.camera_geometry import Pose, scan_regions
from . import emulator as emulator_module
from . import lamp as lamp_module
from . import mechanics, pinlog, render
from .jaws import JawTracker, feed_pins
from .virtual_robot import MechanicalError, VirtualRobot
from .webcam import SimulatedCamera, TimedArmViewMover

if TYPE_CHECKING:  # the simulated board (one of the two) and the fault proxy start with the robot
    from ..vision.cameras import CameraSet
    from ..vision.regions import Regions
    from .emulator import Emulator
    from .fault_proxy import FaultProxy
    from .mock_firmware import MockFirmware

FIRMWARE_CHOICES = ("auto", "emulator", "mock")
_LIMITS = firmware_header.limits()  # defaults.h; a pulse's measured width is off by a few us of interrupt latency
SERVO_RANGE_US = (_LIMITS["SERVO_US_MIN"] - 50, _LIMITS["SERVO_US_MAX"] + 50)
BAD_LIGHTING: dict[str, dict[str, Any]] = {  # --bad-scan: the first scan's picture
    "dark": {"brightness": 0.015, "noise_sigma": 6.0},
    "glare": {"glare_spots": 12, "glare_strength": 1.0},
}


def stop_each(*stops) -> None:
    """Call every stop given (None or False: that part was never started), each whatever the others did:
    closing is best effort, and the first error was already reported."""
    for stop in stops:
        if stop:
            try:
                stop()
            except Exception:
                pass


class SimulatedRobot:
    """The robot/run/robot.py Robot interface, simulated, with demonstration faults (made behind its
    hooks before_scan, plan_ready and action_done; the run does not know them):

    bad_scan ("dark" / "glare"): the first scan's picture is bad (the run must rescan);
    disconnect_at / estop_at N: the cable is pulled / the e-stop pressed at plan action N (1-based);
    fault_rate P: the serial bytes are corrupted, dropped, duplicated or delayed with probability P.
    light (a robot/sim/lamp.py preset; default config camera.lighting): a lamp on every scan, not a fault.

    After a pulled cable the board resets when the host opens the port again, as a real Uno does
    (DTR; the simavr harness restarts the firmware when its pty is reopened, the mock prints its
    banner).  keep_power=True keeps the old behaviour: the board runs on and is not reset.  What
    the simulation cannot model: a USB-powered Uno loses power with the cable, and then its
    memory (`last`/`cut`) too; the simulated board keeps power (a robot powers the Uno from its
    supply through VIN) and only resets.
    """

    calibration = None  # the decoder learns the rendered colours from each scan

    @property
    def tables(self):
        """The solver tables, loaded when the run asks for them (no pre-flight did); what loading says
        (building a missing table, rebuilding a stale one) is marked SIMULATED, as every line of the run."""
        import sys

        from ..cli_common import simulated
        from ..solver.tables import load

        return load(self.config, log=lambda text: print(simulated(f"tables: {text}"), file=sys.stderr))

    def __init__(self, config: Config, state, firmware: str = "auto", realtime: bool = False,
                 fault_rate: float = 0.0, seed: int = 0, time_scale: float | None = None,
                 bad_scan: str | None = None, disconnect_at: int | None = None, estop_at: int | None = None,
                 keep_power: bool = False, light: str | None = None):
        if firmware not in FIRMWARE_CHOICES:
            raise ValueError(f"firmware must be one of {FIRMWARE_CHOICES}")
        if bad_scan is not None and bad_scan not in BAD_LIGHTING:
            raise ValueError(f"bad_scan must be one of {tuple(BAD_LIGHTING)}")
        self.config = config
        self.profile = RobotProfile.from_config(config)
        self.motion = config.motion
        self.virtual = VirtualRobot(self.profile, state, steps_per_rev=self.motion.steps_per_rev)
        # Pulling the cable needs the fault proxy in the line, even with no other faults.
        fault_rate = fault_rate if fault_rate else (1e-9 if disconnect_at else 0.0)
        self.realtime, self.fault_rate, self.seed = realtime, fault_rate, seed
        self.bad_scan, self.disconnect_at, self.estop_at = bad_scan, disconnect_at, estop_at
        self.keep_power = keep_power  # a reconnect does not reset the board (not what an Uno does)
        self._fired: set[str] = set()  # the demonstration faults already made
        self.time_scale = time_scale if time_scale is not None else (1.0 if realtime else 0.02)
        usable, reason = emulator_module.available()
        if firmware == "emulator" and not usable:
            raise emulator_module.EmulatorError(f"the firmware emulator is not available: {reason}")
        self.uses_emulator = firmware == "emulator" or (firmware == "auto" and usable)
        self.backend = ("real firmware (.elf) in simavr" if self.uses_emulator
                        else "Python mock firmware" + ("" if firmware == "mock" else f" ({reason})"))
        self.emulator: Emulator | None = None
        self.mock: MockFirmware | None = None
        self.proxy: FaultProxy | None = None
        self.link: Link | None = None
        self._cursor = 0  # mock: executed entries applied
        self.clock_marks: dict[str, tuple[float, float]] = {}  # "start"/"end" -> (host wall seconds, board ms), read together
        # Two cameras capture one moment on two threads, each syncing first: one at a time, or both
        # would apply the same firmware motions to the virtual cube (a corrupted cube, refused scans).
        self._sync_lock = threading.Lock()
        self._servo_cursor: dict[str, int] = {}  # emulator: start cycle of the last gripper change applied, per arm
        self._servo_seen: dict[str, int] = {}  # emulator: start cycle of the last complete servo pulse decoded, per arm
        self.ignored_servo_pulses: list[tuple[str, pinlog.Pulse]] = []  # emulator: (arm, Pulse) outside the servo range (_servo_commands)
        self._motions = pinlog.MotionDecoder()  # emulator: the arms' moves, reading only the new part of the log
        # The true jaws (config simulated_robot.gripper.true_jaws): a layer's reach meeting a jaw is a jam.
        # They follow the emulator's pins; the mock keeps no times of its servos, so its runs say so.
        true_jaws = config.simulated_robot.gripper.true_jaws
        self.jaws = JawTracker.from_config(config) if true_jaws and self.uses_emulator else None
        self.jammed: str | None = None  # the first jam's words: after it the virtual cube's facelets are not the truth
        if true_jaws and not self.uses_emulator:
            self.backend += " (its jaws are not checked: simulated_robot.gripper.true_jaws needs the emulator)"
        self.reversed_motors = mechanics.reversed_motors(config)  # wired so that config's inversions are right
        self.pose = Pose.from_config(config)
        # The lamp (light: a preset name, else config camera.lighting) shines on every scan of the run.
        self.lamp, self.light_brightness = lamp_module.from_config(config, self.pose, light)
        # (the run may wrap it in its HeldCamera, robot/run/ready.py, which passes every attribute through)
        self.camera: SimulatedCamera | CameraSet = SimulatedCamera(self, self.pose, seed)
        self.camera.lighting = self.lighting()
        self.regions: Regions | None = None
        self.view_mover: TimedArmViewMover | None = None

    # -- life cycle ----------------------------------------------------------

    def start(self) -> "SimulatedRobot":
        self._check_baud()  # before anything starts: nothing to clean up
        try:
            return self._start()
        except BaseException:  # a run that stops before the start: `with` calls no __exit__ for it
            self.close()
            raise

    def _start(self) -> "SimulatedRobot":
        from ..scan_sequence import ScanSequence

        if self.uses_emulator:
            emulator = self.emulator = emulator_module.Emulator(realtime=self.realtime).start()
            device_url = emulator.port
        else:
            from .mock_firmware import MockFirmware

            mock = self.mock = MockFirmware(transport="pty", motion=self.motion, time_scale=self.time_scale).start()
            device_url = mock.url
        assert device_url is not None  # start() returns once the board has a port
        mechanics.wire_as_configured(self.emulator or self.mock, self.config)
        mechanics.place_sensors(self.emulator or self.mock, self.config)
        url = device_url
        if self.fault_rate:
            from .fault_proxy import FaultProxy

            resets = not self.keep_power
            proxy = self.proxy = FaultProxy(device_url, rate=self.fault_rate, seed=self.seed,
                                            reopen_device=resets and self.uses_emulator,
                                            on_host_connect=self._reset_mock if resets and self.mock else None).start()
            url = proxy.url
        link = self.link = Link.open(self.config, port=url)
        self._mark_clock("start")  # the board runs from its port's opening (the harness holds it until then)
        if self.mock:
            link.work_time_scale = self.time_scale  # the mock's actions run this much faster
        assert isinstance(self.camera, SimulatedCamera)  # a second camera joins it below
        view_mover = self.view_mover = TimedArmViewMover(link, self.camera)  # the camera knows when the cube moved
        sequence = ScanSequence.from_config(self.config)
        self.regions = scan_regions(self.pose, sequence)
        if "second" in sequence.cameras:  # views taken by a second camera (robot/sim/second_camera.py)
            from .second_camera import add_second_camera

            add_second_camera(self, sequence)
        self.prepare_arms()
        self.loaded_pair = view_mover.holding = self.load_cube()  # the view mover knows which pair holds
        return self

    def _check_baud(self) -> None:
        """A pty has no baud rate, a real Uno does: at another speed than the firmware's it is not
        understood. The simulation says so instead of answering as if the speeds matched."""
        from ..link import protocol as P
        from ..link.errors import HandshakeError

        baud = self.config.link.baud
        if baud != P.BAUD:
            raise HandshakeError(
                f"link.baud is {baud} but the firmware talks at {P.BAUD} baud (SERIAL_BAUD in "
                f"firmware/cube_robot/defaults.h): a real board would not be understood (SIMULATED: the emulated "
                f"port has no baud rate, so this is predicted, not seen). Set link.baud: {P.BAUD}")

    def prepare_arms(self) -> None:
        """What a real run's pre-flight does (robot/arms/doctor_checks.py): the board forgot the arms
        when its port opened, so they are homed with their sensors (motion.homing.sensors) or, without
        sensors, confirmed straight (the virtual arms start straight, as if squared by eye)."""
        from types import SimpleNamespace

        from ..arms.doctor_checks import check_arms
        from ..checks import FAIL, PreflightFailed

        results = check_arms(self.config, SimpleNamespace(link=self.link, confirm_arms_straight=lambda arms: True))
        self.sync()  # the homing moves (in the air) reach the virtual robot before the scan
        failed = [f"motors and homing: {r.item}: {r.detail}" for r in results if r.status == FAIL]
        if failed:
            raise PreflightFailed(failed)

    def load_cube(self) -> str | None:
        """Put the cube in as `cube-robot load` does (docs/hardware.md, Bring-up 7): the start pair
        (robot.start_grip; RL when 'any') closes on it.  Returns that pair, or None with homing sensors (the
        arms home in the air first; the scan's first grip takes the cube).  SIMULATED: loaded on the run's
        own link, with no reset between; the state at the press is the same, as the firmware keeps closed
        grippers closed through a reset (firmware/cube_robot/grippers.cpp gripper_init)."""
        from ..arms.actions import PAIRS, load

        if self.config.motion.homing.sensors:
            return None
        start = self.config.robot.start_grip
        pair = start if start in PAIRS else PAIRS[0]
        load(self.link, pair, wait=lambda: None, tell_maker=lambda _message: None)
        self.sync()  # the virtual grippers close on the cube before the press
        return pair

    # The board is one of the two, and the link open, from start() on.
    def _the_mock(self) -> MockFirmware:
        assert self.mock is not None, "the mock firmware runs (no emulator)"
        return self.mock

    def _the_emulator(self) -> Emulator:
        assert self.emulator is not None, "the emulator runs"
        return self.emulator

    def _the_link(self) -> Link:
        assert self.link is not None, "start() opened it"
        return self.link

    def _reset_mock(self) -> None:
        if self.proxy is not None and self.proxy.connections > 1:  # reopened: an Uno resets (the first open is the power-on)
            self._the_mock().reset()

    def close(self) -> None:
        for last_look in (lambda: self._mark_clock("end"),
                          self.sync):  # the virtual cube as the firmware left it (reports compare claims with it)
            try:
                last_look()
            except Exception:
                pass
        stop_each(self.camera.close, self.link and self.link.close, self.proxy and self.proxy.stop,
                  self.emulator and self.emulator.close, self.mock and self.mock.stop)

    # -- how fast the simulation ran ------------------------------------------

    def board_ms(self) -> float:
        """The board's clock: the emulated CPU's cycles, or the mock's scaled clock."""
        return pinlog.cycles_to_ms(self.emulator.cycle()) if self.emulator else self._the_mock().clock_ms()

    def _mark_clock(self, name: str) -> None:
        if name in self.clock_marks or not (self.emulator or self.mock):
            return
        before = time.perf_counter()
        board = self.board_ms()
        self.clock_marks[name] = ((before + time.perf_counter()) / 2, board)

    def measured_speed(self) -> tuple[float, float] | None:
        """(board ms, host wall ms) elapsed over the run: the emulator runs as fast as the CPU lets it,
        the mock at its time_scale; None when the run did not get that far."""
        if "start" not in self.clock_marks or "end" not in self.clock_marks:
            return None
        (wall0, board0), (wall1, board1) = self.clock_marks["start"], self.clock_marks["end"]
        return board1 - board0, (wall1 - wall0) * 1000

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    # -- the buttons ---------------------------------------------------------

    def press_start(self) -> None:
        if self.emulator:
            self.emulator.tap("start")
        else:
            self._the_mock().press_start()

    loaded_pair: str | None = None  # the pair holding the cube at the press (load_cube)

    @property
    def start_note(self) -> str:
        loaded = (f"the cube was put in as `cube-robot load` does, pair {self.loaded_pair} holds it; "
                  if self.loaded_pair else "the cube sits in open grippers; ")
        return f"Pressing the emulated start button ({loaded}nobody needs to: this is the simulation)..."

    def wait_start(self, timeout_s: float) -> bool:
        """Press the virtual start button until the firmware's report of it arrives.

        The `btn start` line is an unacknowledged event: on a faulty link it can be
        lost, and then a person presses again; so does the simulation, once a second.
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.press_start()
            if self._the_link().wait_button(timeout_s=min(1.0, max(deadline - time.monotonic(), 0.0))):
                return True
        return False

    def press_estop(self) -> None:
        if self.emulator:
            self.emulator.press("estop")
        else:
            self._the_mock().estop_input()

    def release_estop(self) -> None:
        if self.emulator:
            self.emulator.release("estop")

    def disconnect(self) -> None:
        """Pull the USB cable (needs the fault proxy, which disconnect_at puts in the line)."""
        if self.proxy is None:
            raise RuntimeError("pulling the cable needs the fault proxy in the line (disconnect_at puts it there)")
        self.proxy.disconnect_now()

    # -- demonstration faults (the run's hooks) ------------------------------

    def before_scan(self, attempt: int | None) -> None:
        """The picture quality of the next scan: bad_scan spoils attempt 1 only."""
        bad = self.bad_scan if attempt == 1 else None
        self.camera.lighting = replace(self.lighting(), **BAD_LIGHTING[bad]) if bad else self.lighting()

    def lighting(self) -> render.Lighting:
        """Every scan's light: the lamp's (none: the plain light)."""
        return lamp_module.lit(render.Lighting(), self.lamp, self.light_brightness)

    @property
    def light_note(self) -> str | None:
        """What the run's report says of the lamp (None: no lamp)."""
        return None if self.lamp is None else f"SIMULATED lamp on every scan: {self.lamp.describe()}"

    def plan_ready(self, actions: int) -> list[str]:
        """A fault asked for at an action this plan does not have is not made: said before the plan runs."""
        return [f"{flag} {at} is outside this plan's actions 1..{actions}: that fault is not made in this run"
                for flag, at in (("--estop-at", self.estop_at), ("--disconnect-at", self.disconnect_at))
                if at is not None and not 1 <= at <= actions]

    def action_done(self, completed: int) -> None:
        """Pull the cable / press e-stop when plan action N (1-based) starts."""
        if self.disconnect_at and "disconnect" not in self._fired and completed >= self.disconnect_at - 1:
            self._fired.add("disconnect")
            self.disconnect()
        if self.estop_at and "estop" not in self._fired and completed >= self.estop_at - 1:
            self._fired.add("estop")
            self.press_estop()

    def review_scan(self, facelets: str, confidence: float) -> str | None:
        return None  # nobody looks at a simulated run's net between scan and solve

    def serial_fault_counts(self) -> tuple[int, int]:
        """(faults the proxy made, how many of them created the real-time e-stop byte)."""
        from ..link.protocol import RT_ESTOP
        from .fault_proxy import TO_DEVICE

        if self.proxy is None:
            return 0, 0
        # The proxy corrupts honestly: a damaged byte can become the real-time e-stop byte.
        return len(self.proxy.faults), self.proxy.created(RT_ESTOP, TO_DEVICE)

    # -- the mechanics follow the firmware -------------------------------------

    def sync(self) -> None:
        """Apply everything the firmware did since the last sync to the virtual cube (thread-safe)."""
        with self._sync_lock:
            if self.emulator:
                self._sync_from_pins()
            else:
                self._sync_from_mock()

    def _sync_from_pins(self) -> None:
        events = self._the_emulator().pin_events()
        if not events:
            return
        from ..link.protocol import gripper_widths

        # Each gripper's own widths (motion.arms.<arm>, else the pair-wide ones): closed when nearer to closed.
        widths = {arm: gripper_widths(self.motion, arm) for arm in "RLFB"}

        def closed(arm, us):
            open_us, closed_us = widths[arm]
            return abs(us - closed_us) < abs(us - open_us)
        timeline = []  # (cycle, order, kind, arm, value)
        new_changes: dict[str, list] = {arm: [] for arm in "RLFB"}  # for the true jaws
        # Only complete pulses are decoded, so a servo pulse cut off by the end of the log is
        # picked up next time: each kind of event keeps its own cursor.  The servo pulses are decoded
        # from the oldest gripper's last pulse already seen on (50 a second per gripper: the whole log
        # each time cost milliseconds per sync); a window's first pulse counts as a change, which
        # only sets a gripper to the state it has.
        seen = [self._servo_seen.get(arm, -1) for arm in "RLFB"]
        window = events[bisect.bisect_left(events, min(seen), key=lambda event: event.cycle):]
        pulses = self._servo_commands(pinlog.servo_pulses(window))
        for arm, changes in pinlog.width_changes(pulses).items():
            for pulse in changes:
                if pulse.start_cycle > self._servo_cursor.get(arm, -1):
                    timeline.append((pulse.start_cycle, 0, "grip", arm, closed(arm, pulse.width_us)))
                    new_changes[arm].append(pulse)
                    self._servo_cursor[arm] = pulse.start_cycle
            if pulses[arm]:
                self._servo_seen[arm] = pulses[arm][-1].start_cycle
        new_moves = self._motions.new_moves(events)
        for arm, moves in new_moves.items():
            for move in moves:  # DIR-level steps; the arm turns as its motor is wired
                physical = move.steps * mechanics.direction(self.reversed_motors, arm)
                timeline.append((move.start_cycle, 1, "turn", arm, physical))
        timeline.sort()
        for k, (_, _, kind, arm, value) in enumerate(timeline):
            try:
                if kind == "grip":
                    self.virtual.set_gripper(arm, value)
                else:
                    self.virtual.turn_arm(arm, value)
            except MechanicalError as exc:  # keep the evidence: the pin events around it (a rare flake: docs/known-problems.md)
                exc.args = (f"{exc.args[0]} [pin events around it: {self._save_jam(events, timeline, k)}]",)
                raise
        if self.jaws is not None:
            try:
                feed_pins(self.jaws, events, new_changes, new_moves, self._motions.pin_map)
            except MechanicalError as exc:  # the same evidence: the decoded timeline and the pin log
                exc.args = (f"{exc.args[0]} [pin events: {self._save_jam(events, timeline, max(0, len(timeline) - 1))}]",)
                self.jammed = self.jammed or exc.args[0]
                raise

    def _servo_commands(self, pulses: dict) -> dict:
        """The pulses a servo takes a position from: those within the firmware's servo range.

        simavr 1.6 (unlike an Uno) can lose a Timer1 compare when an OCR1A write meets the end of a gripper
        pulse, stretching it by one timer wrap (32.768 ms): read as a position, it closed an open gripper.
        Such pulses are left out and counted in `ignored_servo_pulses`."""
        low, high = SERVO_RANGE_US
        kept = {}
        for arm, arm_pulses in pulses.items():
            kept[arm] = [p for p in arm_pulses if low <= p.width_us <= high]
            self.ignored_servo_pulses += [(arm, p) for p in arm_pulses if not low <= p.width_us <= high
                                          and (arm, p) not in self.ignored_servo_pulses]
        return kept

    def _save_jam(self, events, timeline, k: int) -> str:
        """Write the decoded gripper/arm timeline around entry k and the whole pin log to a new folder
        (beside the scan pictures); return its path."""
        import datetime as dt
        import shutil

        from ..config import project_path

        folder = project_path(self.config.scan.images_dir).parent / "jams" / (
            dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f"))
        folder.mkdir(parents=True, exist_ok=True)
        resets = [ev.cycle for ev in events if ev.pin == pinlog.RESET]
        lines = [f"# decoded timeline (cycle, kind, arm, value); board resets at cycles {resets}",
                 f"# entry {k} raised; entries {max(0, k - 30)}..{k + 10} (of {len(timeline)})"]
        for i, (cycle, _, kind, arm, value) in enumerate(timeline[max(0, k - 30):k + 11], max(0, k - 30)):
            lines.append(f"{'>>' if i == k else '  '} {cycle} {pinlog.cycles_to_ms(cycle):10.1f} ms {kind} {arm} {value}")
        (folder / "timeline.txt").write_text("\n".join(lines) + "\n")
        shutil.copyfile(self._the_emulator().log_path, folder / "pins.log")
        return str(folder)

    def _sync_from_mock(self) -> None:
        executed = self._the_mock().executed
        for _, command in executed[self._cursor:]:
            action = command_action(command)
            if action is not None:
                self.virtual.apply_action(action)
        self._cursor = len(executed)

