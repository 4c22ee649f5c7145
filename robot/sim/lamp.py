"""The simulated lamp (SIMULATED): a specular highlight fixed where the lamp stands, drawn on every frame.

A lamp is a point light fixed beside the camera (the camera and the lamp do not move; the robot turns
the cube between them).  Stickers and the cube's plastic are glossy: a point of a face looks washed
toward the lamp's white by how close the lamp's mirror direction there (the direction to the lamp
reflected about the face's normal) comes to the direction to the camera; a gaussian lobe of
`spread_deg`.  So the highlight sits on the same place of the picture in every frame of every view,
and a sticker washed out in one view is clean in another, where the cube turned it to another face or
another place of its face.

Config `camera.lighting` (config.yaml) names a preset and may override its strength, spread and
position.  `strength` is the mix with the lamp's white at the centre of the most washed sticker
(0.4 = a 40 % mix, as glare 0.4 in bench/vision.py); between stickers the highlight may be a little
brighter.  The position is in the camera's frame: millimetres to the right, up and back (towards the
camera) from the cube's centre.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np

from .. import cube
from ..config_types import Config
from ..vision.camera_geometry import Camera3D, Pose, sticker_corners


@dataclass(frozen=True)
class Lamp:
    """A lamp as the renderer uses it (robot/sim/render.py Lighting.lamp)."""

    position_mm: tuple  # (x, y, z) in the robot frame (x -> R, y -> U, z -> F), from the cube's centre
    spread_deg: float  # sigma of the highlight: angle between the lamp's mirror direction and the camera's
    peak: float  # mix with white where the mirror direction meets the camera exactly (a pixel's is capped at 1)
    name: str = "custom"  # the preset it came from (what the run's report says)
    strength: float = 0.0  # mix at the centre of the most washed sticker of the main camera (what config said)

    def describe(self) -> str:
        return f"{self.name} (strength {self.strength:g}, spread {self.spread_deg:g} deg)"


@dataclass(frozen=True)
class Preset:
    """A named lamp: where its highlight's centre falls (a point of a face's plane, in the face's own
    units: `up` and `right` along the face's net axes, the cube spanning -1..1; beyond 1 is off the face)."""

    face: str
    up: float
    right: float
    distance_mm: float  # lamp to that point
    spread_deg: float
    strength: float
    brightness: float = 1.0  # the scene's light (render.Lighting.brightness)


PRESETS = {
    # A ceiling lamp behind the robot: its reflection on the top face, centred on the back-right sticker.
    "glare": Preset("U", 0.5, 0.5, 400.0, 6.0, 0.4),
    # A low lamp to the right: a broad reflection beside the front face's right column.
    "side": Preset("F", 0.0, 1.4, 350.0, 10.0, 0.4),
    # A dim room with a window: little light, a weak broad reflection over the top face's middle.
    "dim": Preset("U", 0.0, 0.0, 600.0, 14.0, 0.25, brightness=0.55),
}
NONE = "none"
CHOICES = (NONE, *PRESETS)


class LampError(ValueError):
    """A lamp preset or setting that does not exist (names the choices)."""


def check_name(name: str) -> str:
    if name not in CHOICES:
        raise LampError(f"no lamp preset {name!r}: the choices are {', '.join(CHOICES)}")
    return name


def _camera_axes(pose: Pose) -> np.ndarray:
    """Rows: the camera's right, up and back (towards the camera) in the robot frame."""
    camera = Camera3D(pose)
    return np.array([camera.right, -camera.down, -camera.forward])


def aimed_position(pose: Pose, preset: Preset) -> np.ndarray:
    """The lamp position (robot frame, mm) whose mirror reflection reaches the camera from the preset's point."""
    normal, up, right = (np.array(v, dtype=np.float64) for v in cube.FACE_FRAMES[preset.face])
    half = pose.cube_mm / 2
    point = (normal + up * preset.up + right * preset.right) * half
    to_camera = Camera3D(pose).position - point
    to_camera /= np.linalg.norm(to_camera)
    mirror = 2 * float(normal @ to_camera) * normal - to_camera
    return point + mirror * preset.distance_mm


def lobe(position_mm, spread_deg: float, points: np.ndarray, normals: np.ndarray, camera_at: np.ndarray) -> np.ndarray:
    """The highlight's shape (1 at its centre) at surface `points` (n, 3) with `normals` (n, 3)."""
    to_lamp = np.asarray(position_mm, dtype=np.float64) - points
    to_lamp /= np.linalg.norm(to_lamp, axis=-1, keepdims=True)
    to_camera = camera_at - points
    to_camera /= np.linalg.norm(to_camera, axis=-1, keepdims=True)
    facing = np.sum(normals * to_lamp, axis=-1)
    mirror = 2 * facing[..., None] * normals - to_lamp
    angle = np.degrees(np.arccos(np.clip(np.sum(mirror * to_camera, axis=-1), -1.0, 1.0)))
    return np.where(facing > 0, np.exp(-0.5 * (angle / spread_deg) ** 2), 0.0)


def _visible_faces(camera: Camera3D, half: float) -> list[str]:
    return [face for face in cube.FACES
            if camera.sees(np.array(cube.FACE_FRAMES[face][0], dtype=np.float64) * half,
                           np.array(cube.FACE_FRAMES[face][0], dtype=np.float64))]


def _centres(half: float, faces) -> tuple[list[int], np.ndarray, np.ndarray]:
    indices = [cube.FACES.index(face) * 4 + k for face in faces for k in range(4)]
    geometry = [sticker_corners(i, half, 1.0) for i in indices]
    return indices, np.array([c.mean(axis=0) for c, _ in geometry]), np.array([n for _, n in geometry])


def make_lamp(pose: Pose, position_mm, spread_deg: float, strength: float, name: str = "custom") -> Lamp:
    """A lamp at `position_mm` (robot frame) whose most washed sticker centre, seen from `pose`, mixes
    `strength` of white."""
    camera = Camera3D(pose)
    _, points, normals = _centres(pose.cube_mm / 2, _visible_faces(camera, pose.cube_mm / 2))
    worst = float(lobe(position_mm, spread_deg, points, normals, camera.position).max()) if len(points) else 0.0
    if worst < 1e-3:
        raise LampError(f"lamp {name!r}: its highlight ({spread_deg:g} deg) reaches no sticker the camera sees; "
                        "move it or widen camera.lighting.spread_deg")
    return Lamp(tuple(float(v) for v in position_mm), float(spread_deg), strength / worst, name, float(strength))


def preset_lamp(pose: Pose, name: str, strength: float | None = None, spread_deg: float | None = None,
                position_mm=None) -> tuple[Lamp | None, float]:
    """(the lamp, the scene's brightness) of a preset, with any of its values overridden; (None, 1.0) for none.

    position_mm: the lamp in the camera's frame (right, up, back from the cube's centre)."""
    if check_name(name) == NONE:
        return None, 1.0
    preset = PRESETS[name]
    if position_mm is None:
        position = aimed_position(pose, preset)
    else:
        position = np.asarray(position_mm, dtype=np.float64) @ _camera_axes(pose)
    lamp = make_lamp(pose, position, preset.spread_deg if spread_deg is None else spread_deg,
                     preset.strength if strength is None else strength, name)
    return lamp, preset.brightness


def from_config(config: Config, pose: Pose | None = None, name: str | None = None):
    """(lamp or None, brightness) from config `camera.lighting`; `name` (--light) replaces its preset."""
    settings = config.camera.lighting
    pose = pose if pose is not None else Pose.from_config(config)
    position = tuple(settings.position_mm) if settings.position_mm else None
    return preset_lamp(pose, name if name is not None else settings.preset, settings.strength,
                       settings.spread_deg, position)


def camera_frame_position(pose: Pose, lamp: Lamp) -> tuple:
    """The lamp's position in the camera's frame (right, up, back), mm: what camera.lighting.position_mm takes."""
    return tuple(float(v) for v in _camera_axes(pose) @ np.asarray(lamp.position_mm))


@lru_cache(maxsize=8)
def mix_map(pose: Pose, lamp: Lamp, offset_px: tuple = (0.0, 0.0)) -> np.ndarray:
    """(height, width, 1) float32: the mix with white at every pixel of the cube's visible faces (0 elsewhere).

    It depends on the geometry only, not on the cube's colours: the same for every frame of a view."""
    camera = Camera3D(pose, offset_px)
    half = pose.cube_mm / 2
    out = np.zeros((pose.height, pose.width), np.float32)
    ys, xs = np.mgrid[0:pose.height, 0:pose.width].astype(np.float64)  # pixel (i, j) covers the projected point (i, j)
    rays = (camera.forward[None, None, :] + camera.right * ((xs - camera.centre[0]) / camera.focal)[..., None]
            + camera.down * ((ys - camera.centre[1]) / camera.focal)[..., None])
    for face in _visible_faces(camera, half):
        normal, up, right = (np.array(v, dtype=np.float64) for v in cube.FACE_FRAMES[face])
        body = np.array([normal + up + right, normal + up - right, normal - up - right, normal - up + right]) * half
        mask = np.zeros_like(out, np.uint8)
        cv2.fillConvexPoly(mask, np.round(camera.project(body) * 16).astype(np.int32), 1, cv2.LINE_8, shift=4)
        inside = mask.astype(bool)
        along = rays[inside] @ normal
        t = (half - camera.position @ normal) / along
        points = camera.position + t[:, None] * rays[inside]
        normals = np.broadcast_to(normal, points.shape)
        out[inside] = np.minimum(1.0, lamp.peak * lobe(lamp.position_mm, lamp.spread_deg, points, normals,
                                                       camera.position))
    return out[..., None]


def position_mix(pose: Pose, lamp: Lamp | None) -> dict[int, float]:
    """{facelet index (robot frame): mix with white at its sticker's centre} for the stickers `pose` sees."""
    if lamp is None:
        return {}
    camera = Camera3D(pose)
    indices, points, normals = _centres(pose.cube_mm / 2, _visible_faces(camera, pose.cube_mm / 2))
    mixes = np.minimum(1.0, lamp.peak * lobe(lamp.position_mm, lamp.spread_deg, points, normals, camera.position))
    return {i: float(m) for i, m in zip(indices, mixes)}


def view_mix(pose: Pose, lamp: Lamp | None, sequence) -> list[np.ndarray]:
    """Per view of `sequence`: (24,) the mix at each sticker's centre in final-frame facelet order (NaN: not
    seen in that view).  The view's regions name facelets in the robot frame at that moment: where they sit."""
    at = position_mix(pose, lamp)
    out = []
    for v, view in enumerate(sequence.views):
        mix = np.full(cube.FACELET_COUNT, np.nan)
        for name, final in zip(view.facelets, sequence.final_positions(v)):
            mix[final] = at.get(cube.facelet_index(name), 0.0)
        out.append(mix)
    return out


def lit(lighting, lamp: Lamp | None, brightness: float = 1.0):
    """`lighting` (render.Lighting) with the lamp on and the scene's brightness scaled."""
    if lamp is None and brightness == 1.0:
        return lighting
    return replace(lighting, lamp=lamp, brightness=lighting.brightness * brightness)


# ---------------------------------------------------------------------------
# Readings per view (for benches and the fused second look: what each look saw, and how washed it was).


@dataclass(frozen=True)
class ViewLook:
    """One view's readings under the lamp, in final-frame facelet order (NaN: the view does not see it)."""

    view: str
    rgb: np.ndarray  # (24, 3) sRGB, as the scan samples its regions (robot/vision/regions.py sample_sticker)
    mix: np.ndarray  # (24,) the lamp's mix with white at the sticker's centre (0: clean)
    spread: np.ndarray  # (24,) the sampler's spread (Delta-E; how uneven the region looked)


def view_looks(frames: dict, sequence, regions, pose: Pose, lamp: Lamp | None, sampling=None) -> list[ViewLook]:
    """Every view's own readings of rendered `frames` (robot/sim/render.py render_scan), with the lamp's mix."""
    from ..vision.regions import default_sampling, sample_sticker

    sampling = sampling or default_sampling()
    mixes = view_mix(pose, lamp, sequence)
    looks = []
    for v, view in enumerate(sequence.views):
        rgb = np.full((cube.FACELET_COUNT, 3), np.nan)
        spread = np.full(cube.FACELET_COUNT, np.nan)
        for quad, final in zip(regions.quads(view.name), sequence.final_positions(v)):
            sample = sample_sticker(frames[view.name], quad, sampling)
            rgb[final], spread[final] = sample.rgb, sample.spread
        looks.append(ViewLook(view.name, rgb, mixes[v], spread))
    return looks

