"""Where the camera sees a 3x3x3's 54 stickers: the 2x2x2's camera (camera_geometry.py) with nine
stickers a face (robot/solver3/cube3.py's layout: each face row-major on the standard net).

The camera pose is the 2x2x2's (config camera.pose: above the front, 45 degrees, sees U and F); only
the cube's edge differs (config scan3.cube_mm).  The renderer (robot/sim/render3.py) draws with this
geometry, and `scan_regions3` is the first guess of a 3x3x3 scan's sticker regions from the pose, as
camera_geometry.scan_regions is for the 2x2x2.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import cube
from ..config_types import Config
from ..solver3 import cube3
from .camera_geometry import STICKER_GAP, Camera3D, Pose, sticker_corners, visible_faces
from .regions import Regions


def pose3(config: Config) -> Pose:
    """The camera pose with the 3x3x3's edge (scan3.cube_mm) in place of the 2x2x2's."""
    return replace(Pose.from_config(config), cube_mm=config.scan3.cube_mm)


def sticker_corners3(index: int, half_mm: float, fill: float = 1 - STICKER_GAP) -> tuple[np.ndarray, np.ndarray]:
    """3D corners (4, 3) of 3x3x3 facelet `index`'s sticker (robot frame, mm) and its outward normal."""
    return sticker_corners(index, half_mm, fill, 3)


def facelet_index3(name: str) -> int:
    """'U1'..'B9' -> 0..53."""
    if len(name) != 2 or name[0] not in cube.FACES or name[1] not in "123456789":
        raise ValueError(f"{name!r} is not a 3x3x3 facelet name (U1..B9)")
    return 9 * cube.FACES.index(name[0]) + int(name[1]) - 1


def facelet_quads3(pose: Pose, facelets, offset_px=(0.0, 0.0), fill: float = 1 - STICKER_GAP) -> np.ndarray:
    """Image quads (n, 4, 2) of the named 3x3x3 facelets' stickers (any face, visible or not)."""
    camera = Camera3D(pose, offset_px)
    return np.array([camera.project(sticker_corners3(facelet_index3(name), pose.cube_mm / 2, fill)[0])
                     for name in facelets])


def visible_facelets3(pose: Pose) -> list[str]:
    """The 3x3x3 facelets on faces the camera sees from this pose (arms not counted)."""
    return [cube3.facelet_name(9 * cube.FACES.index(face) + k) for face in visible_faces(pose) for k in range(9)]


def scan_regions3(pose: Pose, sequence, offset_px=(0.0, 0.0)) -> Regions:
    """The regions of every view of a 3x3x3 scan sequence (robot/scan_sequence3.py) from this pose."""
    views = {view.name: facelet_quads3(pose, view.facelets, offset_px) for view in sequence.views}
    return Regions(views, (pose.width, pose.height), source="rendered")
