"""Joint decoding of 24 sticker readings into a legal cube (the decoder; the search
is in robot.vision.legal, clustering in robot.vision.clusters, naming and drift
in robot.vision.naming).

Never sticker by sticker: the answer is the *legal cube* (6 colours of exactly
4 stickers, 8 distinct corners of one handedness, twists summing to 0 mod 3,
any colour scheme including mirror-image ones) that best explains all 24
readings together.  Steps:

1. sRGB -> Lab (after the calibration's per-region gains, if any); the
   lightness axis is down-weighted and chroma rescaled by lightness, because
   shading and glare change lightness far more than hue.
2. Starting colour centres: farthest-point seeds from a few stickers, plus the
   calibration's centres when one is given (a prior only: the centres are
   always re-estimated from this scan, because light drifts).
3. For fixed centres the best legal cube is found exactly (`best_legal_labels`):
   for each of the 30 colour schemes (which colours are opposite, and
   handedness; mirror-image schemes included) a dynamic programme over corner
   positions x (piece, twist) whose state is (pieces used, twist sum mod 3);
   schemes whose lower bound cannot win are skipped.  Exactly 4 stickers per
   colour comes for free.  Cube and centres are refined alternately.
4. Confidence: the next-best legal cube (other optima; for every corner, the
   best cube that differs there, in every scheme and, to see past mere
   renamings of colours, with two opposite corners pinned; a few of those
   refined).  Its margin is its extra cost in units of the scan's sticker
   noise * sqrt(number of stickers that differ).  A margin below
   decode.min_margin, a sticker that reads clearly as another colour than
   the cube needs (swapped or misread), or two stickers that each read like
   the other's colour (a swapped pair, robot.vision.refusals), raises
   VisionError naming the doubtful stickers, so the robot rescans instead
   of guessing.
5. Reading past glare and shadow: when step 4 refuses, the stickers that fit
   no colour (worst first, at most MAX_UNREAD) are left unread -- no cost
   for any colour -- and the cube is fitted again.  Accepted only if it is
   the same cube as before, its margin clears min_margin plus
   UNREAD_EXTRA_MARGIN per unread sticker (on a 2x2x2 a corner's other two
   stickers name the piece, so one unread sticker is determined), and no
   unread sticker looks like another colour unless glare or shadow explains
   it as its own (robot.vision.light) and no other sticker could have
   changed places with it; otherwise it refuses (reason "unexplained",
   robot.vision.refusals).  A white-balanced second look may likewise
   confirm the same cube under a colour cast.
6. Clipped channels are censored values: two colours that differ only in
   channels clipped at 255 (or each have two stickers clipped in all three)
   cannot be told apart sticker by sticker; the cube stands only if it is
   determined without telling them apart (the corners' handedness), else
   the over-exposed frame is refused, not guessed (robot.vision.refusals).

Every refusal carries VisionError.reason (which rule refused).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..config_types import Config, DecodeConfig
from ..cube import CORNER_NAMES, FACELET_COUNT, FACES
from .clusters import (balanced_clusters, class_centres, distances, farthest_point_centres, fit_cost,
                       fit_costs, match_classes, min_cost_assignment, partition_key, refine, same_partition,
                       sticker_costs)
from .colour import Calibration, lab_to_srgb, srgb_to_lab
from .legal import COLOURS, SCHEMES, STICKERS, alternatives, best_legal_labels
from .naming import ColourDrift, colour_drift, colour_names, rough_colour_name
from .readings import NAMES as _NAMES, VisionError, check_readings
from .refusals import check_unread, colour_rgb, over_exposure, swapped_pair

__all__ = [
    "DecodeResult", "StickerInfo", "VisionError", "decode", "decode_settings", "colour_drift", "ColourDrift",
    "rough_colour_name", "best_legal_labels", "min_cost_assignment", "balanced_clusters", "SCHEMES",
]


@dataclass(frozen=True)
class StickerInfo:
    """How one facelet was read.

    letter: its face letter in the decoded scheme; colour: the colour's name
    (from the calibration, else a rough name); distance: from the colour's
    centre in units of the scan's sticker noise; rgb: the reading;
    looks_other: how much nearer (noise units) the reading is to another
    colour's centre than to its own colour's other stickers (above 0: it
    looks like another colour).
    """

    name: str
    letter: str
    colour: str
    distance: float
    rgb: tuple
    looks_other: float = 0.0


@dataclass(frozen=True)
class DecodeResult:
    """A decoded cube.

    facelets: 24 letters URFDLB named by the decoded colour scheme (the colour
    at DBL's D sticker is 'D', etc.), accepted by robot.cube.parse_facelets.
    confidence: 0..1 (margin / decode.full_margin, capped).  margin: extra
    cost of the next-best legal cube in units of sticker noise *
    sqrt(stickers that differ); at least decode.min_margin, else decode()
    raises.  alternative: that cube's facelets (same letters where the colours
    agree), or None if none was near.  colours: letter -> colour name.
    unread: facelets read past (glare, shadow, clipped: they fit no colour and
    the rest of the cube determines them; their letters come from the cube).
    centres_rgb: letter -> the scan's estimated sRGB of that colour.  noise:
    the scan's sticker noise (Lab-based feature units).
    """

    facelets: str
    confidence: float
    margin: float
    stickers: tuple
    colours: dict
    centres_rgb: dict
    alternative: str | None
    noise: float
    unread: tuple = ()

    @property
    def worst_sticker(self) -> StickerInfo:
        return max(self.stickers, key=lambda s: s.distance)

    @property
    def doubtful(self) -> tuple:
        """Facelets where the next-best cube reads differently."""
        if self.alternative is None:
            return ()
        return tuple(n for n, a, b in zip(_NAMES, self.facelets, self.alternative) if a != b)


def decode_settings(config: Config | DecodeConfig | None = None) -> DecodeConfig:
    """The `decode` section of a loaded config, or that section itself (the defaults when None)."""
    if config is None:
        return _default_settings()
    return config if isinstance(config, DecodeConfig) else config.decode


@functools.lru_cache(maxsize=1)
def _default_settings() -> DecodeConfig:
    from .. import config as config_module

    return config_module.defaults().decode


# The corner that names the letters (DBL: its D, B and L stickers), and which
# corners' stickers share a piece (to find opposite colours: never on one piece).
_DBL = STICKERS[CORNER_NAMES.index("DBL")]
_DBL_FACES = [FACES[i // 4] for i in _DBL]


def _letters(labels: np.ndarray) -> dict:
    """Colour class -> face letter in the decoded scheme (the colour on DBL's D sticker is 'D', ...).

    The same naming as robot.cube.parse_facelets: a face's letter is the
    colour at DBL on that face, the other three are their opposites.
    """
    together = np.zeros((COLOURS, COLOURS), dtype=bool)
    corner_classes = labels[STICKERS]  # (8, 3)
    for a, b in ((0, 1), (1, 2), (0, 2)):
        together[corner_classes[:, a], corner_classes[:, b]] = True
    together |= together.T | np.eye(COLOURS, dtype=bool)
    opposite = (~together).argmax(axis=1)
    letter = {}
    for face, facelet in zip(_DBL_FACES, _DBL):
        c = int(labels[facelet])
        letter[c] = face
        letter[int(opposite[c])] = FACES[(FACES.index(face) + 3) % 6]
    return letter



# ---------------------------------------------------------------------------
# Decoding.


def _features(lab: np.ndarray, settings: DecodeConfig) -> np.ndarray:
    """Lab with lightness down-weighted and chroma normalised for shading: shading scales a and b
    roughly with L + 16, so they are rescaled to L = 50 (within limits, so near-black noise is not blown up)."""
    gain = np.clip(66.0 / (lab[:, 0] + 16.0), 1.0 / settings.max_chroma_gain, settings.max_chroma_gain)
    if not settings.shading_correction:
        gain = np.ones_like(gain)
    return np.column_stack([lab[:, 0] * settings.lightness_weight, lab[:, 1] * gain, lab[:, 2] * gain])


def _margins(options, labels, best_cost: float, noise: float, read=None) -> np.ndarray:
    """Extra cost of each (cost, labels) option over the best, in units of noise * sqrt(read stickers that differ)."""
    if not options:
        return np.empty(0)
    costs = np.array([cost for cost, _ in options])
    differ = np.array([other for _, other in options]) != labels
    if read is not None:
        differ &= read
    differing = np.maximum(np.count_nonzero(differ, axis=1), 1)
    return (costs - best_cost) / (noise * np.sqrt(differing))


@dataclass
class _Fit:
    """The best legal cube for the readings, with what the refusal rules need (decode3's too: any count of stickers).

    weights: None, or 0/1 per sticker (0: unread, left out of every cost).
    own: each sticker's distance to its colour's other (read) stickers' median;
    looks_other: how much nearer (noise units) another colour's median is;
    like_other: distance (noise units) to the nearest read sticker of another
    colour; nearest_other: that other colour.  The refusal rules skip unread
    stickers (robot.vision.refusals judges them by the light).
    """

    labels: np.ndarray
    centres: np.ndarray
    noise: float
    own: np.ndarray
    looks_other: np.ndarray
    like_other: np.ndarray
    nearest_other: np.ndarray
    margin: float
    alternative: np.ndarray | None
    weights: np.ndarray | None

    @property
    def read(self) -> np.ndarray:
        return np.ones(len(self.labels), dtype=bool) if self.weights is None else self.weights > 0


def _fit(features: np.ndarray, lab: np.ndarray, settings: DecodeConfig, calibration, weights=None, unseen=None) -> _Fit:
    """Joint fit: several starts refined to legal cubes, the best kept, then its margin.
    unseen: None, or True per sticker no view showed (a partial scan; also weight 0)."""
    read = np.ones(FACELET_COUNT, dtype=bool) if weights is None else weights > 0
    # Several starting points (farthest-point centres from the brightest, the
    # darkest and the most colourful read sticker, and the calibration's
    # centres); each is refined to a legal cube; distinct cubes compete.
    index = np.flatnonzero(read)
    seeds = [index[np.argmax(lab[index, 0])], index[np.argmin(lab[index, 0])],
             index[np.argmax(np.hypot(lab[index, 1], lab[index, 2]))]]
    usable = features if weights is None else features[index]
    starts = [farthest_point_centres(usable, int(np.flatnonzero(index == seed)[0])) for seed in dict.fromkeys(seeds)]
    if calibration is not None:
        starts.append(_features(calibration.centres_lab(), settings))
    found: dict[tuple, tuple] = {}
    memo: dict[tuple, np.ndarray] = {}
    for centres in starts:
        labels = refine(features, centres, memo, weights=weights)
        found.setdefault(partition_key(labels), (fit_cost(features, labels, weights), labels))
    ranked = sorted(found.values(), key=lambda item: item[0])
    labels = ranked[0][1]
    centres = class_centres(features, labels, weights)
    # The exact best cube for the final centres (its scheme and corners seed the alternatives).
    _, labels, scheme, placements = best_legal_labels(sticker_costs(features, centres, weights), labels)
    centres = class_centres(features, labels, weights)
    best_cost = fit_cost(features, labels, weights)
    key = partition_key(labels)

    # Sticker noise: the median distance to the own colour's median, so a few
    # misread stickers do not inflate it (and so hide themselves).  Unread
    # stickers take no part (NaN in the medians).
    members = np.argsort(labels, kind="stable").reshape(COLOURS, 4)  # (6 colours, 4 stickers)
    masked = np.where(read[:, None], features, np.nan)
    robust = np.nanmedian(masked[members], axis=1) if weights is not None else np.median(features[members], axis=1)
    spread = np.linalg.norm(features - robust[labels], axis=1)
    noise = max(float(np.median(spread[read])), settings.noise_floor)

    # Does a sticker look like another colour?  Robust centres (its own colour's
    # without it, medians) so that misread stickers cannot pull centres to hide.
    rank = np.empty(FACELET_COUNT, dtype=int)
    rank[members.ravel()] = np.tile(np.arange(4), COLOURS)
    mates = members[labels][~np.eye(4, dtype=bool)[rank]].reshape(FACELET_COUNT, 3)  # the other three
    if weights is None:
        own = np.linalg.norm(features - np.median(features[mates], axis=1), axis=1)
    else:
        mate_values = masked[mates]
        none_read = np.isnan(mate_values[:, :, 0]).all(axis=1)  # all three mates unread: use them anyway
        if unseen is not None:  # ... unless none was even seen (a partial scan): no evidence either way
            never = none_read & unseen[mates].all(axis=1)
            mate_values[never] = features[never][:, None, :]
            none_read &= ~never
        mate_values[none_read] = features[mates[none_read]]
        own = np.linalg.norm(features - np.nanmedian(mate_values, axis=1), axis=1)
    to_robust = np.where(np.eye(COLOURS, dtype=bool)[labels], np.inf, distances(features, robust))
    others = to_robust.min(axis=1)
    nearest_other = to_robust.argmin(axis=1)
    # ... and is it like some read sticker given another colour (not a reading like no other)?
    like_other = np.where((labels[:, None] != labels[None, :]) & read[None, :], distances(features, features),
                          np.inf).min(axis=1) / noise
    looks_other = (own - others) / noise
    wrong_looking, total = _misreads(np.where(read, looks_other, 0.0), like_other, settings)
    misread = bool(wrong_looking) or total > settings.max_total_looks_other

    # Next-best legal cube: other local optima, the best cubes that differ at
    # some corner with these centres held (or refitted, if cheaper), and a few
    # of those refined.  Margin: its extra cost in units of the noise expected
    # over the read stickers where it differs (noise * sqrt(count)).
    # Options are (cost, labels) with classes named as in `labels` (the DP
    # alternatives already are; other optima are matched by their centres).
    options = [(cost, match_classes(features, labels, other, weights)) for cost, other in ranked[1:]
               if partition_key(other) != key]
    # Dearer than this, a cube cannot decide a refusal (at most 24 stickers differ)
    # and only shifts the confidence.
    reach = max(settings.min_margin * np.sqrt(FACELET_COUNT), settings.full_margin * np.sqrt(6))
    refused_anyway = misread or min(_margins(options, labels, best_cost, noise, read), default=np.inf) < settings.min_margin
    if not refused_anyway:  # (a refused scan needs no finer margin)
        alt_costs, alt_labels = alternatives(sticker_costs(features, centres, weights), scheme, placements,
                                             best_cost + reach * noise)
        if len(alt_labels):
            # Genuine alternatives only (not a renaming of this cube), each once.
            genuine = ~same_partition(alt_labels, labels)
            alt_labels, first = np.unique(alt_labels[genuine], axis=0, return_index=True)
            alt_labels = alt_labels[np.argsort(first)]  # in the order found
            alt_costs = alt_costs[genuine][np.sort(first)]
            alt_costs = np.minimum(alt_costs, fit_costs(features, alt_labels, weights))
            options += list(zip(alt_costs.tolist(), alt_labels))
        options.sort(key=lambda item: item[0])
        for _, other in options[:settings.refine_alternatives]:
            reached = refine(features, class_centres(features, other, weights), memo, weights=weights)
            if partition_key(reached) != key:
                options.append((fit_cost(features, reached, weights), match_classes(features, labels, reached, weights)))
    margin, alternative = settings.full_margin, None
    if options:
        z = _margins(options, labels, best_cost, noise, read)
        k = int(np.argmin(z))
        if z[k] < margin:
            margin, alternative = float(z[k]), options[k][1]
    return _Fit(labels, centres, noise, own / noise, looks_other, like_other, nearest_other, float(max(margin, 0.0)), alternative, weights)


# Reading past stickers that fit no colour (glare, shadow, clipped channels):
# at most this many stickers are left unread, each only if it is at least this
# far (noise units) from its colour's other stickers, and the cube's margin
# must then be this much above decode.min_margin per unread sticker (less
# evidence, so a stricter test).
MAX_UNREAD = 3
UNREAD_MIN_DISTANCE = 3.0
UNREAD_EXTRA_MARGIN = 0.5
# Below this mean lightness (0-100) a scan is too dark to read past anything:
# noise swamps the colours and a "shadow" would excuse any dark reading.
DARK_LIGHTNESS = 25.0


def decode(rgb, calibration: Calibration | None = None, config: Config | None = None) -> DecodeResult:
    """Decode 24 sRGB readings (facelet order U1..B4) into the most likely legal cube.

    calibration: optional prior (start centres, colour names, region gains);
    the centres are always re-estimated from this scan.  config: a loaded
    config (robot.config.load()) or its `decode` section; defaults if None.
    Raises VisionError (naming the doubtful stickers, reason: the rule) when
    the cube cannot be read with confidence; never returns a cube it is not
    confident in.
    """
    settings = decode_settings(config)
    readings = check_readings(rgb)
    if calibration is not None and calibration.regions:
        readings = calibration.correct(readings)
    result, error, fit = _decode_readings(readings, calibration, settings)
    if error is not None and error.reason in RETRIED:
        # A colour cast distorts distances between colours; with the white
        # stickers made neutral, the same best cube may be clear.  Only to
        # confirm that cube (another one would be a second guess).
        balanced = _white_balanced(readings, fit)
        if balanced is not None:
            second, second_error, _ = _decode_readings(balanced, calibration, settings, partition_key(fit.labels))
            if second_error is None:
                return second
    if error is not None:
        raise error
    return result


# Refusals worth a second look (reading past stickers, white balance); the
# others (over-exposure, an unexplained sticker) stand.
RETRIED = ("margin", "misread", "no-fit")


def _decode_readings(readings, calibration, settings, must_be=None, unseen=None):
    """(result, error or None, fit): the joint fit, read past stickers that fit no colour if needed.

    must_be: a partition key the cube must have (else the first error stands).
    unseen: None, or True per sticker no view showed (weight 0 from the start).
    """
    lab = srgb_to_lab(readings)
    features = _features(lab, settings)
    seen_weights = None if unseen is None else (~unseen).astype(float)
    fit = _fit(features, lab, settings, calibration, seen_weights, unseen)
    result = _result(readings, lab, features, fit, calibration, settings)
    error = _refusal(fit, result, lab, settings)
    first_key = partition_key(fit.labels)
    if must_be is not None and first_key != must_be:
        return result, error or VisionError("a different cube", reason="margin"), fit
    first_fit = result_fit = fit  # result_fit: the fit `result` describes
    if error is not None and error.reason in RETRIED and lab[:, 0].mean() >= DARK_LIGHTNESS:
        # Read past the stickers that fit no colour, worst first, while the
        # rest of the cube still determines them.  Only to confirm the best
        # cube: a cube that needs the suspects left out to win is a guess.
        weights = np.ones(FACELET_COUNT) if seen_weights is None else seen_weights.copy()
        for _ in range(MAX_UNREAD):
            worst = int(np.argmax(np.where(fit.read, fit.own, -np.inf)))
            if fit.own[worst] < UNREAD_MIN_DISTANCE:
                break
            weights[worst] = 0.0
            fit = _fit(features, lab, settings, calibration, weights.copy(), unseen)
            if partition_key(fit.labels) != first_key:
                break
            unread_result = _result(readings, lab, features, fit, calibration, settings)
            read_past = ~fit.read if unseen is None else ~fit.read & ~unseen
            if _refusal(fit, unread_result, lab, settings, UNREAD_EXTRA_MARGIN * np.count_nonzero(read_past)) is None:
                try:
                    check_unread(readings, fit, unread_result, read_past)
                except VisionError as unexplained:
                    return unread_result, unexplained, first_fit
                result, error, result_fit = unread_result, None, fit
                break
    if error is None or error.reason == "margin":  # (a near cube in an over-exposed frame: say why)
        error = over_exposure(readings, features, result_fit, result, settings) or error
    return result, error, first_fit


def _white_balanced(readings: np.ndarray, fit: _Fit):
    """The readings with the lightest colour made neutral (channel gains >= 1, clipped stay clipped), or None."""
    return _lightest_made_neutral(readings, colour_rgb(readings, fit))


def _lightest_made_neutral(readings: np.ndarray, colours: np.ndarray):
    """_white_balanced's rule given each colour's (6, 3) reading (decode3 counts its colours its own way)."""
    lightest = colours[int(np.argmax(srgb_to_lab(colours)[:, 0]))]
    if lightest.min() < 40 or lightest.max() / lightest.min() < 1.03:
        return None
    return np.clip(readings * (lightest.max() / lightest), 0.0, 255.0)


def _result(readings, lab, features, fit: _Fit, calibration, settings) -> DecodeResult:
    """Name the colours by the decoded scheme."""
    labels = fit.labels
    letter_of_class = _letters(labels)
    facelets = "".join(letter_of_class[c] for c in labels.tolist())
    read = fit.read
    centres_lab = np.array([lab[(labels == c) & read].mean(axis=0) for c in range(COLOURS)])
    names = colour_names(centres_lab, calibration)
    alt_facelets = None
    if fit.alternative is not None:
        alt_facelets = "".join(letter_of_class[c] for c in fit.alternative.tolist())
    sticker_distances = (np.linalg.norm(features - fit.centres[labels], axis=1) / fit.noise).round(3).tolist()
    looks_other = fit.looks_other.round(3).tolist()
    rgb = np.rint(readings).astype(int).tolist()
    stickers = tuple(
        StickerInfo(name=_NAMES[i], letter=facelets[i], colour=names[labels[i]], distance=sticker_distances[i],
                    rgb=tuple(rgb[i]), looks_other=looks_other[i])
        for i in range(FACELET_COUNT)
    )
    centres_rgb = np.rint(lab_to_srgb(centres_lab)).astype(int).tolist()
    return DecodeResult(
        facelets=facelets,
        confidence=round(fit.margin / settings.full_margin, 3),
        margin=round(fit.margin, 3),
        stickers=stickers,
        colours={letter_of_class[c]: names[c] for c in range(COLOURS)},
        centres_rgb={letter_of_class[c]: tuple(centres_rgb[c]) for c in range(COLOURS)},
        alternative=alt_facelets,
        noise=round(float(fit.noise), 3),
        unread=tuple(_NAMES[i] for i in np.flatnonzero(~read)),
    )


def _refusal(fit: _Fit, result: DecodeResult, lab: np.ndarray, settings, extra_margin=0.0) -> VisionError | None:
    """The VisionError for a fit that is not to be trusted (None: trust it)."""
    looks_other = np.where(fit.read, fit.looks_other, 0.0)
    wrong_looking, total = _misreads(looks_other, fit.like_other, settings)
    stickers = result.stickers
    if not wrong_looking and total > settings.max_total_looks_other:
        worst = [_NAMES[i] for i in np.argsort(-looks_other)[:4] if looks_other[i] > 0]
        return VisionError(
            f"the readings fit no legal cube well: {len(np.flatnonzero(looks_other > 0))} stickers look more like "
            f"another colour than the one the best cube needs (total {total:.1f}, limit "
            f"{settings.max_total_looks_other:.1f}; worst {', '.join(worst)}): stickers swapped on the cube, or "
            "regions reading the wrong place. Check those stickers and rescan.",
            stickers=worst, result=result, reason="no-fit",
        )
    if wrong_looking:
        return VisionError(
            f"sticker(s) {', '.join(wrong_looking)} read as a different colour than any legal cube allows "
            f"(the best cube puts {', '.join(f'{s.name}={s.colour}' for s in stickers if s.name in wrong_looking)}): "
            "a misread (glare, shadow, a finger, wrong region) or stickers swapped on the cube. "
            "Check those stickers and rescan.",
            stickers=wrong_looking, result=result, reason="misread",
        )
    swapped = swapped_pair(fit, result)
    if swapped is not None:
        return swapped
    if fit.margin < settings.min_margin + extra_margin:
        doubtful = list(result.doubtful) or [result.worst_sticker.name]
        return VisionError(
            f"cannot read the cube with confidence: another legal cube explains the readings almost as well "
            f"(margin {fit.margin:.1f}, need {settings.min_margin:.1f}); they differ at {', '.join(doubtful)}. "
            f"{_advice(lab)}",
            stickers=doubtful, result=result, reason="margin",
        )
    return None


def _misreads(looks_other: np.ndarray, like_other: np.ndarray, settings, sticker_names=_NAMES) -> tuple[list, float]:
    """Stickers that read clearly as another colour (far from the colour the cube needs, close to
    stickers of another: swapped or misread), and the summed excess likeness.  A reading like no other
    (near-black) is left to the cube constraints."""
    limit = settings.max_looks_other
    names = [sticker_names[i] for i in np.argsort(-looks_other) if looks_other[i] > limit and like_other[i] < limit]
    return names, float(np.clip(looks_other, 0, None).sum())


_RESCAN = ("Rescan; if it happens again check those stickers for glare or shadow, and recalibrate "
           "('cube-robot calibrate colours') if the light has changed.")


def _advice(lab: np.ndarray, otherwise: str = _RESCAN) -> str:
    """What to do about a refused scan: more light when it is too dark, else `otherwise`."""
    mean_lightness = float(lab[:, 0].mean())
    if mean_lightness < DARK_LIGHTNESS:
        return (f"The readings are very dark (mean lightness {mean_lightness:.0f}/100): add light or raise the "
                "camera exposure, then rescan.")
    return otherwise

