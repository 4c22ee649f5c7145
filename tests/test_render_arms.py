"""The arms and grippers in the simulated pictures (robot/sim/render_arms.py): where they stand, what they
hide, their shadows, and nothing of them when they are off."""

from dataclasses import replace

import numpy as np
import pytest

from robot import config as config_module
from robot import cube
from robot.plan import Grip, RobotProfile, Turn
from robot.sim import render
from robot.sim import render_arms as ra
from robot.vision import camera_geometry
from robot.vision.scan import ScanSequence

SOLVED = cube.CubieCube().to_facelets(cube.FACES)
# Flat light: an unshaded arm face is exactly ARM_RGB, a sticker exactly its palette colour.
FLAT = render.Lighting(noise_sigma=0.0, sticker_jitter=0.0, vignetting=0.0, shading=0.0)


@pytest.fixture(scope="module")
def setup():
    config = config_module.defaults()
    return config, ScanSequence.from_config(config), camera_geometry.Pose.from_config(config)


def arms(geometry=ra.ArmGeometry(), angles=None, closed=""):
    angles = angles or {}
    return ra.ArmsView(geometry, tuple((f, float(angles.get(f, 0))) for f in ra.ARM_FACES),
                       tuple((f, f in closed) for f in ra.ARM_FACES))


def rgb_at(frame, pose, point, size=2):
    """Mean RGB of the picture around the projection of robot-frame point (mm)."""
    x, y = np.round(camera_geometry.Camera3D(pose).project(np.array([point], dtype=float))[0]).astype(int)
    return frame[y - size:y + size + 1, x - size:x + size + 1].reshape(-1, 3)[:, ::-1].mean(axis=0)


def is_arm(rgb):
    return bool(np.abs(rgb - np.array(ra.ARM_RGB)).max() < 4)


def test_arm_drawn_where_it_stands_and_moved_by_a_quarter_turn(setup):
    _, _, pose = setup
    # R's upper jaw (angle 0: the jaws above and below its layer), open: its top face's middle.
    on_jaw = (25.0, 25.0 + 6.0 + 4.0, 0.0)
    standing = render.render_state(SOLVED, pose, FLAT, arms=arms())
    assert is_arm(rgb_at(standing, pose, on_jaw))
    turned = render.render_state(SOLVED, pose, FLAT, arms=arms(angles={"R": 90}))
    assert not is_arm(rgb_at(turned, pose, on_jaw))  # the jaws now lie before and behind the layer
    # ...where R's front jaw now is: its outer face, in front of the F face's right column
    assert is_arm(rgb_at(turned, pose, (25.0 - 4.0, 0.0, 25.0 + 6.0 + 4.0)))
    assert not is_arm(rgb_at(standing, pose, (25.0 - 4.0, 0.0, 25.0 + 6.0 + 4.0)))


def test_open_and_closed_gripper_differ_only_where_its_jaws_are(setup):
    _, _, pose = setup
    geometry = replace(ra.ArmGeometry(), shadow=0.0)
    opened = render.render_state(SOLVED, pose, FLAT, arms=arms(geometry))
    closed = render.render_state(SOLVED, pose, FLAT, arms=arms(geometry, closed="R"))
    changed = np.abs(opened.astype(int) - closed.astype(int)).max(axis=2) > 0
    assert changed.sum() > 100
    # every changed pixel lies in R's parts' projections (open or closed), a pixel of margin
    camera = camera_geometry.Camera3D(pose)
    allowed = np.zeros(changed.shape, np.uint8)
    import cv2

    for view in (arms(geometry), arms(geometry, closed="R")):
        for box in ra.boxes(view, pose.cube_mm / 2)[:4]:  # R comes first: crossbar, shaft, two jaws
            hull = cv2.convexHull(camera.project(ra._corners(box)).astype(np.float32))
            cv2.fillConvexPoly(allowed, np.round(hull).astype(np.int32), 1)
    allowed = cv2.dilate(allowed, np.ones((3, 3), np.uint8)).astype(bool)
    assert not (changed & ~allowed).any()


def test_sticker_behind_a_jaw_is_hidden(setup):
    _, _, pose = setup
    wide = replace(ra.ArmGeometry(), jaw_width_mm=50.0, shadow=0.0)  # the crossbar spans the whole F face
    frame = render.render_state(SOLVED, pose, FLAT, arms=arms(wide, closed="F"))
    bare = render.render_state(SOLVED, pose, FLAT)
    quad = camera_geometry.facelet_quads(pose, ["F1"])[0]
    centre = quad.mean(axis=0)
    inner = np.round(centre + 0.6 * (quad - centre)).astype(np.int32)
    import cv2

    mask = np.zeros(frame.shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, inner, 1)
    hidden = frame[mask.astype(bool)][:, ::-1].mean(axis=0)
    shown = bare[mask.astype(bool)][:, ::-1].mean(axis=0)
    assert np.abs(hidden - np.array(ra.ARM_RGB)).max() < 2  # the jaw's colour, not green
    assert np.abs(shown - np.array(render.STANDARD_PALETTE["F"])).max() < 2


def test_cube_hides_the_arm_behind_it(setup):
    _, _, pose = setup
    # B's crossbar lies behind the cube (angle 90: across it; R and L turned so no jaw hovers over U):
    # where its top face projects, U stays white
    frame = render.render_state(SOLVED, pose, FLAT, arms=arms(replace(ra.ArmGeometry(), shadow=0.0),
                                                                 angles={"B": 90, "R": 90, "L": 90}))
    on_crossbar = (12.0, 6.0, -32.0)
    assert np.abs(rgb_at(frame, pose, on_crossbar, 1) - np.array(render.STANDARD_PALETTE["U"])).max() < 2
    # ...and beside the cube, the arms behind it are drawn (the back jaw of R there)
    assert is_arm(rgb_at(frame, pose, (36.0, 6.0, -32.0), 1))


def test_shadow_darkens_the_side_away_from_the_light(setup):
    _, _, pose = setup
    light = replace(FLAT, light_dir=(1.0, 1.0, 0.0))  # from the right and above
    lit = render.render_state(SOLVED, pose, light, arms=arms(replace(ra.ArmGeometry(), shadow=0.0)))
    shaded = render.render_state(SOLVED, pose, light, arms=arms())
    # F's upper jaw stands above U's front row at x = 0: its shadow falls to its left (away from the light)
    left, right = (-12.0, 25.0, 20.0), (12.0, 25.0, 20.0)
    assert (rgb_at(shaded, pose, left) / rgb_at(lit, pose, left)).mean() < 0.8
    assert (rgb_at(shaded, pose, right) / rgb_at(lit, pose, right)).mean() > 0.97


def test_off_by_default_and_off_draws_todays_picture(setup):
    config, sequence, pose = setup
    assert ra.ArmGeometry.from_config(config) is None
    start = cube.random_state(np.random.default_rng(4)).to_facelets()
    lighting = render.Lighting(glare_spots=2, noise_sigma=3)
    today, _ = render.render_scan(start, sequence, pose, lighting, seed=5)
    off, _ = render.render_scan(start, sequence, pose, lighting, seed=5, view_arms=None)
    on, _ = render.render_scan(start, sequence, pose, lighting, seed=5, view_arms=[arms()] * len(sequence.views))
    assert all(np.array_equal(today[v], off[v]) for v in today)
    assert not np.array_equal(today["top-front"], on["top-front"])


def test_arms_follow_the_scan_actions(setup):
    config, sequence, _ = setup
    profile = RobotProfile.from_config(config)
    after = ra.after_actions(arms(), [Grip("FB"), Turn({"F": 90, "B": -90})], profile.faces_of)
    assert after is not None and after.is_closed("F") and not after.is_closed("R")
    assert after.angle("F") == 90.0 and after.angle("B") == 270.0
    views = ra.scan_arms(arms(), sequence, profile.faces_of)
    assert [v.angle("R") for v in views] == [0.0, 180.0, 180.0, 180.0]
    enabled = config_module.with_settings(config, {"simulated_robot.draw_arms": True})
    geometry = ra.ArmGeometry.from_config(enabled)
    assert geometry is not None and geometry.jaw_width_mm == config.simulated_robot.gripper.jaw_width_mm


def test_a_simulated_run_draws_the_arms_where_the_firmware_put_them(tmp_path, monkeypatch):
    from conftest import scratch_config

    from robot.run.options import RunOptions
    from robot.run.simulated import run_simulated

    drawn = []
    real = render.render_state

    def recording(facelets, pose, lighting=render.Lighting(), *args, **kwargs):
        drawn.append(kwargs.get("arms"))
        return real(facelets, pose, lighting, *args, **kwargs)

    monkeypatch.setattr(render, "render_state", recording)
    path = scratch_config(tmp_path, lambda text: text.replace("  draw_arms: false", "  draw_arms: true"))
    config = config_module.load(path)
    assert config.simulated_robot.draw_arms
    run_simulated(config, RunOptions(sim=True, firmware="mock", seed=3, verify=False), lambda text: None)
    assert drawn and all(isinstance(a, ra.ArmsView) for a in drawn)
    # the first view: RL took the cube (homed arms); the second: R and L turned a half turn, still holding
    first = next(a for a in drawn if a.is_closed("R"))
    assert first.is_closed("L") and not first.is_closed("F") and first.angle("R") == 0.0
    assert any(a.is_closed("R") and a.angle("R") == 180.0 for a in drawn)
    drawn.clear()
    (tmp_path / "off").mkdir()
    run_simulated(config_module.load(scratch_config(tmp_path / "off")), RunOptions(sim=True, firmware="mock", seed=3,
                                                                                   verify=False), lambda text: None)
    assert drawn and all(a is None for a in drawn)  # off: not even asked
