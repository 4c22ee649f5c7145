"""Decoding a partial scan: some stickers not seen yet (the adaptive scan, robot/vision/adaptive.py).

    decode_partial(rgb, unseen, calibration, config) -> DecodeResult   (VisionError when not sure)

The decoder's own joint fit (robot/vision/decode.py) with the unseen stickers weighted 0 from the
start: they cost nothing for any colour, so a legal cube that differs from the best one only at
unseen stickers costs the same, its margin is 0 and the scan is refused (the next view follows).
Two more rules, for what only a partial scan can get wrong:
- every colour must be on some seen sticker (else it is named from nothing);
- the colours must sit PARTIAL_MIN_SEPARATION noise units apart: with stickers unseen a fit can split
  one seen colour in two and be cheaper for it (a solved cube seen from U F D B: L's and R's colours
  are on no seen sticker).
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
from .readings import NAMES, VisionError, check_readings

# On the 43 real readings with the L and R stickers unseen, the right cubes' closest colours are
# 5.7 noise units apart or more, the two wrong ones (solved cubes, a seen colour split in two) 2.4
# and 1.5 (tests/test_vision_adaptive.py).
PARTIAL_MIN_SEPARATION = 4.5


def decode_partial(rgb, unseen, calibration=None, config: Config | None = None) -> DecodeResult:
    """decode() of 24 readings of which those at the `unseen` facelet indices were not seen (None)."""
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
    return result
