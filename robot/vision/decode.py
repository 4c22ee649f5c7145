"""Joint decoding of 24 sticker readings into a legal cube.

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
   decode.min_margin, or a sticker that reads clearly as another colour than
   the cube needs (swapped or misread), raises VisionError naming the
   doubtful stickers, so the robot rescans instead of guessing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..cube import CORNER_FACELETS, FACELET_COUNT, FACES, CubeError, _PIECE_FACES, facelet_name, parse_facelets
from .colour import Calibration, lab_to_srgb, srgb_to_lab

COLOURS = 6
PER_COLOUR = 4
CORNERS = len(CORNER_FACELETS)
_STICKERS = np.array(CORNER_FACELETS)  # (8 positions, 3 facelets)
_NAMES = tuple(facelet_name(i) for i in range(FACELET_COUNT))


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

    @property
    def worst_sticker(self) -> StickerInfo:
        return max(self.stickers, key=lambda s: s.distance)

    @property
    def doubtful(self) -> tuple:
        """Facelets where the next-best cube reads differently."""
        if self.alternative is None:
            return ()
        return tuple(n for n, a, b in zip(_NAMES, self.facelets, self.alternative) if a != b)


def decode_settings(config=None) -> dict:
    """The `decode` section of a loaded config (the defaults when None)."""
    from .. import config as config_module

    if config is None:
        config = config_module.defaults()
    return config["decode"] if "decode" in config else config


# ---------------------------------------------------------------------------
# Colour schemes and the corner-assignment dynamic programme.


def _schemes() -> np.ndarray:
    """(30, 6): for each colour scheme, the colour class on faces U R F D L B.

    One representative per scheme up to whole-cube rotation: class 0 on U, the
    smallest remaining class on F, then the opposite classes and the two
    handednesses (R/L order).  Mirror-image schemes are included.
    """
    out = []
    for down in range(1, COLOURS):
        rest = [c for c in range(1, COLOURS) if c != down]
        front = rest[0]
        for back in rest[1:]:
            right, left = [c for c in rest if c not in (front, back)]
            for r, l in ((right, left), (left, right)):
                by_face = {"U": 0, "D": down, "F": front, "B": back, "R": r, "L": l}
                out.append([by_face[f] for f in FACES])
    return np.array(out)


SCHEMES = _schemes()
# _CLASS[s, piece, twist, k]: colour class on facelet k of a corner position
# holding `piece` with `twist`, under scheme s (as in CubieCube.to_facelets).
_CLASS = np.array([
    [[[scheme[FACES.index(_PIECE_FACES[piece][(k - twist) % 3])] for k in range(3)]
      for twist in range(3)] for piece in range(CORNERS)]
    for scheme in SCHEMES
])
_ROLL = np.array([[(r - o) % 3 for r in range(3)] for o in range(3)])  # old residue for (twist o, new r)


def _levels():
    """Per corner position p: the piece sets after placing p+1 pieces, with predecessors."""
    index_of = {0: 0}
    levels = []
    for size in range(1, CORNERS + 1):
        masks = [sum(1 << j for j in c) for c in itertools.combinations(range(CORNERS), size)]
        pieces = np.array([[j for j in range(CORNERS) if m >> j & 1] for m in masks])
        pred = np.array([[index_of[m ^ (1 << j)] for j in row] for m, row in zip(masks, pieces)])
        levels.append((pred, pieces))
        index_of = {m: i for i, m in enumerate(masks)}
    return levels


_LEVELS = _levels()


def _corner_costs(sticker_cost: np.ndarray) -> np.ndarray:
    """(30, 8 positions, 8 pieces, 3 twists) cost of each placement, from (24, 6) sticker costs."""
    return sticker_cost[_STICKERS[None, :, None, None, :], _CLASS[:, None]].sum(axis=-1)


def _best_cubes(costs: np.ndarray):
    """Exact best legal cube for each of a batch of (B, 8, 8, 3) placement costs.

    costs[b, position, piece, twist].  Returns (total (B,), placements (B, 8, 2)
    = (piece, twist) at each position).  Pieces must be distinct and the twists
    must sum to 0 mod 3; the DP state is (set of pieces used, twist sum mod 3).
    """
    batch = costs.shape[0]
    if batch == 0:
        return np.empty(0), np.empty((0, CORNERS, 2), dtype=int)
    by_batch_last = np.ascontiguousarray(np.moveaxis(costs, 0, -1))  # fast inner loops over the batch
    table = np.full((1, 3, batch), np.inf)
    table[0, 0] = 0.0
    choices = []
    for position, (pred, pieces) in enumerate(_LEVELS):
        # cand[mask, i, o, r, b]: put piece pieces[mask, i] here with twist o, ending at residue r.
        cand = table[pred][:, :, _ROLL, :] + by_batch_last[position][pieces][:, :, :, None, :]
        cand = cand.reshape(len(pred), -1, 3, batch)
        choices.append(cand.argmin(axis=1))
        table = cand.min(axis=1)
    total = table[0, 0]
    placements = np.zeros((batch, CORNERS, 2), dtype=int)
    everyone = np.arange(batch)
    mask = np.zeros(batch, dtype=int)
    residue = np.zeros(batch, dtype=int)
    for position in range(CORNERS - 1, -1, -1):
        pred, pieces = _LEVELS[position]
        i, twist = np.divmod(choices[position][mask, residue, everyone], 3)
        placements[:, position, 0] = pieces[mask, i]
        placements[:, position, 1] = twist
        residue = (residue - twist) % 3
        mask = pred[mask, i]
    return total, placements


def _labels(schemes: np.ndarray, placements: np.ndarray) -> np.ndarray:
    """(B, 24) colour class of each facelet, from schemes (B,) and placements (B, 8, 2)."""
    labels = np.empty((len(schemes), FACELET_COUNT), dtype=int)
    labels[:, _STICKERS] = _CLASS[schemes[:, None], placements[..., 0], placements[..., 1]]
    return labels


def _solve_batch(corner: np.ndarray, schemes: np.ndarray, limit: float):
    """Best cube of each batch entry whose lower bound is below `limit` (others skipped).

    corner: (B, 8, 8, 3) placement costs; schemes: (B,) the scheme of each
    entry.  Returns (totals (K,), labels (K, 24), schemes (K,), placements
    (K, 8, 2)) for the K entries searched.
    """
    bound = corner.min(axis=(2, 3)).sum(axis=1)  # each position at its cheapest: never above the truth
    keep = np.flatnonzero(bound < limit)
    totals, placements = _best_cubes(corner[keep])
    return totals, _labels(schemes[keep], placements), schemes[keep], placements


def best_legal_labels(sticker_cost: np.ndarray, known=None):
    """The legal cube (colour class per facelet) with the smallest summed sticker cost.

    sticker_cost: (24, 6) cost of giving each facelet each colour class.
    known: optional labels of some legal cube (its cost bounds the search).
    Exact: every colour scheme is searched unless its lower bound already
    exceeds a cube found.  Returns (cost, labels (24,), scheme, placements (8, 2)).
    """
    corner = _corner_costs(sticker_cost)
    everyone = np.arange(len(SCHEMES))
    if known is not None:
        upper = float(sticker_cost[np.arange(FACELET_COUNT), known].sum()) + 1e-9
        totals, labels, schemes, placements = _solve_batch(corner, everyone, upper)
    else:
        bound = corner.min(axis=(2, 3)).sum(axis=1)
        order = np.argsort(bound)
        first = _solve_batch(corner[order[:1]], order[:1], np.inf)
        rest = _solve_batch(corner[order[1:]], order[1:], first[0][0])
        totals, labels, schemes, placements = (np.concatenate([a, b]) for a, b in zip(first, rest))
    k = int(np.argmin(totals))
    return float(totals[k]), labels[k], int(schemes[k]), placements[k]


# Corner pieces with no colour in common (URF-DBL, ...): two of them show all six colours.
_ANTIPODE = [next(j for j in range(CORNERS) if not set(_PIECE_FACES[i]) & set(_PIECE_FACES[j]))
             for i in range(CORNERS)]


def _alternatives(sticker_cost: np.ndarray, scheme: int, placements: np.ndarray, limit: float):
    """Legal labellings other than the best (scheme, placements), cheaper than `limit`.

    Two searches, both exact within their reach:
    * for each corner position and scheme, the best cube whose three colours
      differ there (every other labelling differs somewhere);
    * because a mere renaming of colours (same cube) can win the first search
      when two colours look alike, also: in the best scheme, with two corners
      holding opposite pieces kept (they pin all six colours, so no renaming
      is possible), the best cube that differs at each other corner.
    Returns (costs (K,), labels (K, 24)).
    """
    corner = _corner_costs(sticker_cost)
    labels = _labels(np.array([scheme]), placements[None])[0]
    batch = np.repeat(corner[None], CORNERS, axis=0)  # (8 positions, 30 schemes, 8, 8, 3)
    for position in range(CORNERS):
        same = (_CLASS == labels[_STICKERS[position]]).all(axis=-1)  # (30, 8 pieces, 3 twists)
        batch[position, :, position][same] = np.inf
    any_scheme = _solve_batch(batch.reshape(-1, CORNERS, CORNERS, 3), np.tile(np.arange(len(SCHEMES)), CORNERS),
                              limit)
    pinned = []
    position_of_piece = {int(piece): position for position, piece in enumerate(placements[:, 0])}
    for piece in range(CORNERS // 2):
        keep = (position_of_piece[piece], position_of_piece[_ANTIPODE[piece]])
        for position in range(CORNERS):
            if position in keep:
                continue
            costs = corner[scheme].copy()
            for k in keep:
                held = costs[k, placements[k, 0], placements[k, 1]]
                costs[k] = np.inf
                costs[k, placements[k, 0], placements[k, 1]] = held
            costs[position, placements[position, 0], placements[position, 1]] = np.inf
            pinned.append(costs)
    same_scheme = _solve_batch(np.array(pinned), np.full(len(pinned), scheme), limit)
    return np.concatenate([any_scheme[0], same_scheme[0]]), np.concatenate([any_scheme[1], same_scheme[1]])


# ---------------------------------------------------------------------------
# Clustering.


def min_cost_assignment(cost) -> np.ndarray:
    """Hungarian method (shortest augmenting paths) for a square cost matrix.

    Returns col_of_row: the column given to each row, minimising the total.
    """
    cost = np.asarray(cost, dtype=float)
    n = cost.shape[0]
    u = np.zeros(n + 1)
    v = np.zeros(n + 1)
    row_of_col = np.zeros(n + 1, dtype=int)  # 1-based rows; column 0 is the virtual start
    way = np.zeros(n + 1, dtype=int)
    for row in range(1, n + 1):
        row_of_col[0] = row
        col = 0
        min_to = np.full(n + 1, np.inf)
        used = np.zeros(n + 1, dtype=bool)
        while True:
            used[col] = True
            r = row_of_col[col]
            reduced = cost[r - 1] - u[r] - v[1:]
            free = ~used[1:]
            better = free & (reduced < min_to[1:])
            min_to[1:][better] = reduced[better]
            way[1:][better] = col
            candidates = np.where(free, min_to[1:], np.inf)
            nxt = int(np.argmin(candidates)) + 1
            delta = candidates[nxt - 1]
            u[row_of_col[used]] += delta
            v[used] -= delta
            min_to[1:][free] -= delta
            col = nxt
            if row_of_col[col] == 0:
                break
        while col:
            prev = way[col]
            row_of_col[col] = row_of_col[prev]
            col = prev
    col_of_row = np.zeros(n, dtype=int)
    for col in range(1, n + 1):
        col_of_row[row_of_col[col] - 1] = col - 1
    return col_of_row


def _distances(features: np.ndarray, centres: np.ndarray) -> np.ndarray:
    return np.linalg.norm(features[:, None, :] - centres[None, :, :], axis=-1)


def _centres(features: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(6, 3) mean feature of each class (every class has exactly 4 stickers)."""
    return np.eye(COLOURS)[labels].T @ features / PER_COLOUR


def balanced_clusters(features: np.ndarray, centres: np.ndarray, rounds: int = 4) -> np.ndarray:
    """6 clusters of exactly 4 stickers (k-means with the count constraint): labels (24,)."""
    labels = None
    for _ in range(rounds):
        slot_cost = np.repeat(_distances(features, centres), PER_COLOUR, axis=1)  # (24, 24 slots)
        new = min_cost_assignment(slot_cost) // PER_COLOUR
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        centres = _centres(features, labels)
    return labels


def _farthest_point_centres(features: np.ndarray, first: int) -> np.ndarray:
    chosen = [first]
    nearest = np.linalg.norm(features - features[first], axis=1)
    for _ in range(COLOURS - 1):
        chosen.append(int(np.argmax(nearest)))
        nearest = np.minimum(nearest, np.linalg.norm(features - features[chosen[-1]], axis=1))
    return features[chosen]


def _partition_key(labels) -> tuple:
    """Labels renamed in order of first appearance: equal for equal partitions."""
    names = {}
    return tuple(names.setdefault(c, len(names)) for c in np.asarray(labels).tolist())


def _fit_cost(features: np.ndarray, labels: np.ndarray) -> float:
    """Summed distance of each sticker to its class centre, the centres fitted to the labels."""
    return float(np.linalg.norm(features - _centres(features, labels)[labels], axis=1).sum())


def _fit_costs(features: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """_fit_cost of each row of a (K, 24) batch of labellings."""
    one_hot = np.eye(COLOURS)[labels]  # (K, 24, 6)
    centres = one_hot.transpose(0, 2, 1) @ features / PER_COLOUR  # (K, 6, 3)
    return np.linalg.norm(features - one_hot @ centres, axis=2).sum(axis=1)


def _refine(features: np.ndarray, centres: np.ndarray, memo: dict, rounds: int = 8) -> np.ndarray:
    """Alternate best legal cube for the centres and centres for the cube until they agree.

    memo: partition key -> where refining from it ended (shared between
    starts, so paths that meet are not walked twice).
    """
    labels, path = None, []
    for _ in range(rounds):
        _, new, _, _ = best_legal_labels(_distances(features, centres), labels)
        key = _partition_key(new)
        if key in memo:
            labels = memo[key]
            break
        path.append(key)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        centres = _centres(features, labels)
    for key in path:
        memo[key] = labels
    return labels


# ---------------------------------------------------------------------------
# Decoding.


def _features(lab: np.ndarray, settings: dict) -> np.ndarray:
    """Lab with lightness down-weighted and chroma normalised for shading.

    Shading scales a reading's light; in Lab that moves L and shrinks a and b
    roughly in proportion to L + 16, so a and b are rescaled to L = 50 (within
    limits, so near-black noise is not blown up).
    """
    gain = np.clip(66.0 / (lab[:, 0] + 16.0), 1.0 / settings["max_chroma_gain"], settings["max_chroma_gain"])
    if not settings["shading_correction"]:
        gain = np.ones_like(gain)
    return np.column_stack([lab[:, 0] * settings["lightness_weight"], lab[:, 1] * gain, lab[:, 2] * gain])


def _margins(options, labels, best_cost: float, noise: float) -> np.ndarray:
    """Extra cost of each (cost, labels) option over the best, in units of noise * sqrt(stickers that differ)."""
    if not options:
        return np.empty(0)
    costs = np.array([cost for cost, _ in options])
    differing = np.maximum(np.count_nonzero(np.array([other for _, other in options]) != labels, axis=1), 1)
    return (costs - best_cost) / (noise * np.sqrt(differing))


def _check_readings(rgb) -> np.ndarray:
    try:
        readings = np.asarray(rgb, dtype=float)
    except (TypeError, ValueError):
        raise VisionError("readings must be 24 [R, G, B] triples of numbers 0-255") from None
    if readings.shape != (FACELET_COUNT, 3):
        raise VisionError(
            f"expected 24 [R, G, B] readings in facelet order U1..B4, got an array of shape {readings.shape}"
        )
    bad = [_NAMES[i] for i in range(FACELET_COUNT) if not np.all(np.isfinite(readings[i]))
           or readings[i].min() < 0 or readings[i].max() > 255]
    if bad:
        raise VisionError(f"readings out of range 0-255 (or not numbers) at {', '.join(bad)}", stickers=bad)
    return readings


def decode(rgb, calibration: Calibration | None = None, config=None) -> DecodeResult:
    """Decode 24 sRGB readings (facelet order U1..B4) into the most likely legal cube.

    calibration: optional prior (start centres, colour names, region gains);
    the centres are always re-estimated from this scan.  config: a loaded
    config (robot.config.load()) or its `decode` section; defaults if None.
    Raises VisionError (naming the doubtful stickers) when the cube cannot be
    read with confidence; never returns a cube it is not confident in.
    """
    settings = decode_settings(config)
    readings = _check_readings(rgb)
    if calibration is not None and calibration.regions:
        readings = calibration.correct(readings)
    lab = srgb_to_lab(readings)
    features = _features(lab, settings)

    # Several starting points (farthest-point centres from the brightest, the
    # darkest and the most colourful sticker, and the calibration's centres);
    # each is refined to a legal cube; distinct cubes compete.
    seeds = [int(np.argmax(lab[:, 0])), int(np.argmin(lab[:, 0])), int(np.argmax(np.hypot(lab[:, 1], lab[:, 2])))]
    starts = [_farthest_point_centres(features, seed) for seed in dict.fromkeys(seeds)]
    if calibration is not None:
        starts.append(_features(calibration.centres_lab(), settings))
    found, memo = {}, {}
    for centres in starts:
        labels = _refine(features, centres, memo)
        found.setdefault(_partition_key(labels), (_fit_cost(features, labels), labels))
    ranked = sorted(found.values(), key=lambda item: item[0])
    labels = ranked[0][1]
    centres = _centres(features, labels)
    # The exact best cube for the final centres (its scheme and corners seed the alternatives).
    _, labels, scheme, placements = best_legal_labels(_distances(features, centres), labels)
    centres = _centres(features, labels)
    best_cost = _fit_cost(features, labels)
    key = _partition_key(labels)
    # Sticker noise: the median distance to the own colour's median, so a few
    # misread stickers do not inflate it (and so hide themselves).
    members = np.array([np.flatnonzero(labels == c) for c in range(COLOURS)])  # (6, 4)
    robust = np.median(features[members], axis=1)
    noise = max(float(np.median(np.linalg.norm(features - robust[labels], axis=1))), settings["noise_floor"])

    # Does a sticker look like another colour?  Robust centres (its own colour's
    # without it, medians) so that misread stickers cannot pull centres to hide.
    own = np.array([
        np.linalg.norm(features[i] - np.median(features[members[labels[i]][members[labels[i]] != i]], axis=0))
        for i in range(FACELET_COUNT)
    ])
    others = np.where(np.eye(COLOURS, dtype=bool)[labels], np.inf, _distances(features, robust)).min(axis=1)
    # ... and is it like some sticker given another colour (not a reading like no other)?
    like_other = np.where(labels[:, None] != labels[None, :], _distances(features, features), np.inf).min(axis=1)
    looks_other = (own - others) / noise
    like_other = like_other / noise
    wrong_looking, total = _misreads(looks_other, like_other, settings)
    misread = bool(wrong_looking) or total > settings["max_total_looks_other"]

    # Next-best legal cube: other local optima, the best cubes that differ at
    # some corner with these centres held (or refitted, if cheaper), and a few
    # of those refined.  Margin: its extra cost in units of the noise expected
    # over the stickers where it differs (noise * sqrt(count)).
    # Options are (cost, labels) with classes named as in `labels` (the DP
    # alternatives already are; other optima are matched by their centres).
    options = [(cost, _match_classes(features, labels, other)) for cost, other in ranked[1:]
               if _partition_key(other) != key]
    # Dearer than this, a cube cannot decide a refusal (at most 24 stickers differ)
    # and only shifts the confidence.
    reach = max(settings["min_margin"] * np.sqrt(FACELET_COUNT), settings["full_margin"] * np.sqrt(6))
    refused_anyway = misread or min(_margins(options, labels, best_cost, noise), default=np.inf) < settings[
        "min_margin"]
    if not refused_anyway:  # (a refused scan needs no finer margin)
        alt_costs, alt_labels = _alternatives(_distances(features, centres), scheme, placements,
                                              best_cost + reach * noise)
        if len(alt_labels):
            genuine = np.array([_partition_key(other) != key for other in alt_labels], dtype=bool)
            alt_costs = np.minimum(alt_costs, _fit_costs(features, alt_labels))[genuine]
            options += list(zip(alt_costs.tolist(), alt_labels[genuine]))
        options.sort(key=lambda item: item[0])
        for _, other in options[:settings["refine_alternatives"]]:
            reached = _refine(features, _centres(features, other), memo)
            if _partition_key(reached) != key:
                options.append((_fit_cost(features, reached), _match_classes(features, labels, reached)))
    margin, alternative = settings["full_margin"], None
    if options:
        z = _margins(options, labels, best_cost, noise)
        k = int(np.argmin(z))
        if z[k] < margin:
            margin, alternative = float(z[k]), options[k][1]
    margin = float(max(margin, 0.0))
    distances = np.linalg.norm(features - centres[labels], axis=1)
    return _result(readings, lab, features, labels, centres, distances / noise, looks_other,
                   like_other, margin, alternative, noise, calibration, settings)


def _result(readings, lab, features, labels, centres, distances, looks_other, other_distances, margin,
            alternative, noise, calibration, settings) -> DecodeResult:
    """Name the colours by the decoded scheme, and refuse when not confident."""
    try:
        parsed = parse_facelets("".join(str(c) for c in labels))
    except CubeError as exc:  # cannot happen: the search only builds legal cubes
        raise AssertionError(f"decoder produced an illegal cube: {exc}") from None
    letter_of_class = {int(symbol): FACES[i] for i, symbol in enumerate(parsed.colours)}
    facelets = "".join(letter_of_class[c] for c in labels.tolist())
    centres_lab = np.array([lab[labels == c].mean(axis=0) for c in range(COLOURS)])
    names = _colour_names(centres_lab, calibration)
    alt_facelets = None
    if alternative is not None:
        alt_labels = alternative
        alt_facelets = "".join(letter_of_class[c] for c in alt_labels.tolist())
    stickers = tuple(
        StickerInfo(
            name=_NAMES[i], letter=facelets[i], colour=names[labels[i]], distance=round(float(distances[i]), 3),
            rgb=tuple(int(round(v)) for v in readings[i]), looks_other=round(float(looks_other[i]), 3),
        )
        for i in range(FACELET_COUNT)
    )
    result = DecodeResult(
        facelets=facelets,
        confidence=round(margin / settings["full_margin"], 3),
        margin=round(margin, 3),
        stickers=stickers,
        colours={letter_of_class[c]: names[c] for c in range(COLOURS)},
        centres_rgb={letter_of_class[c]: tuple(int(round(v)) for v in lab_to_srgb(centres_lab[c]))
                     for c in range(COLOURS)},
        alternative=alt_facelets,
        noise=round(float(noise), 3),
    )
    wrong_looking, total = _misreads(looks_other, other_distances, settings)
    if not wrong_looking and total > settings["max_total_looks_other"]:
        worst = [_NAMES[i] for i in np.argsort(-looks_other)[:4] if looks_other[i] > 0]
        raise VisionError(
            f"the readings fit no legal cube well: {len(np.flatnonzero(looks_other > 0))} stickers look more like "
            f"another colour than the one the best cube needs (total {total:.1f}, limit "
            f"{settings['max_total_looks_other']:.1f}; worst {', '.join(worst)}): stickers swapped on the cube, or "
            "regions reading the wrong place. Check those stickers and rescan.",
            stickers=worst, result=result,
        )
    if wrong_looking:
        raise VisionError(
            f"sticker(s) {', '.join(wrong_looking)} read as a different colour than any legal cube allows "
            f"(the best cube puts {', '.join(f'{s.name}={s.colour}' for s in stickers if s.name in wrong_looking)}): "
            "a misread (glare, shadow, a finger, wrong region) or stickers swapped on the cube. "
            "Check those stickers and rescan.",
            stickers=wrong_looking, result=result,
        )
    if margin < settings["min_margin"]:
        doubtful = list(result.doubtful) or [result.worst_sticker.name]
        raise VisionError(
            f"cannot read the cube with confidence: another legal cube explains the readings almost as well "
            f"(margin {margin:.1f}, need {settings['min_margin']:.1f}); they differ at {', '.join(doubtful)}. "
            f"{_advice(lab)}",
            stickers=doubtful, result=result,
        )
    return result


def _misreads(looks_other: np.ndarray, like_other: np.ndarray, settings) -> tuple[list, float]:
    """Stickers that read clearly as another colour, and the summed excess likeness.

    A sticker far from the colour the cube needs and close to stickers of
    another colour is a swapped sticker or a misread region.  A reading like
    no other (a near-black read) is left to the cube constraints.
    """
    limit = settings["max_looks_other"]
    names = [_NAMES[i] for i in np.argsort(-looks_other) if looks_other[i] > limit and like_other[i] < limit]
    return names, float(np.clip(looks_other, 0, None).sum())


def _advice(lab: np.ndarray) -> str:
    mean_lightness = float(lab[:, 0].mean())
    if mean_lightness < 25:
        return (f"The readings are very dark (mean lightness {mean_lightness:.0f}/100): add light or raise the "
                "camera exposure, then rescan.")
    return ("Rescan; if it happens again check those stickers for glare or shadow, and recalibrate "
            "('cube-robot calibrate colors') if the light has changed.")


def _match_classes(features, labels, other) -> np.ndarray:
    """`other`'s classes renamed to the classes of `labels` with the nearest centres."""
    mine, theirs = _centres(features, labels), _centres(features, other)
    mapping = min_cost_assignment(_distances(theirs, mine))
    return mapping[other]


def _colour_names(centres_lab: np.ndarray, calibration) -> list[str]:
    """A name per class: the calibration's (nearest centres, one to one), else a rough hue name."""
    if calibration is not None:
        mapping = min_cost_assignment(_distances(centres_lab, calibration.centres_lab()))
        return [calibration.names[k] for k in mapping]
    return [rough_colour_name(c) for c in centres_lab]


def rough_colour_name(lab) -> str:
    """'white', 'red', 'blue'... for display only (decoding never uses names)."""
    lightness, a, b = (float(v) for v in lab)
    chroma = np.hypot(a, b)
    if chroma < 12 + 0.1 * (100 - lightness):
        return "white" if lightness > 60 else "grey" if lightness > 25 else "black"
    hue = np.degrees(np.arctan2(b, a)) % 360
    for limit, name in ((20, "pink"), (50, "red"), (75, "orange"), (105, "yellow"), (190, "green"),
                        (290, "blue"), (340, "purple"), (360, "pink")):
        if hue < limit:
            return name
    return "pink"


@dataclass(frozen=True)
class ColourDrift:
    """How far a scan's colours are from the calibration.

    delta_e: calibration colour name -> CIE76 distance between its calibrated
    Lab centre and this scan's centre for it; worst: the name that moved most.
    """

    delta_e: dict
    worst: str

    @property
    def max_delta_e(self) -> float:
        return self.delta_e[self.worst]


def colour_drift(scan, calibration: Calibration) -> ColourDrift:
    """Compare a scan's colour centres with the calibration.

    scan: a DecodeResult (its per-colour centres are used) or raw (24, 3) sRGB
    readings (clustered into 6 groups of 4 first).  The decoder copes with
    drift by itself; a large drift means the light or camera changed, so the
    caller should warn and suggest recalibrating (threshold: scan.drift_warn_delta_e).
    """
    if isinstance(scan, DecodeResult):
        centres = srgb_to_lab(np.array(list(scan.centres_rgb.values()), dtype=float))
    else:
        lab = srgb_to_lab(_check_readings(scan))
        labels = balanced_clusters(lab, _farthest_point_centres(lab, int(np.argmax(lab[:, 0]))))
        centres = _centres(lab, labels)
    calibrated = calibration.centres_lab()
    # One-to-one matching: each calibrated colour to the scan colour that explains it best.
    mapping = min_cost_assignment(_distances(calibrated, centres))
    delta = {name: round(float(np.linalg.norm(calibrated[k] - centres[mapping[k]])), 2)
             for k, name in enumerate(calibration.names)}
    return ColourDrift(delta, max(delta, key=delta.get))
