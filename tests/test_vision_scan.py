"""The scan: sequence as data, forward facelet mapping, sticker sampling, real photos end to end."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from robot import config as config_module
from robot import cube
from robot.config import ConfigError
from robot.config_types import to_plain
from robot.sim import render
from robot.vision import camera_geometry
from robot.vision.camera import FileCamera, MemoryCamera
from robot.vision.colour import srgb_to_lab
from robot.vision.regions import Regions, RegionsError, sample_sticker
from robot.plan import Turn
from robot.vision.scan import (
    ScanConfigError, ScanSequence, Scanner, ScanView, capture_views, read_frames, read_stickers,
)

ROOT = Path(__file__).resolve().parents[1]
TRACKER = ROOT.parent / "shared" / "data" / "real-cube-readings" / "dwalton76-rubiks-cube-tracker" / "images-2x2x2"
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "real_photo_regions.yaml"


def same_partition(a: str, b: str) -> bool:
    """Equal after a one-to-one renaming of the colour letters."""
    return len(a) == len(b) and len(set(zip(a, b))) == len(set(a)) == len(set(b))


@pytest.fixture(scope="module")
def config():
    return config_module.load()


@pytest.fixture(scope="module")
def sequence(config):
    return ScanSequence.from_config(config)


@pytest.fixture(scope="module")
def pose(config):
    return camera_geometry.Pose.from_config(config)


# --- the sequence -----------------------------------------------------------


def test_default_sequence_sees_every_facelet_exactly_once(sequence):
    finals = [final for _, _, final in sequence.mapping()]
    assert sorted(finals) == list(range(24))
    assert sequence.final_grip == "FB"


def test_default_sequence_is_legal_for_the_robot(config, sequence):
    sequence.check_robot(config)  # raises on an arm that is not holding, a bad angle...
    views = to_plain(config.scan.views)
    views[1]["actions"] = [{"op": "grip", "pair": "UD"}, {"op": "turn", "arms": {"R": 180, "L": 180}}]
    bad = config_module.with_settings(config, {"scan.views": views})
    with pytest.raises(ScanConfigError, match="view 'bottom-back'.*no pair named 'UD'"):
        ScanSequence.from_config(bad)


def test_missing_facelets_are_named():
    views = [{"name": "top", "actions": [{"op": "grip", "pair": "RL"}], "facelets": ["U1", "U2", "U3", "U4"]},
             {"name": "x", "actions": [{"op": "turn", "arms": {"R": 90, "L": -90}}], "facelets": ["U1", "U2", "U3", "U4"]}]
    with pytest.raises(ScanConfigError) as info:
        ScanSequence.from_data(views)
    message = str(info.value)
    assert "never sees 16 facelet(s)" in message
    # After x (R+L'), what was on U is on B; the seen U stickers of the first view are now B1..B4.
    assert "B1" not in message and "U1" not in message and "D1" in message and "R1" in message


def test_config_rejects_incomplete_sequence_with_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("scan:\n  views:\n    - name: only\n      actions: []\n      facelets: [U1, U2, U3, U4]\n")
    with pytest.raises(ConfigError, match=r":3: scan.views: .*never sees 20 facelet\(s\).*F1"):
        config_module.load(path)


def test_forward_mapping_matches_state_at_each_view(sequence):
    """Reading the listed facelets at each view and moving them forward rebuilds the final state."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        start = cube.random_state(rng).to_facelets()
        states = sequence.states_at_views(start)
        rebuilt = [""] * 24
        for v, view in enumerate(sequence.views):
            for name, final in zip(view.facelets, sequence.final_positions(v)):
                rebuilt[final] = states[v][cube.facelet_index(name)]
        assert "".join(rebuilt) == sequence.final_state(start)


def test_mapping_through_one_known_turn():
    # View 1 sees U; then R (one arm) turns: U2 and U4 go to B3 and B1 (R takes U's right column to B).
    sequence = ScanSequence((ScanView("a", (), ("U1", "U2", "U3", "U4")), ScanView("b", (Turn({"R": 90}),), ())))
    finals = [cube.facelet_name(i) for i in sequence.final_positions(0)]
    assert finals == ["U1", "B3", "U3", "B1"]


# --- render -> scan -> decode ------------------------------------------------------


def test_rendered_scans_decode_to_the_final_state(config, sequence, pose):
    regions = camera_geometry.scan_regions(pose, sequence)
    rng = np.random.default_rng(3)
    for trial in range(6):
        start = cube.random_state(rng).to_facelets()
        frames, _ = render.render_scan(start, sequence, pose, render.Lighting.random(rng), seed=trial)
        result = read_frames(frames, sequence, regions, config=config)
        assert result.error is None, result.error
        assert same_partition(result.facelets, sequence.final_state(start))
        cube.parse_facelets(result.facelets)


def test_scanner_runs_on_a_file_camera_and_saves_pictures(tmp_path, config, sequence, pose):
    start = cube.random_state(np.random.default_rng(5)).to_facelets()
    frames, regions = render.render_scan(start, sequence, pose, render.Lighting(glare_spots=1), seed=9)
    for name, frame in frames.items():
        cv2.imwrite(str(tmp_path / f"{name}.png"), frame)
    local = config_module.with_settings(config, {"scan.images_dir": str(tmp_path / "shots")})
    scanner = Scanner(local, camera=FileCamera(tmp_path), calibration=None, regions=regions)
    result = scanner.scan()
    assert same_partition(result.facelets, sequence.final_state(start))
    names = sorted(p.name for p in result.images)
    assert names == ["01-top-front.png", "02-bottom-back.png", "03-left.png", "04-right.png", "net.png"]
    assert all(cv2.imread(str(p)) is not None for p in result.images)
    assert result.read_ms > 0


def test_regions_must_fit_sequence_and_frame(sequence, pose):
    regions = camera_geometry.scan_regions(pose, sequence)
    regions.views["left"] = regions.views["left"][:3]
    with pytest.raises(RegionsError, match="view 'left' has 3 regions but the scan sequence lists 4"):
        regions.check(sequence)
    regions = camera_geometry.scan_regions(pose, sequence)
    frames = {v.name: np.zeros((240, 320, 3), np.uint8) for v in sequence.views}
    with pytest.raises(RegionsError, match="set for 640x480 frames but the frame is 320x240"):
        read_stickers(frames, sequence, regions)


def test_regions_file_round_trip(tmp_path, sequence, pose):
    regions = camera_geometry.scan_regions(pose, sequence)
    path = regions.save(tmp_path / "regions.yaml")
    loaded = Regions.load(path)
    assert loaded.image_size == (640, 480)
    for name in regions.views:
        assert np.allclose(loaded.quads(name), regions.quads(name), atol=0.05)
    with pytest.raises(RegionsError, match="cannot read regions file"):
        Regions.load(tmp_path / "missing.yaml")


def test_drift_from_calibration_warns(config, sequence, pose):
    from robot.vision.calibrate import learn_colours

    solved, regions = render.render_scan(cube.SOLVED_FACELETS, sequence, pose, render.Lighting(), seed=1)
    calibration, problems = learn_colours(read_stickers(solved, sequence, regions), sequence)
    assert not problems
    start = cube.random_state(np.random.default_rng(8)).to_facelets()
    same_light, _ = render.render_scan(start, sequence, pose, render.Lighting(), seed=2)
    assert read_frames(same_light, sequence, regions, calibration, config=config).warnings == []
    warm, _ = render.render_scan(start, sequence, pose, render.Lighting(temperature_k=3000, brightness=0.6), seed=2)
    result = read_frames(warm, sequence, regions, calibration, config=config)
    assert any("drifted" in w and "calibrate colours" in w for w in result.warnings)


# --- sampling robustness ----------------------------------------------------------


def _flat_sticker(rgb, size=60):
    image = np.zeros((size + 20, size + 20, 3), np.uint8)
    image[10:10 + size, 10:10 + size] = rgb[::-1]
    quad = np.array([[10, 10], [10 + size, 10], [10 + size, 10 + size], [10, 10 + size]], float)
    return image, quad


def _delta_e(lab, rgb):
    return float(np.linalg.norm(np.array(lab) - srgb_to_lab(np.array(rgb, float))))


@pytest.mark.parametrize("rgb, glare_matters", [
    ((196, 18, 38), True), ((250, 112, 18), True), ((16, 72, 196), True), ((238, 238, 232), False),
])
def test_glare_spot_is_rejected(rgb, glare_matters):
    image, quad = _flat_sticker(rgb)
    spot = image.astype(float)
    yy, xx = np.mgrid[0:spot.shape[0], 0:spot.shape[1]]
    alpha = 0.95 * np.exp(-((xx - 45) ** 2 + (yy - 40) ** 2) / (2 * 5.0 ** 2))[..., None]  # spot: ~1/3 of the sampled area
    glared = np.clip(spot * (1 - alpha) + 280 * alpha, 0, 255).astype(np.uint8)
    robust = sample_sticker(glared, quad)
    assert _delta_e(robust.lab, rgb) < 3.0
    naive = srgb_to_lab(glared[28:64, 28:64].reshape(-1, 3)[:, ::-1].astype(float).mean(axis=0))
    assert robust.glare > 0
    if glare_matters:  # on a coloured sticker the glare would have moved a plain mean
        assert _delta_e(naive, rgb) > _delta_e(robust.lab, rgb) + 3


@pytest.mark.parametrize("rgb", [(196, 18, 38), (18, 158, 72), (250, 214, 16)])
def test_shadow_is_rejected(rgb):
    image, quad = _flat_sticker(rgb)
    image[10:40, 10:35] = (image[10:40, 10:35] * 0.45).astype(np.uint8)  # a shadow over one corner
    robust = sample_sticker(image, quad, config_module.defaults().scan.sampling)
    assert _delta_e(robust.lab, rgb) < 3.0
    assert robust.shadow > 0


def test_sample_reports_spread():
    image, quad = _flat_sticker((100, 100, 100))
    flat = sample_sticker(image, quad)
    noisy = np.clip(image + np.random.default_rng(0).normal(0, 12, image.shape), 0, 255).astype(np.uint8)
    assert sample_sticker(noisy, quad).spread > flat.spread + 2


# --- real photos -------------------------------------------------------------------


def _tracker_sets():
    if not FIXTURE.exists():
        return []
    return list(yaml.safe_load(FIXTURE.read_text()))


@pytest.mark.parametrize("name", _tracker_sets())
def test_real_photos_decode_exactly(name, config):
    if not TRACKER.is_dir():
        pytest.skip(f"real photos not found at {TRACKER} (shared test data absent)")
    regions = Regions.from_dict(yaml.safe_load(FIXTURE.read_text())[name], f"{FIXTURE}:{name}")
    # One view per photo, no robot actions; region k of rubiks-side-X is facelet X(k+1).
    views = [{"name": f"rubiks-side-{f}", "actions": [], "facelets": [f"{f}{k}" for k in range(1, 5)]}
             for f in cube.FACES]
    sequence = ScanSequence.from_data(views)
    frames = capture_views(FileCamera(TRACKER / name).open(), sequence)
    result = read_frames(frames, sequence, regions, config=config)
    expected = json.loads((TRACKER / "expected.json").read_text())[name]
    want = next(v for k, v in expected.items() if k.startswith("expected_kociemba"))
    assert result.error is None, result.error
    assert same_partition(result.facelets, want), (result.facelets, want)


def test_memory_camera_serves_frames(sequence, pose):
    frames, _ = render.render_scan(cube.SOLVED_FACELETS, sequence, pose, seed=1)
    got = capture_views(MemoryCamera(frames), sequence)
    assert all(got[name] is frames[name] for name in frames)
