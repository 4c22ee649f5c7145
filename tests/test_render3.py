"""The simulated camera's 3x3x3 (robot/sim/render3.py, webcam3.py; vision/camera_geometry3.py): nine
stickers a face in the right colours where the 3x3x3 grippers do not hide them, through the webcam's
frame-timing model."""

from types import SimpleNamespace

import numpy as np
import pytest

from robot import config as config_module
from robot.plan3 import Robot3Profile
from robot.sim import render, render3
from robot.sim.virtual_robot3 import VirtualRobot3
from robot.solver3 import cube3
from robot.vision.camera_geometry3 import facelet_quads3, pose3, scan_regions3

CONFIG = config_module.with_settings(config_module.defaults(), {"simulated_robot.draw_arms": True})
FLAT = render.Lighting(noise_sigma=0.0, vignetting=0.0, shading=0.0, sticker_jitter=0.0)
UF = [cube3.facelet_name(i) for i in list(range(0, 9)) + list(range(18, 27))]


def scrambled(text):
    return cube3.to_facelets(cube3.apply(cube3.solved(), cube3.parse_moves(text)))


def centre_colours(image, quads):
    """The mean RGB of a 5x5 patch at each quad's centre."""
    out = []
    for quad in quads:
        x, y = np.round(quad.mean(axis=0)).astype(int)
        out.append(image[y - 2:y + 3, x - 2:x + 3, ::-1].reshape(-1, 3).mean(axis=0))
    return np.array(out)


def nearest_letter(rgb):
    return min(render.STANDARD_PALETTE, key=lambda k: np.linalg.norm(np.subtract(render.STANDARD_PALETTE[k], rgb)))


@pytest.mark.parametrize("angle", [0, 90])
def test_nine_stickers_a_face_in_their_colours_where_the_grippers_do_not_hide_them(angle):
    pose = pose3(CONFIG)
    facelets = scrambled("R U F' L2 D B'")
    arms = render3.arms_at(render3.arm_geometry3(CONFIG), {arm: angle for arm in "RLFB"})
    image = render3.render_state3(facelets, pose, FLAT, np.random.default_rng(0), arms=arms)
    bare = render3.render_state3(facelets, pose, FLAT, np.random.default_rng(0))
    quads = facelet_quads3(pose, UF)
    share = render3.seen_share(pose, arms, UF)
    seen = [k for k, s in enumerate(share) if s >= render3.SEEN_SHARE]
    hidden = [k for k, s in enumerate(share) if s <= 0.2]
    assert len(seen) >= 9 and len(hidden) >= 4 and len(seen) + len(hidden) >= len(UF) - 2  # few partly hidden
    with_arms, without = centre_colours(image, quads), centre_colours(bare, quads)
    for k in range(len(UF)):  # the bare cube: all 18 stickers of U and F in their colours
        assert nearest_letter(without[k]) == facelets[_index(UF[k])], UF[k]
    for k in seen:
        assert nearest_letter(with_arms[k]) == facelets[_index(UF[k])], UF[k]
    for k in hidden:  # the arm's grey, not the sticker
        assert np.abs(with_arms[k] - np.array(render_arm_grey())).max() < 25, UF[k]
    # a gripped face's centre is under its crossbar at any angle; the grippers at 0 hide U's edge stickers,
    # at 90 they show them and hide F's middle row instead
    names_seen = {UF[k] for k in seen}
    assert "F5" not in names_seen and "U5" in names_seen
    assert ({"U2", "U4", "U6", "U8"} <= names_seen) == (angle == 90)


def _index(name):
    return "URFDLB".index(name[0]) * 9 + int(name[1]) - 1


def render_arm_grey():
    from robot.sim.render_arms import ARM_RGB

    return ARM_RGB


def test_regions_are_nine_a_face_and_fit_the_picture():
    from robot.scan_sequence3 import ScanSequence3

    pose = pose3(CONFIG)
    sequence = ScanSequence3.from_config(CONFIG)
    regions = scan_regions3(pose, sequence)
    quads = facelet_quads3(pose, UF)
    centres = quads.mean(axis=1)
    assert quads.shape == (18, 4, 2) and len({tuple(np.round(c)) for c in centres}) == 18
    assert (centres > 0).all() and (centres[:, 0] < pose.width).all() and (centres[:, 1] < pose.height).all()
    # the same places as the 2x2x2's: each corner sticker nearest the 2x2x2's sticker of that corner
    from robot.vision.camera_geometry import facelet_quads

    two = facelet_quads(pose, ["U1", "U2", "U3", "U4", "F1", "F2", "F3", "F4"]).mean(axis=1)
    for k, name in enumerate(["U1", "U3", "U7", "U9", "F1", "F3", "F7", "F9"]):
        assert np.linalg.norm(two - centres[UF.index(name)], axis=1).argmin() == k, name
    for view in sequence.views:
        assert regions.quads(view.name).shape == (len(view.facelets), 4, 2)
    regions.check(sequence)


def test_the_simulated_webcam_shows_the_virtual_3x3x3_through_its_frame_timing():
    from robot.sim.render_arms import arms_of
    from robot.sim.webcam3 import SimulatedCamera3
    from test_camera_timing import ManualClock

    profile = Robot3Profile.from_config(CONFIG)
    virtual = VirtualRobot3(profile, cube3.SOLVED_FACELETS)
    robot = SimpleNamespace(config=CONFIG, virtual=virtual, sync=lambda: None, time_scale=1.0)
    clock = ManualClock(1.0)
    pose = pose3(CONFIG)
    camera = SimulatedCamera3(robot, pose, seed=1, clock=clock)
    camera.lighting = FLAT
    camera.motion_started = 1.0
    virtual.turn_arm("R", 100, at_ms=0.0)  # the R layer turns a quarter: F's right column goes up
    clock.advance(0.2)
    camera.motion_ended()
    before, after = camera.render_exposure(0.9, 0.92), camera.render_exposure(1.3, 1.32)
    blurred = camera.render_exposure(0.99, 1.01)
    expected = 0.75 * before.astype(float) + 0.25 * after.astype(float)
    assert np.abs(blurred.astype(float) - expected).max() <= 1.0
    share = render3.seen_share(pose, arms_of(virtual, camera.arms_geometry), UF)
    quads = facelet_quads3(pose, UF)
    now, then = centre_colours(after, quads), centre_colours(before, quads)
    turned = scrambled("R")
    for k, name in enumerate(UF):
        if share[k] >= render3.SEEN_SHARE:
            assert nearest_letter(now[k]) == turned[_index(name)], name
            assert nearest_letter(then[k]) == cube3.SOLVED_FACELETS[_index(name)], name
    assert share[UF.index("U9")] >= render3.SEEN_SHARE and nearest_letter(now[UF.index("U9")]) == "F"


def test_rendered_readings_of_a_whole_scan_are_the_54_stickers_of_the_final_frame():
    from robot.scan_sequence3 import ScanSequence3

    sequence = ScanSequence3.from_config(CONFIG)
    facelets = scrambled("R U F' L2 D B' U2 R'")
    rgb = render3.rendered_readings3(facelets, sequence, pose3(CONFIG), FLAT, seed=3,
                                     geometry=render3.arm_geometry3(CONFIG))
    final = sequence.final_state(facelets)
    assert rgb.shape == (54, 3) and final != facelets  # the scan's tilts moved the cube
    assert "".join(nearest_letter(reading) for reading in rgb) == final
