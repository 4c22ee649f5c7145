"""The robot the panel holds for as long as it runs, and the view of it each run borrows.

    held = HeldRobot.simulated(config, seed=1)      # or HeldRobot.hardware(config, port, arms_straight)
    held.start()                                    # the port opened once, the camera opened and kept open
    report = run_simulated_on(config, held.lend(review), started, options, tell_maker, bus)
    held.close()

A run normally owns its robot: `with robot:` connects, and leaving it closes the link and the camera.
The panel keeps both open between runs (opening a real Uno's port resets it; a webcam takes about a
second to settle at each open; the live view needs the camera's frames all the time), so each run gets
a BorrowedRobot: entering it runs what a run's start would check (the pre-flight), leaving it closes
nothing, and a failure that leaves the board moving sends the stop byte instead of closing the port.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..config_types import Config
from ..run.ready import HeldCamera
from ..run.robot import board_idle, emergency_stop

if TYPE_CHECKING:
    from ..link.driver import Link
    from ..run.robot import HardwareRobot
    from ..sim.robot_sim import SimulatedRobot


class KeptCamera(HeldCamera):
    """A HeldCamera the run cannot close: the run's release() leaves it open; close_for_good() closes it."""

    def release(self) -> None:
        pass  # the panel's live view keeps using it

    def close_for_good(self) -> None:
        HeldCamera.release(self)

    @property
    def grabber(self):
        """The camera's frame grabber (None until it is open, or for a camera without one)."""
        return getattr(self.camera, "grabber", None)


class HeldRobot:
    """A SimulatedRobot or a HardwareRobot, started once with its camera kept open."""

    def __init__(self, config: Config, robot: SimulatedRobot | HardwareRobot, simulated: bool, firmware: str = "auto",
                 light: str | None = None):
        self.config, self.robot, self.simulated = config, robot, simulated
        self.firmware = firmware  # simulation: "auto", "emulator" or "mock" (a new cube starts the same kind)
        self.light = light  # simulation: the lamp preset (None: config camera.lighting); a new cube keeps it
        self.camera: KeptCamera | None = None

    @classmethod
    def simulated_robot(cls, config: Config, state, firmware: str = "auto", seed: int = 0,
                        light: str | None = None) -> "HeldRobot":
        """The virtual robot with `state` (a cube.State) in its grippers, at real speed (a person watches)."""
        from ..sim.robot_sim import SimulatedRobot

        return cls(config, SimulatedRobot(config, state, firmware=firmware, realtime=True, seed=seed, light=light),
                   True, firmware, light)

    @classmethod
    def hardware(cls, config: Config, port: str | None, tell_maker, arms_straight: bool = False) -> "HeldRobot":
        from ..run.robot import HardwareRobot

        return cls(config, HardwareRobot(config, port, tell_maker, arms_straight=arms_straight), False)

    def start(self) -> "HeldRobot":
        from ..run.robot import HardwareRobot

        robot = self.robot
        if isinstance(robot, HardwareRobot):
            robot.start(preflight=False)  # the checks run at each Start (BorrowedRobot.__enter__)
        else:
            robot.start()
        camera = robot.camera
        inner = camera.camera if isinstance(camera, HeldCamera) else camera
        self.camera = KeptCamera(inner)
        robot.camera = self.camera  # both robots keep it in a plain attribute
        try:
            self.camera.open()
        except BaseException:
            self.close()
            raise
        return self

    @property
    def link(self) -> Link:
        link = self.robot.link
        assert link is not None, "start() opened it"
        return link

    @property
    def backend(self) -> str:
        return self.robot.backend

    def sync(self) -> None:
        """Simulation: the virtual cube and camera follow what the firmware did (after a bring-up action)."""
        if self.simulated:
            sim: SimulatedRobot = self.robot  # type: ignore[assignment]
            sim.sync()
            camera = sim.camera
            note = getattr(camera, "note_state", None)
            if note is not None:
                note()

    def arm_angle(self, arm: str) -> int | None:
        """Simulation: the virtual arm's physical angle in steps (None on a real robot)."""
        if not self.simulated:
            return None
        sim: SimulatedRobot = self.robot  # type: ignore[assignment]
        mechanics = sim.emulator or sim.mock
        return None if mechanics is None else mechanics.arm_position(arm)

    def lend(self, review: Callable[[str, float], str] | None = None) -> "BorrowedRobot":
        return BorrowedRobot(self, review)

    def close(self) -> None:
        if self.camera is not None:
            try:
                self.camera.close_for_good()
            except Exception:
                pass
        self.robot.close()


class BorrowedRobot:
    """The robot/run/robot.py Robot interface over a HeldRobot, for one run."""

    def __init__(self, held: HeldRobot, review: Callable[[str, float], str] | None = None):
        self.held, self._review = held, review

    # What the run reads: the held robot's.
    @property
    def backend(self) -> str:
        return self.held.backend

    @property
    def link(self):
        return self.held.robot.link

    @property
    def camera(self):
        return self.held.camera

    @camera.setter
    def camera(self, value) -> None:  # robot/run/ready.py hold_camera: ours is held already
        if value is not self.held.camera:
            raise ValueError("the panel's camera is held by the panel")

    @property
    def view_mover(self):
        return self.held.robot.view_mover

    @property
    def regions(self):
        return self.held.robot.regions

    @property
    def calibration(self):
        return self.held.robot.calibration

    @property
    def tables(self):
        return self.held.robot.tables

    @property
    def start_note(self) -> str:
        if self.held.simulated:  # the panel's Start presses the emulated button, as a person presses the robot's
            return "Start was pressed in the panel: pressing the emulated start button (SIMULATED)..."
        return "Start was pressed in the panel."

    def __enter__(self) -> "BorrowedRobot":
        """What a run checks when it starts the robot: the simulated robot's arms are readied as its start
        readies them; a real robot runs the pre-flight checks (PreflightFailed: NOT STARTED, nothing moved)."""
        robot = self.held.robot
        if self.held.simulated:
            robot.prepare_arms()  # type: ignore[union-attr]  # a SimulatedRobot
        else:
            robot.preflight()  # type: ignore[union-attr]  # a HardwareRobot
        return self

    def __exit__(self, *exc: object) -> None:
        # A run that ends by an error with the board still moving would have closed the port; the panel
        # keeps the port, so the stop byte stops the board instead.  Ctrl-C / Stop sent it already.
        error = exc[1] if exc else None
        if isinstance(error, Exception) and not board_idle(self):
            emergency_stop(self)

    def wait_start(self, timeout_s: float) -> bool:
        if self.held.simulated:  # the emulated start button, pressed as the robot's would be
            return self.held.robot.wait_start(timeout_s)
        self.held.robot.check_arms_still_ready()  # type: ignore[union-attr]  # a HardwareRobot
        return True  # the panel's Start is the press

    def before_scan(self, attempt: int | None) -> None:
        self.held.robot.before_scan(attempt)

    def plan_ready(self, actions: int) -> list[str]:
        return self.held.robot.plan_ready(actions)

    def action_done(self, completed: int) -> None:
        self.held.robot.action_done(completed)

    def review_scan(self, facelets: str, confidence: float) -> str | None:
        return self._review(facelets, confidence) if self._review is not None else None
