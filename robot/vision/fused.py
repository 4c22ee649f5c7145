"""Fused looks: several readings of a facelet, each with a trust, decoded as one cube.

A lamp fixed in the camera's frame washes out the same places of every frame of a view, so a
rescan from the same pose sees the same glare.  A second look from another pose (the scan
sequence's extra views, robot/scan_sequence.py `choose_second_look`) shows those stickers on a
face turned differently to the lamp.  Each facelet then has one or more `Look`s:

* trust 1: a clean look; below 1: washed out (`look_trust`: how far glare on the colour the best
  cube gives it explains the reading);
* the facelet's reading for the decoder is its most trusted look (of equals, the most colourful:
  glare pales a reading), so a sticker read cleanly once outweighs a washed-out reading of it (the
  washed look is set aside only because another look of it is clean);
* every other look must agree with that reading within the scan's sticker noise, or be explained
  by glare or shadow on it clearly better than by the colour it looks like (robot.vision.light, the
  rule for a sticker the decoder reads past; another pose shades a sticker too); else the looks
  disagree beyond what the light explains and the cube is refused (reason "disagree");
* the readings are decoded by the single-look decoder (robot.vision.decode) with every one of its
  refusal rules.  With one look per facelet `decode_fused` is `decode` itself: the same facelets,
  confidence and refusals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config_types import Config
from ..cube import FACELET_COUNT, apply_moves
from .colour import Calibration, srgb_to_lab
from .decode import DecodeResult, decode
from .light import EXPLAIN_NOISES, GLARE_MAX, censored_residual, explained_by_light, lamp_whites
from .readings import NAMES, VisionError, check_readings


@dataclass(frozen=True)
class Look:
    """One reading of a facelet: sRGB, how much it is trusted (1 clean, 0 washed out), the view."""

    rgb: tuple
    trust: float = 1.0
    view: str = ""


# Two looks agree when within this many times the scan's sticker noise (sRGB; light.py's limit for
# what the light explains, so a look the light would not excuse is not excused by agreement either).
AGREE_NOISES = EXPLAIN_NOISES
# A look is washed out when glare of at least this mix explains it better than its plain colour.
WASHED_MIX = 0.15
MIX_SLACK = 5.0  # sRGB: a smaller mix this close to the best fit is preferred
_MIXES = np.linspace(0.0, GLARE_MAX, 27)


def decode_fused(looks, calibration: Calibration | None = None, config: Config | None = None) -> DecodeResult:
    """Decode 24 facelets' looks (each a non-empty sequence of Look, facelet order U1..B4).

    Raises VisionError as decode() does, and with reason "disagree" when looks of one sticker disagree
    beyond what the light explains."""
    looks = [tuple(facelet) for facelet in looks]
    if len(looks) != FACELET_COUNT or any(not facelet for facelet in looks):
        raise VisionError(f"expected at least one look of each of the {FACELET_COUNT} facelets")
    readings = fused_readings(looks)
    if all(len(facelet) == 1 for facelet in looks):  # one look each: the single-look decoder, unchanged
        return decode(readings, calibration, config)
    try:
        result, error = decode(readings, calibration, config), None
    except VisionError as exc:
        result, error = exc.result, exc
    if result is not None:
        disagreeing = disagreements(looks, readings, result)
        if disagreeing:
            detail = "; ".join(disagreeing.values())
            raise VisionError(
                f"the looks of sticker(s) {', '.join(disagreeing)} disagree beyond what glare or shadow explains "
                f"({detail}): a sticker or region that changed between the views. Check those stickers and rescan.",
                stickers=list(disagreeing), result=result, reason="disagree")
    if error is not None:
        raise error
    return result


def fused_readings(looks) -> np.ndarray:
    """(24, 3): each facelet's reading for the decoder: its most trusted look, of those the most
    colourful (glare pales a reading; a look with no trust given is told apart by that alone)."""
    rows = []
    for facelet in looks:
        if len(facelet) == 1:
            rows.append(facelet[0].rgb)
            continue
        lab = srgb_to_lab(np.array([look.rgb for look in facelet], dtype=float))
        chroma = np.hypot(lab[:, 1], lab[:, 2])
        rows.append(facelet[max(range(len(facelet)), key=lambda k: (facelet[k].trust, chroma[k]))].rgb)
    return check_readings(rows)


def _colours(result: DecodeResult) -> tuple[np.ndarray, np.ndarray]:
    """(24, 3) the sRGB of the colour the cube gives each facelet, and (K, 3) the lamp's possible whites."""
    centres = {letter: np.asarray(rgb, dtype=float) for letter, rgb in result.centres_rgb.items()}
    own = np.array([centres[letter] for letter in result.facelets])
    return own, lamp_whites(np.array(list(centres.values())))


def disagreements(looks, readings: np.ndarray, result: DecodeResult) -> dict:
    """Facelet name -> why, for looks that neither agree with the facelet's fused reading nor are less
    trusted looks the light explains as it (glare or shadow on it)."""
    own, lamps = _colours(result)
    colours = [np.asarray(c, dtype=float) for c in result.centres_rgb.values()]
    read = np.array([s.name not in result.unread for s in result.stickers])
    spread = np.linalg.norm(readings - own, axis=1)
    noise_rgb = max(float(np.median(spread[read])), 3.0)
    found = {}
    for i, facelet in enumerate(looks):
        if len(facelet) < 2:
            continue
        for look in facelet:
            rgb = np.asarray(look.rgb, dtype=float)
            if censored_residual(rgb, readings[i]) <= AGREE_NOISES * noise_rgb:
                continue
            # light.py's rule for a sticker read past: glare or shadow on the facelet's reading explains
            # this look, and clearly better than the colour it looks like (another pose shades it too).
            others = [c for c in colours if censored_residual(c, own[i]) > 0]
            nearest = min(others, key=lambda c: float(censored_residual(rgb, c)))
            if explained_by_light(rgb, readings[i], nearest, lamps, noise_rgb):
                continue
            found[NAMES[i]] = (f"{NAMES[i]} reads {tuple(int(round(v)) for v in rgb)} in {look.view or 'one look'}, "
                               f"{tuple(int(round(v)) for v in readings[i])} in the most trusted")
            break
    return found


def glare_mix(reading, own_rgb, lamps) -> float:
    """The glare (share of the way to the lamp's white, 0..GLARE_MAX) that best explains `reading` as
    `own_rgb`; 0 when the plain colour explains it as well."""
    reading, own_rgb = np.asarray(reading, dtype=float), np.asarray(own_rgb, dtype=float)
    predicted = (1 - _MIXES)[None, :, None] * own_rgb + _MIXES[None, :, None] * np.asarray(lamps, dtype=float)[:, None, :]
    best = censored_residual(reading, predicted).min(axis=0)  # per mix, over the lamps
    # The least glare that explains it about as well as the best (a white sticker is not "washed").
    return float(_MIXES[int(np.flatnonzero(best <= best.min() + MIX_SLACK)[0])])


def look_trust(reading, own_rgb, lamps) -> float:
    """1 for a clean look, less for a washed-out one (1 - its glare mix, at most WASHED_MIX off 1 counts as clean)."""
    mix = glare_mix(reading, own_rgb, lamps)
    return 1.0 if mix < WASHED_MIX else round(1.0 - mix, 3)


def washed_out(readings, result: DecodeResult) -> dict:
    """Facelet index -> trust (< 1) of each reading the best cube `result` sees washed out by glare."""
    own, lamps = _colours(result)
    readings = np.asarray(readings, dtype=float)
    trusts = {i: look_trust(readings[i], own[i], lamps) for i in range(FACELET_COUNT)}
    return {i: t for i, t in trusts.items() if t < 1.0}


def washed_places(sequence, readings, result: DecodeResult) -> dict[int, str]:
    """Facelet index (the sequence's final frame) -> the place (robot frame at its view) of each reading
    the best cube `result` sees washed out: where a second look should not see it again."""
    places = {final: view.facelets[r] for v, view in enumerate(sequence.views)
              for r, final in enumerate(sequence.final_positions(v))}
    return {i: places[i] for i in washed_out(readings, result)}


def second_looks(sequence, views, view_rgb, result: DecodeResult) -> list[tuple]:
    """Each facelet's looks, in the frame after `views` (second looks taken after `sequence`).

    view_rgb: per view of the sequence and then of `views`, the reading of each region.  Each look's
    trust is judged against the colour the first decode's best cube (`result`, in the sequence's
    frame) gives it: a look washed out by glare is trusted less (look_trust)."""
    own, lamps = _colours(result)
    extended = sequence
    for view in views:
        extended = extended.with_view(view)
    tags = "".join(chr(0x100 + i) for i in range(FACELET_COUNT))
    moved = apply_moves(tags, [m for view in views for m in view.moves])
    origin = [ord(moved[p]) - 0x100 for p in range(FACELET_COUNT)]  # final position -> the first frame's facelet
    looks: list[list[Look]] = [[] for _ in range(FACELET_COUNT)]
    for k, view in enumerate(extended.views):
        for region, final in enumerate(extended.final_positions(k)):
            rgb = tuple(float(c) for c in view_rgb[k][region])
            looks[final].append(Look(rgb, look_trust(rgb, own[origin[final]], lamps), view.name))
    return [tuple(facelet) for facelet in looks]
