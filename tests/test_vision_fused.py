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
