"""Colour names for display, and colour drift between a scan and the calibration.

Decoding never uses names: they only label the decoded colours (the
calibration's names when there is one, else a rough hue name).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .clusters import balanced_clusters, class_centres, distances, farthest_point_centres, min_cost_assignment
from .colour import Calibration, srgb_to_lab
from .readings import check_readings

def colour_names(centres_lab: np.ndarray, calibration) -> list[str]:
    """A name per class: the calibration's (nearest centres, one to one), else a rough hue name; six
    classes whose rough names repeat (two greens under a tinted light) get the standard six, one each."""
    if calibration is not None:
        mapping = min_cost_assignment(distances(centres_lab, calibration.centres_lab()))
        return [calibration.names[k] for k in mapping]
    rough = [rough_colour_name(c) for c in centres_lab]
    if len(set(rough)) < len(rough):
        standard = standard_colour_names(dict(enumerate(centres_lab)))
        if standard:
            return [standard[k] for k in range(len(rough))]
    return rough


# The usual sticker colours (sRGB) a measured colour is named after.
STANDARD_COLOURS = {"white": (245, 245, 245), "yellow": (250, 215, 0), "red": (200, 20, 30),
                    "orange": (255, 120, 0), "green": (20, 160, 60), "blue": (20, 60, 200)}


def standard_colour_names(labs: dict) -> dict:
    """Face -> colour name for six measured Lab centres: the one-to-one assignment of the standard
    names with the smallest total distance (hue and chroma count more than lightness, which the
    light changes most), after removing the light's colour cast (the least saturated colour is white).
    Fewer or more than six colours: {} (the caller falls back to rough names)."""
    faces = list(labs)
    if len(faces) != len(STANDARD_COLOURS):
        return {}
    measured = np.array([labs[f] for f in faces], dtype=float)
    white = measured[np.argmin(np.hypot(measured[:, 1], measured[:, 2]) - 0.2 * measured[:, 0])]
    measured[:, 1:] -= white[1:]  # a colour cast moves every colour's a/b alike
    names = list(STANDARD_COLOURS)
    reference = np.array([srgb_to_lab(np.array(STANDARD_COLOURS[n], dtype=float)) for n in names]).reshape(-1, 3)
    weights = np.array([0.35, 1.0, 1.0])
    cost = np.linalg.norm((measured[:, None, :] - reference[None, :, :]) * weights, axis=2)
    best = min(itertools.permutations(range(len(names))),
               key=lambda order: sum(cost[i, order[i]] for i in range(len(faces))))
    return {face: names[best[i]] for i, face in enumerate(faces)}


def rough_colour_name(lab) -> str:
    """'white', 'red', 'blue'... for display only (decoding never uses names)."""
    lightness, a, b = (float(v) for v in lab)
    chroma = np.hypot(a, b)
    if chroma < 12 + 0.1 * (100 - lightness):
        return "white" if lightness > 60 else "grey" if lightness > 25 else "black"
    hue = np.degrees(np.arctan2(b, a)) % 360
    # Lab hue bends blue towards purple: sRGB blue (0,0,255) is at 306 degrees, sticker blues at 285-300,
    # purples (128,0,128), (100,0,150) at 316-328.
    for limit, name in ((20, "pink"), (50, "red"), (75, "orange"), (105, "yellow"), (190, "green"),
                        (310, "blue"), (340, "purple"), (360, "pink")):
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
    if hasattr(scan, "centres_rgb"):  # a DecodeResult
        scan_centres = srgb_to_lab(np.array(list(scan.centres_rgb.values()), dtype=float))
    else:
        lab = srgb_to_lab(check_readings(scan))
        labels = balanced_clusters(lab, farthest_point_centres(lab, int(np.argmax(lab[:, 0]))))
        scan_centres = class_centres(lab, labels)
    calibrated = calibration.centres_lab()
    # One-to-one matching: each calibrated colour to the scan colour that explains it best.
    mapping = min_cost_assignment(distances(calibrated, scan_centres))
    delta = {name: round(float(np.linalg.norm(calibrated[k] - scan_centres[mapping[k]])), 2)
             for k, name in enumerate(calibration.names)}
    return ColourDrift(delta, max(delta, key=lambda name: delta[name]))
