"""The cube renderer: deterministic, geometry consistent with the cube model and its regions."""

import numpy as np
import pytest

from robot import config as config_module
from robot import cube
from robot.sim import render
from robot.vision import camera_geometry
from robot.vision.colour import srgb_to_lab
from robot.vision.scan import ScanSequence


@pytest.fixture(scope="module")
def setup():
    config = config_module.defaults()
    return ScanSequence.from_config(config), camera_geometry.Pose.from_config(config)


def test_same_seed_same_pictures_other_seed_other_pictures(setup):
    sequence, pose = setup
    start = cube.random_state(np.random.default_rng(4)).to_facelets()
    lighting = render.Lighting(glare_spots=2, noise_sigma=3)
    a, _ = render.render_scan(start, sequence, pose, lighting, seed=5)
    b, _ = render.render_scan(start, sequence, pose, lighting, seed=5)
    c, _ = render.render_scan(start, sequence, pose, lighting, seed=6)
    assert all(np.array_equal(a[v], b[v]) for v in a)
    assert not np.array_equal(a["top-front"], c["top-front"])
    lights = [render.Lighting.random(np.random.default_rng(9)) for _ in range(2)]
    assert lights[0] == lights[1]


def test_default_pose_sees_up_and_front(setup):
    _, pose = setup
    assert camera_geometry.visible_facelets(pose) == [f"{f}{k}" for f in "UF" for k in range(1, 5)]


def test_regions_sit_on_the_drawn_stickers(setup):
    """Plain light: the centre of every region has its facelet's palette colour."""
    sequence, pose = setup
    start = cube.random_state(np.random.default_rng(2)).to_facelets()
    plain = render.Lighting(noise_sigma=0, vignetting=0, shading=0, sticker_jitter=0)
    frames, regions = render.render_scan(start, sequence, pose, plain, seed=0)
    states = sequence.states_at_views(start)
    for v, view in enumerate(sequence.views):
        for name, quad in zip(view.facelets, regions.quads(view.name)):
            x, y = np.round(quad.mean(axis=0)).astype(int)
            bgr = frames[view.name][y, x]
            want = render.STANDARD_PALETTE[states[v][cube.facelet_index(name)]]
            assert np.abs(bgr[::-1].astype(int) - want).max() <= 2, (view.name, name)


def test_lighting_changes_colour_as_asked(setup):
    sequence, pose = setup
    base = render.Lighting(noise_sigma=0, vignetting=0, shading=0, sticker_jitter=0)
    frames = {}
    for kelvin in (3000, 6500):
        lit, regions = render.render_scan(cube.SOLVED_FACELETS, sequence, pose,
                                          render.Lighting(**{**base.__dict__, "temperature_k": kelvin}), seed=0)
        x, y = np.round(regions.quads("top-front")[0].mean(axis=0)).astype(int)
        frames[kelvin] = lit["top-front"][y, x][::-1].astype(float)  # the white U1 sticker
    warm, neutral = srgb_to_lab(frames[3000]), srgb_to_lab(frames[6500])
    assert warm[2] > neutral[2] + 15  # warm light makes white look yellow (b* up)


def test_glare_spots_make_clipped_highlights(setup):
    sequence, pose = setup
    clean, _ = render.render_scan(cube.SOLVED_FACELETS, sequence, pose, render.Lighting(glare_spots=0), seed=1)
    glare, _ = render.render_scan(cube.SOLVED_FACELETS, sequence, pose, render.Lighting(glare_spots=2), seed=1)
    assert (glare["bottom-back"] >= 250).all(axis=2).sum() > (clean["bottom-back"] >= 250).all(axis=2).sum() + 5


def test_temperature_gain_is_neutral_at_the_white_point():
    assert np.allclose(render.temperature_gain(6500), 1.0)
    warm = render.temperature_gain(3000)
    assert warm[0] >= 1.0 and warm[2] < 0.7
