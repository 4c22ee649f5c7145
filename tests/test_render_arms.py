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


G = ra.ArmGeometry()  # the reference gripper (docs/hardware.md)
OUT = 25.0 + G.open_gap_mm + G.jaw_thickness_mm  # an open jaw's outer face, from the cube's centre


def test_arm_drawn_where_it_stands_and_moved_by_a_quarter_turn(setup):
    _, _, pose = setup
    # R's upper jaw (angle 0: the jaws above and below its layer), open: its top face's middle.
    on_jaw = (25.0, OUT, 0.0)
    standing = render.render_state(SOLVED, pose, FLAT, arms=arms())
    assert is_arm(rgb_at(standing, pose, on_jaw))
    turned = render.render_state(SOLVED, pose, FLAT, arms=arms(angles={"R": 90}))
    assert not is_arm(rgb_at(turned, pose, on_jaw))  # the jaws now lie before and behind the layer
    # ...where R's front jaw now is: its outer face, in front of the F face's right column
    front = (25.0 - G.jaw_depth_mm / 2, 0.0, OUT)
    assert is_arm(rgb_at(turned, pose, front))
    assert not is_arm(rgb_at(standing, pose, front))


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
    frame = render.render_state(SOLVED, pose, FLAT, arms=arms(replace(G, shadow=0.0),
                                                                 angles={"B": 90, "R": 90, "L": 90}))
    crossbar_z = -(25.0 + G.crossbar_gap_mm + G.open_gap_mm + G.shaft_radius_mm)
    on_crossbar = (12.0, G.jaw_width_mm / 2, crossbar_z)
    assert np.abs(rgb_at(frame, pose, on_crossbar, 1) - np.array(render.STANDARD_PALETTE["U"])).max() < 2
    # ...and beside the cube, the arms behind it are drawn (the back jaw of R there)
    assert is_arm(rgb_at(frame, pose, (36.0, 0.0, -(OUT - G.jaw_thickness_mm / 2)), 1))


def test_shadow_darkens_the_side_away_from_the_light(setup):
    _, _, pose = setup
    light = replace(FLAT, light_dir=(1.0, 1.0, 0.0))  # from the right and above
    lit = render.render_state(SOLVED, pose, light, arms=arms(replace(ra.ArmGeometry(), shadow=0.0)))
    shaded = render.render_state(SOLVED, pose, light, arms=arms())
    # F's upper jaw stands above U's front row at x = 0: its shadow falls to its left (away from the light)
    left, right = (-12.0, 25.0, 20.0), (12.0, 25.0, 20.0)
    assert (rgb_at(shaded, pose, left) / rgb_at(lit, pose, left)).mean() < 1.0 - G.shadow / 2
    assert (rgb_at(shaded, pose, right) / rgb_at(lit, pose, right)).mean() > 0.97


def test_on_by_default_with_the_reference_gripper_and_off_draws_the_bare_cube(setup):
    config, sequence, pose = setup
    assert ra.ArmGeometry.from_config(config) == G  # config.yaml's simulated_robot = the renderer's defaults
    assert ra.ArmGeometry.from_config(config_module.with_settings(config, {"simulated_robot.draw_arms": False})) is None
    start = cube.random_state(np.random.default_rng(4)).to_facelets()
    lighting = render.Lighting(glare_spots=2, noise_sigma=3)
    bare, _ = render.render_scan(start, sequence, pose, lighting, seed=5)
    on, _ = render.render_scan(start, sequence, pose, lighting, seed=5, view_arms=[arms()] * len(sequence.views))
    assert not np.array_equal(bare["top-front"], on["top-front"])


def test_the_reference_jaws_hide_little_of_what_the_scan_samples(setup):
    """With the arms where the default scan puts them, every sticker's sampled region (the inner 0.6) is
    at most 5 % covered by an arm; the old guess (12 mm wide, 18 deep, 4 thick, open 6) covered up to 89 %."""
    config, sequence, pose = setup
    import cv2

    def worst(geometry):
        views = ra.scan_arms(arms(replace(geometry, shadow=0.0)), sequence, RobotProfile.from_config(config).faces_of)
        bare, regions = render.render_scan(SOLVED, sequence, pose, FLAT, seed=1)
        drawn, _ = render.render_scan(SOLVED, sequence, pose, FLAT, seed=1, view_arms=views)
        out = 0.0
        for view in sequence.views:
            hidden = np.abs(drawn[view.name].astype(int) - bare[view.name].astype(int)).max(axis=2) > 6
            for quad in regions.views[view.name]:
                centre = quad.mean(axis=0)
                mask = np.zeros(hidden.shape, np.uint8)
                cv2.fillConvexPoly(mask, np.round(centre + 0.6 * (quad - centre)).astype(np.int32), 1)
                out = max(out, float(hidden[mask.astype(bool)].mean()))
        return out

    assert worst(G) <= 0.05
    assert worst(ra.ArmGeometry(12.0, 18.0, 4.0, 6.0, 2.0, 5.0)) > 0.5


def test_the_scan_moves_no_arm_into_another_and_a_parked_quarter_would(setup):
    config, sequence, pose = setup
    half = pose.cube_mm / 2
    faces_of = RobotProfile.from_config(config).faces_of
    before = arms()
    for view in ra.scan_arms(before, sequence, faces_of):
        for step in np.linspace(0.0, 1.0, 7):  # the turn's way there too, not only where it ends
            between = dict(before.angles)
            for face, angle in view.angles:
                delta = (angle - before.angle(face) + 180.0) % 360.0 - 180.0
                between[face] = before.angle(face) + step * delta
            assert ra.meeting_arms(replace(view, angles=tuple(between.items())), half) == []
        before = view
    # R and L a quarter round (jaws before and behind their layers) while F and B hold a quarter round:
    # the jaws meet at the cube's vertical edges, so the U-only views cannot park R and L off the top face
    parked = arms(angles={"R": 90, "L": 90, "F": 90, "B": 270}, closed="FB")
    assert set(ra.meeting_arms(parked, half)) == {("R", "F"), ("R", "B"), ("L", "F"), ("L", "B")}


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
    config = config_module.load(scratch_config(tmp_path))
    assert config.simulated_robot.draw_arms  # on by default
    run_simulated(config, RunOptions(sim=True, firmware="mock", seed=3, verify=False), lambda text: None)
    assert drawn and all(isinstance(a, ra.ArmsView) for a in drawn)
    # the first view: RL took the cube (homed arms); the second: R and L turned a half turn, still holding
    first = next(a for a in drawn if a.is_closed("R"))
    assert first.is_closed("L") and not first.is_closed("F") and first.angle("R") == 0.0
    assert any(a.is_closed("R") and a.angle("R") == 180.0 for a in drawn)
    drawn.clear()
    (tmp_path / "off").mkdir()
    off = scratch_config(tmp_path / "off", lambda text: text.replace("  draw_arms: true", "  draw_arms: false"))
    run_simulated(config_module.load(off), RunOptions(sim=True, firmware="mock", seed=3, verify=False),
                  lambda text: None)
    assert drawn and all(a is None for a in drawn)  # off: not even asked


def test_no_reflection_of_the_lamp_where_an_arm_shades_it(setup):
    """The lamp's highlight (robot/sim/lamp.py) is light from the lamp: where an arm stands between the lamp
    and the face, its shadow takes the highlight too; in the open the highlight stays."""
    config, sequence, pose = setup
    from robot.sim import lamp as lamp_module

    the_lamp, _ = lamp_module.preset_lamp(pose, "glare")  # a ceiling lamp behind: its highlight on U
    view = ra.scan_arms(arms(), sequence, RobotProfile.from_config(config).faces_of)[0]
    lamp_light = replace(FLAT, lamp=the_lamp)
    with_lamp = render.render_state(SOLVED, pose, lamp_light, arms=view).astype(float)
    dark = replace(FLAT, lamp=replace(the_lamp, peak=0.0))  # the same light and shadows, no reflection
    without = render.render_state(SOLVED, pose, dark, arms=view).astype(float)
    # where the arms shade the cube and where the lamp reflects: the renderer's own maps
    camera = camera_geometry.Camera3D(pose)
    seen = [f for f in cube.FACES if camera.sees(np.array(cube.FACE_FRAMES[f][0], float) * 25.0,
                                                 np.array(cube.FACE_FRAMES[f][0], float))]
    unlit = ra.draw_shadows(np.ones((pose.height, pose.width, 3), np.float32), camera, view, 25.0,
                            ra.light_direction(lamp_light), seen)
    mix = lamp_module.mix_map(pose, the_lamp)[..., 0]
    no_shadow = replace(view, geometry=replace(view.geometry, shadow=0.0))
    drawn = np.abs(render.render_state(SOLVED, pose, dark).astype(float)
                   - render.render_state(SOLVED, pose, dark, arms=no_shadow)).max(axis=2) > 0
    glossy = (mix > 0.1) & ~drawn  # the cube's faces where the lamp reflects, no arm drawn over them
    # the share of the lamp's whitening a pixel got: 1 in the open, 0 in an arm's full shadow
    got = ((with_lamp - without) / np.maximum((255.0 - without) * mix[..., None], 1e-6)).mean(axis=2)
    shaded, open_ = glossy & (unlit > 0.8), glossy & (unlit < 0.01)
    assert shaded.sum() > 50 and open_.sum() > 50
    assert np.median(got[shaded]) < 0.35
    assert np.median(got[open_]) > 0.8


def test_where_the_prerender_guesses_the_arms_is_where_the_virtual_robot_puts_them(setup):
    """The simulated webcam renders a view's picture while the arms move, from the arms after the view's
    actions (after_actions); the picture is used only when that pose equals the virtual robot's after the
    motion (arms_of): the two must come out the same, or every view's picture is drawn late."""
    from robot.sim.virtual_robot import VirtualRobot

    config, sequence, _ = setup
    profile = RobotProfile.from_config(config)
    virtual = VirtualRobot(profile, cube.CubieCube())
    geometry = ra.ArmGeometry()
    for view in sequence.views:
        guess = ra.after_actions(ra.arms_of(virtual, geometry), view.actions, profile.faces_of)
        for action in view.actions:
            virtual.apply_action(action)
        assert guess == ra.arms_of(virtual, geometry) and hash(guess) == hash(ra.arms_of(virtual, geometry))
