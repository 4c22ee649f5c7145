"""Everything a run needs that does not depend on the cube, made ready before the start press:
the solver with its tables, the camera opened and settled (held open for the whole run),
the firmware handshake (done when the robot starts: `with robot:`), and which pair holds the cube
(the board's WHERE: the scan's first GRIP to that pair is then not sent).

    ready = prepare(config, robot)   # before wait_start
    ready.solver.solve(...)          # no table load after the scan
    ready.release()                  # the run is over: the camera is closed

A real robot's pre-flight (robot/doctor/preflight.py) already loads the tables and opens the camera;
what it loaded is reused (robot.tables, and the HeldCamera it opened), never loaded twice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..config_types import Config

if TYPE_CHECKING:  # the solver is imported when the tables load
    from ..solver import Solver


class HeldCamera:
    """A camera opened once and kept open: the scanner's and the pre-flight's `with camera:` then
    neither reopen it (a real webcam takes its settle frames, about a second, at every open) nor
    close it between views and scans.  release() closes it for real."""

    def __init__(self, camera):
        self.camera = camera
        self.is_open = False

    def open(self) -> "HeldCamera":
        if not self.is_open:
            self.camera.open()
            self.is_open = True
        return self

    def close(self) -> None:
        pass  # held: release() closes it

    def release(self) -> None:
        if self.is_open:
            self.is_open = False
            self.camera.close()

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        return False

    def __getattr__(self, name):  # capture, settings, lighting, ...: the camera's own
        return getattr(self.camera, name)

    def __setattr__(self, name, value):  # e.g. the sim's `camera.lighting = ...` reaches the camera
        if name in ("camera", "is_open"):
            object.__setattr__(self, name, value)
        else:
            setattr(self.camera, name, value)


def hold_camera(robot) -> HeldCamera:
    """robot.camera, wrapped once in a HeldCamera."""
    if not isinstance(robot.camera, HeldCamera):
        robot.camera = HeldCamera(robot.camera)
    return robot.camera


@dataclass
class Ready:
    solver: Solver
    camera: HeldCamera
    tables_load_ms: float  # 0 when the pre-flight had loaded them
    camera_open_ms: float

    def release(self) -> None:
        self.camera.release()


def import_scan_modules() -> None:
    """Import before the press what the scan uses after it: in a fresh `cube-robot run` these imports
    (about 30 ms: concurrent.futures with logging, numpy.ma, which np.nanmedian imports on its first
    call in a partial decode, and the adaptive scan's modules) would otherwise run on the clock."""
    import concurrent.futures  # noqa: F401  (the sampling worker)

    import numpy.ma  # noqa: F401

    from ..vision import adaptive, cameras, net, partial  # noqa: F401


def prepare(config: Config, robot) -> Ready:  # robot: a robot/run/robot.py Robot (which imports this module)
    """Tables loaded (or taken from the pre-flight) and the camera open, before the start press."""
    from ..solver import Solver

    import_scan_modules()
    if robot.view_mover is not None:  # which pair holds; the arms are still from now on
        robot.view_mover.learn()
    started = time.perf_counter()
    solver = Solver(config, tables=robot.tables)
    tables_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    camera = hold_camera(robot).open()
    camera_ms = (time.perf_counter() - started) * 1000
    return Ready(solver, camera, round(tables_ms, 1), round(camera_ms, 1))
