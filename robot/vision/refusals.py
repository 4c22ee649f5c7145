"""The decoder's light rules: when unread stickers, a swapped-looking pair or over-exposure make a cube untrustworthy.

robot.vision.decode fits the best legal cube and applies its own rules
(margin, misread, no-fit); the three here judge that cube against what light
can and cannot do (robot.vision.light):

* "unexplained": an unread sticker (read past: it fits no colour) that looks
  like another colour must be explained by glare or shadow as its own colour,
  and must not have a would-be swap partner;
* "swapped": light makes one sticker look like another colour, never two
  stickers look like each other's: such a pair is refused;
* "over-exposed": two colours that differ only in clipped channels cannot be
  told apart sticker by sticker; the cube is accepted only if it is determined
  without telling them apart (on a 2x2x2 a corner's other two stickers fix
  which of two opposite colours the third is, by the corner's handedness).

`fit` is the decoder's _Fit (labels, centres, noise, read, weights,
looks_other, like_other, nearest_other); `result` its DecodeResult.
"""

from __future__ import annotations

import numpy as np

from ..cube import FACELET_COUNT
from .clusters import same_partition, sticker_costs
from .legal import COLOURS, alternatives, best_legal_labels
from .light import HIGH, confounded_colours, explained_by_light, lamp_whites
from .readings import NAMES, VisionError


def colour_rgb(readings: np.ndarray, fit) -> np.ndarray:
    """(6, 3) median reading of each colour's read stickers."""
    members = np.argsort(fit.labels, kind="stable").reshape(COLOURS, 4)
    if fit.weights is None:
        return np.median(readings[members], axis=1)
    return np.nanmedian(np.where(fit.read[:, None], readings, np.nan)[members], axis=1)


def _colour_names(fit, result) -> dict:
    """Colour class -> a name for messages: the colour's name and its face letter (two may share a rough name)."""
    return {c: f"{s.colour} ({s.letter})" for c, s in zip(fit.labels.tolist(), result.stickers)}


# An unread sticker nearer another colour than its own, and within this many
# noise units of that colour's stickers, looks like that colour: only glare
# or shadow may excuse it.  (Farther than this it fits no colour: unread.)
UNREAD_LIKE_OTHER = 10.0


def check_unread(readings: np.ndarray, fit, result, read_past=None) -> None:
    """Raise VisionError (reason "unexplained") when an unread sticker looks like another colour unexcused.

    Excused only when glare or shadow explains it as its own colour and no
    other sticker could have changed places with it.  (A sticker of another
    colour -- swapped, or a misread region -- is not excused by the cube
    constraints: the cube would be built around a lie.)
    read_past: the stickers read past (default: every unread one); a partial scan's unseen stickers
    are not suspects, there is nothing to excuse.
    """
    colours = colour_rgb(readings, fit)
    lamps = lamp_whites(colours)
    spread = np.linalg.norm(readings - colours[fit.labels], axis=1)
    noise_rgb = max(float(np.median(spread[fit.read])), 3.0)
    names = _colour_names(fit, result)
    problems, stickers = [], []
    for i in np.flatnonzero(~fit.read if read_past is None else read_past):
        own, looks_like = int(fit.labels[i]), int(fit.nearest_other[i])
        if fit.looks_other[i] <= 0:  # nearer its own colour than any other
            continue
        if fit.like_other[i] >= UNREAD_LIKE_OTHER:  # far from every other colour's stickers: simply unread
            continue
        if not explained_by_light(readings[i], colours[own], colours[looks_like], lamps, noise_rgb):
            problems.append(f"{NAMES[i]} reads like {names[looks_like]} but the cube needs {names[own]}, and "
                            "neither glare nor shadow explains that")
            stickers.append(NAMES[i])
            continue
        partners = [NAMES[k] for k in swap_partners(fit, int(i))]
        if partners:  # light could excuse it, but it may be half of a swapped pair
            problems.append(f"{NAMES[i]} could be {names[own]} under glare or shadow, but it reads like "
                            f"{names[looks_like]} and {', '.join(partners)} (where the cube needs {names[looks_like]}) "
                            f"reads a little like {names[own]}: the two may have changed places")
            stickers += [NAMES[i]] + [p for p in partners if p not in stickers]
    if problems:
        raise VisionError(
            f"sticker(s) {'; '.join(problems)}. Likely a sticker swapped on the cube or a region reading the wrong "
            "place: check those stickers and rescan.",
            stickers=stickers, result=result, reason="unexplained",
        )


def swap_partners(fit, i: int) -> np.ndarray:
    """Stickers that could have changed places with sticker i: they need the colour i looks like, and look like i's.

    (Light may excuse one sticker of a swapped pair; the other one then still
    reads nearer the colour its partner needs, if only a little.)
    """
    own, looks_like = fit.labels[i], fit.nearest_other[i]
    return np.flatnonzero((fit.labels == looks_like) & (fit.nearest_other == own) & (fit.looks_other > 0))


# Two read stickers that each look like the other's colour by at least this
# many noise units (decode's looks_other) are a swapped pair: the legal cube
# nearest such readings is built around them.  (Glare, shadow and clipping
# make one sticker look like another colour, not two look like each other's.)
SWAP_LOOKS_OTHER = 3.0


def swapped_pair(fit, result) -> VisionError | None:
    """VisionError (reason "swapped") when two read stickers each look like the other's colour."""
    suspects = np.flatnonzero(fit.read & (fit.looks_other >= SWAP_LOOKS_OTHER))
    if len(suspects) < 2:  # (the usual case: nothing to pair)
        return None
    labels, looks_like = fit.labels[suspects], fit.nearest_other[suspects]
    mutual = (labels[:, None] == looks_like[None, :]) & (looks_like[:, None] == labels[None, :])
    pairs = [(int(suspects[a]), int(suspects[b])) for a, b in zip(*np.nonzero(np.triu(mutual)))]
    if not pairs:
        return None
    names = [_colour_names(fit, result)[int(c)] for c in fit.labels]  # per sticker
    detail = "; ".join(f"{NAMES[i]} ({names[i]} in the cube) reads like {names[j]} and {NAMES[j]} ({names[j]}) "
                       f"like {names[i]}" for i, j in pairs)
    return VisionError(
        f"stickers that look swapped: {detail}. Likely two stickers exchanged on the cube or two regions reading "
        "each other's place: check those stickers and rescan.",
        stickers=[NAMES[k] for pair in pairs for k in pair], result=result, reason="swapped",
    )


def over_exposure(readings: np.ndarray, features: np.ndarray, fit, result, settings) -> VisionError | None:
    """VisionError (reason "over-exposed") when two colours differ only in clipped channels and that decides the cube.

    Such colours (white vs a washed-out yellow, or a glare spot: confounded_pairs) cannot be told
    apart.  The cube stands if it is decided without telling them apart, with full confidence
    (settings.full_margin: the over-exposed frame may have misled the other colours too)."""
    pairs = confounded_pairs(readings, fit.labels, colour_rgb(readings, fit))
    if not pairs or determined_without(pairs, features, fit, settings.full_margin):
        return None
    names = _colour_names(fit, result)
    which = "; ".join(f"{names[c]} and {names[d]}" for c, d in pairs)
    stickers = [NAMES[i] for i in range(FACELET_COUNT) if any(fit.labels[i] in pair for pair in pairs)]
    return VisionError(
        f"the frame is over-exposed: {which} read the same in every channel that is not clipped at 255, so they "
        "cannot be told apart, and the rest of the cube does not decide them. Lower the camera exposure (or the "
        "light) and rescan.",
        stickers=stickers, result=result, reason="over-exposed",
    )


def confounded_pairs(readings: np.ndarray, labels: np.ndarray, colours: np.ndarray) -> list[tuple[int, int]]:
    """Pairs of colour classes that cannot be told apart in clipped channels: their median readings
    (`colours`, (6, 3)) differ only there (light.confounded_colours), or each has a sticker clipped in
    all three channels."""
    pairs = confounded_colours(colours)
    saturated = sorted({int(c) for c in labels[(readings >= HIGH).all(axis=1)]})
    return pairs + [(c, d) for k, c in enumerate(saturated) for d in saturated[k + 1:] if (c, d) not in pairs]


def determined_without(pairs, features: np.ndarray, fit, need: float) -> bool:
    """Whether the fitted cube is the best legal cube, by a margin of `need`, when each pair counts as one colour.

    Every sticker may take either colour of a confounded pair at the cheaper
    of the two costs, so only the other colours and the legal-cube
    constraints decide; the margin is measured as the decoder's (extra cost
    over noise * sqrt(read stickers that differ)).
    """
    costs = sticker_costs(features, fit.centres, fit.weights)
    for c, d in pairs:
        costs[:, c] = costs[:, d] = np.minimum(costs[:, c], costs[:, d])
    best, labels, scheme, placements = best_legal_labels(costs, fit.labels)
    if not same_partition(labels[None], fit.labels)[0]:
        return False
    reach = need * np.sqrt(FACELET_COUNT)  # dearer than this, no alternative can decide
    alt_costs, alt_labels = alternatives(costs, scheme, placements, best + reach * fit.noise)
    genuine = ~same_partition(alt_labels, labels) if len(alt_labels) else np.zeros(0, dtype=bool)
    if not genuine.any():
        return True
    differing = np.maximum(np.count_nonzero((alt_labels[genuine] != labels) & fit.read, axis=1), 1)
    margins = (alt_costs[genuine] - best) / (fit.noise * np.sqrt(differing))
    return bool(margins.min() >= need)
