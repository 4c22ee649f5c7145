"""Reading through glare, shadow and clipped channels without guessing (issue 14)."""

import numpy as np
import pytest

from robot.cube import CubeError, parse_facelets
from robot.vision import VisionError, decode
from robot.vision.light import censored_residual, confounded_colours, explained_by_light, lamp_whites
from test_vision_decode import PALETTE, perturbed, random_cube, same_partition


def name(i: int) -> str:
    return f"{'URFDLB'[i // 4]}{i % 4 + 1}"


def glare(rgb, fraction, lamp=255.0):
    """A glossy sticker reflecting the lamp: its reading blended toward the lamp's white."""
    return (1 - fraction) * np.asarray(rgb, dtype=float) + fraction * lamp


def outcome(rgb, truth) -> str:
    try:
        result = decode(rgb)
    except VisionError:
        return "refused"
    return "exact" if same_partition(result.facelets, truth) else "wrong"


def first_case(seed, make, want):
    """The first random cube (seeded) whose readings from make(rng, classes) satisfy want(readings)."""
    rng = np.random.default_rng(seed)
    for _ in range(200):
        truth, classes = random_cube(rng)
        rgb, i = make(rng, classes)
        if want(rgb, i):
            return truth, classes, rgb, i
    raise AssertionError("no such case in 200 cubes")


# ---------------------------------------------------------------------------
# The light model.


def test_clipped_channels_count_only_on_the_wrong_side_of_the_limit():
    # A channel at 255 means "at least 255": a prediction above it is no misfit, one below it is.
    assert censored_residual(np.array([255.0, 100, 100]), np.array([300.0, 100, 100])) == 0
    assert censored_residual(np.array([255.0, 100, 100]), np.array([200.0, 100, 100])) == pytest.approx(55)
    assert censored_residual(np.array([0.0, 100, 100]), np.array([-40.0, 100, 100])) == 0
    assert censored_residual(np.array([0.0, 100, 100]), np.array([30.0, 100, 100])) == pytest.approx(30)
    # Unclipped channels are measurements both ways.
    assert censored_residual(np.array([120.0, 100, 100]), np.array([100.0, 100, 100])) == pytest.approx(20)


def test_glare_and_shadow_explain_a_stickers_own_colour_but_not_another():
    lamps = lamp_whites(PALETTE)
    red, white, yellow, orange = PALETTE[2], PALETTE[0], PALETTE[1], PALETTE[3]
    assert explained_by_light(glare(red, 0.5), red, white, lamps, noise_rgb=5)  # pink: red + glare
    assert explained_by_light(red * 0.45, red, PALETTE[5], lamps, noise_rgb=5)  # dark red: red in shadow
    assert not explained_by_light(white, yellow, white, lamps, noise_rgb=5)  # a white sticker is not a glare
    assert not explained_by_light(orange, red, orange, lamps, noise_rgb=5)  # nor is orange a lit red
    assert not explained_by_light(red, orange, red, lamps, noise_rgb=5)  # nor red a shadowed orange


def test_colours_that_differ_only_in_clipped_channels_are_confounded():
    over = np.array([[255, 255, 255], [255, 255, 250], [255, 60, 70], [255, 180, 40], [40, 255, 90], [40, 120, 255]],
                    dtype=float)
    assert confounded_colours(over) == [(0, 1)]  # white and a washed-out yellow
    assert confounded_colours(PALETTE) == []


# ---------------------------------------------------------------------------
# Decoding.


def test_a_glare_sticker_is_read_past_when_its_corner_names_the_piece():
    # Without reading past it the decoder would refuse (the sticker fits no colour);
    # its corner's other two stickers name the piece, so the cube is decoded.
    def make(rng, classes):
        rgb = perturbed(rng, classes, noise=3, shade=0.1, temperature=0.05)
        i = int(rng.choice(np.flatnonzero(classes != 0)))  # not a white sticker
        rgb[i] = glare(rgb[i], 0.5)
        return np.round(rgb), i

    def needs_reading_past(rgb, i):
        try:
            return name(i) in decode(rgb).unread
        except VisionError:
            return False

    truth, _, rgb, i = first_case(31, make, needs_reading_past)
    result = decode(rgb)
    assert same_partition(result.facelets, truth)
    assert result.unread == (name(i),)
    assert result.margin >= 2.5


def test_glare_sticker_scans_are_exact_or_refused_never_wrong():
    rng = np.random.default_rng(32)
    counts = {"exact": 0, "refused": 0, "wrong": 0}
    for _ in range(40):
        truth, classes = random_cube(rng)
        rgb = perturbed(rng, classes, noise=4, shade=0.15, temperature=0.1)
        for i in rng.choice(24, 2, replace=False):
            rgb[i] = glare(rgb[i], rng.uniform(0.3, 0.6))
        counts[outcome(np.round(rgb), truth)] += 1
    assert counts["wrong"] == 0, counts
    assert counts["exact"] >= 36, counts


def test_a_shadowed_sticker_is_its_own_colour_darker():
    rng = np.random.default_rng(33)
    for _ in range(20):
        truth, classes = random_cube(rng)
        rgb = perturbed(rng, classes, noise=3, shade=0.1, temperature=0.05)
        i = int(rng.integers(24))
        rgb[i] *= 0.4  # in the arm's shadow: 60% darker
        assert outcome(np.round(rgb), truth) == "exact", name(i)


def test_a_glare_spot_with_clipped_channels_is_read_past():
    # Red + a strong glare under a warm cast: the red channel clips at 255,
    # which must not count as "brighter than any red can be".
    def make(rng, classes):
        cast = np.array([1.15, 1.0, 0.9])
        rgb = perturbed(rng, classes, noise=2, shade=0.05, temperature=0.0) * cast
        i = int(np.flatnonzero(classes == 2)[0])  # a red sticker
        rgb[i] = glare(rgb[i], 0.55, 255.0 * cast)
        return np.clip(np.round(rgb), 0, 255), i

    truth, _, rgb, i = first_case(34, make, lambda rgb, i: rgb[i, 0] == 255)
    result = decode(rgb)
    assert same_partition(result.facelets, truth)


def test_an_over_exposed_frame_is_refused_not_guessed():
    # White and yellow both clip to 255 in every channel where they differ: no
    # reading can tell them apart, so the decoder refuses (naming over-exposure).
    rng = np.random.default_rng(35)
    truth, classes = random_cube(rng)
    rgb = np.clip(PALETTE[classes] * 4.0 + rng.normal(0, 2, (24, 3)), 0, 255)  # yellow's blue 40 -> 160..
    rgb[classes == 1] = np.clip(rgb[classes == 1] * [1, 1, 1.7], 0, 255)  # .. and up to 255: white = yellow
    with pytest.raises(VisionError) as caught:
        decode(np.round(rgb))
    assert caught.value.reason == "over-exposed"
    assert "exposure" in str(caught.value)
    assert set(caught.value.stickers) >= {name(i) for i in np.flatnonzero(classes <= 1)}


@pytest.mark.parametrize("seed", range(6))
def test_a_swapped_pair_is_refused_even_beside_a_glare(seed):
    # Two stickers of different colours swapped on the cube (an illegal cube):
    # each reads clearly as another colour that no light explains, so the
    # decoder refuses and names them; a glare elsewhere does not change that.
    rng = np.random.default_rng(100 + seed)
    truth, classes = random_cube(rng)
    rgb = perturbed(rng, classes, noise=3, shade=0.1, temperature=0.05)
    while True:
        i, j, k = rng.choice(24, 3, replace=False)
        swapped = list(truth)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        try:
            parse_facelets("".join(swapped))
        except CubeError:
            if classes[i] != classes[j]:
                break
    rgb[[i, j]] = rgb[[j, i]]
    rgb[k] = glare(rgb[k], 0.4)
    with pytest.raises(VisionError) as caught:
        decode(np.round(rgb))
    assert caught.value.reason in ("misread", "unexplained", "no-fit", "margin")
    assert {name(i), name(j)} & set(caught.value.stickers), (name(i), name(j), caught.value.stickers)


def test_a_white_sticker_in_a_yellow_place_is_not_excused_as_glare():
    rng = np.random.default_rng(36)
    truth, classes = random_cube(rng)
    rgb = perturbed(rng, classes, noise=2, shade=0.05, temperature=0.0)
    yellow = int(np.flatnonzero(classes == 1)[0])
    rgb[yellow] = PALETTE[0] + rng.normal(0, 2, 3)  # a white sticker stuck on a yellow one
    with pytest.raises(VisionError) as caught:
        decode(np.round(rgb))
    assert name(yellow) in caught.value.stickers


# Two scans (from bench/vision.py's synthetic sets, readings rounded) where the
# best cube is wrong and the sticker it cannot fit is the clue: reading past
# that sticker must not confirm the cube.  (The dark one did, before dark scans
# were excluded; the swapped one did unrounded, before an unread sticker near
# another colour had to be explained by light.)  Refused or exact, never wrong.
HARD_SCANS = {
    "dark, warm light (a 'shadow' could excuse any dark reading)": (
        "034145132045103220431552",
        [[57, 64, 52], [53, 15, 8], [15, 27, 7], [66, 54, 14], [8, 37, 22], [7, 11, 45], [36, 53, 0], [52, 18, 17],
         [42, 7, 0], [59, 44, 53], [0, 29, 16], [12, 22, 54], [67, 39, 22], [61, 57, 63], [56, 48, 0], [39, 1, 4],
         [50, 0, 12], [53, 44, 53], [5, 34, 15], [59, 20, 10], [47, 50, 20], [10, 24, 43], [5, 7, 51], [16, 7, 9]]),
    "swapped pair (L2, F3): the unfit stickers look like orange": (
        "053214502011201444533253",
        [[203, 180, 177], [24, 62, 162], [208, 90, 17], [175, 22, 32], [203, 172, 35], [24, 124, 55], [28, 54, 137],
         [197, 180, 166], [153, 18, 24], [213, 185, 177], [31, 119, 52], [199, 161, 26], [167, 24, 31],
         [209, 191, 178], [200, 163, 23], [30, 123, 53], [24, 116, 48], [224, 182, 29], [21, 58, 131], [219, 99, 16],
         [205, 72, 22], [151, 18, 27], [19, 56, 144], [210, 81, 22]]),
}


@pytest.mark.parametrize("label", list(HARD_SCANS))
def test_reading_past_never_confirms_a_wrong_cube(label):
    truth, rgb = HARD_SCANS[label]
    assert outcome(np.array(rgb, dtype=float), truth) != "wrong"
