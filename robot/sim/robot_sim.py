"""A whole simulated robot: firmware (real in simavr, or the mock), serial link, mechanics, camera.

    with SimulatedRobot(config, state) as robot:   # state: the scrambled cube in the robot frame
        robot.link                                  # a connected robot.link.Link
        robot.camera, robot.regions, robot.presenter   # for robot.vision.scan.Scanner
        robot.sync(); robot.virtual.is_solved()

The virtual cube (robot/sim/virtual_robot.py) moves only from what the firmware
actually did: with the emulator, from step and servo pulses decoded from the
pin log; with the mock firmware, from the actions it reports executing.  The
camera renders that cube (robot/sim/render.py) as the configured camera would
see it.
"""

from __future__ import annotations

import time

import numpy as np

from ..link.driver import Link
from ..link.protocol import command_action
from ..plan import RobotProfile
from ..vision.camera import Camera
from ..vision.scan import LinkPresenter
from . import emulator as emulator_module
from . import pinlog, render
from .virtual_robot import VirtualRobot

FIRMWARE_CHOICES = ("auto", "emulator", "mock")
BAD_LIGHTING = {  # --bad-scan: the first scan's picture
    "dark": {"brightness": 0.015, "noise_sigma": 6.0},
    "glare": {"glare_spots": 12, "glare_strength": 1.0},
}
BUTTON_HOLD_CYCLES = 50 * pinlog.CYCLES_PER_SECOND // 1000


class SimulatedCamera(Camera):
    """Renders the virtual cube for each scan view."""

    def __init__(self, robot: "SimulatedRobot", pose: render.Pose, seed: int = 0):
        self.robot, self.pose = robot, pose
        self.rng = np.random.default_rng(seed)
        self.lighting = render.Lighting()

    def open(self) -> "SimulatedCamera":
        return self

    def close(self) -> None:
        pass

    def capture(self, view: str) -> np.ndarray:
        self.robot.sync()
        return render.render_state(self.robot.virtual.facelets(), self.pose, self.lighting, self.rng)

    def settings(self) -> dict:
        return {"camera": "simulated", "lighting": repr(self.lighting)}


class SimulatedRobot:
    """The robot/run/robot.py Robot interface, simulated, with demonstration faults:

    bad_scan ("dark" / "glare"): the first scan's picture is bad (the run must rescan);
    disconnect_at / estop_at N: the cable is pulled / the e-stop pressed at plan action N (1-based);
    fault_rate P: the serial bytes are corrupted, dropped, duplicated or delayed with probability P.
    """

    calibration = None  # the decoder learns the rendered colours from each scan

    def __init__(self, config, state, firmware: str = "auto", realtime: bool = False,
                 fault_rate: float = 0.0, seed: int = 0, time_scale: float | None = None,
                 bad_scan: str | None = None, disconnect_at: int | None = None, estop_at: int | None = None):
        if firmware not in FIRMWARE_CHOICES:
            raise ValueError(f"firmware must be one of {FIRMWARE_CHOICES}")
        if bad_scan is not None and bad_scan not in BAD_LIGHTING:
            raise ValueError(f"bad_scan must be one of {tuple(BAD_LIGHTING)}")
        self.config = config
        self.profile = RobotProfile.from_config(config)
        self.motion = config["motion"]
        self.virtual = VirtualRobot(self.profile, state, steps_per_rev=self.motion["steps_per_rev"])
        # Pulling the cable needs the fault proxy in the line, even with no other faults.
        fault_rate = fault_rate if fault_rate else (1e-9 if disconnect_at else 0.0)
        self.realtime, self.fault_rate, self.seed = realtime, fault_rate, seed
        self.bad_scan, self.disconnect_at, self.estop_at = bad_scan, disconnect_at, estop_at
        self._fired = set()  # the demonstration faults already made
        self.time_scale = time_scale if time_scale is not None else (1.0 if realtime else 0.02)
        usable, reason = emulator_module.available()
        if firmware == "emulator" and not usable:
            raise emulator_module.EmulatorError(f"the firmware emulator is not available: {reason}")
        self.uses_emulator = firmware == "emulator" or (firmware == "auto" and usable)
        self.backend = ("real firmware (.elf) in simavr" if self.uses_emulator
                        else "Python mock firmware" + ("" if firmware == "mock" else f" ({reason})"))
        self.emulator = self.mock = self.proxy = self.link = None
        self._cursor = 0  # emulator: last step cycle applied; mock: executed entries applied
        self._servo_cursor = {}  # emulator: start cycle of the last gripper change applied, per arm
        self.pose = render.Pose.from_config(config)
        self.camera = SimulatedCamera(self, self.pose, seed)
        self.regions = None
        self.presenter = None

    # -- life cycle ----------------------------------------------------------

    def start(self) -> "SimulatedRobot":
        from ..scan_sequence import ScanSequence

        if self.uses_emulator:
            self.emulator = emulator_module.Emulator(realtime=self.realtime).start()
            device_url = self.emulator.port
        else:
            from .mock_firmware import MockFirmware

            self.mock = MockFirmware(transport="pty", motion=self.motion, time_scale=self.time_scale).start()
            device_url = self.mock.url
        url = device_url
        if self.fault_rate:
            from .fault_proxy import FaultProxy

            self.proxy = FaultProxy(device_url, rate=self.fault_rate, seed=self.seed).start()
            url = self.proxy.url
        self.link = Link.open(self.config, port=url)
        self.presenter = LinkPresenter(self.link, after=self.sync)
        self.regions = render.scan_regions(self.pose, ScanSequence.from_config(self.config))
        return self

    def close(self) -> None:
        for stop in (self.link and self.link.close, self.proxy and self.proxy.stop,
                     self.emulator and self.emulator.close, self.mock and self.mock.stop):
            if stop:
                try:
                    stop()
                except Exception:  # closing is best effort; the first error was already reported
                    pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    # -- the buttons ---------------------------------------------------------

    def press_start(self) -> None:
        if self.emulator:
            # Hold the button for 50 ms of emulated time (the firmware debounces presses).
            pressed = self.emulator.press("start")
            while self.emulator.cycle() - pressed < BUTTON_HOLD_CYCLES:
                time.sleep(0.002)
            self.emulator.release("start")
        else:
            self.mock.press_start()

    def wait_start(self, timeout_s: float) -> bool:
        """Press the virtual start button until the firmware's report of it arrives.

        The `btn start` line is an unacknowledged event: on a faulty link it can be
        lost, and then a person presses again; so does the simulation, once a second.
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.press_start()
            if self.link.wait_button(timeout_s=min(1.0, max(deadline - time.monotonic(), 0.0))):
                return True
        return False

    def press_estop(self) -> None:
        if self.emulator:
            self.emulator.press("estop")
        else:
            self.mock.estop_input()

    def release_estop(self) -> None:
        if self.emulator:
            self.emulator.release("estop")

    def disconnect(self) -> None:
        """Pull the USB cable (needs the fault proxy, which disconnect_at puts in the line)."""
        self.proxy.disconnect_now()

    # -- demonstration faults (the run's hooks) ------------------------------

    def before_scan(self, attempt: int | None) -> None:
        """The picture quality of the next scan: bad_scan spoils attempt 1 only."""
        bad = self.bad_scan if attempt == 1 else None
        self.camera.lighting = render.Lighting(**BAD_LIGHTING[bad]) if bad else render.Lighting()

    def action_done(self, completed: int) -> None:
        """Pull the cable / press e-stop when plan action N (1-based) starts."""
        if self.disconnect_at and "disconnect" not in self._fired and completed >= self.disconnect_at - 1:
            self._fired.add("disconnect")
            self.disconnect()
        if self.estop_at and "estop" not in self._fired and completed >= self.estop_at - 1:
            self._fired.add("estop")
            self.press_estop()

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
        """Apply everything the firmware did since the last sync to the virtual cube."""
        if self.emulator:
            self._sync_from_pins()
        else:
            self._sync_from_mock()

    def _sync_from_pins(self) -> None:
        events = self.emulator.pin_events()
        if not events:
            return
        threshold = (self.motion["servo_open_us"] + self.motion["servo_closed_us"]) / 2
        timeline = []  # (cycle, order, kind, arm, value)
        # Only complete pulses are decoded, so a servo pulse cut off by the end of the log is
        # picked up next time: each kind of event keeps its own cursor.
        for arm, changes in pinlog.servo_changes(events).items():
            for pulse in changes:
                if pulse.start_cycle > self._servo_cursor.get(arm, -1):
                    timeline.append((pulse.start_cycle, 0, "grip", arm, pulse.width_us > threshold))
                    self._servo_cursor[arm] = pulse.start_cycle
        for arm, moves in pinlog.arm_motions(events, start_cycle=self._cursor + 1).items():
            for move in moves:
                timeline.append((move.start_cycle, 1, "turn", arm, move.steps))
                self._cursor = max(self._cursor, move.end_cycle)
        for _, _, kind, arm, value in sorted(timeline):
            if kind == "grip":
                self.virtual.set_gripper(arm, value)
            else:
                self.virtual.turn_arm(arm, value)

    def _sync_from_mock(self) -> None:
        executed = self.mock.executed
        for _, command in executed[self._cursor:]:
            action = command_action(command)
            if action is not None:
                self.virtual.apply_action(action)
        self._cursor = len(executed)

