"""`cube-robot doctor --sim`: the doctor's checks against the emulated robot and the simulated webcam,
so the first-day checklist can be rehearsed without hardware.

The robot is the one bring-up's `--sim` makes (robot/bringup/connection.py: the real firmware in simavr,
else the mock; a freshly built robot, its arms a few steps off straight); the camera is the
simulated webcam (robot/sim/webcam.py) looking at a solved virtual cube.  The handshake is read on
the emulated board's link, which is then closed so the arms check reads the board as the doctor
does (opening the port anew); nothing moves.  The file checks (regions, colours, tables) are the
real files a real run would use; their rows say what a simulated run does instead.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from ..checks import Result
from . import preflight
from ..config_types import Config

# Rows whose file a simulated run does not use: said beside the finding.
SIM_NOTES = {
    "regions file": "a simulated run uses the rendered camera's regions, not this file",
    "colour calibration": "a simulated run learns the colours from each scan, not from this file",
}


class StillCube:
    """What the simulated webcam needs of a robot: a solved virtual cube that nothing moves."""

    time_scale = 1.0

    def __init__(self, config: Config):
        from .. import cube
        from ..plan import RobotProfile
        from ..sim.virtual_robot import VirtualRobot

        self.config = config
        self.virtual = VirtualRobot(RobotProfile.from_config(config), cube.SOLVED,
                                    steps_per_rev=config.motion.steps_per_rev)

    def sync(self) -> None:  # the doctor moves nothing
        return None


def run_checks(config: Config, args, checks, handshake_title: str) -> tuple[str, list[tuple[str, Result]]]:
    """(what was emulated, rows): every check of `checks`, against the emulated robot."""
    from ..bringup.connection import ConnectedRobot
    from ..sim.webcam import SimulatedCamera
    from ..vision.camera_geometry import Pose

    with ConnectedRobot(config, sim=True, firmware=args.firmware) as robot:
        first = [(title, target) for title, target in checks if title == handshake_title]
        link = robot.link
        assert link is not None  # start() opened it
        rows = preflight.run_checks(config, SimpleNamespace(link=link), first)
        port = str(link.url)
        link.close()  # the arms check opens the port itself, as the doctor does on a robot
        robot.link = None
        context = SimpleNamespace(**vars(args))
        context.port = port
        context.camera = SimulatedCamera(StillCube(config), Pose.from_config(config))
        rows += preflight.run_checks(config, context, [c for c in checks if c[0] != handshake_title])
        backend = robot.backend
    assert backend is not None  # a simulated start names what it emulates
    marked = []
    for title, result in rows:
        if title == "camera":
            result = dataclasses.replace(result, item="simulated webcam")
        if title in SIM_NOTES:
            result = dataclasses.replace(result, detail=f"{result.detail} ({SIM_NOTES[title]})")
        marked.append((title, result))
    return backend, marked
