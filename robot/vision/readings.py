"""Sticker readings: the input check, and the error every vision step raises."""

from __future__ import annotations

import numpy as np

from ..cube import FACELET_COUNT, facelet_name

NAMES = tuple(facelet_name(i) for i in range(FACELET_COUNT))


class VisionError(ValueError):
    """The readings do not give a cube we can trust.

    stickers: facelet names ("F3", ...) of the doubtful stickers (rescan or
    check those); result: the best guess (a DecodeResult) when there is one.
    """

    def __init__(self, message: str, stickers=(), result=None):
        super().__init__(message)
        self.stickers = tuple(stickers)
        self.result = result

    def __str__(self):
        return self.args[0]



def check_readings(rgb) -> np.ndarray:
    try:
        readings = np.asarray(rgb, dtype=float)
    except (TypeError, ValueError):
        raise VisionError("readings must be 24 [R, G, B] triples of numbers 0-255") from None
    if readings.shape != (FACELET_COUNT, 3):
        raise VisionError(
            f"expected 24 [R, G, B] readings in facelet order U1..B4, got an array of shape {readings.shape}"
        )
    bad = [NAMES[i] for i in range(FACELET_COUNT) if not np.all(np.isfinite(readings[i]))
           or readings[i].min() < 0 or readings[i].max() > 255]
    if bad:
        raise VisionError(f"readings out of range 0-255 (or not numbers) at {', '.join(bad)}", stickers=bad)
    return readings
