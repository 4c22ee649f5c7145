"""Joint decoding of 54 readings into a legal 3x3x3: real robot readings, synthetic scans, each refusal rule."""

import json
from pathlib import Path

import numpy as np
import pytest
from benches import load_bench

from robot.solver3 import cube3
from robot.vision import decode3 as decode3_module
from robot.vision.colour import srgb_to_lab
from robot.vision.decode import _features, decode_settings
from robot.vision.decode3 import NAMES, Decode3Result, decode3
from robot.vision.legal3 import best_legal, labels_of
from robot.vision.readings import VisionError

# The real 3x3x3 cases (and their palette and comparison) are read by bench/vision3.py: one loader for both.
VISION3 = load_bench("vision3")
RESOLVER, PALETTE, same_partition = VISION3.RESOLVER, VISION3.PALETTE, VISION3.same_partition


def real_3x3x3_cases(folder: Path = RESOLVER) -> list[dict]:
    """Every 3x3x3 case with a known answer: id, rgb (54, URFDLB order), truth."""
    return [case for case in VISION3.real_cases(folder) if case["truth"] is not None]


def outcome(rgb, truth) -> str:
    try:
        result = decode3(rgb)
    except VisionError:
        return "refused"
    return "exact" if same_partition(result.facelets, truth) else "wrong"


def random_cube(rng):
    """(facelets URFDLB, face index per facelet) of a uniformly random legal 3x3x3."""
    faces = cube3.colours_from_cubies(*(np.asarray(x)[None] for x in cube3.random_state(rng)))[0].astype(int)
    return "".join("URFDLB"[f] for f in faces), faces


def readings(rng, faces, noise=4.0, exposure=(1.0, 1.0), cast=(1.0, 1.0), shade=0.1, glare=()):
    """A scan of `faces` under a random colour scheme: shading, exposure, cast, glare stickers, sensor noise."""
    rgb = PALETTE[rng.permutation(6)[faces]] * rng.uniform(1 - shade, 1, (54, 1))
    light = rng.uniform(*exposure) * rng.uniform(*cast, 3)
    rgb = rgb * light
    for i, fraction in zip(rng.permutation(54), glare):  # the lamp's reflection, under the same cast
        rgb[i] = (1 - fraction) * rgb[i] + fraction * 255.0 * light
    return np.clip(np.round(rgb + rng.normal(0, noise, rgb.shape)), 0, 255)


# ---------------------------------------------------------------------------
# Real readings (acceptance): exact or refused, never wrong.


@pytest.fixture(scope="module")
def real_cases():
    if not (RESOLVER / "expected.json").exists():
        pytest.skip(f"real 3x3x3 readings not found at {RESOLVER} (shared/ data is not in this checkout)")
    return real_3x3x3_cases()


def test_real_3x3x3_readings_are_exact_or_refused_never_wrong(real_cases):
    outcomes = {case["id"]: outcome(case["rgb"], case["truth"]) for case in real_cases}
    assert len(real_cases) >= 17
    assert [k for k, v in outcomes.items() if v == "wrong"] == []
    # Measured: 13 of 17 exact; the refused are the two near-black scans and two known-hard ones.
    assert sum(v == "exact" for v in outcomes.values()) >= 13, outcomes


def test_a_real_reading_gives_a_parseable_cube_with_54_stickers(real_cases):
    case = next(c for c in real_cases if c["id"].endswith("3x3x3-superflip.txt"))
    result = decode3(case["rgb"])
    assert isinstance(result, Decode3Result)
    cube3.parse_facelets(result.facelets)
    assert [s.name for s in result.stickers] == list(NAMES)
    assert result.facelets[4::9] == "URFDLB"
    assert result.margin >= 2.5 and 0 < result.confidence <= 1


def _under_moderate_light(rgb, rng):
    """A real scan under exposure 0.6-1.2 x cast 0.8-1.2, two 50% glare stickers, one 50% shadow, noise 4."""
    light = rng.uniform(0.6, 1.2) * rng.uniform(0.8, 1.2, 3)
    rgb = rgb * light
    spots = rng.permutation(54)
    rgb[spots[:2]] = 0.5 * rgb[spots[:2]] + 0.5 * 255.0 * light
    rgb[spots[2]] *= 0.5
    return np.clip(np.round(rgb + rng.normal(0, 4.0, rgb.shape)), 0, 255)


@pytest.mark.parametrize("name, seed", [("3x3x3-random-10__5216a26.txt", 2), ("3x3x3-random-04__6351c15.txt", 2)])
def test_a_white_balanced_second_look_confirms_the_cube_under_a_colour_cast(real_cases, monkeypatch, name, seed):
    case = next(c for c in real_cases if c["id"].endswith(name))
    rgb = _under_moderate_light(case["rgb"], np.random.default_rng(seed))
    assert same_partition(decode3(rgb).facelets, case["truth"])
    monkeypatch.setattr(decode3_module, "_white_balanced", lambda readings, fit: None)
    with pytest.raises(VisionError):  # (found by trying seeds: refused without the second look)
        decode3(rgb)


# ---------------------------------------------------------------------------
# Synthetic scans: 0 wrong.


@pytest.mark.parametrize("spec, least_exact", [
    ({"noise": 2.0, "shade": 0.05}, 30),
    ({"noise": 8.0, "shade": 0.2}, 30),
    ({"noise": 4.0, "exposure": (0.6, 1.2), "cast": (0.8, 1.2)}, 30),
    # Measured 30 and 29 of 30; without reading past the glare, 25 and 6.
    ({"noise": 4.0, "exposure": (0.6, 1.2), "cast": (0.8, 1.2), "glare": (0.4,)}, 28),
    ({"noise": 4.0, "exposure": (0.6, 1.2), "cast": (0.8, 1.2), "glare": (0.5, 0.5)}, 27),
], ids=["clean", "noise", "exposure", "glare", "two-glare"])
def test_synthetic_scans_are_never_wrong(spec, least_exact):
    rng = np.random.default_rng([7, len(spec), int(10 * spec["noise"])])
    counts = {"exact": 0, "refused": 0, "wrong": 0}
    for _ in range(30):
        truth, faces = random_cube(rng)
        counts[outcome(readings(rng, faces, **spec), truth)] += 1
    assert counts["wrong"] == 0, counts
    assert counts["exact"] >= least_exact, counts


# ---------------------------------------------------------------------------
# The search: exactly the best legal cube.


def test_best_legal_fixes_a_flipped_edge_at_the_cheapest_cost():
    truth = labels_of(*cube3.random_state(np.random.default_rng(3)))[0]
    cost = np.where(np.eye(6, dtype=bool)[truth], 0.0, 1.0)
    uf = cube3.EDGE_FACELETS[cube3.EDGE_NAMES.index("UF")]
    a, b = truth[list(uf)]
    cost[uf[0], [a, b]] = [0.5, 0.0]  # the edge reads flipped, a little: sticker by sticker, an illegal cube
    cost[uf[1], [b, a]] = [0.5, 0.0]
    total, labels, _ = best_legal(cost)
    assert np.array_equal(labels, truth)  # unflipping it (1.0) beats flipping a second edge (2.0)
    assert total == pytest.approx(1.0)


def test_best_legal_keeps_corner_and_edge_parity_equal():
    rng = np.random.default_rng(4)
    cp, co, ep, eo = cube3.random_state(rng)
    truth = labels_of(cp, co, ep, eo)[0]
    odd = ep.copy()
    odd[[0, 1]] = odd[[1, 0]]  # two edges exchanged: a parity the cube cannot have
    swapped = labels_of(cp, co, odd, eo)[0]
    cost = np.where(np.eye(6, dtype=bool)[swapped], 0.0, 1.0) + np.where(np.eye(6, dtype=bool)[truth], 0.0, 0.3)
    _, labels, pieces = best_legal(cost)
    cube3.parse_facelets("".join("URFDLB"[c] for c in labels))
    assert cube3._parity(pieces[0]) == cube3._parity(pieces[2])
    assert not np.array_equal(labels, swapped)


# ---------------------------------------------------------------------------
# Each refusal rule, on a constructed scan.


def _clean(seed):
    rng = np.random.default_rng(seed)
    truth, faces = random_cube(rng)
    rgb = PALETTE[faces] + rng.normal(0, 2.0, (54, 3))
    return truth, faces, np.clip(rgb, 0, 255)


def _refusal(rgb) -> VisionError:
    with pytest.raises(VisionError) as caught:
        decode3(rgb)
    return caught.value


# Noisy, shaded scans with two stickers of different colours exchanged (an illegal cube) where neither
# reads clearly enough as the other colour for the misread rule (found by trying seeds, as the 2x2x2's
# tests do): refused as a swapped pair, both named.
SWAP_SEEDS = (36, 111)


@pytest.mark.parametrize("seed", SWAP_SEEDS)
def test_two_stickers_that_read_like_each_others_colour_are_refused_as_swapped(seed):
    rng = np.random.default_rng(seed)
    truth, faces = random_cube(rng)
    rgb = readings(rng, faces, noise=8, shade=0.3, cast=(0.8, 1.2))
    while True:
        i, j = rng.choice(54, 2, replace=False)
        if faces[i] != faces[j] and i % 9 != 4 and j % 9 != 4:
            break
    rgb[[i, j]] = rgb[[j, i]]
    error = _refusal(rgb)
    assert error.reason == "swapped"
    assert {NAMES[i], NAMES[j]} <= set(error.stickers)


def test_two_stickers_of_a_corner_reading_as_other_colours_are_a_misread():
    truth, faces, rgb = _clean(12)
    corner = cube3.CORNER_FACELETS[2]
    for k in corner[1:]:
        rgb[k] = PALETTE[(faces[k] + 3) % 6]  # the opposite face's colour: on no piece with its neighbours
    error = _refusal(rgb)
    # (Neither can be read past: the corner would then be named by a sticker that fits no colour.)
    assert error.reason == "misread"
    assert {NAMES[k] for k in corner[1:]} <= set(error.stickers)


def test_one_sticker_reading_as_another_colour_is_read_past_only_if_light_explains_it():
    truth, faces, rgb = _clean(12)
    i = cube3.CORNER_FACELETS[2][0]  # a blue sticker (the palette's sixth colour)
    rgb[i] = PALETTE[(faces[i] + 3) % 6]
    error = _refusal(rgb)
    assert error.reason == "unexplained"
    assert error.stickers == (NAMES[i],)
    rgb[i] = 0.5 * PALETTE[faces[i]] + 0.5 * 255.0  # its own colour under the lamp's glare instead
    result = decode3(rgb)
    assert result.facelets == truth and result.unread == (NAMES[i],)


def test_an_illegally_twisted_corner_is_refused():
    truth, faces, rgb = _clean(13)
    corner = list(cube3.CORNER_FACELETS[4])
    rgb[corner] = rgb[np.roll(corner, 1)]  # twisted in place: the twists no longer sum to 0
    error = _refusal(rgb)
    # Untwisting it or twisting another corner the other way costs the same: either corner may be named.
    assert error.reason == "misread"
    assert len(error.stickers) == 3


def _feature_gap(a, b):
    """t -> (distance to a) - (distance to b) of the reading (1 - t) a + t b, in the decoder's features."""
    settings = decode_settings()

    def gap(t):
        f = _features(srgb_to_lab(np.array([(1 - t) * a + t * b, a, b])), settings)
        return np.linalg.norm(f[0] - f[1]) - np.linalg.norm(f[0] - f[2])
    return gap


def _blend_with_gap(a, b, target):
    """The blend of colours a and b whose feature distance to a exceeds that to b by `target` (bisection)."""
    gap, low, high = _feature_gap(a, b), 0.0, 1.0
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (middle, high) if gap(middle) < target else (low, middle)
    return (1 - low) * a + low * b


def test_many_stickers_each_a_little_like_another_colour_fit_no_cube():
    # Eight stickers, each 4 noise units (the floor, 2) nearer a colour it cannot be (its opposite face's):
    # none clearly another colour (misread needs 5) and no two like each other's, but 32 in all (limit 12).
    truth, faces, rgb = _clean(14)
    chosen = [k for e in cube3.EDGE_FACELETS for k in e if faces[k] < 3][:8]
    for k in chosen:
        rgb[k] = _blend_with_gap(PALETTE[faces[k]], PALETTE[faces[k] + 3], 8.0)
    error = _refusal(rgb)
    assert error.reason == "no-fit"
    assert set(error.stickers) <= {NAMES[k] for k in chosen}


def test_two_edges_that_may_be_flipped_are_refused_by_the_margin():
    # The white-green and white-blue edges each read the same between their two colours (as near one as
    # the other): flipping both is the other legal cube, exactly as good.
    truth, faces, rgb = _clean(15)
    ep = cube3.parse_facelets(truth)[0][2]
    places = [int(np.flatnonzero(ep == cube3.EDGE_NAMES.index(piece))[0]) for piece in ("UL", "UB")]
    stickers = []
    for place in places:
        a, b = cube3.EDGE_FACELETS[place]
        rgb[[a, b]] = _blend_with_gap(PALETTE[faces[a]], PALETTE[faces[b]], 0.0)
        stickers += [a, b]
    error = _refusal(rgb)
    assert error.reason == "margin"
    assert set(error.stickers) == {NAMES[k] for k in stickers}
    assert same_partition(error.result.facelets, truth) or error.result.alternative == truth


def test_bad_input_is_refused_by_name():
    assert _refusal(np.zeros((24, 3))).reason == "input"
    rgb = np.full((54, 3), 100.0)
    rgb[13] = [300, 0, 0]
    error = _refusal(rgb)
    assert error.reason == "input" and error.stickers == ("R5",)


# ---------------------------------------------------------------------------
# `cube-robot vision decode --puzzle 3x3x3`.


def test_vision_decode_puzzle_3x3x3_prints_the_cube_or_the_refusal(tmp_path, capsys):
    from robot import cli

    truth, faces, rgb = _clean(16)
    path = tmp_path / "readings.json"
    path.write_text(json.dumps(np.round(rgb).tolist()))
    assert cli.main(["vision", "decode", "--puzzle", "3x3x3", "--no-calibration", "--json", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["facelets"] == truth
    rgb[[0, 9]] = PALETTE[(faces[[0, 9]] + 3) % 6]  # two stickers reading as colours they cannot be
    path.write_text(json.dumps(np.round(rgb).tolist()))
    assert cli.main(["vision", "decode", "--puzzle", "3x3x3", "--no-calibration", str(path)]) == 1
    assert capsys.readouterr().out.startswith("refused: ")
    path.write_text(json.dumps(np.round(rgb[:24]).tolist()))  # a 2x2x2's worth of readings
    assert cli.main(["vision", "decode", "--puzzle", "3x3x3", "--no-calibration", str(path)]) == 2
    assert "expected 54 [R, G, B] readings" in capsys.readouterr().err
