"""The simulated 3x3x3 robot (SIMULATED): the virtual 3x3x3 on the four arms (virtual_robot3.py), its
webcam (webcam3.py: the 2x2x2's frame timing, render3's pictures) and an op executor that carries out
robot/plan3.py ops on the virtual robot, each taking its robot3.timing time (scaled like the mock
firmware's actions: 1.0 with --realtime, else 0.02).

By default the executor is this module's own, not a firmware; with firmware="emulator" the real firmware
in simavr runs in its 3x3x3 mode (PUZZLE 3, TILT) and the host's link streams the plan3 ops to it as lines,
the virtual 3x3x3 moved only by its pins.  The serial fault flags are not built for either yet.  The
backend line says which robot ran, on every run.

    robot = SimulatedRobot3(config, facelets, seed=1)   # facelets: 54, the true colours (cube3 layout)
    robot.do_op({"op": "turn", "arms": {"R": 90}})       # raises virtual_robot3.Jam3 with its evidence
    frame = robot.camera.capture("view1")
"""

from __future__ import annotations

import copy
from concurrent.futures import Future
from dataclasses import replace

from typing import TYPE_CHECKING

from ..config_types import Config
from ..plan3 import Robot3Profile
from ..vision.camera_geometry3 import pose3
from ..vision.grabber import RealClock
from . import render
from .robot_sim import BAD_LIGHTING
from .virtual_robot import MechanicalError
from .virtual_robot3 import VirtualRobot3
from .webcam3 import SimulatedCamera3

BACKEND3 = ("SIMULATED 3x3x3: Python op executor (plan3 ops carried out on the virtual 3x3x3 in their "
            "robot3.timing time, not the firmware: --firmware emulator runs the board's 3x3x3 mode in simavr)")
if TYPE_CHECKING:
    from ..link.driver import Link
    from .emulator import Emulator

SPED_UP = 0.02  # the mock firmware's time scale without --realtime


class SimulatedRobot3:
    """The virtual 3x3x3 on four arms, its camera and an op executor."""

    def __init__(self, config: Config, facelets: str, seed: int = 0, realtime: bool = False,
                 time_scale: float | None = None, bad_scan: str | None = None, clock=RealClock,
                 firmware: str = "executor"):
        if bad_scan is not None and bad_scan not in BAD_LIGHTING:
            raise ValueError(f"bad_scan must be one of {tuple(BAD_LIGHTING)}, not {bad_scan!r}")
        self.config, self.clock, self.bad_scan = config, clock, bad_scan
        self.profile = Robot3Profile.from_config(config)
        self.time_scale = time_scale if time_scale is not None else (1.0 if realtime else SPED_UP)
        self.emu: Emulator | None = None  # the firmware in simavr (firmware="emulator")
        self.link: Link | None = None
        self.virtual = VirtualRobot3(self.profile, facelets, steps_per_rev=config.motion.steps_per_rev)
        self.backend = BACKEND3
        if firmware == "emulator":
            self._start_firmware(realtime)
        self.board_ms = 0.0  # the executor's arm time so far (unscaled)
        self.ops_done = 0
        self._due = 0.0  # when the executor's last op ends (clock time)
        self._prerendered: Future | None = None  # the last prerender's future
        self.camera = SimulatedCamera3(self, pose3(config), seed, clock)

    def _start_firmware(self, realtime: bool) -> None:
        """The real firmware in simavr in 3x3x3 mode, through the host's link (PUZZLE 3 at configure); every
        arm closed at 0, as a plan starts.  The virtual robot follows its pins from then on."""
        from ..link import ports
        from ..link.driver import Link, LinkSettings
        from . import emulator

        self.emu = emu = emulator.Emulator(realtime=realtime).start()
        try:
            settings = LinkSettings()
            link = self.link = Link(ports.open_port(emu.port, settings.baud), settings, motion=self.config.motion,
                                    url=emu.port, puzzle="3x3x3")
            link.handshake()
            link.configure()
            link.request("ZERO RLFB")
            link.run(["CLOSE RLFB"])
        except Exception:
            self.close()
            raise
        self.synced_cycle = emu.cycle()
        self.backend = ("SIMULATED 3x3x3: the real firmware in simavr (3x3x3 mode, plan3 ops streamed as lines by the "
                        "host's link); the virtual 3x3x3 moved only by its servo and step pins")

    def sync(self) -> None:
        """The virtual robot caught up with the firmware's pins (the executor updates it as each op ends)."""
        if self.emu is None:
            return
        from . import pins3

        events, until = self.emu.pin_events(), self.emu.cycle()
        try:
            pins3.replay(self.virtual, events, self.config.motion, self.synced_cycle)
        finally:
            self.synced_cycle = until

    def before_scan(self, attempt: int | None) -> None:
        """bad_scan spoils the first scan's picture only."""
        bad = self.bad_scan if attempt == 1 else None
        self.camera.lighting = replace(render.Lighting(), **BAD_LIGHTING[bad]) if bad else render.Lighting()

    def do_op(self, op: dict) -> float:
        """One plan3 op: it takes its model time (scaled), then the virtual robot carries it out (a Jam3
        leaves the cube as the virtual robot left it).  Returns the op's unscaled arm time in ms."""
        if self.link is not None:
            from ..link import protocol as P

            result = self.link.run([P.plan3_command(op)])  # a refused line stops with the board's error
            self.sync()  # a Jam3 from the pins
            done_ms = float(result.durations_ms[0] or 0.0)
            self.board_ms += done_ms
            self.ops_done += 1
            return done_ms
        ms = float(self.profile.op_cost(op))
        # Ops given back to back run back to back, as a firmware's queue runs them: each from the end of the
        # last one when that has not passed yet, so the host's own time between calls does not add up.
        start = max(self.clock.now(), self._due)
        self._due = start + ms / 1000.0 * self.time_scale
        self.clock.wait_until(self._due)
        self.virtual.apply_op(op, at_ms=self.board_ms)
        self.board_ms += ms
        self.ops_done += 1
        return ms

    def prerender_scan(self, sequence, before=()) -> None:
        """Render the pictures of a scan's views ahead (after the ops `before`, then each view's ops), on the
        camera's prerender thread, to keep the renderer's CPU time off the camera's clock as the 2x2x2's
        webcam does while its arms move.  Only a cache, guessed from the virtual robot: a wrong guess is not
        used, and one that would jam stops guessing."""
        from concurrent.futures import ThreadPoolExecutor

        from . import render_arms

        camera = self.camera
        rehearsal = copy.deepcopy(self.virtual)
        states = []
        try:
            for op in list(before):
                rehearsal.apply_op(op)
            for view in sequence.views:
                for op in view.ops:
                    rehearsal.apply_op(op)
                states.append((rehearsal.facelets(), render_arms.arms_of(rehearsal, camera.arms_geometry)))
        except MechanicalError:
            pass
        if camera._prerenderer is None:
            camera._prerenderer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sim-prerender")
        for facelets, arms in states:
            self._prerendered = camera._prerenderer.submit(camera._clean, facelets, camera.lighting, arms)

    def prerender_wait(self) -> None:
        """Until the pictures asked for so far are rendered (before the start press: the simulation's time)."""
        if self._prerendered is not None:
            self._prerendered.result()

    def close(self) -> None:
        if hasattr(self, "camera"):  # a firmware that did not start leaves no camera yet
            self.camera.close()
        if self.link is not None:
            self.link.close()
            self.link = None
        if self.emu is not None:
            self.emu.close()
            self.emu = None
