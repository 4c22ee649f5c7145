"""The four arms and their grippers in the simulated camera's pictures (SIMULATED).

Each arm (R L F B) stands on its face's axis: a shaft from far out to a crossbar in front of the
face, and two jaws from the crossbar's ends along the layer's sides, pressing on the layer when the
gripper is closed and `open_gap_mm` off it when open.  At angle 0 the jaws lie along the face's
net-up direction (robot.cube FACE_FRAMES; for R L F B: one jaw above the layer, one below); the arm
turns them clockwise seen from outside its face.  Everything is a box (the shaft too: a square
rod), drawn with a depth test against the cube's faces, so an arm hides what stands behind it and
the cube hides the arms behind it.  Each box casts a soft shadow on the cube's faces from the light.

Config `simulated_robot` (config.yaml) gives the sizes; the defaults are docs/hardware.md's reference
gripper.  A shadow also takes the lamp's reflection (robot/sim/lamp.py) where it falls: draw_shadows says
how much light each pixel lost.  `meeting_arms` tells which arms' parts would share space in a pose
(two arms a quarter round on perpendicular axes meet at the cube's vertical edges).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import cv2
import numpy as np

from .. import cube
from ..config_types import Config

ARM_FACES = ("R", "L", "F", "B")
ARM_RGB = (150.0, 152.0, 158.0)  # grey (aluminium / grey print)


@dataclass(frozen=True)
class ArmGeometry:
    """The reference gripper of docs/hardware.md (config simulated_robot.gripper holds the same)."""

    jaw_width_mm: float = 8.0  # across the jaw
    jaw_depth_mm: float = 8.0  # how far the jaw reaches along the layer, from the face
    jaw_thickness_mm: float = 3.0
    open_gap_mm: float = 12.0  # jaw to the cube when the gripper is open (0 when closed)
    crossbar_gap_mm: float = 5.0  # crossbar to the face when closed (a closed gripper does not press the face)
    shaft_radius_mm: float = 5.0  # half the square rod's side; the crossbar is as thick
    shaft_length_mm: float = 150.0  # from the crossbar outwards (reaches past the picture)
    shadow: float = 0.25  # darkening of a face in full shadow (0: no shadows)
    shadow_blur_mm: float = 3.0  # softness of a shadow's edge (one sigma)

    @classmethod
    def from_config(cls, config: Config) -> "ArmGeometry | None":
        """The geometry from config `simulated_robot`; None when the arms are not drawn."""
        sim = config.simulated_robot
        if not sim.draw_arms:
            return None
        g = sim.gripper
        return cls(g.jaw_width_mm, g.jaw_depth_mm, g.jaw_thickness_mm, g.open_gap_mm, g.crossbar_gap_mm,
                   g.shaft_radius_mm, shadow=sim.shadow)


@dataclass(frozen=True)
class ArmsView:
    """Where the arms stand in one picture (hashable: part of the webcam's render cache key)."""

    geometry: ArmGeometry
    angles: tuple = ()  # ((face, degrees clockwise from outside), ...); missing: 0
    closed: tuple = ()  # ((face, gripper closed?), ...); missing: open

    def __post_init__(self):
        # One order and form for one pose (the webcam's caches compare poses): every arm, ARM_FACES order.
        angles, closed = dict(self.angles), dict(self.closed)
        object.__setattr__(self, "angles", tuple((f, round(float(angles.get(f, 0.0)) % 360.0, 6)) for f in ARM_FACES))
        object.__setattr__(self, "closed", tuple((f, bool(closed.get(f, False))) for f in ARM_FACES))

    def angle(self, face: str) -> float:
        return dict(self.angles).get(face, 0.0)

    def is_closed(self, face: str) -> bool:
        return dict(self.closed).get(face, False)


def arms_of(virtual, geometry: ArmGeometry | None) -> ArmsView | None:
    """The arms of a robot/sim/virtual_robot.py VirtualRobot now (None when the arms are off)."""
    if geometry is None:
        return None
    per_degree = 360.0 / virtual.steps_per_rev
    angles = tuple((f, (virtual.arm_steps.get(f, 0) * per_degree) % 360.0) for f in ARM_FACES)
    return ArmsView(geometry, angles, tuple((f, bool(virtual.closed.get(f, False))) for f in ARM_FACES))


def after_actions(arms: ArmsView | None, actions, faces_of) -> ArmsView | None:
    """Where the arms stand after plan `actions` (Grip closes its pair, opens the rest; Turn turns)."""
    from ..plan import Grip, Turn

    if arms is None:
        return None
    angles, closed = dict(arms.angles), dict(arms.closed)
    for action in actions:
        if isinstance(action, Grip):
            pair = set(faces_of(action.pair))
            closed = {f: f in pair for f in ARM_FACES}
        elif isinstance(action, Turn):
            for face, degrees in action.arms.items():
                angles[face] = (angles.get(face, 0.0) + degrees) % 360.0
    return ArmsView(arms.geometry, tuple(sorted(angles.items())), tuple(sorted(closed.items())))


def boxes(arms: ArmsView, half: float) -> list[np.ndarray]:
    """Every box of every arm: (centre, 3 half-axis vectors) as a (4, 3) array, robot frame, mm."""
    return [box for face in ARM_FACES for box in arm_boxes(arms, half, face)]


def arm_boxes(arms: ArmsView, half: float, face: str) -> list[np.ndarray]:
    """One arm's boxes: crossbar, shaft, and its two jaws."""
    g = arms.geometry
    out = []
    normal, up, right = (np.array(v, dtype=np.float64) for v in cube.FACE_FRAMES[face])
    theta = np.radians(arms.angle(face))
    along = up * np.cos(theta) + right * np.sin(theta)  # the jaws' direction from the axis
    across = np.cross(normal, along)
    gap = 0.0 if arms.is_closed(face) else g.open_gap_mm
    r, t = g.shaft_radius_mm, g.jaw_thickness_mm
    reach = half + gap + t  # the jaws' outer faces from the axis
    bar_in = half + g.crossbar_gap_mm + gap  # an open gripper also backs off
    bar_mid = bar_in + r
    # crossbar: across the face between the jaws' outer faces
    out.append(np.array([normal * bar_mid, along * reach, across * (g.jaw_width_mm / 2), normal * r]))
    # shaft: from the crossbar outwards
    out.append(np.array([normal * (bar_mid + r + g.shaft_length_mm / 2), along * r, across * r,
                         normal * (g.shaft_length_mm / 2)]))
    # jaws: from the crossbar back along the layer's sides
    top, bottom = bar_in + 2 * r, half - g.jaw_depth_mm
    for side in (1.0, -1.0):
        centre = normal * (top + bottom) / 2 + along * side * (half + gap + t / 2)
        out.append(np.array([centre, along * (t / 2), across * (g.jaw_width_mm / 2), normal * (top - bottom) / 2]))
    return out


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Two boxes share volume (separating-axis test; boxes that only touch do not)."""
    axes = [v for v in (*a[1:], *b[1:])] + [np.cross(u, v) for u in a[1:] for v in b[1:]]
    d = b[0] - a[0]
    for axis in axes:
        norm = np.linalg.norm(axis)
        if norm < 1e-9:  # parallel edges: their plane's normals are tested already
            continue
        n = axis / norm
        if abs(d @ n) >= sum(abs(v @ n) for v in a[1:]) + sum(abs(v @ n) for v in b[1:]) - 1e-6:
            return False
    return True


def meeting_arms(arms: ArmsView, half: float) -> list[tuple[str, str]]:
    """The pairs of arms whose parts would occupy the same space standing as `arms` says (none: they pass)."""
    parts = {face: arm_boxes(arms, half, face) for face in ARM_FACES}
    return [(f, g) for i, f in enumerate(ARM_FACES) for g in ARM_FACES[i + 1:]
            if any(_overlap(a, b) for a in parts[f] for b in parts[g])]


def _corners(box: np.ndarray) -> np.ndarray:
    c, a, b, d = box
    return np.array([c + sa * a + sb * b + sd * d for sa in (-1, 1) for sb in (-1, 1) for sd in (-1, 1)])


def _box_faces(box: np.ndarray):
    """(quad (4, 3), outward normal) of each of a box's 6 faces."""
    c, *axes = box
    for i in range(3):
        n, (p, q) = axes[i], [axes[j] for j in range(3) if j != i]
        for sign in (1.0, -1.0):
            centre = c + sign * n
            quad = np.array([centre + p + q, centre + p - q, centre - p - q, centre - p + q])
            unit = sign * n / np.linalg.norm(n)
            yield quad, unit


def _depth_patch(camera, quad3d: np.ndarray, normal: np.ndarray, shape) -> tuple | None:
    """(mask, depth, bbox) of a planar quad in the image: depth along the camera's axis per pixel."""
    h, w = shape
    quad = camera.project(quad3d)
    x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int) - 1, 0)
    x1, y1 = np.minimum(np.ceil(quad.max(axis=0)).astype(int) + 2, (w, h))
    if x1 <= x0 or y1 <= y0:
        return None
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    shift = 4
    pts = np.round((quad - (x0, y0)) * (1 << shift)).astype(np.int32)
    cv2.fillConvexPoly(mask, pts, 1, lineType=cv2.LINE_8, shift=shift)
    ys, xs = np.mgrid[y0:y1, x0:x1]
    rays = (camera.forward[None, None, :] + ((xs - camera.centre[0]) / camera.focal)[..., None] * camera.right
            + ((ys - camera.centre[1]) / camera.focal)[..., None] * camera.down)
    denom = rays @ normal
    with np.errstate(divide="ignore", invalid="ignore"):
        depth = float((quad3d[0] - camera.position) @ normal) / denom
    depth = np.where(np.isfinite(depth) & (depth > 0), depth, np.inf)
    return mask.astype(bool), depth, (y0, y1, x0, x1)


def light_direction(lighting) -> np.ndarray:
    """Unit vector towards the light: the lamp if there is one (robot/sim/lamp.py), else light_dir."""
    lamp = getattr(lighting, "lamp", None)
    vec = np.asarray(lamp.position_mm if lamp is not None else lighting.light_dir, dtype=np.float64)
    return vec / np.linalg.norm(vec)


# The arms' layers depend on the geometry only (the cube's shape, the camera, the light, where the arms
# stand), never on the stickers' colours: every frame of a view reuses them (drawing them anew cost a
# simulated frame 64 -> 200 ms under load, and the webcam's frames came late).
_LAYERS: OrderedDict = OrderedDict()
_LAYERS_KEPT = 32  # a pose's two layers take a few MB at the 2x supersampled size; a scan has 4-8 poses
_LAYERS_LOCK = threading.Lock()


def _cached(kind: str, camera, arms: ArmsView, half: float, light: np.ndarray, faces, shape, extra, make):
    key = (kind, tuple(camera.position), tuple(camera.forward), tuple(camera.right), float(camera.focal),
           tuple(camera.centre), arms, half, tuple(np.asarray(light, dtype=np.float64)), tuple(faces), tuple(shape),
           extra)
    with _LAYERS_LOCK:
        if key in _LAYERS:
            _LAYERS.move_to_end(key)
            return _LAYERS[key]
    value = make()
    with _LAYERS_LOCK:
        _LAYERS[key] = value
        while len(_LAYERS) > _LAYERS_KEPT:
            _LAYERS.popitem(last=False)
    return value


def draw_shadows(canvas: np.ndarray, camera, arms: ArmsView, half: float, light: np.ndarray, faces) -> np.ndarray:
    """Darken the cube's visible `faces` where the arms stand between them and the light (soft edges).
    Returns how much of the light each pixel lost (0..1): the lamp's reflection is gone there too."""
    def make():
        total = _shadow_map(canvas.shape[:2], camera, arms, half, light, faces)
        ys, xs = np.nonzero(total)
        box = (ys.min(), ys.max() + 1, xs.min(), xs.max() + 1) if len(ys) else (0, 0, 0, 0)
        crop = total[box[0]:box[1], box[2]:box[3]].copy()
        crop.flags.writeable = False
        return box, crop

    (y0, y1, x0, x1), crop = _cached("shadow", camera, arms, half, light, faces, canvas.shape[:2], None, make)
    canvas[y0:y1, x0:x1] *= (1.0 - np.float32(arms.geometry.shadow) * crop)[..., None]  # only where it falls
    total = np.zeros(canvas.shape[:2], np.float32)
    total[y0:y1, x0:x1] = crop
    return total


def _shadow_map(shape, camera, arms: ArmsView, half: float, light: np.ndarray, faces) -> np.ndarray:
    g = arms.geometry
    h, w = shape
    if g.shadow <= 0:
        return np.zeros((h, w), np.float32)
    px_per_mm = camera.focal / float(np.linalg.norm(camera.position))
    parts = [_corners(b) for b in boxes(arms, half)]
    sigma = max(0.5, g.shadow_blur_mm * px_per_mm)
    total = np.zeros((h, w), np.float32)
    for face in faces:
        normal, up, right = (np.array(v, dtype=np.float64) for v in cube.FACE_FRAMES[face])
        towards = float(normal @ light)
        if towards <= 1e-3:  # the face is turned away from the light: its shading already darkens it
            continue
        # Only the face's own box (and a blur's reach around it): a whole-frame blur cost most of a frame's time.
        square = camera.project(np.array([normal + up + right, normal + up - right, normal - up - right,
                                          normal - up + right]) * half)
        margin = int(np.ceil(3 * sigma)) + 2
        x0, y0 = np.maximum(np.floor(square.min(axis=0)).astype(int) - margin, 0)
        x1, y1 = np.minimum(np.ceil(square.max(axis=0)).astype(int) + margin, (w, h))
        if x1 <= x0 or y1 <= y0:
            continue
        origin = np.array([x0, y0], dtype=np.float64)
        shadow = np.zeros((y1 - y0, x1 - x0), np.float32)
        for corners in parts:
            height = corners @ normal - half
            if height.max() <= 1e-6:
                continue
            # in front of the face: along the light onto it; behind: onto it straight (a part beside the face)
            flat = np.where((height > 0)[:, None], corners - np.outer(height / towards, light),
                            corners - np.outer(height, normal))
            hull = cv2.convexHull((camera.project(flat) - origin).astype(np.float32))
            cv2.fillConvexPoly(shadow, np.round(hull * 16).astype(np.int32), 1.0, lineType=cv2.LINE_8, shift=4)
        blurred = cv2.GaussianBlur(shadow, (0, 0), sigma)
        face_mask = np.zeros_like(shadow)
        cv2.fillConvexPoly(face_mask, np.round((square - origin) * 16).astype(np.int32), 1.0,
                           lineType=cv2.LINE_8, shift=4)
        local = total[y0:y1, x0:x1]
        np.maximum(local, blurred * face_mask, out=local)
    return total


def draw_arms(canvas: np.ndarray, camera, arms: ArmsView, half: float, light: np.ndarray, shading: float,
              faces) -> None:
    """Draw every arm's boxes over `canvas` (the cube already drawn), hidden where the cube is nearer."""
    mask, colour = _cached("arms", camera, arms, half, light, faces, canvas.shape[:2], float(shading),
                           lambda: _arms_layer(canvas.shape[:2], camera, arms, half, light, shading, faces))
    if not canvas.flags.c_contiguous:  # a reshaped copy would take the arms and drop them
        raise ValueError("draw_arms draws on a contiguous (height, width, 3) canvas")
    canvas.reshape(-1, 3)[mask] = colour  # flat indices: a boolean mask's assignment took twice as long


def _arms_layer(shape, camera, arms: ArmsView, half: float, light: np.ndarray, shading: float, faces):
    """(flat indices of the pixels an arm covers, their colours): the arms' boxes depth-tested against the cube."""
    h, w = shape
    layer = np.zeros((h, w, 3), np.float32)
    drawn = np.zeros((h, w), bool)
    zbuf = np.full((h, w), np.inf)
    for face in faces:  # the cube's visible faces: what hides the arms behind it
        normal, up, right = (np.array(v, dtype=np.float64) for v in cube.FACE_FRAMES[face])
        square = np.array([normal + up + right, normal + up - right, normal - up - right, normal - up + right]) * half
        patch = _depth_patch(camera, square, normal, (h, w))
        if patch is not None:
            mask, depth, (y0, y1, x0, x1) = patch
            view = zbuf[y0:y1, x0:x1]
            view[mask] = np.minimum(view[mask], depth[mask])
    colour = np.array(ARM_RGB, dtype=np.float32)
    for box in boxes(arms, half):
        for quad, normal in _box_faces(box):
            if not camera.sees(quad.mean(axis=0), normal):
                continue
            patch = _depth_patch(camera, quad, normal, (h, w))
            if patch is None:
                continue
            mask, depth, (y0, y1, x0, x1) = patch
            near = mask & (depth < zbuf[y0:y1, x0:x1])
            zbuf[y0:y1, x0:x1][near] = depth[near]
            shade = 1.0 - shading * (1.0 - max(0.0, float(normal @ light)))
            layer[y0:y1, x0:x1][near] = colour * np.float32(shade)
            drawn[y0:y1, x0:x1] |= near
    where = np.flatnonzero(drawn).astype(np.int32)
    colours = layer.reshape(-1, 3)[where]
    where.flags.writeable = colours.flags.writeable = False
    return where, colours


def scan_arms(start: ArmsView, sequence, faces_of) -> list[ArmsView]:
    """Where the arms stand at each view of a scan sequence, from `start` (the arms before its first view)."""
    out, arms = [], start
    for view in sequence.views:
        moved = after_actions(arms, view.actions, faces_of)
        assert moved is not None
        out.append(arms := moved)
    return out
