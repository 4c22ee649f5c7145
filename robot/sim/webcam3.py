"""The simulated webcam looking at the virtual 3x3x3 (SIMULATED): webcam.py's camera (frame period,
driver queue, exposure, motion blur, the grabber's choice of frame by time) drawing render3's
pictures: nine stickers a face, the 3x3x3 grippers (config simulated_robot.gripper3) where the
virtual robot3 (virtual_robot3.py) put them when config simulated_robot.draw_arms is on, and the lamp
(robot/sim/lamp.py, config camera.lighting or a preset the robot names) on every frame.

    camera = SimulatedCamera3(robot, pose3(config), seed)   # robot.virtual: a VirtualRobot3
"""

from __future__ import annotations

import numpy as np

from ..vision.camera_geometry import Pose
from ..vision.grabber import RealClock
from . import lamp as lamp_module
from . import render, render3
from .webcam import SimulatedCamera


class SimulatedCamera3(SimulatedCamera):
    """webcam.SimulatedCamera for a 3x3x3: the same timing, the 3x3x3's pictures.

    The lamp stands where it is: every light the robot gives the camera (`camera.lighting = ...`, e.g. a
    bad scan's) is lit by it.  light: a lamp preset (robot/sim/lamp.py CHOICES) in place of config
    camera.lighting's; None: the robot's `light` attribute if it has one, else config's."""

    def __init__(self, robot, pose: Pose, seed: int = 0, clock=RealClock, light: str | None = None):
        light = light if light is not None else getattr(robot, "light", None)
        self.lamp, self.light_brightness = render3.lamp_from_config3(robot.config, pose, light)
        super().__init__(robot, pose, seed, clock)

    @property
    def lighting(self) -> render.Lighting:
        return self._lighting

    @lighting.setter
    def lighting(self, value: render.Lighting) -> None:
        # a light that already carries a lamp (a bench's, a test's) is taken as it is
        self._lighting = value if value.lamp is not None else lamp_module.lit(value, self.lamp, self.light_brightness)

    @property
    def light_note(self) -> str | None:
        """What a run's report says of the lamp (None: no lamp)."""
        return None if self.lamp is None else f"SIMULATED lamp on every scan: {self.lamp.describe()}"

    def arm_geometry(self, config):
        return render3.arm_geometry3(config) if config.simulated_robot.draw_arms else None

    def draw(self, facelets: str, lighting, rng, **extra) -> np.ndarray:
        return render3.render_state3(facelets, self.pose, lighting, rng, **extra)

    def prerender(self, actions) -> None:
        """Not done for the 3x3x3 (a 2x2x2 view's actions say nothing of a 3x3x3): each state is rendered
        when its first frame is asked for."""
