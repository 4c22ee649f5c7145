"""Sticker regions: where each sticker is in each scan view, and its robust colour.

A region is a quadrilateral of 4 image points (x, y) around one sticker.  The
regions of all views live in one YAML file (config `scan.regions_file`,
normally calibration/regions.yaml) written by `cube-robot calibrate colours`;
code never hard-codes them.  Region k of a view is the sticker named by the
k-th entry of that view's `facelets` list in config.yaml's scan sequence.

Images are OpenCV BGR uint8 arrays throughout the image path.
"""

from __future__ import annotations

import datetime as _dt
import functools
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import yaml

from ..config import defaults as config_defaults, read_yaml_file
from ..config_types import SamplingConfig
from .colour import srgb_to_lab

REGIONS_VERSION = 1


class RegionsError(ValueError):
    """A regions file that is missing, malformed or does not fit the scan sequence."""


@dataclass
class Regions:
    """Quads per view: views[name] is an (n, 4, 2) float array."""

    views: dict
    image_size: tuple  # (width, height) the quads refer to
    source: str = "unknown"  # detected / clicked / rendered / fixture
    created: str = ""

    def quads(self, view: str) -> np.ndarray:
        if view not in self.views:
            raise RegionsError(f"no regions for scan view {view!r} (have: {', '.join(self.views) or 'none'})")
        return self.views[view]

    def check(self, sequence) -> None:
        """Every view of the scan sequence has exactly one region per listed facelet."""
        for view in sequence.views:
            quads = self.quads(view.name)
            if len(quads) != len(view.facelets):
                raise RegionsError(
                    f"view {view.name!r} has {len(quads)} regions but the scan sequence lists "
                    f"{len(view.facelets)} facelets ({' '.join(view.facelets)}); re-run "
                    "'cube-robot calibrate colours' after changing the scan sequence"
                )

    def check_frame(self, view: str, image: np.ndarray) -> None:
        h, w = image.shape[:2]
        if (w, h) != tuple(self.image_size):
            raise RegionsError(
                f"view {view!r}: regions were set for {self.image_size[0]}x{self.image_size[1]} frames "
                f"but the frame is {w}x{h}; set camera.width/height back or re-run 'cube-robot calibrate colours'"
            )

    def to_dict(self) -> dict:
        return {
            "version": REGIONS_VERSION,
            "created": self.created or _now(),
            "source": self.source,
            "image_size": [int(v) for v in self.image_size],
            "views": {
                name: [[[round(float(x), 1), round(float(y), 1)] for x, y in quad] for quad in quads]
                for name, quads in self.views.items()
            },
        }

    def save(self, path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        header = (
            "# Sticker regions per scan view, written by 'cube-robot calibrate colours'.\n"
            "# views.<name>[k] is the quad (4 x,y image points) of the k-th facelet listed\n"
            "# for that view in config.yaml's scan.views.\n"
        )
        path.write_text(header + yaml.safe_dump(self.to_dict(), default_flow_style=None, sort_keys=False))
        return path

    @classmethod
    def from_dict(cls, data: dict, where: str = "regions") -> "Regions":
        if not isinstance(data, dict) or "views" not in data or "image_size" not in data:
            raise RegionsError(f"{where}: expected keys 'image_size' and 'views'")
        if data.get("version", REGIONS_VERSION) != REGIONS_VERSION:
            raise RegionsError(f"{where}: version {data.get('version')} is not {REGIONS_VERSION}")
        views = {}
        for name, quads in (data["views"] or {}).items():
            array = np.asarray(quads, dtype=np.float64)
            if array.ndim != 3 or array.shape[1:] != (4, 2):
                raise RegionsError(f"{where}: view {name!r}: each region must be 4 [x, y] points")
            views[str(name)] = array
        size = tuple(int(v) for v in data["image_size"])
        return cls(views, size, str(data.get("source", "unknown")), str(data.get("created", "")))

    @classmethod
    def load(cls, path) -> "Regions":
        path = Path(path)
        data = read_yaml_file(path, RegionsError, "regions file", "run 'cube-robot calibrate colours' to create it")
        return cls.from_dict(data, str(path))


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


# ---------------------------------------------------------------------------
# Robust colour of one sticker.


SamplingSettings = SamplingConfig  # config's scan.sampling section is the one definition


@functools.lru_cache(maxsize=1)
def default_sampling() -> SamplingSettings:
    """scan.sampling's defaults (config_schema.py)."""
    return config_defaults().scan.sampling


@dataclass(frozen=True)
class StickerSample:
    """Robust colour of one sticker region."""

    lab: tuple  # CIELAB (L 0..100), trimmed median of the kept pixels
    rgb: tuple  # sRGB 0..255 of the same pixels (per-channel median)
    spread: float  # median Delta-E of the kept pixels from `lab` (how uniform the sticker looked)
    kept: int  # pixels used
    total: int  # pixels in the inner region
    glare: int = 0  # pixels rejected as glare
    shadow: int = 0  # pixels rejected as shadow

    def to_dict(self) -> dict:
        return {
            "lab": [round(v, 2) for v in self.lab],
            "rgb": [round(v, 1) for v in self.rgb],
            "spread": round(self.spread, 2),
            "kept": self.kept, "total": self.total, "glare": self.glare, "shadow": self.shadow,
        }


def inner_quad(quad: np.ndarray, fraction: float) -> np.ndarray:
    quad = np.asarray(quad, dtype=np.float64)
    centre = quad.mean(axis=0)
    return centre + fraction * (quad - centre)


def region_pixels(image: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """(n, 3) BGR pixels inside a quad (clipped to the image)."""
    h, w = image.shape[:2]
    x0, y0 = np.floor(quad.min(axis=0)).astype(int)
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 1
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return np.empty((0, 3), np.uint8)
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    shift = 4  # sub-pixel polygon corners
    points = np.round((quad - [x0, y0]) * (1 << shift)).astype(np.int32)
    cv2.fillConvexPoly(mask, points, 1, lineType=cv2.LINE_8, shift=shift)
    return image[y0:y1, x0:x1][mask.astype(bool)]


def sample_sticker(image: np.ndarray, quad, settings: SamplingSettings | None = None) -> StickerSample:
    """Robust colour of the inner part of a sticker region.

    The sticker's own colour is the densest spot of its pixels in Lab (a glare
    spot or a shadow edge smears over many colours, the lit sticker does not),
    so a highlight covering half the region does not pull the reference.
    Pixels clearly lighter than that (glare, incl. clipped near-white ones) or
    darker (shadow) are rejected; of the rest the share farthest from their
    median is trimmed and the median of what is left is the sticker's colour.
    If rejection would leave too few pixels, all are used (the spread then
    shows the region was not uniform).
    """
    settings = settings or default_sampling()
    pixels = region_pixels(image, inner_quad(quad, settings.inner_fraction))
    total = len(pixels)
    if total == 0:
        raise RegionsError(f"region {np.round(quad, 1).tolist()} lies outside the {image.shape[1]}x{image.shape[0]} frame")
    rgb = pixels[:, ::-1].astype(np.float64)
    lab = srgb_to_lab(rgb)
    # Near-white clipped pixels are glare unless the sticker itself is (a bright white sticker).
    saturated = rgb.min(axis=1) >= 245
    unsaturated = ~saturated if (~saturated).sum() >= 0.2 * total else np.ones(total, bool)
    reference, noise = _densest_colour(lab[unsaturated])
    lightness = lab[:, 0]
    glare = (lightness > reference[0] + settings.glare_delta_l) | (saturated & ~unsaturated.all())
    shadow = lightness < reference[0] - settings.shadow_delta_l
    # Also drop the faint tails of glare and shadow: pixels far from the sticker's own colour.
    near = np.linalg.norm(lab - reference, axis=1) <= max(6.0, 3.0 * noise)
    keep = ~(glare | shadow) & near
    if keep.sum() < max(5, 0.2 * total):
        keep = np.ones(total, bool)
    kept_lab, kept_rgb = lab[keep], rgb[keep]
    median = np.median(kept_lab, axis=0)
    distance = np.linalg.norm(kept_lab - median, axis=1)
    n_keep = max(1, int(round(len(kept_lab) * (1.0 - settings.trim_fraction))))
    closest = np.argsort(distance)[:n_keep]
    final_lab = np.median(kept_lab[closest], axis=0)
    final_rgb = np.median(kept_rgb[closest], axis=0)
    spread = float(np.median(np.linalg.norm(kept_lab - final_lab, axis=1)))
    return StickerSample(
        tuple(float(v) for v in final_lab), tuple(float(v) for v in final_rgb), spread,
        int(keep.sum()), total, int((glare & ~keep).sum()), int((shadow & ~keep).sum()),
    )


_BIN = 6.0  # Lab units per histogram bin when looking for the densest colour


def _densest_colour(lab: np.ndarray) -> tuple[np.ndarray, float]:
    """(median of the pixels around the most populated Lab histogram bin, their median distance to it)."""
    bins = np.floor(lab / _BIN).astype(np.int64)
    low = bins.min(axis=0)
    span = bins.max(axis=0) - low + 1
    keys = np.ravel_multi_index((bins - low).T, span)  # one integer per bin: fast counting
    mode = np.unravel_index(int(np.argmax(np.bincount(keys))), span) + low
    near = np.all(np.abs(bins - mode) <= 1, axis=1)
    centre = np.median(lab[near], axis=0)
    return centre, float(np.median(np.linalg.norm(lab[near] - centre, axis=1)))


# ---------------------------------------------------------------------------
# Finding stickers in an image (calibration's "detect regions" step).


def detect_sticker_quads(image: np.ndarray) -> list[np.ndarray]:
    """Candidate sticker quads: uniform, roughly square, bright-enough patches.

    Stickers are uniform patches separated by the dark cube body, so the areas
    enclosed by edges are candidates.  Several edge thresholds are tried and
    near-duplicates merged.  Returns quads (4, 2) as minimum-area rectangles.
    """
    h, w = image.shape[:2]
    blur = cv2.GaussianBlur(image, (5, 5), 0)
    value = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)[..., 2]
    found: list[tuple[np.ndarray, np.ndarray, float]] = []
    for low, high, dilate in ((20, 60, 2), (30, 90, 2), (15, 45, 3), (40, 120, 1)):
        edges = cv2.Canny(blur, low, high)
        edges = cv2.dilate(edges, np.ones((3, 3), np.uint8), iterations=dilate)
        count, labels, stats, centres = cv2.connectedComponentsWithStats((edges == 0).astype(np.uint8), connectivity=4)
        for i in range(1, count):
            x, y, bw, bh, area = stats[i]
            if area < 0.002 * h * w or area > 0.2 * h * w or not 0.5 < bw / bh < 2.0:
                continue
            if x == 0 or y == 0 or x + bw >= w or y + bh >= h:
                continue
            mask = (labels[y:y + bh, x:x + bw] == i).astype(np.uint8)
            contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            contour = max(contours, key=cv2.contourArea) + [x, y]
            hull_area = cv2.contourArea(cv2.convexHull(contour))
            if hull_area <= 0 or area / hull_area < 0.88:
                continue
            if np.median(value[y:y + bh, x:x + bw][mask.astype(bool)]) < 40:  # the black body itself
                continue
            rect = cv2.minAreaRect(contour)
            # Undo the dilation of the edges so the quad hugs the sticker.
            (cx, cy), (rw, rh), angle = rect
            quad = cv2.boxPoints(((cx, cy), (rw + 2 * dilate, rh + 2 * dilate), angle))
            found.append((np.array([cx, cy]), quad, float(area)))
    merged: list[tuple[np.ndarray, np.ndarray, float]] = []
    for centre, quad, area in sorted(found, key=lambda f: -f[2]):
        if all(np.linalg.norm(centre - c) > 0.4 * np.sqrt(a) for c, _, a in merged):
            merged.append((centre, quad, area))
    return [_order_corners(quad) for _, quad, _ in merged]


def _order_corners(quad) -> np.ndarray:
    """Corners clockwise on screen starting top-left."""
    quad = np.asarray(quad, dtype=np.float64)
    centre = quad.mean(axis=0)
    angles = np.arctan2(quad[:, 1] - centre[1], quad[:, 0] - centre[0])
    ordered = quad[np.argsort(angles)]  # from -pi: top-left first on screen (y down)
    start = int(np.argmin(ordered.sum(axis=1)))
    return np.roll(ordered, -start, axis=0)


def square_quad(centre, half_size: float) -> np.ndarray:
    cx, cy = centre
    return np.array([[cx - half_size, cy - half_size], [cx + half_size, cy - half_size],
                     [cx + half_size, cy + half_size], [cx - half_size, cy + half_size]], dtype=np.float64)


def quads_from_centres(centres) -> np.ndarray:
    """Square regions around clicked sticker centres, sized from their spacing."""
    centres = np.asarray(centres, dtype=np.float64).reshape(-1, 2)
    if len(centres) < 2:
        raise RegionsError("need at least 2 sticker centres to size the regions")
    d = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    np.fill_diagonal(d, np.inf)
    half = 0.35 * float(np.median(d.min(axis=1)))
    return np.array([square_quad(c, half) for c in centres])


_BODY_DARK = 60  # HSV value below which a pixel is the cube's dark body (the black body: < 40)


def bordered_sides(image: np.ndarray, quad) -> tuple[bool, bool, bool, bool]:
    """(left, right, top, bottom): whether the dark body runs along that side of the quad's box.  A sticker
    is framed by the body on every side; a patch cut off by an arm's shaft or jaw in front of it has the
    arm's lit surface there instead, and that side is not the sticker's edge."""
    value = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)[..., 2]
    h, w = value.shape
    x0, y0 = np.floor(np.min(quad, axis=0)).astype(int)
    x1, y1 = np.ceil(np.max(quad, axis=0)).astype(int)
    inset_x, inset_y = max(1, (x1 - x0) // 4), max(1, (y1 - y0) // 4)  # the side's middle half, not corners
    rows, cols = slice(max(y0 + inset_y, 0), min(y1 - inset_y, h)), slice(max(x0 + inset_x, 0), min(x1 - inset_x, w))
    # Each line across the side: its darkest pixel from just inside the box edge to a few pixels beyond.
    windows = (value[rows, max(x0 - 5, 0):max(x0 + 3, 0)], value[rows, min(x1 - 3, w):min(x1 + 5, w)],
               value[max(y0 - 5, 0):max(y0 + 3, 0), cols].T, value[min(y1 - 3, h):min(y1 + 5, h), cols].T)
    return tuple(bool(win.size) and float(np.median(win.min(axis=1))) < _BODY_DARK  # type: ignore[return-value]
                 for win in windows)


def refine_with_detections(predicted: np.ndarray, detected: list, max_shift: float = 0.5,
                           image: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Replace each predicted quad by the detected one nearest its centre.

    A detection counts if its centre is within `max_shift` sticker sizes of the
    prediction and its size is similar.  Given the image, a detection that is not
    framed by the dark body on every side (an arm in front cuts it off) only moves
    the predicted quad by its framed sides, and counts only if each axis has one.
    Returns (quads, number replaced or moved).
    """
    out = np.array(predicted, dtype=np.float64, copy=True)
    used: set[int] = set()
    replaced = 0
    det_centres = [q.mean(axis=0) for q in detected]
    det_sizes = [np.sqrt(abs(cv2.contourArea(q.astype(np.float32)))) for q in detected]
    for k, quad in enumerate(predicted):
        centre = quad.mean(axis=0)
        size = np.sqrt(abs(cv2.contourArea(np.asarray(quad, np.float32))))
        best, best_d = None, max_shift * size
        for j, (c, s) in enumerate(zip(det_centres, det_sizes)):
            if j in used or not 0.5 < s / max(size, 1e-6) < 2.0:
                continue
            dist = np.linalg.norm(c - centre)
            if dist < best_d:
                best, best_d = j, dist
        if best is None:
            continue
        used.add(best)
        sides = bordered_sides(image, detected[best]) if image is not None else (True,) * 4
        if all(sides):
            out[k] = detected[best]
            replaced += 1
            continue
        moved = _shift_by_framed_sides(np.asarray(quad, np.float64), np.asarray(detected[best], np.float64), sides)
        if moved is not None:
            out[k] = moved
            replaced += 1
    return out, replaced


def _shift_by_framed_sides(quad: np.ndarray, seen: np.ndarray, sides) -> np.ndarray | None:
    """The predicted quad moved so its box's framed sides meet the seen patch's; None when an axis has
    no framed side (where the sticker is along it is not known)."""
    low, high = quad.min(axis=0), quad.max(axis=0)
    seen_low, seen_high = seen.min(axis=0), seen.max(axis=0)
    shift = np.zeros(2)
    for axis, (first, second) in enumerate((sides[0:2], sides[2:4])):
        moves = ([seen_low[axis] - low[axis]] if first else []) + ([seen_high[axis] - high[axis]] if second else [])
        if not moves:
            return None
        shift[axis] = float(np.mean(moves))
    return quad + shift


# ---------------------------------------------------------------------------
# Drawing.


def draw_regions(image: np.ndarray, quads, labels=(), colours=(), inner_fraction: float | None = None) -> np.ndarray:
    """A copy of the image with the regions outlined, labelled and (optionally) filled with a colour swatch.

    colours: BGR tuples (e.g. the decoded colour of each sticker) drawn as a swatch in the centre.
    """
    out = image.copy()
    scale = max(1.0, image.shape[1] / 640)
    for k, quad in enumerate(quads):
        quad = np.asarray(quad, dtype=np.float64)
        pts = np.round(quad).astype(np.int32)
        cv2.polylines(out, [pts], True, (255, 255, 255), max(1, int(2 * scale)), cv2.LINE_AA)
        cv2.polylines(out, [pts], True, (0, 0, 0), 1, cv2.LINE_AA)
        if inner_fraction is not None:
            inner = np.round(inner_quad(quad, inner_fraction)).astype(np.int32)
            cv2.polylines(out, [inner], True, (200, 200, 200), 1, cv2.LINE_AA)
        centre = quad.mean(axis=0)
        if k < len(colours) and colours[k] is not None:
            swatch = np.round(inner_quad(quad, 0.3)).astype(np.int32)
            cv2.fillConvexPoly(out, swatch, tuple(int(c) for c in colours[k]), cv2.LINE_AA)
            cv2.polylines(out, [swatch], True, (0, 0, 0), 1, cv2.LINE_AA)
        if k < len(labels):
            org = (int(centre[0] - 10 * scale), int(centre[1] - 0.28 * np.ptp(quad[:, 1])))
            cv2.putText(out, str(labels[k]), org, cv2.FONT_HERSHEY_SIMPLEX, 0.4 * scale, (0, 0, 0), 3, cv2.LINE_AA)
            cv2.putText(out, str(labels[k]), org, cv2.FONT_HERSHEY_SIMPLEX, 0.4 * scale, (255, 255, 255), 1, cv2.LINE_AA)
    return out
