"""Synthetic camera pictures of the cube, for testing the image path end to end.

`render_scan` draws the cube as the configured camera (config `camera.pose`,
`camera.width/height`) sees it in each view of the scan sequence: pinhole
perspective, black body, sticker gaps, and seeded lighting variation
(brightness, colour temperature, directional shading, noise, glare spots,
vignetting), and optionally a lamp whose reflection stays on every frame (robot/sim/lamp.py).  It also returns the matching sticker regions, so tests and the
calibration's region guess use exactly what was drawn.

Geometry (the pose, the projection, each sticker's quad) is the camera's, from
robot/vision/camera_geometry.py; the state in each view comes from the scan
sequence, so a render -> scan -> decode round trip checks the facelet mapping
for real.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from .. import cube
from ..vision.camera_geometry import STICKER_GAP, Camera3D, Pose, scan_regions, sticker_corners
from . import render_arms
from .lamp import Lamp, mix_map, view_looks

# Typical sticker colours (sRGB) of a standard cube; the colour letters are the
# faces of the solved cube (U white, R red, F green, D yellow, L orange, B blue).
STANDARD_PALETTE = {
    "U": (238, 238, 232),  # white
    "R": (196, 18, 38),  # red
    "F": (18, 158, 72),  # green
    "D": (250, 214, 16),  # yellow
    "L": (250, 112, 18),  # orange
    "B": (16, 72, 196),  # blue
}
STANDARD_NAMES = {"U": "white", "R": "red", "F": "green", "D": "yellow", "L": "orange", "B": "blue"}
BODY_RGB = (22, 22, 24)


@dataclass(frozen=True)
class Lighting:
    brightness: float = 1.0  # overall gain
    temperature_k: float = 6500.0  # light colour (the camera is white-balanced for 6500 K)
    noise_sigma: float = 2.0  # sensor noise, 0..255 units
    glare_spots: int = 0  # specular highlights on stickers
    glare_strength: float = 0.9  # 0..1 at the spot centre
    glare_radius: float = 0.12  # gaussian sigma of a glare spot, in sticker sizes
    vignetting: float = 0.15  # brightness loss at the image corners
    shading: float = 0.25  # how much faces turned away from the light darken
    light_dir: tuple = (0.3, 1.0, 0.6)  # direction towards the light (robot frame)
    offset_px: tuple = (0.0, 0.0)  # small camera shift (mount play), pixels
    sticker_jitter: float = 4.0  # per-sticker colour variation (print, wear), 0..255 units
    lamp: Lamp | None = None  # the lamp's reflection on every frame (robot/sim/lamp.py); None: no lamp

    @classmethod
    def random(cls, rng: np.random.Generator, ranges: dict | None = None) -> "Lighting":
        """Random lighting within `ranges` (name -> (low, high)); defaults are moderate."""
        r = {
            "brightness": (0.7, 1.25), "temperature_k": (4200.0, 8000.0), "noise_sigma": (1.0, 5.0),
            "glare_spots": (0, 2), "vignetting": (0.0, 0.35), "shading": (0.1, 0.35), "offset_px": (0.0, 4.0),
        }
        r.update(ranges or {})
        direction = rng.normal(size=3) * 0.5 + np.array([0.2, 1.0, 0.5])
        angle = rng.uniform(0, 2 * np.pi)
        shift = rng.uniform(*r["offset_px"])
        return cls(
            brightness=float(rng.uniform(*r["brightness"])),
            temperature_k=float(rng.uniform(*r["temperature_k"])),
            noise_sigma=float(rng.uniform(*r["noise_sigma"])),
            glare_spots=int(rng.integers(int(r["glare_spots"][0]), int(r["glare_spots"][1]) + 1)),
            vignetting=float(rng.uniform(*r["vignetting"])),
            shading=float(rng.uniform(*r["shading"])),
            light_dir=tuple(float(v) for v in direction),
            offset_px=(float(shift * np.cos(angle)), float(shift * np.sin(angle))),
        )


def temperature_gain(kelvin: float) -> np.ndarray:
    """RGB gain of a light of this colour temperature relative to 6500 K (camera white point)."""
    return _blackbody_rgb(kelvin) / _blackbody_rgb(6500.0)


def _blackbody_rgb(kelvin: float) -> np.ndarray:
    # Tanner Helland's fit of the blackbody locus in sRGB (good to a few percent, 1000-40000 K).
    t = kelvin / 100.0
    r = 255.0 if t <= 66 else 329.698727446 * (t - 60) ** -0.1332047592
    g = 99.4708025861 * np.log(t) - 161.1195681661 if t <= 66 else 288.1221695283 * (t - 60) ** -0.0755148492
    b = 255.0 if t >= 66 else (0.0 if t <= 19 else 138.5177312231 * np.log(t - 10) - 305.0447927307)
    return np.clip(np.array([r, g, b]), 1.0, 255.0)


# ---------------------------------------------------------------------------
# Drawing.

_SUPERSAMPLE = 2


def stickers2(face: str, half: float) -> list:
    """(facelet index, 3D corners) of the 2x2x2's stickers on `face` (render3.stickers3: the 3x3x3's)."""
    first = cube.FACES.index(face) * 4
    return [(index, sticker_corners(index, half, 1 - STICKER_GAP)[0]) for index in range(first, first + 4)]


def render_state(facelets: str, pose: Pose, lighting: Lighting = Lighting(), rng=None,
                 palette: dict = STANDARD_PALETTE, arms=None, stickers=stickers2) -> np.ndarray:
    """One BGR frame of a cube whose robot-frame facelet string is `facelets` (letters keyed in `palette`);
    `arms`: a robot/sim/render_arms.py ArmsView (the arms and their shadows), None: a bare cube;
    `stickers`: the puzzle's sticker layout (face, half edge) -> [(facelet index, corners)]."""
    rng = rng if rng is not None else np.random.default_rng(0)
    s = _SUPERSAMPLE
    big = replace(pose, width=pose.width * s, height=pose.height * s)
    camera = Camera3D(big, (lighting.offset_px[0] * s, lighting.offset_px[1] * s))
    half = pose.cube_mm / 2
    light = np.asarray(lighting.light_dir, dtype=np.float64)
    light /= np.linalg.norm(light)

    # Background: a dim grey gradient (the robot frame behind the cube).
    canvas = np.empty((big.height, big.width, 3), np.float32)
    canvas[:] = (70.0 + 40.0 * np.linspace(0.0, 1.0, big.height, dtype=np.float32))[:, None, None]

    def shade(normal):
        return 1.0 - lighting.shading * (1.0 - max(0.0, float(normal @ light)))

    glare_targets = []
    for face in cube.FACES:
        normal = np.array(cube.FACE_FRAMES[face][0], dtype=np.float64)
        if not camera.sees(normal * half, normal):
            continue
        _, up, right = (np.array(v, dtype=np.float64) for v in cube.FACE_FRAMES[face])
        body = np.array([normal + up + right, normal + up - right, normal - up - right, normal - up + right]) * half
        _fill(canvas, camera.project(body), np.array(BODY_RGB) * shade(normal))
        for index, corners in stickers(face, half):
            colour = np.array(palette[facelets[index]], dtype=np.float64)
            colour = colour + rng.normal(0.0, lighting.sticker_jitter, 3)
            quad = camera.project(corners)
            _fill(canvas, quad, colour * shade(normal))
            glare_targets.append(quad)
    if arms is not None:
        seen = [f for f in cube.FACES if camera.sees(np.array(cube.FACE_FRAMES[f][0], dtype=np.float64) * half,
                                                     np.array(cube.FACE_FRAMES[f][0], dtype=np.float64))]
        unlit = render_arms.draw_shadows(canvas, camera, arms, half, render_arms.light_direction(lighting), seen)

    if lighting.lamp is not None:  # glossy faces: the lamp's white, where it reflects towards the camera
        mix = mix_map(big, lighting.lamp, (lighting.offset_px[0] * s, lighting.offset_px[1] * s))
        if arms is not None:  # no reflection of the lamp where an arm stands between it and the face
            mix = mix * (1.0 - unlit)[..., None]
        canvas += (255.0 - canvas) * mix
    if arms is not None:
        render_arms.draw_arms(canvas, camera, arms, half, render_arms.light_direction(lighting), lighting.shading, seen)
    image = cv2.resize(canvas, (pose.width, pose.height), interpolation=cv2.INTER_AREA)
    image *= (lighting.brightness * temperature_gain(lighting.temperature_k)).astype(np.float32)
    _vignette(image, lighting.vignetting)
    _add_glare(image, glare_targets, lighting, rng, s)
    image += np.float32(lighting.noise_sigma) * rng.standard_normal(image.shape, dtype=np.float32)
    return cv2.cvtColor(np.clip(np.round(image), 0, 255).astype(np.uint8), cv2.COLOR_RGB2BGR)


def _fill(canvas: np.ndarray, quad: np.ndarray, rgb) -> None:
    shift = 4
    cv2.fillConvexPoly(canvas, np.round(quad * (1 << shift)).astype(np.int32),
                       tuple(float(c) for c in rgb), lineType=cv2.LINE_8, shift=shift)


def _add_glare(image, quads, lighting: Lighting, rng, supersample: int) -> None:
    """Specular spots: whitish blobs that saturate towards the centre, on random visible stickers."""
    if not lighting.glare_spots or not quads:
        return
    h, w = image.shape[:2]
    for _ in range(lighting.glare_spots):
        quad = quads[int(rng.integers(len(quads)))] / supersample
        size = np.sqrt(abs(cv2.contourArea(quad.astype(np.float32))))
        weights = rng.dirichlet(np.ones(4))
        centre = weights @ quad
        radius = max(1.5, lighting.glare_radius * size * rng.uniform(0.6, 1.4))
        x0, x1 = int(max(0, centre[0] - 3 * radius)), int(min(w, centre[0] + 3 * radius + 1))
        y0, y1 = int(max(0, centre[1] - 3 * radius)), int(min(h, centre[1] + 3 * radius + 1))
        ys, xs = np.ogrid[y0:y1, x0:x1]
        d2 = (xs - centre[0]) ** 2 + (ys - centre[1]) ** 2
        # Flat-topped: the core saturates (clips) like a real highlight, the rim fades.
        alpha = np.minimum(1.0, 1.4 * lighting.glare_strength * np.exp(-d2 / (2 * radius**2)))[..., None]
        patch = image[y0:y1, x0:x1]
        image[y0:y1, x0:x1] = patch * (1 - alpha) + 275.0 * alpha  # over-bright: clips like a real highlight


def _vignette(image, strength: float) -> None:
    if strength <= 0:
        return
    h, w = image.shape[:2]
    ys, xs = np.ogrid[0:h, 0:w]
    r2 = ((xs - w / 2) ** 2 + (ys - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
    image *= (1.0 - strength * r2).astype(np.float32)[..., None]


def render_scan(start_facelets: str, sequence, pose: Pose, lighting: Lighting = Lighting(), seed: int = 0,
                palette: dict = STANDARD_PALETTE, view_arms=None):
    """Frames of every scan view and their regions.

    start_facelets: the cube in the robot frame when the scan starts (letters
    keyed in `palette`).  Returns ({view name: BGR frame}, Regions).  The same
    seed gives the same pictures.  view_arms: one robot/sim/render_arms.py ArmsView per view (None: bare cube).
    """
    rng = np.random.default_rng(seed)
    frames = {}
    states = sequence.states_at_views(start_facelets)
    for number, (view, state) in enumerate(zip(sequence.views, states)):
        arms = view_arms[number] if view_arms is not None else None
        frames[view.name] = render_state(state, pose, lighting, rng, palette, arms)
    return frames, scan_regions(pose, sequence, lighting.offset_px)


def render_looks(start_facelets: str, sequence, pose: Pose, lighting, seed: int = 0, sampling=None):
    """Render a whole scan of `start_facelets` (robot frame at the scan's start) under `lighting` (its lamp
    included) and read each view: (frames, regions, [robot/sim/lamp.py ViewLook per view])."""
    frames, _ = render_scan(start_facelets, sequence, pose, lighting, seed=seed)
    regions = scan_regions(pose, sequence)  # what a calibration stores: the nominal pose
    return frames, regions, view_looks(frames, sequence, regions, pose, lighting.lamp, sampling)
