"""Joint decoding of 54 sticker readings into a legal 3x3x3 (the 2x2x2's decoder is robot.vision.decode).

The whole interface is `decode3(rgb)`: 54 sRGB readings in facelet order
U1..U9 R1..R9 F1..F9 D1..D9 L1..L9 B1..B9 (Kociemba's net, robot.solver3.cube3),
from any source -- a real scan, a rendered one, a data file.

The same model and rules as the 2x2x2 decoder, on the 3x3x3's pieces:

1. Readings -> features exactly as decode.py does (Lab, lightness
   down-weighted, chroma rescaled by lightness).
2. The centres fix the colour scheme: colour class k is the colour of face k's
   centre.  Colour centres start from the centre stickers, from
   farthest-point seeds named after the nearest centre stickers, and from the
   calibration (a prior only); cube and centres are refined alternately.
3. For fixed centres the best legal cube is found exactly (robot.vision.legal3:
   corners and edges by a dynamic programme each, joined by the permutation
   parity), so the answer is the most likely *legal* cube, never a sticker-by-
   sticker guess.
4. Confidence: for every corner and edge position the best legal cube that
   differs there (the next-best legal cube is among them), plus other local
   optima and refitted alternatives; the margin is the extra cost in units of
   the scan's sticker noise * sqrt(stickers that differ).
5. Refusals, as decode.py's (VisionError.reason): "margin" (another legal cube
   almost as good), "misread" (a sticker reads clearly as another colour than
   the cube needs), "no-fit" (the stickers' likeness to other colours adds up
   past the limit), "swapped" (two stickers each read like the other's colour).
   A refused scan is rescanned, never guessed.
6. Reading past glare and shadow (as decode.py's step 5, with its constants and light.py's rules):
   a refused scan's stickers that fit no colour are left unread, worst first;
   the cube stands only if it is the same cube with the margin raised per
   unread sticker and the light explains each unread sticker as its own colour
   ("unexplained" otherwise), and each is named by its piece's other stickers
   fitting their colours (_named_by_partners).  A white-balanced second look
   may likewise confirm the same cube under a colour cast.

Not carried over from the 2x2x2 (said here so nobody counts on them): per-region
calibration gains (the calibration's regions are the 2x2x2's) and the
over-exposure rule (clipped colours that only the corners' handedness could
tell apart; on a 3x3x3 the edges cannot tell them apart at all, so such a
scan is refused by the margin or misread rules).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config_types import Config
from ..solver3.cube3 import CORNER_FACELETS, EDGE_FACELETS, FACELET_COUNT, facelet_name
from .clusters import distances, farthest_point_centres, min_cost_assignment, sticker_costs
from .colour import Calibration, lab_to_srgb, srgb_to_lab
from .decode import (DARK_LIGHTNESS, DecodeResult, StickerInfo, _advice, _features, _Fit, _lightest_made_neutral,
                     _margins, _misreads, decode_settings)
from .legal3 import CENTRES, COLOURS, alternatives, best_legal
from .naming import colour_names
from .readings import VisionError, check_readings
from .decode import MAX_UNREAD, RETRIED, UNREAD_EXTRA_MARGIN, UNREAD_MIN_DISTANCE
from .light import explained_by_light, lamp_whites
from .refusals import SWAP_LOOKS_OTHER, UNREAD_LIKE_OTHER

FACES = "URFDLB"
NAMES = tuple(facelet_name(i) for i in range(FACELET_COUNT))
PER_COLOUR = 9
# The other stickers of each facelet's piece (none for a centre).
PARTNERS = {i: [k for k in piece if k != i] for piece in CORNER_FACELETS + EDGE_FACELETS for i in piece}
PARTNERS.update({int(i): [] for i in CENTRES})

__all__ = ["Decode3Result", "decode3", "check_readings3", "NAMES"]


@dataclass(frozen=True)
class Decode3Result(DecodeResult):
    """A decoded 3x3x3: DecodeResult's fields over 54 facelets (facelets: 54 letters URFDLB, the centres
    naming the faces, accepted by robot.solver3.cube3.parse_facelets)."""

    @property
    def doubtful(self) -> tuple:
        """Facelets where the next-best cube reads differently."""
        if self.alternative is None:
            return ()
        return tuple(n for n, a, b in zip(NAMES, self.facelets, self.alternative) if a != b)


def check_readings3(rgb) -> np.ndarray:
    """(54, 3) float readings, or VisionError (reason "input") naming what is wrong."""
    return check_readings(rgb, NAMES)


# ---------------------------------------------------------------------------
# Fitting.


def class_centres(features: np.ndarray, labels: np.ndarray, weights=None) -> np.ndarray:
    """(6, d) mean feature of each colour's read stickers (all of them when none is read)."""
    one_hot = np.eye(COLOURS)[labels]
    w = np.ones(len(labels)) if weights is None else weights
    counts = w @ one_hot
    read = (one_hot * w[:, None]).T @ features / np.maximum(counts, 1e-9)[:, None]
    return np.where(counts[:, None] > 0, read, one_hot.T @ features / PER_COLOUR)


def fit_cost(features, labels, weights=None) -> float:
    """Summed distance of each read sticker to its colour's centre, the centres fitted to the labels."""
    cost = np.linalg.norm(features - class_centres(features, labels, weights)[labels], axis=1)
    return float(cost.sum() if weights is None else cost @ weights)


def _costs(features, centres, weights):
    """(54, 6) sticker costs; a centre sticker can only be its own face's colour."""
    cost = sticker_costs(features, centres, weights)
    own = cost[CENTRES, np.arange(COLOURS)]
    cost[CENTRES] = np.inf
    cost[CENTRES, np.arange(COLOURS)] = own
    return cost


def refine(features, centres, memo: dict, weights=None, rounds: int = 8):
    """Alternate the best legal cube for the centres and the centres of that cube until they agree:
    (labels, pieces)."""
    labels, pieces = None, None
    path: list[tuple] = []
    for _ in range(rounds):
        _, new, new_pieces = best_legal(_costs(features, centres, weights))
        key = tuple(new.tolist())
        if key in memo:
            labels, pieces = memo[key]
            break
        path.append(key)
        if labels is not None and np.array_equal(new, labels):
            break
        labels, pieces = new, new_pieces
        centres = class_centres(features, labels, weights)
    for key in path:
        memo[key] = (labels, pieces)
    return labels, pieces


def _starts(features, lab, read, settings, calibration):
    """Starting colour centres, class k named by face k's centre sticker."""
    starts = [features[CENTRES]]
    index = np.flatnonzero(read)
    seeds = [index[np.argmax(lab[index, 0])], index[np.argmin(lab[index, 0])],
             index[np.argmax(np.hypot(lab[index, 1], lab[index, 2]))]]
    for seed in dict.fromkeys(seeds):
        found = farthest_point_centres(features[index], int(np.flatnonzero(index == seed)[0]))
        # Name each found colour after the centre sticker nearest it (one to one).
        starts.append(found[min_cost_assignment(distances(features[CENTRES], found))])
    if calibration is not None:
        prior = _features(calibration.centres_lab(), settings)
        starts.append(prior[min_cost_assignment(distances(features[CENTRES], prior))])
    return starts


def _fit(features, lab, settings, calibration, weights=None) -> _Fit:
    read = np.ones(FACELET_COUNT, dtype=bool) if weights is None else weights > 0
    memo: dict = {}
    found: dict[tuple, tuple] = {}
    for centres in _starts(features, lab, read, settings, calibration):
        labels, _ = refine(features, centres, memo, weights)
        found.setdefault(tuple(labels.tolist()), (fit_cost(features, labels, weights), labels))
    ranked = sorted(found.values(), key=lambda item: item[0])
    centres = class_centres(features, ranked[0][1], weights)
    _, labels, pieces = best_legal(_costs(features, centres, weights))
    centres = class_centres(features, labels, weights)
    best_cost = fit_cost(features, labels, weights)

    # Sticker noise: the median distance to the own colour's median (robust to a few misreads).
    members = np.argsort(labels, kind="stable").reshape(COLOURS, PER_COLOUR)
    masked = np.where(read[:, None], features, np.nan)
    robust = np.nanmedian(masked[members], axis=1)
    robust = np.where(np.isnan(robust), np.median(features[members], axis=1), robust)
    noise = max(float(np.median(np.linalg.norm(features - robust[labels], axis=1)[read])), settings.noise_floor)

    # Does a sticker look like another colour?  Its own colour's other stickers (medians) vs other colours'.
    rank = np.empty(FACELET_COUNT, dtype=int)
    rank[members.ravel()] = np.tile(np.arange(PER_COLOUR), COLOURS)
    mates = members[labels][~np.eye(PER_COLOUR, dtype=bool)[rank]].reshape(FACELET_COUNT, PER_COLOUR - 1)
    mate_values = masked[mates]
    none_read = np.isnan(mate_values[:, :, 0]).all(axis=1)
    mate_values[none_read] = features[mates[none_read]]
    own = np.linalg.norm(features - np.nanmedian(mate_values, axis=1), axis=1)
    to_robust = np.where(np.eye(COLOURS, dtype=bool)[labels], np.inf, distances(features, robust))
    nearest_other = to_robust.argmin(axis=1)
    looks_other = (own - to_robust.min(axis=1)) / noise
    like_other = np.where((labels[:, None] != labels[None, :]) & read[None, :], distances(features, features),
                          np.inf).min(axis=1) / noise

    # Next-best legal cube: other local optima, the best cube differing at each position (held centres,
    # or refitted if cheaper), and a few of those refined.
    options = [(cost, other) for cost, other in ranked[1:]]
    costs = _costs(features, centres, weights)
    reach = max(settings.min_margin * np.sqrt(FACELET_COUNT), settings.full_margin * np.sqrt(6))
    alt_costs, alt_labels = alternatives(costs, pieces, best_cost + reach * noise)
    if len(alt_labels):
        alt_labels, first = np.unique(alt_labels, axis=0, return_index=True)
        alt_costs = alt_costs[first]
        genuine = (alt_labels != labels).any(axis=1)
        refitted = np.array([fit_cost(features, other, weights) for other in alt_labels[genuine]])
        options += list(zip(np.minimum(alt_costs[genuine], refitted).tolist(), alt_labels[genuine]))
    options.sort(key=lambda item: item[0])
    for _, other in options[:settings.refine_alternatives]:
        reached, _ = refine(features, class_centres(features, other, weights), memo, weights)
        if not np.array_equal(reached, labels):
            options.append((fit_cost(features, reached, weights), reached))
    margin, alternative = settings.full_margin, None
    if options:
        z = _margins(options, labels, best_cost, noise, read)
        k = int(np.argmin(z))
        if z[k] < margin:
            margin, alternative = float(z[k]), options[k][1]
    return _Fit(labels, centres, noise, own / noise, looks_other, like_other, nearest_other,
                float(max(margin, 0.0)), alternative, weights)


# ---------------------------------------------------------------------------
# Naming and refusing.


def _result(readings, lab, features, fit: _Fit, calibration, settings) -> Decode3Result:
    labels, read = fit.labels, fit.read
    facelets = "".join(FACES[c] for c in labels.tolist())
    centres_lab = np.array([lab[(labels == c) & read].mean(axis=0) if ((labels == c) & read).any()
                            else lab[labels == c].mean(axis=0) for c in range(COLOURS)])
    names = colour_names(centres_lab, calibration)
    distance = (np.linalg.norm(features - fit.centres[labels], axis=1) / fit.noise).round(3).tolist()
    looks_other = fit.looks_other.round(3).tolist()
    rgb = np.rint(readings).astype(int).tolist()
    stickers = tuple(StickerInfo(name=NAMES[i], letter=facelets[i], colour=names[labels[i]], distance=distance[i],
                                 rgb=tuple(rgb[i]), looks_other=looks_other[i]) for i in range(FACELET_COUNT))
    centres_rgb = np.rint(lab_to_srgb(centres_lab)).astype(int).tolist()
    return Decode3Result(
        facelets=facelets,
        confidence=round(fit.margin / settings.full_margin, 3),
        margin=round(fit.margin, 3),
        stickers=stickers,
        colours={FACES[c]: names[c] for c in range(COLOURS)},
        centres_rgb={FACES[c]: tuple(centres_rgb[c]) for c in range(COLOURS)},
        alternative=None if fit.alternative is None else "".join(FACES[c] for c in fit.alternative.tolist()),
        noise=round(float(fit.noise), 3),
        unread=tuple(NAMES[i] for i in np.flatnonzero(~read)),
    )


def _swapped(fit: _Fit, result) -> VisionError | None:
    """refusals.py's rule: two read stickers that each look like the other's colour (SWAP_LOOKS_OTHER)."""
    suspects = np.flatnonzero(fit.read & (fit.looks_other >= SWAP_LOOKS_OTHER))
    labels, looks_like = fit.labels[suspects], fit.nearest_other[suspects]
    mutual = (labels[:, None] == looks_like[None, :]) & (looks_like[:, None] == labels[None, :])
    pairs = [(int(suspects[a]), int(suspects[b])) for a, b in zip(*np.nonzero(np.triu(mutual)))]
    if not pairs:
        return None
    name = {c: f"{result.colours[FACES[c]]} ({FACES[c]})" for c in range(COLOURS)}
    detail = "; ".join(f"{NAMES[i]} ({name[fit.labels[i]]} in the cube) reads like {name[fit.labels[j]]} and "
                       f"{NAMES[j]} like {name[fit.labels[i]]}" for i, j in pairs)
    return VisionError(
        f"stickers that look swapped: {detail}. Likely two stickers exchanged on the cube or two regions reading "
        "each other's place: check those stickers and rescan.",
        stickers=[NAMES[k] for pair in pairs for k in pair], result=result, reason="swapped")


def _refusal(fit: _Fit, result, lab, settings, extra_margin: float = 0.0) -> VisionError | None:
    """The VisionError for a fit that is not to be trusted (None: trust it)."""
    looks_other = np.where(fit.read, fit.looks_other, 0.0)
    wrong_looking, total = _misreads(looks_other, fit.like_other, settings, NAMES)
    if not wrong_looking and total > settings.max_total_looks_other:
        worst = [NAMES[i] for i in np.argsort(-looks_other)[:4] if looks_other[i] > 0]
        return VisionError(
            f"the readings fit no legal 3x3x3 well: {np.count_nonzero(looks_other > 0)} stickers look more like "
            f"another colour than the one the best cube needs (total {total:.1f}, limit "
            f"{settings.max_total_looks_other:.1f}; worst {', '.join(worst)}): stickers swapped on the cube, or "
            "regions reading the wrong place. Check those stickers and rescan.",
            stickers=worst, result=result, reason="no-fit")
    if wrong_looking:
        by_name = {s.name: s for s in result.stickers}
        return VisionError(
            f"sticker(s) {', '.join(wrong_looking)} read as a different colour than any legal 3x3x3 allows "
            f"(the best cube puts {', '.join(f'{n}={by_name[n].colour}' for n in wrong_looking)}): a misread "
            "(glare, shadow, a finger, wrong region) or stickers swapped on the cube. Check those stickers and rescan.",
            stickers=wrong_looking, result=result, reason="misread")
    swapped = _swapped(fit, result)
    if swapped is not None:
        return swapped
    if fit.margin < settings.min_margin + extra_margin:
        doubtful = list(result.doubtful) or [result.worst_sticker.name]
        return VisionError(
            f"cannot read the 3x3x3 with confidence: another legal cube explains the readings almost as well "
            f"(margin {fit.margin:.1f}, need {settings.min_margin + extra_margin:.1f}); they differ at "
            f"{', '.join(doubtful)}. {_advice(lab, _RESCAN3)}",
            stickers=doubtful, result=result, reason="margin")
    return None


# (No "recalibrate" as decode.py says: the colour calibration's regions are the 2x2x2's.)
_RESCAN3 = "Rescan; if it happens again check those stickers for glare or shadow."


def decode3(rgb, calibration: Calibration | None = None, config: Config | None = None) -> Decode3Result:
    """Decode 54 sRGB readings (facelet order U1..B9) into the most likely legal 3x3x3.

    calibration: optional prior (start centres, colour names); config: a loaded
    config or its `decode` section (defaults if None).  Raises VisionError
    (naming the doubtful stickers, reason: the rule) when the cube cannot be
    read with confidence.
    """
    settings = decode_settings(config)
    readings = check_readings3(rgb)
    result, error, fit = _decode_readings(readings, calibration, settings)
    if error is not None and error.reason in RETRIED:
        # A colour cast distorts distances between colours; with the lightest colour made neutral the
        # same best cube may be clear (decode.py's second look).  Only to confirm that cube.
        balanced = _white_balanced(readings, fit)
        if balanced is not None:
            second, second_error, _ = _decode_readings(balanced, calibration, settings, must_be=fit.labels)
            if second_error is None:
                return second
    if error is not None:
        raise error
    return result


def _decode_readings(readings, calibration, settings, must_be=None):
    """(result or None, error or None, the first fit): the joint fit, read past stickers that fit no colour
    if needed.  must_be: labels the cube must have (else the first error stands)."""
    lab = srgb_to_lab(readings)
    features = _features(lab, settings)
    fit = _fit(features, lab, settings, calibration)
    result = _result(readings, lab, features, fit, calibration, settings)
    if must_be is not None and not np.array_equal(fit.labels, must_be):
        return result, VisionError("a different cube", reason="margin"), fit
    error = _refusal(fit, result, lab, settings)
    if error is not None and error.reason in RETRIED and lab[:, 0].mean() >= DARK_LIGHTNESS:
        result, error = _read_past(readings, lab, features, fit, error, calibration, settings)
    return result, error, fit


def _white_balanced(readings: np.ndarray, fit: _Fit):
    """The readings with the lightest colour made neutral (channel gains >= 1, clipped stay clipped), or None
    (decode.py's rule)."""
    return _lightest_made_neutral(readings, colour_rgb(readings, fit))


# ---------------------------------------------------------------------------
# Reading past glare and shadow (decode.py's step 5, with its constants).


def _read_past(readings, lab, features, first: _Fit, error: VisionError, calibration, settings):
    """(result, error or None): the refused fit's worst stickers left unread, worst first, while the rest
    of the cube still determines them.  Only to confirm the same cube: a cube that needs the suspects
    left out to win is a guess."""
    weights = np.ones(FACELET_COUNT)
    fit = first
    for _ in range(MAX_UNREAD):
        worst = int(np.argmax(np.where(fit.read, fit.own, -np.inf)))
        if fit.own[worst] < UNREAD_MIN_DISTANCE:
            break
        weights[worst] = 0.0
        fit = _fit(features, lab, settings, calibration, weights.copy())
        if not np.array_equal(fit.labels, first.labels):
            break
        result = _result(readings, lab, features, fit, calibration, settings)
        if _refusal(fit, result, lab, settings, UNREAD_EXTRA_MARGIN * np.count_nonzero(~fit.read)) is None:
            if not _named_by_partners(fit):
                return None, error
            unexplained = _unexplained(readings, fit, result)
            return (None, unexplained) if unexplained is not None else (result, None)
    return None, error


# A sticker farther than this (noise units) from its colour's other stickers fits that colour too poorly to
# name its piece for a partner read past.  (Twice decode.py's bar for being read past: ordinary stickers of a
# shaded scan reach 4; the stickers of an edge read between two colours, 13-20.)
PARTNER_MAX_DISTANCE = 2 * UNREAD_MIN_DISTANCE


def _named_by_partners(fit: _Fit) -> bool:
    """Whether every sticker read past is named by its piece's other stickers, read and fitting their colours.

    On a 3x3x3 an edge read past is named by its other sticker alone; if that one
    fits no colour either (two stickers of one edge between two colours), its
    slight preference would decide the cube.  The cube must not hang on it.
    """
    for i in np.flatnonzero(~fit.read):
        partners = PARTNERS[i]
        if partners and not all(fit.read[k] and fit.own[k] < PARTNER_MAX_DISTANCE for k in partners):
            return False
    return True


def colour_rgb(readings, fit: _Fit) -> np.ndarray:
    """(6, 3) median reading of each colour's read stickers."""
    members = np.argsort(fit.labels, kind="stable").reshape(COLOURS, PER_COLOUR)
    # (at most MAX_UNREAD of a colour's nine stickers are unread: every colour keeps some)
    return np.nanmedian(np.where(fit.read[:, None], readings, np.nan)[members], axis=1)


def _unexplained(readings, fit: _Fit, result) -> VisionError | None:
    """refusals.check_unread's rule: an unread sticker that looks like another colour must be explained by
    glare or shadow as its own colour (robot.vision.light), with no sticker it could have changed places with."""
    colours = colour_rgb(readings, fit)
    lamps = lamp_whites(colours)
    noise_rgb = max(float(np.median(np.linalg.norm(readings - colours[fit.labels], axis=1)[fit.read])), 3.0)
    name = {c: f"{result.colours[FACES[c]]} ({FACES[c]})" for c in range(COLOURS)}
    problems, stickers = [], []
    for i in np.flatnonzero(~fit.read):
        own, looks_like = int(fit.labels[i]), int(fit.nearest_other[i])
        if fit.looks_other[i] <= 0 or fit.like_other[i] >= UNREAD_LIKE_OTHER:
            continue  # nearer its own colour, or like no other colour's stickers: simply unread
        if not explained_by_light(readings[i], colours[own], colours[looks_like], lamps, noise_rgb):
            problems.append(f"{NAMES[i]} reads like {name[looks_like]} but the cube needs {name[own]}, and "
                            "neither glare nor shadow explains that")
            stickers.append(NAMES[i])
            continue
        partners = [NAMES[k] for k in np.flatnonzero((fit.labels == looks_like) & (fit.nearest_other == own)
                                                     & (fit.looks_other > 0))]
        if partners:  # light could excuse it, but it may be half of a swapped pair
            problems.append(f"{NAMES[i]} could be {name[own]} under glare or shadow, but it reads like "
                            f"{name[looks_like]} and {', '.join(partners)} (where the cube needs "
                            f"{name[looks_like]}) reads a little like {name[own]}: the two may have changed places")
            stickers += [NAMES[i]] + [p for p in partners if p not in stickers]
    if not problems:
        return None
    return VisionError(
        f"sticker(s) {'; '.join(problems)}. Likely a sticker swapped on the cube or a region reading the wrong "
        "place: check those stickers and rescan.", stickers=stickers, result=result, reason="unexplained")
