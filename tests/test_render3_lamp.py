"""The lamp on the simulated 3x3x3 (robot/sim/render3.py, webcam3.py with robot/sim/lamp.py; SIMULATED): the
highlight fixed in the camera's frame on every frame of a view, its strength measured on the 3x3x3's
stickers, a sticker washed in one view clean in another; the webcam lights every frame with config's lamp
or the robot's; rendered scans under glare through the run's image path are exact or refused, never wrong."""

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from benches import load_bench

from robot import config as config_module
from robot.scan_sequence3 import ScanSequence3
from robot.sim import lamp, render, render3
from robot.solver3 import cube3
from robot.vision.camera_geometry3 import facelet_quads3, pose3, scan_regions3

CONFIG = config_module.defaults()
POSE = pose3(CONFIG)
SEQUENCE = ScanSequence3.from_config(CONFIG)
PLAIN = render.Lighting(noise_sigma=0.0, vignetting=0.0, sticker_jitter=0.0)  # a pixel's mix can be measured
START = cube3.to_facelets(cube3.apply(cube3.solved(), cube3.parse_moves("R U2 F' L D B2 R' U")))


def mix_at_centre(on: np.ndarray, off: np.ndarray, quad: np.ndarray) -> float:
    """The mix with white at a sticker's centre: (lit - plain) / (255 - plain), the channels' mean."""
    x, y = np.round(quad.mean(axis=0)).astype(int)
    lit, clean = on[y - 1:y + 2, x - 1:x + 2].reshape(-1, 3).mean(0), off[y - 1:y + 2, x - 1:x + 2].reshape(-1, 3).mean(0)
    return float(np.mean((lit - clean) / (255.0 - clean)))


@pytest.mark.parametrize("name", ["glare", "side"])
def test_strength_is_the_mix_at_the_centre_of_the_most_washed_3x3x3_sticker(name):
    found, _ = render3.preset_lamp3(POSE, name, strength=0.4)
    mixes = render3.position_mix3(POSE, found)
    worst = max(mixes, key=mixes.get)
    assert abs(mixes[worst] - 0.4) < 1e-6 and max(mixes.values()) <= 0.4 + 1e-9
    # the 2x2x2's lamp of the same name puts another mix there (its stickers sit elsewhere): side 0.51
    two, _ = lamp.preset_lamp(POSE, name, strength=0.4)
    if name == "side":
        assert render3.position_mix3(POSE, two)[worst] > 0.45
    facelets = "B" * 54  # dark stickers everywhere: the mix is measured well
    on = render3.render_state3(facelets, POSE, replace(PLAIN, lamp=found))
    off = render3.render_state3(facelets, POSE, PLAIN)
    measured = mix_at_centre(on, off, facelet_quads3(POSE, [cube3.facelet_name(worst)])[0])
    assert abs(measured - 0.4) < 0.04, measured


def test_a_sticker_washed_in_one_view_is_clean_in_another():
    found, _ = render3.preset_lamp3(POSE, "glare", strength=0.4)
    mixes = np.array(render3.view_mix3(POSE, found, SEQUENCE))  # (views, 54), final-frame order
    geometry = render3.arm_geometry3(CONFIG)
    regions = scan_regions3(POSE, SEQUENCE)
    states = SEQUENCE.states_at_views(START)
    angles, closed = SEQUENCE.angles_at_views(), SEQUENCE.closed_at_views()
    found_pairs = 0
    for final in range(54):
        looks = np.flatnonzero(~np.isnan(mixes[:, final]))
        washed = [v for v in looks if mixes[v, final] >= 0.3]
        clean = [v for v in looks if mixes[v, final] < 0.02]
        if not washed or not clean:
            continue
        found_pairs += 1
        measured = {}
        for v in (washed[0], clean[0]):
            arms = render3.arms_at(geometry, angles[v], closed[v])
            on = render3.render_state3(states[v], POSE, replace(PLAIN, lamp=found), arms=arms)
            # the same lamp without its reflection: the arms' shadows fall from the lamp in both
            off = render3.render_state3(states[v], POSE, replace(PLAIN, lamp=replace(found, peak=0.0)), arms=arms)
            region = [r for view, r, f in SEQUENCE.mapping() if view == v and f == final][0]
            measured[v] = mix_at_centre(on, off, regions.quads(SEQUENCE.views[v].name)[region])
        assert measured[washed[0]] > 0.25 and abs(measured[clean[0]]) < 0.02, (cube3.facelet_name(final), measured)
    assert found_pairs >= 3  # the glare lamp washes several stickers that another view shows clean


def test_two_frames_of_one_view_have_the_highlight_in_the_same_place():
    lit = replace(render.Lighting(), lamp=render3.preset_lamp3(POSE, "glare")[0])
    frames = [render3.render_state3(START, POSE, lit, np.random.default_rng(seed)) for seed in (1, 2)]
    clean = render3.render_state3(START, POSE, render.Lighting(), np.random.default_rng(1))
    lighter = [frame.astype(float).mean(axis=2) - clean.astype(float).mean(axis=2) > 40 for frame in frames]
    assert lighter[0].sum() > 200 and (lighter[0] & lighter[1]).sum() > 0.9 * lighter[0].sum()


def camera(config, **robot_fields):
    from robot.plan3 import Robot3Profile
    from robot.sim.virtual_robot3 import VirtualRobot3
    from robot.sim.webcam3 import SimulatedCamera3

    virtual = VirtualRobot3(Robot3Profile.from_config(config), cube3.SOLVED_FACELETS)
    robot = SimpleNamespace(config=config, virtual=virtual, sync=lambda: None, time_scale=1.0, **robot_fields)
    return SimulatedCamera3(robot, POSE, seed=1)


def test_the_webcam_lights_every_light_the_robot_gives_it_with_the_configured_lamp():
    glare = config_module.with_settings(CONFIG, {"camera.lighting.preset": "glare"})
    cam = camera(glare)
    assert cam.lighting.lamp == cam.lamp == render3.preset_lamp3(POSE, "glare")[0]
    cam.lighting = render.Lighting(noise_sigma=7.0)  # a scan's light (robot_sim3.before_scan sets one each scan)
    assert cam.lighting.lamp == cam.lamp and cam.lighting.noise_sigma == 7.0
    assert "glare (strength 0.4" in (cam.light_note or "")
    assert camera(CONFIG).lighting.lamp is None and camera(CONFIG).light_note is None  # config's default: none
    side = camera(glare, light="side")  # the robot's preset (--light) in place of config's
    assert side.lamp is not None and side.lamp.name == "side"
    dim = camera(CONFIG, light="dim")
    assert dim.lighting.brightness == pytest.approx(lamp.PRESETS["dim"].brightness)
    with pytest.raises(lamp.LampError, match="no lamp preset 'sun'"):
        camera(CONFIG, light="sun")


VISION3 = load_bench("vision3")


@pytest.mark.parametrize("setting", ["glare 0.4", "glare 0.7", "side 0.4"])
def test_rendered_scans_under_the_lamp_are_exact_or_refused_never_wrong(setting):
    """A few seeded cubes of bench/vision3.py --rendered: the run's views, arms, regions, sampling, decode3."""
    row = VISION3.rendered(2, seed=1, names=[setting])[0]
    assert row["wrong"] == 0 and row["exact"] + row["refused"] == 2 and row["washed"] > 10
    if setting != "glare 0.7":
        assert row["exact"] == 2  # read past the lamp's reflection
