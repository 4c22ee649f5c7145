"""What light can do to a sticker's reading: glare, shadow and clipped channels.

The decoder (robot.vision.decode) may read past a sticker that fits no colour
(treat it as unread) when the rest of the cube determines it; but a sticker
that looks like *another* colour is only let through when the light explains
it as its own colour:

* glare: a glossy sticker reflects the lamp, so the reading is its own colour
  blended toward the lamp's white (up to GLARE_MAX of the way); the lamp looks
  like the white stickers or brighter (LAMP_GAINS), in their tint or neutral,
  or saturated (lamp_whites);
* shadow: its own colour, darker (down to SHADOW_MIN of its light);
* clipped channels: a channel at the sensor's limit (>= HIGH or <= LOW) is a
  censored value, "at least 254" or "at most 1", never a measurement: it
  only counts against a prediction on the wrong side of the limit.

All in sRGB 0-255, where glare and shadow act simply.  A sticker the light
explains this way still decides nothing: it stays unread.
"""

from __future__ import annotations

import numpy as np

from .colour import srgb_to_lab

HIGH = 254.0  # readings at or above this are clipped: the true value is at least this
LOW = 1.0     # at or below: at most this
GLARE_MAX = 0.65  # strongest glare explained (fraction of the way to the lamp's white)
LAMP_GAINS = (1.0, 1.15, 1.3)  # the lamp's highlight vs the white stickers' reading
SHADOW_MIN = 0.25  # darkest shadow explained (fraction of the sticker's own light)
OTHER_RATIO = 0.6  # the light must explain a reading this much better than the colour it looks like
EXPLAIN_NOISES = 3.0  # ... and within this many times the scan's sticker noise (sRGB)
_GLARE = np.linspace(0.0, GLARE_MAX, 14)
_SHADE = np.linspace(SHADOW_MIN, 1.1, 18)
OVER_EXPOSED_DIFFERENCE = 25.0  # two colours closer than this in every unclipped channel cannot be told apart


def censored_residual(reading: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """reading - predicted per channel, where clipped channels only count on the wrong side of the limit.

    predicted: (..., 3), clipped to the sensor's range first.  Returns the
    Euclidean norm over channels, shape (...).
    """
    predicted = np.clip(predicted, 0.0, 255.0)
    diff = reading - predicted
    diff = np.where(reading >= HIGH, np.maximum(diff, 0.0), diff)
    diff = np.where(reading <= LOW, np.minimum(diff, 0.0), diff)
    return np.linalg.norm(diff, axis=-1)


def lamp_whites(colour_rgb: np.ndarray) -> np.ndarray:
    """(K, 3) the lamp's white as the camera may see it: the tint of the lightest colour, of the
    whitest light one (the lightest may be a yellow) or neutral, as bright as the light stickers or
    brighter (LAMP_GAINS), or saturated at 255 (a highlight beyond the white balance)."""
    lab = srgb_to_lab(colour_rgb)
    lightest = colour_rgb[int(np.argmax(lab[:, 0]))]
    bright = np.flatnonzero(lab[:, 0] >= np.median(lab[:, 0]))
    whitest = colour_rgb[bright[int(np.argmin(np.hypot(lab[bright, 1], lab[bright, 2])))]]
    neutral = np.full(3, max(float(lightest.max()), 1.0))
    tints = [lightest, whitest, neutral]
    return np.array([tint * gain for tint in tints for gain in LAMP_GAINS]
                    + [tint * 255.0 / max(float(tint.max()), 1.0) for tint in tints[:2]] + [[255.0, 255.0, 255.0]])


def light_residual(reading: np.ndarray, own_rgb: np.ndarray, lamps: np.ndarray) -> float:
    """How far (sRGB units) `reading` is from its own colour under the best glare or shadow (0: explained)."""
    glare = np.concatenate([(1 - _GLARE)[:, None] * own_rgb + _GLARE[:, None] * lamp for lamp in lamps])
    shade = _SHADE[:, None] * own_rgb
    return float(censored_residual(reading, np.concatenate([glare, shade])).min())


def explained_by_light(reading, own_rgb, other_rgb, lamps, noise_rgb: float) -> bool:
    """Can glare or shadow make a sticker of colour own_rgb read `reading`, better than other_rgb explains it?

    Within EXPLAIN_NOISES x the scan's sticker noise and under OTHER_RATIO of the distance to other_rgb
    (the colour the reading looks like), so a swapped sticker is not excused."""
    reading = np.asarray(reading, dtype=float)
    residual = light_residual(reading, np.asarray(own_rgb, dtype=float), np.asarray(lamps, dtype=float))
    other = float(censored_residual(reading, np.asarray(other_rgb, dtype=float)))
    return residual <= EXPLAIN_NOISES * noise_rgb and residual < OTHER_RATIO * other


def confounded_colours(colour_rgb: np.ndarray) -> list[tuple[int, int]]:
    """Pairs of colours that differ only in clipped channels (over-exposure: they cannot be told apart).

    colour_rgb: (6, 3) each colour's median reading.  A channel where both
    colours are clipped on the same side tells nothing; the pair is
    confounded when at least one channel is clipped high in both and every
    other channel differs by less than OVER_EXPOSED_DIFFERENCE.
    """
    high = colour_rgb >= HIGH
    low = colour_rgb <= LOW
    pairs = []
    for c in range(len(colour_rgb)):
        for d in range(c + 1, len(colour_rgb)):
            unknown = (high[c] & high[d]) | (low[c] & low[d])
            if not (high[c] & high[d]).any():
                continue
            known = np.abs(colour_rgb[c] - colour_rgb[d])[~unknown]
            if known.size == 0 or known.max() < OVER_EXPOSED_DIFFERENCE:
                pairs.append((c, d))
    return pairs
