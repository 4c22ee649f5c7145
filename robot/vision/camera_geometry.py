"""Where the camera sees the cube: a camera pose, a pinhole projection, each sticker's image quad.

The calibration fits a pose to what a camera sees (robot/vision/pose_fit.py) and guesses the sticker
regions from it; the renderer of the virtual robot (robot/sim/render.py) draws with the same geometry,
so a rendered picture's regions are exactly what was drawn.  Geometry comes from robot.cube
(FACE_FRAMES and facelet order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import cube
from ..config_types import Config
from .regions import Regions

STICKER_GAP = 0.12  # share of a cubie face not covered by its sticker


@dataclass(frozen=True)
class Pose:
    elevation_deg: float = 45.0
    azimuth_deg: float = 0.0
    distance_mm: float = 200.0
    fov_deg: float = 55.0
    cube_mm: float = 50.0
    width: int = 640
    height: int = 480

    @classmethod
    def from_config(cls, config: Config) -> "Pose":
        cam = config.camera
        p = cam.pose
        return cls(p.elevation_deg, p.azimuth_deg, p.distance_mm, p.fov_deg, p.cube_mm, cam.width, cam.height)


class Camera3D:
    """Pinhole camera looking at the cube centre from the pose."""

    def __init__(self, pose: Pose, offset_px=(0.0, 0.0)):
        e, a = np.radians(pose.elevation_deg), np.radians(pose.azimuth_deg)
        direction = np.array([np.sin(a) * np.cos(e), np.sin(e), np.cos(a) * np.cos(e)])  # x->R, y->U, z->F
        self.position = direction * pose.distance_mm
        self.forward = -direction
        up = np.array([0.0, 1.0, 0.0]) if abs(direction[1]) < 0.999 else np.array([0.0, 0.0, -1.0])
        self.right = np.cross(self.forward, up)
        self.right /= np.linalg.norm(self.right)
        self.down = np.cross(self.forward, self.right)
        self.focal = (pose.width / 2) / np.tan(np.radians(pose.fov_deg) / 2)
        self.centre = np.array([pose.width / 2 + offset_px[0], pose.height / 2 + offset_px[1]])

    def project(self, points: np.ndarray) -> np.ndarray:
        rel = np.asarray(points, dtype=np.float64) - self.position
        z = rel @ self.forward
        return np.stack([rel @ self.right, rel @ self.down], axis=-1) * (self.focal / z)[..., None] + self.centre

    def sees(self, point, normal) -> bool:
        return float(np.dot(self.position - point, normal)) > 1e-6


def sticker_corners(index: int, half_mm: float, fill: float, n: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """3D corners (4, 3) of facelet `index`'s sticker and its outward normal; `fill` = sticker share of the cubie face.
    n: stickers along an edge (2; the 3x3x3's camera_geometry3 passes 3), faces row-major, n * n stickers each."""
    face = cube.FACES[index // (n * n)]
    normal, up, right = (np.array(v, dtype=np.float64) for v in cube.FACE_FRAMES[face])
    row, col = divmod(index % (n * n), n)
    middle = (n - 1) / 2
    centre = normal + (up * (middle - row) + right * (col - middle)) * (2.0 / n)  # cube spans -1..1
    h = fill / n
    corners = [centre + up * h - right * h, centre + up * h + right * h,
               centre - up * h + right * h, centre - up * h - right * h]
    return np.array(corners) * half_mm, normal


def facelet_quads(pose: Pose, facelets, offset_px=(0.0, 0.0), fill: float = 1 - STICKER_GAP) -> np.ndarray:
    """Image quads (n, 4, 2) of the named facelets' stickers (any face, visible or not)."""
    camera = Camera3D(pose, offset_px)
    quads = []
    for name in facelets:
        corners, _ = sticker_corners(cube.facelet_index(name), pose.cube_mm / 2, fill)
        quads.append(camera.project(corners))
    return np.array(quads)


def visible_faces(pose: Pose) -> list[str]:
    """The faces (URFDLB order) the camera sees from this pose (arms not counted)."""
    camera = Camera3D(pose)
    normals = {face: np.array(cube.FACE_FRAMES[face][0], dtype=np.float64) for face in cube.FACES}
    return [face for face, normal in normals.items() if camera.sees(normal * pose.cube_mm / 2, normal)]


def visible_facelets(pose: Pose) -> list[str]:
    """Facelets whose face the camera sees from this pose."""
    return [f"{face}{k}" for face in visible_faces(pose) for k in range(1, 5)]


def scan_regions(pose: Pose, sequence, offset_px=(0.0, 0.0)):
    """The regions (robot.vision.regions.Regions) of every view of a scan sequence from this pose."""
    views = {view.name: facelet_quads(pose, view.facelets, offset_px) for view in sequence.views}
    return Regions(views, (pose.width, pose.height), source="rendered")
