"""The simulated webcam looking at the virtual 3x3x3 (SIMULATED): webcam.py's camera (frame period,
driver queue, exposure, motion blur, the grabber's choice of frame by time) drawing render3's
pictures: nine stickers a face, the 3x3x3 grippers (config simulated_robot.gripper3) where the
virtual robot3 (virtual_robot3.py) put them when config simulated_robot.draw_arms is on.

    camera = SimulatedCamera3(robot, pose3(config), seed)   # robot.virtual: a VirtualRobot3
"""

from __future__ import annotations

import numpy as np

from . import render3
from .webcam import SimulatedCamera


class SimulatedCamera3(SimulatedCamera):
    """webcam.SimulatedCamera for a 3x3x3: the same timing, the 3x3x3's pictures."""

    def arm_geometry(self, config):
        return render3.arm_geometry3(config) if config.simulated_robot.draw_arms else None

    def draw(self, facelets: str, lighting, rng, **extra) -> np.ndarray:
        return render3.render_state3(facelets, self.pose, lighting, rng, **extra)

    def prerender(self, actions) -> None:
        """Not done for the 3x3x3 (a 2x2x2 view's actions say nothing of a 3x3x3): each state is rendered
        when its first frame is asked for."""
