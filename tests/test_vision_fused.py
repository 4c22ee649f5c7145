"""The fused second look (robot/vision/fused.py) and its pose choice (robot/scan_sequence.py)."""

import json

import numpy as np
import pytest

from robot import config as config_module
from robot import cube
from robot.scan_sequence import (ScanSequence, choose_second_look, choose_second_looks, second_look_places,
                                  second_look_views)
from robot.vision import VisionError, decode
from robot.vision.fused import Look, decode_fused, washed_out

from benches import load_bench
from test_vision_decode import REAL_CASES, same_partition


@pytest.fixture(scope="module")
def real_cases():
    if not REAL_CASES.exists():
        pytest.skip(f"real readings not found at {REAL_CASES} (shared/ data is not in this checkout)")
    return json.loads(REAL_CASES.read_text())["cases"]


@pytest.fixture(scope="module")
def sequence():
    return ScanSequence.from_config(config_module.defaults())


def outcome(decoder, rgb):
    """What a decoder makes of readings: the result's fields, or the refusal's."""
    try:
        r = decoder(rgb)
        return ("cube", r.facelets, r.confidence, r.margin, r.unread, r.alternative)
    except VisionError as exc:
        return ("refused", exc.reason, exc.stickers)


def one_look_each(rgb):
    return decode_fused([[Look(tuple(v))] for v in np.asarray(rgb, dtype=float)])


def test_one_look_per_facelet_is_the_single_look_decoder_on_the_real_readings(real_cases):
    exact = wrong = 0
    for case in real_cases:
        fused = outcome(one_look_each, case["rgb_URFDLB"])
        assert fused == outcome(decode, case["rgb_URFDLB"]), case["id"]
        if fused[0] == "cube":
            exact += same_partition(fused[1], case["expected_URFDLB"])
            wrong += not same_partition(fused[1], case["expected_URFDLB"])
    assert exact >= 41 and wrong == 0


def test_one_look_per_facelet_is_the_single_look_decoder_on_generated_sets(real_cases):
    """bench/vision.py's light sweep rows (the glare targets) and its synthetic kinds, a few draws each."""
    vision = load_bench("vision")
    rng = np.random.default_rng(5)
    refused = 0
    for row in ("moderate + 1 glare 0.4", "moderate + 2 glare 0.5 + shadow 0.5", "swapped pair, moderate"):
        for case in real_cases[::4]:
            rgb, _ = vision.perturb(case["rgb_URFDLB"], case["expected_URFDLB"], vision.SWEEP[row], rng)
            fused = outcome(one_look_each, rgb)
            assert fused == outcome(decode, rgb), (row, case["id"])
            refused += fused[0] == "refused"
    for noise, shade, temperature, brightness, _ in vision.SYNTHETIC.values():
        for _ in range(4):
            truth = cube.random_state(rng).to_facelets("".join(str(d) for d in rng.permutation(6)))
            rgb = vision.PALETTE[[int(c) for c in truth]] * rng.uniform(1 - shade, 1, (24, 1))
            rgb = np.clip(rgb * rng.uniform(1 - temperature, 1 + temperature, 3) * brightness
                          + rng.normal(0, noise, (24, 3)), 0, 255)
            fused = outcome(one_look_each, rgb)
            assert fused == outcome(decode, rgb)
            refused += fused[0] == "refused"
    assert refused  # the refusals were compared too, not only cubes


def _clean_case(real_cases):
    case = next(c for c in real_cases if c["id"].endswith("2x2x2-random-01") or "2x2x2" in c["id"])
    rgb = np.array(case["rgb_URFDLB"], dtype=float)
    result = decode(rgb)
    assert same_partition(result.facelets, case["expected_URFDLB"])
    return rgb, result


def test_looks_that_disagree_beyond_the_light_are_refused(real_cases):
    """A sticker read clean as one colour in a look and clean as another in a second look: refused."""
    rgb, result = _clean_case(real_cases)
    i = 0
    other = next(k for k in range(24) if result.facelets[k] != result.facelets[i])
    looks = [[Look(tuple(v))] for v in rgb]
    looks[i] = [Look(tuple(rgb[i]), 1.0, "first"), Look(tuple(rgb[i]), 1.0, "second")]
    assert decode_fused(looks).facelets == result.facelets  # two clean looks that agree: the same cube
    looks[i] = [Look(tuple(rgb[i]), 1.0, "first"), Look(tuple(rgb[other]), 1.0, "second")]
    with pytest.raises(VisionError) as refused:
        decode_fused(looks)
    assert refused.value.reason == "disagree" and refused.value.stickers == (cube.facelet_name(i),)
    # ... and a look trusted less is not excused when the light does not explain it (not glare on that colour).
    looks[i] = [Look(tuple(rgb[i]), 1.0, "first"), Look(tuple(rgb[other]), 0.5, "second")]
    assert outcome(decode_fused, looks)[:2] == ("refused", "disagree")


def test_a_clean_look_outweighs_a_washed_out_one(real_cases):
    """A sticker washed out in one look (which alone the decoder reads past or refuses) and clean in
    another: the fused cube is the clean one's, the washed look explained by the light."""
    rgb, result = _clean_case(real_cases)
    lamp = np.array([255.0, 255.0, 255.0])
    washed = rgb.copy()
    targets = [k for k in range(24) if rgb[k].min() < 120][:2]  # two coloured (not white-ish) stickers
    for k in targets:
        washed[k] = np.round(0.35 * rgb[k] + 0.65 * lamp)
    assert set(washed_out(washed, result)) >= set(targets)
    looks = [[Look(tuple(v))] for v in washed]
    for k in targets:
        looks[k] = [Look(tuple(washed[k]), 0.35, "first"), Look(tuple(rgb[k]), 1.0, "second")]
    fused = decode_fused(looks)
    assert fused.facelets == result.facelets and fused.margin == result.margin and fused.unread == ()
    # With the trusts the other way round, the washed reading is the facelet's: not the clean decode.
    for k in targets:
        looks[k] = [Look(tuple(washed[k]), 1.0, "first"), Look(tuple(rgb[k]), 0.35, "second")]
    assert outcome(decode_fused, looks) != outcome(decode, rgb)


def test_a_doubtful_sticker_gets_a_look_where_it_is_on_another_face_of_the_camera(sequence):
    """(a): for every sticker, and for the two stickers at one place of the two U+F views, the chosen
    second look shows each on the other face (U <-> F) of the camera frame than where it was washed."""
    seen = {final: view.facelets[r] for v, view in enumerate(sequence.views)
            for r, final in enumerate(sequence.final_positions(v))}
    for i, place in seen.items():
        view = choose_second_look(sequence, {i: place})
        assert view is not None, cube.facelet_name(i)
        shown = second_look_places(sequence, view)
        assert shown[i][0] != place[0], (cube.facelet_name(i), place, view.name)
        sequence.with_view(view).check_robot(config_module.defaults())  # the robot can do it
    under_lamp = {f: p for f, p in seen.items() if p == "U2"}
    assert len(under_lamp) == 4  # U2 in each view: four stickers under a lamp fixed at that place
    # They are on four faces of the cube (U, R, D, L): one view turns one of them to the other face.
    views = choose_second_looks(sequence, under_lamp, most=4)
    assert len(views) == 4 and len({v.name for v in views}) == 4
    shown_turned, taken = set(), sequence
    moved = list(range(24))  # a first-frame facelet's index in the frame before each look
    for view in views:
        places = second_look_places(taken, view)
        shown_turned |= {i for i in under_lamp if moved[i] in places and places[moved[i]][0] != under_lamp[i][0]}
        moved = [cube.apply_moves("".join(chr(0x100 + k) for k in range(24)), view.moves).index(chr(0x100 + m))
                 for m in moved]
        taken = taken.with_view(view)
    assert shown_turned == set(under_lamp)
    taken.check_robot(config_module.defaults())


def test_the_second_look_is_the_cheapest_that_turns_them(sequence):
    """Among views that show the stickers on another face the one with the fewest actions wins, and
    a view that only shows them on the same face is not taken."""
    top = {final: view.facelets[r] for v, view in enumerate(sequence.views[:1])
           for r, final in enumerate(sequence.final_positions(v))}
    i, place = next((f, p) for f, p in top.items() if p.startswith("U"))
    chosen = choose_second_look(sequence, {i: place})
    turning = [v for v in second_look_views()
               if i in second_look_places(sequence, v) and second_look_places(sequence, v)[i][0] != place[0]]
    assert len(chosen.actions) + len(chosen.moves) == min(len(v.actions) + len(v.moves) for v in turning)
    same_face = [v for v in second_look_views()
                 if i in second_look_places(sequence, v) and second_look_places(sequence, v)[i][0] == place[0]]
    assert choose_second_look(sequence, {i: place}, candidates=same_face) is None


def test_fixed_glare_scans_read_better_fused_and_never_wrong():
    """bench/vision_fused.py's synthetic scans (a lamp at one camera place in every view), 60 cubes at
    a 0.7 mix: the fused second look reads more of them than the single look, none wrong."""
    bench = load_bench("vision_fused")
    rows = bench.sweep(60, seed=3, mixes=[0.7], places=["U2"])
    row = rows[0]
    assert row["single wrong"] == 0 and row["fused wrong"] == 0
    assert row["second looks"] > 0
    assert row["fused exact"] > row["single exact"]


# ---------------------------------------------------------------------------
# The adaptive scan's second look, through rendered frames (SIMULATED).

import cv2  # noqa: E402

from robot.sim import render  # noqa: E402
from robot.vision import camera_geometry  # noqa: E402
from robot.vision.adaptive import scan as run_scan  # noqa: E402
from robot.vision.camera import MemoryCamera  # noqa: E402
from robot.vision.scan import Scanner  # noqa: E402


class LampCamera(MemoryCamera):
    """SIMULATED: renders the cube where the mover left it, washed toward white at fixed places of the
    camera's frame (a lamp's reflection, the same in every view)."""

    def __init__(self, start, pose, places, mix, seed):
        super().__init__({})
        self.state, self.pose, self.mix, self.taken = start, pose, mix, []
        self.quads = camera_geometry.facelet_quads(pose, places)
        self.rng = np.random.default_rng(seed)

    def capture(self, view, still_since=None):
        self.taken.append(view)
        frame = render.render_state(self.state, self.pose, render.Lighting(noise_sigma=2.0), self.rng).astype(float)
        mask = np.zeros(frame.shape[:2], np.uint8)
        for quad in self.quads:
            cv2.fillConvexPoly(mask, np.round(quad).astype(np.int32), 1)
        frame[mask > 0] = (1 - self.mix) * frame[mask > 0] + self.mix * 255.0
        return np.clip(np.round(frame), 0, 255).astype(np.uint8)


class Mover:
    def __init__(self, camera):
        self.camera = camera

    def move_to(self, view):
        self.camera.state = cube.apply_moves(self.camera.state, view.moves)


def lamp_scan(second_look, start: str, places, mix: float, seed: int):
    """The run's scan (adaptive.scan) of a lamp scene; second_look None: as the default config says."""
    settings = {"scan.save_images": False}
    if second_look is not None:
        settings["scan.second_look"] = second_look
    config = config_module.with_settings(config_module.defaults(), settings)
    sequence = ScanSequence.from_config(config)
    pose = camera_geometry.Pose.from_config(config)
    camera = LampCamera(start, pose, places, mix, seed)
    scanner = Scanner(config, camera=camera, view_mover=Mover(camera), calibration=None,
                      regions=camera_geometry.scan_regions(pose, sequence))
    return run_scan(scanner), camera, scanner


def test_nothing_changes_when_the_first_look_is_sure():
    """(c): clean scans (and ones the lamp does not spoil) with scan.second_look on: the same views,
    the same cube, confidence and margin as with it off; no extra view."""
    rng = np.random.default_rng(4)
    starts = [cube.SOLVED.to_facelets()] + [cube.random_state(rng).to_facelets() for _ in range(3)]
    for trial, start in enumerate(starts):  # a solved cube takes every view: the full scan's decode is sure
        for places, mix in (([], 0.0), (["U2"], 0.3)):
            off, off_camera, _ = lamp_scan(False, start, places, mix, trial)
            on, on_camera, scanner = lamp_scan(True, start, places, mix, trial)
            assert off.decoded is not None, trial
            assert on_camera.taken == off_camera.taken and len(on_camera.taken) <= 4
            assert [m["view"] for m in scanner.marks["views"]] == on_camera.taken
            assert (on.decoded.facelets, on.decoded.confidence, on.decoded.margin) == \
                (off.decoded.facelets, off.decoded.confidence, off.decoded.margin)
            assert (on.sequence is None) == (off.sequence is None)
            assert trial or len(on_camera.taken) == 4


def test_a_scan_washed_out_at_fixed_places_is_read_by_a_second_look():
    """A lamp fixed at two places of the camera's view (60 % toward white in every view): the plain
    scan refuses some cubes; with scan.second_look the robot takes extra views, they are in the scan's
    marks (the waterfall), and the fused cube is the cube, in the frame after the extra views."""
    rng = np.random.default_rng(11)
    refused = second = 0
    for trial in range(6):
        start = cube.random_state(rng).to_facelets()
        off, _, _ = lamp_scan(False, start, ["U2", "F3"], 0.6, trial)
        on, camera, scanner = lamp_scan(True, start, ["U2", "F3"], 0.6, trial)
        if off.decoded is not None:
            continue
        refused += 1
        extra = camera.taken[4:]
        assert extra and all(name.startswith("second-look") for name in extra)
        assert [m["view"] for m in scanner.marks["views"]] == camera.taken
        if on.decoded is not None:
            second += 1
            assert on.sequence is not None and [v.name for v in on.sequence.views][4:] == extra
            assert same_partition(on.decoded.facelets, camera.state)  # the cube where the robot left it
            assert on.sequence.final_grip == ("RL" if len(on.sequence.views[-1].facelets) == 8 else "FB")
    assert refused >= 3 and second == refused


def test_the_run_takes_a_second_look_by_default_from_where_the_washed_stickers_are_clean():
    """(a) on the run's path with the default config: the stickers washed at the lamp's places in the four
    views are read from a second look that shows them elsewhere (the fused reading's source is a
    second-look view), and that look is a stage of the scan's marks (the waterfall)."""
    assert config_module.defaults().scan.second_look
    rng = np.random.default_rng(11)
    looked = clean = 0
    for trial in range(6):
        start = cube.random_state(rng).to_facelets()
        result, camera, scanner = lamp_scan(None, start, ["U2", "F3"], 0.6, trial)
        extra = camera.taken[4:]
        assert [m["view"] for m in scanner.marks["views"]] == camera.taken
        if not extra:
            continue
        looked += 1
        assert result.decoded is not None and same_partition(result.decoded.facelets, camera.state)
        first = ScanSequence.from_config(scanner.config)
        under_lamp = {final for v, view in enumerate(first.views) for r, final in enumerate(first.final_positions(v))
                      if view.facelets[r] in ("U2", "F3")}
        moved = cube.apply_moves("".join(chr(0x100 + k) for k in range(24)),
                                 [m for name in extra for v in result.sequence.views if v.name == name for m in v.moves])
        sources = {ord(moved[p]) - 0x100: result.readings.source[p] for p in range(24)}
        from_second = [i for i in under_lamp if sources[i][0].startswith("second-look")]
        assert from_second, trial  # a washed sticker's fused reading is a second look's
        places = [next(v for v in result.sequence.views if v.name == sources[i][0]).facelets[sources[i][1]]
                  for i in from_second]
        clean += sum(place not in ("U2", "F3") for place in places)  # where the lamp does not reach
    assert looked >= 3 and clean >= looked
