"""The simulated camera's pictures of a 3x3x3 on the four arms (SIMULATED).

The 2x2x2's renderer (render.py: lighting, glare, noise, vignetting, the lamp) with nine stickers a
face (vision/camera_geometry3.py), and the 2x2x2's arms (render_arms.py: shaft, crossbar, jaws,
shadows, depth-tested) with the 3x3x3 grippers of config `simulated_robot.gripper3`: a 3x3x3
gripper holds its face's middle third (jaws narrower than a sticker row, reaching no deeper than
the outer layer, so the middle slice turns free of them).  Closed at 0 a gripper's jaws lie on the
layer's net-up and net-down sides (for R, L, F and B: above and below), at 90 on its sides; its
crossbar covers the face's middle column (0) or row (90), so a gripped face's centre is never seen.

`seen_share` says how much of each sticker's sampled region the arms leave visible; the scan
sequence (robot/scan_sequence3.py, chosen by robot/sim/scan3_search.py) counts a sticker seen in a
view only when it is mostly visible (SEEN_SHARE).

The lamp is the 2x2x2's (robot/sim/lamp.py: a highlight fixed in the camera's frame on every frame,
glossy faces washed by their angle to it; config `camera.lighting` and the glare / side / dim presets):
render.render_state draws it for any sticker layout.  Only its strength is measured here on the 3x3x3's
stickers (preset_lamp3: the mix at the centre of the most washed sticker the camera sees), and
position_mix3 / view_mix3 say how washed each of the 54 is.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from .. import cube
from ..config_types import Config
from ..vision.camera_geometry import STICKER_GAP, Camera3D, Pose
from ..vision.camera_geometry3 import facelet_index3, facelet_quads3, scan_regions3, sticker_corners3
from . import lamp as lamp_module
from . import render, render_arms
from .render_arms import ArmGeometry, ArmsView

SEEN_SHARE = 0.8  # a sticker counts as seen when the arms leave this share of its sampled region visible
INNER_FRACTION = 0.6  # the share of a region's size that is sampled (config scan.sampling.inner_fraction)


def arm_geometry3(config: Config) -> ArmGeometry:
    """The 3x3x3 grippers (config simulated_robot.gripper3; shadows as the 2x2x2's)."""
    sim = config.simulated_robot
    g = sim.gripper3
    return ArmGeometry(g.jaw_width_mm, g.jaw_depth_mm, g.jaw_thickness_mm, g.open_gap_mm, g.crossbar_gap_mm,
                       g.shaft_radius_mm, shadow=sim.shadow)


def arms_at(geometry: ArmGeometry, angles: dict, closed: dict | None = None) -> ArmsView:
    """The arms standing at `angles` (degrees, per arm), closed unless `closed` says otherwise."""
    closed = closed or {}
    return ArmsView(geometry, tuple((f, float(angles.get(f, 0)) % 360.0) for f in render_arms.ARM_FACES),
                    tuple((f, bool(closed.get(f, True))) for f in render_arms.ARM_FACES))


def stickers3(face: str, half: float) -> list:
    """(facelet index, 3D corners) of the 3x3x3's nine stickers on `face` (render.render_state's layout)."""
    first = cube.FACES.index(face) * 9
    return [(index, sticker_corners3(index, half, 1 - STICKER_GAP)[0]) for index in range(first, first + 9)]


def render_state3(facelets: str, pose: Pose, lighting: render.Lighting = render.Lighting(), rng=None,
                  palette: dict = render.STANDARD_PALETTE, arms: ArmsView | None = None) -> np.ndarray:
    """One BGR frame of a 3x3x3 whose robot-frame facelets (54, cube3 layout) are `facelets`; `pose`
    has the 3x3x3's edge (camera_geometry3.pose3); `arms`: where the arms stand (None: a bare cube)."""
    return render.render_state(facelets, pose, lighting, rng, palette, arms, stickers=stickers3)


def render_scan3(start_facelets: str, sequence, pose: Pose, lighting: render.Lighting = render.Lighting(),
                 seed: int = 0, palette: dict = render.STANDARD_PALETTE, geometry: ArmGeometry | None = None):
    """Frames of every view of a 3x3x3 scan sequence and their regions: ({view name: BGR frame}, Regions).
    geometry: the arms drawn where the sequence leaves them (None: a bare cube)."""
    rng = np.random.default_rng(seed)
    frames = {}
    for view, state, angles, closed in zip(sequence.views, sequence.states_at_views(start_facelets),
                                           sequence.angles_at_views(), sequence.closed_at_views()):
        arms = arms_at(geometry, angles, closed) if geometry is not None else None
        frames[view.name] = render_state3(state, pose, lighting, rng, palette, arms)
    return frames, scan_regions3(pose, sequence, lighting.offset_px)


def arm_mask(pose: Pose, arms: ArmsView) -> np.ndarray:
    """Where the arms hide the cube in a picture from `pose`: (height, width) bool."""
    camera = Camera3D(pose)
    half = pose.cube_mm / 2
    faces = [f for f in cube.FACES if camera.sees(np.array(cube.FACE_FRAMES[f][0], dtype=np.float64) * half,
                                                  np.array(cube.FACE_FRAMES[f][0], dtype=np.float64))]
    canvas = np.zeros((pose.height, pose.width, 3), np.float32)
    render_arms.draw_arms(canvas, camera, arms, half, np.array([0.0, 1.0, 0.0]), 0.0, faces)
    return canvas[..., 0] > 0


def seen_share(pose: Pose, arms: ArmsView | None, facelets, inner_fraction: float = INNER_FRACTION) -> np.ndarray:
    """For each named facelet, the share of its sampled region (the quad shrunk to `inner_fraction` about
    its centre) that the arms leave visible (1.0 everywhere without arms)."""
    quads = facelet_quads3(pose, facelets)
    if arms is None:
        return np.ones(len(quads))
    hidden = arm_mask(pose, arms)
    out = []
    for quad in quads:
        centre = quad.mean(axis=0)
        inner = centre + (quad - centre) * inner_fraction
        mask = np.zeros(hidden.shape, np.uint8)
        cv2.fillConvexPoly(mask, np.round(inner * 16).astype(np.int32), 1, lineType=cv2.LINE_8, shift=4)
        region = mask.astype(bool)
        out.append(1.0 - float(hidden[region].mean()) if region.any() else 0.0)
    return np.array(out)


def rendered_readings3(start_facelets: str, sequence, pose: Pose, lighting: render.Lighting = render.Lighting(),
                       seed: int = 0, palette: dict = render.STANDARD_PALETTE,
                       geometry: ArmGeometry | None = None) -> np.ndarray:
    """54 sRGB readings (U1..B9 of the scan's final frame) of a rendered 3x3x3 scan, for the decoder's bench:
    every view rendered under `lighting` (noise, exposure via brightness, glare spots, the lamp), each
    listed sticker sampled as a scan samples it (vision/regions.py sample_sticker), a sticker seen in
    several views read as the per-channel median of its readings.  geometry: the grippers drawn where
    the sequence leaves them (None: a bare cube)."""
    from ..vision.regions import sample_sticker

    frames, regions = render_scan3(start_facelets, sequence, pose, lighting, seed, palette, geometry)
    readings: dict[int, list] = {}
    for view_index, region_index, final in sequence.mapping():
        view = sequence.views[view_index]
        sample = sample_sticker(frames[view.name], regions.quads(view.name)[region_index])
        readings.setdefault(final, []).append(sample.rgb)
    return np.array([np.median(readings[i], axis=0) for i in range(len(start_facelets))])


# ---------------------------------------------------------------------------
# The lamp (robot/sim/lamp.py) on the 3x3x3's stickers.


def position_mix3(pose: Pose, lamp: lamp_module.Lamp | None) -> dict[int, float]:
    """{facelet index (robot frame, 54): the lamp's mix with white at its sticker's centre} for the
    stickers `pose` sees (lamp.position_mix's, nine stickers a face)."""
    if lamp is None:
        return {}
    camera = Camera3D(pose)
    half = pose.cube_mm / 2
    indices, points, normals = [], [], []
    for face in cube.FACES:
        normal = np.array(cube.FACE_FRAMES[face][0], dtype=np.float64)
        if not camera.sees(normal * half, normal):
            continue
        for index, corners in stickers3(face, half):
            indices.append(index)
            points.append(corners.mean(axis=0))
            normals.append(normal)
    mixes = np.minimum(1.0, lamp.peak * lamp_module.lobe(lamp.position_mm, lamp.spread_deg, np.array(points),
                                                         np.array(normals), camera.position))
    return {i: float(m) for i, m in zip(indices, mixes)}


def preset_lamp3(pose: Pose, name: str, strength: float | None = None, spread_deg: float | None = None,
                 position_mm=None) -> tuple[lamp_module.Lamp | None, float]:
    """lamp.preset_lamp for a 3x3x3: (the lamp or None, the scene's brightness), `strength` being the mix
    at the centre of the most washed 3x3x3 sticker the camera sees (not the 2x2x2's)."""
    found, brightness = lamp_module.preset_lamp(pose, name, strength, spread_deg, position_mm)
    if found is None:
        return None, brightness
    worst = max(position_mix3(pose, replace(found, peak=1.0)).values(), default=0.0)
    if worst < 1e-3:
        raise lamp_module.LampError(f"lamp {name!r}: its highlight ({found.spread_deg:g} deg) reaches no 3x3x3 "
                                    "sticker the camera sees; move it or widen camera.lighting.spread_deg")
    return replace(found, peak=found.strength / worst), brightness


def lamp_from_config3(config: Config, pose: Pose, name: str | None = None) -> tuple[lamp_module.Lamp | None, float]:
    """(lamp or None, brightness) from config `camera.lighting` (lamp.from_config's); `name` (--light)
    replaces its preset."""
    settings = config.camera.lighting
    position = tuple(settings.position_mm) if settings.position_mm else None
    return preset_lamp3(pose, name if name is not None else settings.preset, settings.strength,
                        settings.spread_deg, position)


def view_mix3(pose: Pose, lamp: lamp_module.Lamp | None, sequence) -> list[np.ndarray]:
    """Per view of a 3x3x3 scan `sequence`: (54,) the lamp's mix at each sticker's centre in final-frame
    facelet order (NaN: not read in that view)."""
    at = position_mix3(pose, lamp)
    out = [np.full(6 * 9, np.nan) for _ in sequence.views]
    for v, region, final in sequence.mapping():
        out[v][final] = at.get(facelet_index3(sequence.views[v].facelets[region]), 0.0)
    return out

