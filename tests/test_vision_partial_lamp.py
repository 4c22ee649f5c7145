"""The adaptive scan's early decode under the simulated lamp (SIMULATED pictures): a washed-out sticker
decides nothing (robot/vision/partial.py washed_suspects)."""

import numpy as np

from robot import config as config_module
from robot import cube
from robot.sim import lamp, render
from robot.vision import adaptive, camera_geometry, partial
from robot.vision.scan import ScanSequence

from benches import load_bench


def same_partition(a: str, b: str) -> bool:
    return len(set(zip(a, b))) == len(set(a)) == len(set(b))


def lamp_views(number: int, strength: float = 0.4, views: int = 2):
    """Cube `number` of bench/vision_lamp.py's seed 1 under the glare preset: its first views' samples."""
    config = config_module.defaults()
    sequence = ScanSequence.from_config(config)
    pose = camera_geometry.Pose.from_config(config)
    regions = camera_geometry.scan_regions(pose, sequence)
    start, light, seed = load_bench("vision_lamp").cubes(number + 1, 1, False)[number]
    found, brightness = lamp.preset_lamp(pose, "glare", strength=strength)
    frames, _ = render.render_scan(start, sequence, pose, lamp.lit(light, found, brightness), seed=seed)
    samples = [adaptive.sample_view(frames[sequence.views[k].name], k, sequence, regions, config.scan.sampling)
               for k in range(views)]
    return config, sequence.prefix(views), samples, start


def test_a_washed_sticker_does_not_decide_the_early_cube():
    """Cube 2 of seed 1 under glare 0.4 (one of the 7 the early stop got wrong): after two views U2 is
    red washed pink (the only red seen) and D4 a blue washed lighter; without the washed-out rule the
    partial decode is sure of a wrong cube (pink taken for orange, blue split in two), with it the
    scan takes the next view, naming the washed sticker."""
    config, taken, samples, start = lamp_views(2)
    readings = adaptive.partial_readings(samples, taken)
    unseen = [i for i, s in enumerate(readings.samples) if s is None]
    rgb = [None if s is None else s.rgb for s in readings.samples]
    truth = taken.final_state(start)
    unguarded = partial.decode_partial(rgb, unseen, None, config, suspects=False)
    assert not same_partition(unguarded.facelets, truth)  # the case as it was: confidently wrong
    _, decoded, doubt = adaptive.decode_partial(samples, taken, None, config)  # the run's path
    assert decoded is None or same_partition(decoded.facelets, truth)
    assert doubt is not None and doubt.reason == "partial" and "washed out" in str(doubt) and doubt.stickers


def test_every_early_cube_of_the_seven_is_refused_or_right():
    for number in (2, 41, 50, 100, 143, 147, 149):
        config, taken, samples, start = lamp_views(number)
        _, decoded, _ = adaptive.decode_partial(samples, taken, None, config)
        assert decoded is None or same_partition(decoded.facelets, taken.final_state(start)), number


def test_clean_scans_keep_their_early_stop():
    """Without a lamp the washed-out rule finds no suspect on these cubes: they stop after two views as before."""
    config = config_module.defaults()
    sequence = ScanSequence.from_config(config)
    pose = camera_geometry.Pose.from_config(config)
    regions = camera_geometry.scan_regions(pose, sequence)
    rng = np.random.default_rng(3)
    stopped = 0
    for trial in range(6):
        start = cube.random_state(rng).to_facelets()
        frames, _ = render.render_scan(start, sequence, pose, render.Lighting(noise_sigma=2.0), seed=trial)
        samples = [adaptive.sample_view(frames[sequence.views[k].name], k, sequence, regions, config.scan.sampling)
                   for k in range(2)]
        readings = adaptive.partial_readings(samples, sequence.prefix(2))
        unseen = [i for i, s in enumerate(readings.samples) if s is None]
        rgb = [None if s is None else s.rgb for s in readings.samples]
        try:
            plain = partial.decode_partial(rgb, unseen, None, config, suspects=False)
        except partial.VisionError:
            continue
        mask = np.zeros(cube.FACELET_COUNT, dtype=bool)
        mask[unseen] = True
        assert partial.washed_suspects(np.array([r if r is not None else (0, 0, 0) for r in rgb], float), mask,
                                       plain) == []
        _, decoded, _ = adaptive.decode_partial(samples, sequence.prefix(2), None, config)
        assert decoded is not None and decoded.facelets == plain.facelets
        stopped += 1
    assert stopped >= 3
