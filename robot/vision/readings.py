"""Sticker readings: the input check, and the error every vision step raises."""

from __future__ import annotations

import numpy as np

from ..cube import FACELET_COUNT, facelet_name

NAMES = tuple(facelet_name(i) for i in range(FACELET_COUNT))


class VisionError(ValueError):
    """The readings do not give a cube we can trust.

    stickers: facelet names ("F3", ...) of the doubtful stickers (rescan or
    check those); result: the best guess (a DecodeResult) when there is one;
    reason: which rule refused, one of REASONS (for logs and benchmarks).
    """

    REASONS = {
        "input": "the readings are not 24 sRGB triples",
        "margin": "another legal cube explains the readings almost as well",
        "misread": "a sticker reads clearly as another colour than the cube needs",
        "no-fit": "the readings fit no legal cube well",
        "over-exposed": "two colours are alike but for clipped channels and the rest of the cube does not decide them",
        "swapped": "two stickers each read like the other's colour (a swapped pair)",
        "unexplained": "an unread sticker looks like another colour and the light cannot explain it",
        "disagree": "looks of a sticker from two poses disagree beyond what the light explains (robot/vision/fused.py)",
    }

    def __init__(self, message: str, stickers=(), result=None, reason: str = "input"):
        super().__init__(message)
        self.stickers = tuple(stickers)
        self.result = result
        self.reason = reason

    def __str__(self):
        return self.args[0]


def check_readings(rgb, names: tuple = NAMES) -> np.ndarray:
    """(n, 3) float readings, one per name in `names` (facelet order; the 3x3x3 passes its 54), or VisionError
    (reason "input") naming what is wrong."""
    count = len(names)
    try:
        readings = np.asarray(rgb, dtype=float)
    except (TypeError, ValueError):
        raise VisionError(f"readings must be {count} [R, G, B] triples of numbers 0-255") from None
    if readings.shape != (count, 3):
        raise VisionError(
            f"expected {count} [R, G, B] readings in facelet order {names[0]}..{names[-1]}, got an array of shape "
            f"{readings.shape}"
        )
    with np.errstate(invalid="ignore"):
        out = ~((readings >= 0) & (readings <= 255)).all(axis=1)  # NaN compares False: out too
    if out.any():
        bad = [names[i] for i in np.flatnonzero(out)]
        raise VisionError(f"readings out of range 0-255 (or not numbers) at {', '.join(bad)}", stickers=bad)
    return readings
