"""Decoding a partial scan: some stickers not seen yet (the adaptive scan, robot/vision/adaptive.py).

    decode_partial(rgb, unseen, calibration, config) -> DecodeResult   (VisionError when not sure)

The decoder's own joint fit (robot/vision/decode.py) with the unseen stickers weighted 0 from the
start: they cost nothing for any colour, so a legal cube that differs from the best one only at
unseen stickers costs the same, its margin is 0 and the scan is refused (the next view follows).
Two more rules, for what only a partial scan can get wrong:
- every colour must be on some seen sticker (else it is named from nothing);
- the colours must sit PARTIAL_MIN_SEPARATION noise units apart: with stickers unseen a fit can split
  one seen colour in two and be cheaper for it (a solved cube seen from U F D B: L's and R's colours
  are on no seen sticker);
- a washed-out sticker decides nothing (`washed_suspects`): a seen sticker whose reading is another
  colour's (a seen sticker's or a colour's centre) washed 15-65 % toward the lamp's white may be that
  colour under a lamp, so the cube must follow from the other seen stickers alone, and be the same
  cube; else the next view follows.  Under a lamp the full scan reads past such a sticker with its
  whole corner seen; a partial scan, with a third of the stickers unseen, can instead take it for an
  unseen colour, or make it a colour of its own, and still find a legal cube (bench/vision_lamp.py).
  The lamp washes toward white (never toward a yellow that is the lightest colour when the whites are in
  an arm's shadow), and past GLARE_MAX only a white clearly tinted beyond the other whites is a suspect.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..config_types import Config
from ..cube import FACELET_COUNT
from .clusters import distances, partition_key
from .colour import srgb_to_lab
from .decode import (RETRIED, DecodeResult, _decode_readings, _features, _white_balanced, decode_settings)
from .legal import COLOURS
from .light import GLARE_MAX, HIGH, OTHER_RATIO, censored_residual, lamp_whites
from .readings import NAMES, VisionError, check_readings

# On the 43 real readings with the L and R stickers unseen, the right cubes' closest colours are
# 5.7 noise units apart or more, the two wrong ones (solved cubes, a seen colour split in two) 2.4
# and 1.5 (tests/test_vision_adaptive.py).
PARTIAL_MIN_SEPARATION = 4.5
# A washed-out suspect: within this many sRGB units of another colour washed WASHED_FROM..GLARE_MAX toward
# the lamp.  Under the simulated lamps (bench/vision_lamp.py, 200 cubes per setting) 12 still let 4 wrong
# early cubes through (glare 0.55, side 0.7); 16 none, while on clean scans 1 % of stickers come within 10
# and the mean views go from 2.19 to 2.215.
WASHED_SUSPECT_RGB = 16.0
WASHED_FROM = 0.15  # less glare than this the decoder reads as the colour itself
LAMP_MAX_SATURATION = 0.3  # a lamp's white is near neutral: the whites' tint, not a yellow's
# Past GLARE_MAX a colour washed toward white reads with the whites (side 0.7, cube 14: two reds washed
# 0.7 read pink, 32-43 sRGB more tinted than the white seen, and were taken for whites): a sticker of the
# lightest colour more tinted (max - min channel) than that colour's least tinted seen sticker by over
# TINT_RGB is a suspect when a colour washed up to WASHED_TO explains it.  An arm's shadow scales a white's
# tint down; a real camera's whites differ more (resolver:2x2x2-random-01: 20-41 in one scan, not a doubt).
WASHED_TO = 0.85
TINT_RGB = 24.0
_GAINS = np.linspace(1.15, 1.45, 7)
_MIXES = np.linspace(WASHED_FROM, GLARE_MAX, 21)
_PAST = np.linspace(GLARE_MAX, WASHED_TO, 9)


def decode_partial(rgb, unseen, calibration=None, config: Config | None = None, suspects: bool = True) -> DecodeResult:
    """decode() of 24 readings of which those at the `unseen` facelet indices were not seen (None).
    suspects: False to skip the washed-out rule (its own second decode, without the suspects)."""
    settings = decode_settings(config)
    mask = np.zeros(FACELET_COUNT, dtype=bool)
    mask[list(unseen)] = True
    seen_rgb = np.array([rgb[i] for i in range(FACELET_COUNT) if not mask[i]], dtype=float)
    # A placeholder no cost ever sees (weight 0); mid-range so no rule takes it for a clipped channel.
    rgb = [seen_rgb.mean(axis=0) if mask[i] else rgb[i] for i in range(FACELET_COUNT)]
    readings = check_readings(rgb)
    if calibration is not None and calibration.regions:
        readings = calibration.correct(readings)
    not_determined = VisionError("the views so far do not determine the cube (a colour is on no seen sticker): "
                                 "the next view follows", stickers=[NAMES[i] for i in np.flatnonzero(mask)],
                                 reason="partial")
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):  # a colour with no seen sticker: NaN centres
            warnings.simplefilter("ignore", RuntimeWarning)
            result, error, fit = _decode_readings(readings, calibration, settings, unseen=mask)
            if error is not None and error.reason in RETRIED:  # the white-balanced second look, as decode()
                balanced = _white_balanced(readings, fit)
                if balanced is not None:
                    second, second_error, _ = _decode_readings(balanced, calibration, settings,
                                                               partition_key(fit.labels), unseen=mask)
                    if second_error is None:
                        result, error = second, None
    except VisionError:
        raise
    except (IndexError, ValueError):  # the fit broke down on a colour with no seen sticker
        raise not_determined from None
    if error is not None:
        raise error
    if len({result.facelets[i] for i in np.flatnonzero(~mask)}) < COLOURS:
        raise not_determined
    centres = _features(srgb_to_lab(np.array(list(result.centres_rgb.values()), dtype=float)), settings)
    apart = distances(centres, centres)[~np.eye(COLOURS, dtype=bool)].min() / result.noise
    if apart < PARTIAL_MIN_SEPARATION:
        raise VisionError(f"two colours read only {apart:.1f} noise units apart in the views so far (need "
                          f"{PARTIAL_MIN_SEPARATION:g}): the next view follows", stickers=not_determined.stickers,
                          result=result, reason="partial")
    suspect = washed_suspects(readings, mask, result) if suspects else []
    if suspect and not _same_without(rgb, mask, suspect, result, calibration, config):
        names = [NAMES[i] for i in suspect]
        raise VisionError(f"sticker(s) {', '.join(names)} may be another colour washed out by a lamp, and the other "
                          "stickers seen so far do not decide the same cube: the next view follows", stickers=names,
                          result=result, reason="partial")
    return result


def washed_suspects(readings, unseen_mask, result: DecodeResult) -> list[int]:
    """Seen facelets whose reading another colour of `result` explains as washed out by glare: a seen
    sticker of another colour, or another colour's centre, WASHED_FROM..GLARE_MAX of the way to one of
    the lamp's possible whites (robot.vision.light lamp_whites), within WASHED_SUSPECT_RGB."""
    readings = np.asarray(readings, dtype=float)
    centres = {letter: np.asarray(rgb, dtype=float) for letter, rgb in result.centres_rgb.items()}
    seen = np.flatnonzero(~np.asarray(unseen_mask, dtype=bool))
    seen_rgb = readings[seen]
    letters = np.array([result.facelets[i] for i in seen])
    bases = np.concatenate([seen_rgb, np.array(list(centres.values()))])
    base_letters = np.concatenate([letters, np.array(list(centres))])
    lamps = _white_lamps(np.array(list(centres.values())))
    residual = _washed_residual(seen_rgb, bases, lamps, _MIXES)
    # A warm light's highlight can brighten a colour in its own tint, clipping, with little white in it
    # (bench/vision_fused.py --rendered, glare 0.4, n 613: an orange (241,92,16) read (255,126,28), made a
    # colour of its own while the other oranges went with the red); only for a reading with a clipped channel.
    brightened = bases[:, None, :] * _GAINS[None, :, None]  # (base, gain, rgb)
    clipped = (seen_rgb >= HIGH).any(axis=1) & ~(seen_rgb >= HIGH).all(axis=1)
    bright = censored_residual(seen_rgb[:, None, None, :], brightened[None]).min(axis=2)
    bright[:, (bases >= HIGH).any(axis=1)] = np.inf  # only a base that was not clipped itself
    residual[clipped] = np.minimum(residual[clipped], bright[clipped])
    residual[letters[:, None] == base_letters[None, :]] = np.inf  # glare on its own colour is no doubt
    # Any colour washed far enough reads as the lightest one (the lamp's own tint): a sticker of that
    # colour is a doubt only when a washed colour explains it clearly better than its own (else the
    # real readings' whites would all be).
    lightest = list(centres)[int(np.argmax(srgb_to_lab(np.array(list(centres.values())))[:, 0]))]
    own = np.linalg.norm(seen_rgb - np.array([centres[letter] for letter in letters]), axis=1)
    plain = (residual.min(axis=1) >= OTHER_RATIO * own) | (own <= WASHED_SUSPECT_RGB / 2)
    residual[(letters == lightest) & plain] = np.inf
    suspect = residual.min(axis=1) <= WASHED_SUSPECT_RGB
    # Washed past GLARE_MAX: only the lightest colour's stickers, and only those clearly more tinted than
    # its least tinted one (an arm's shadow darkens a white, it does not tint it).
    light = np.flatnonzero(letters == lightest)
    tint = np.ptp(seen_rgb[light], axis=1)
    past = _washed_residual(seen_rgb[light], bases, lamps, _PAST)
    past[:, base_letters == lightest] = np.inf
    suspect[light] |= (tint - tint.min() > TINT_RGB) & (past.min(axis=1) <= WASHED_SUSPECT_RGB)
    return [int(seen[k]) for k in np.flatnonzero(suspect)]


def _washed_residual(readings: np.ndarray, bases: np.ndarray, lamps: np.ndarray, mixes: np.ndarray) -> np.ndarray:
    """(reading, base): how far each reading is from the base washed `mixes` toward the closest lamp."""
    washed = ((1 - mixes)[None, None, :, None] * bases[:, None, None, :]
              + mixes[None, None, :, None] * lamps[None, :, None, :])  # (base, lamp, mix, rgb)
    return censored_residual(readings[:, None, None, None, :], washed[None]).min(axis=(2, 3))


def _white_lamps(colour_rgb: np.ndarray) -> np.ndarray:
    """lamp_whites without a saturated tint: when the whites are shaded (an arm's shadow) a yellow is the
    lightest colour, and a red washed toward a yellow lamp reads as an orange, so every clean orange would
    be a doubt (bench/e2e.py without a lamp).  A glare washes toward white, whatever the lightest sticker."""
    lamps = lamp_whites(colour_rgb)
    saturation = (lamps.max(axis=1) - lamps.min(axis=1)) / np.maximum(lamps.max(axis=1), 1.0)
    return lamps[saturation <= LAMP_MAX_SATURATION]


def _same_without(rgb, mask, suspect, result: DecodeResult, calibration, config) -> bool:
    """Do the seen stickers other than `suspect` decide the same cube as `result`?"""
    unseen = sorted(set(np.flatnonzero(mask).tolist()) | set(suspect))
    try:
        again = decode_partial([None if i in unseen else rgb[i] for i in range(FACELET_COUNT)], unseen,
                               calibration, config, suspects=False)
    except VisionError:
        return False
    a, b = again.facelets, result.facelets
    return len(set(zip(a, b))) == len(set(a)) == len(set(b))
