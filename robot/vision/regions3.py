"""The 3x3x3's sticker regions and colours, found from a solved cube (`cube-robot calibrate colours
--puzzle 3x3x3`, robot/calibrate/colours3.py) and read by the 3x3x3 run.

Per scan3 view (robot/scan_sequence3.py) the regions are first guessed from one camera pose fitted to
the stickers detected in every view (pose_fit.py with camera_geometry3's nine stickers a face), then
snapped to the detected stickers as the 2x2x2's are (regions.py: detect_sticker_quads,
refine_with_detections, which moves a sticker an arm cuts off only by its framed sides).  A listed
sticker no detection placed is refused by name: a view lists only the stickers the arms leave visible.

The colours are learnt from the same solved cube: every sticker of a face must read as that face's
centre, and each colour is named after its centre (the face it is on at the end of the scan, as the
decoder names a scan's faces).

Both files are the 3x3x3's own (config scan3.regions_file, scan3.colours_file), written in the
formats of regions.py and colour.py with `puzzle: 3x3x3` and `written_by` added; an existing file
without those is someone else's and is never overwritten.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import yaml

from ..config import project_path, read_yaml_file
from ..config_types import Config
from ..scan_sequence3 import facelet_index, facelet_name
from .camera_geometry import Pose
from .camera_geometry3 import facelet_quads3, scan_regions3
from .colour import Calibration, CalibrationError, ColourStats, srgb_to_lab
from .regions import (Regions, RegionsError, bordered_sides, detect_sticker_quads, draw_regions,
                      refine_with_detections, sample_sticker)

PUZZLE = "3x3x3"
WRITER = "cube-robot calibrate colours --puzzle 3x3x3"
# A sticker further than this from its face's centre is not that face's colour (the 2x2x2's calibration
# draws the same line, in Delta-E around a face's median).  Measured as the decoder measures colours
# (decode._features: lightness down-weighted, chroma rescaled by it), so a shaded sticker of the face
# (an arm's shadow) is still its colour; it must also be nearer its own centre than any other.
MAX_FACE_DISTANCE = 25.0


class Calibration3Error(ValueError):
    """The 3x3x3 calibration refused: names the view and sticker (or the file) and what to do."""


# ---------------------------------------------------------------------------
# Finding the regions.


@dataclass
class ViewRegions:
    """What the calibration found in one view."""

    name: str
    facelets: tuple
    quads: np.ndarray  # (n, 4, 2), one per listed facelet
    found: int  # listed stickers a detection placed
    missing: tuple  # listed stickers no detection placed (their quads are the pose's guess)
    moved_px: float  # the largest move of a region from the config's camera pose


@dataclass
class Found3:
    views: list = field(default_factory=list)  # ViewRegions, in scan order
    image_size: tuple = (640, 480)
    fitted: str = ""  # the fitted camera pose, in words

    def regions(self, source: str = "detected") -> Regions:
        return Regions({v.name: v.quads for v in self.views}, self.image_size, source=source)

    def refusal(self) -> Calibration3Error | None:
        """A refusal naming the first view with a sticker no detection placed, or None."""
        for view in self.views:
            if view.missing:
                return Calibration3Error(
                    f"view {view.name!r}: no sticker found for {' '.join(view.missing)} "
                    f"({view.found} of {len(view.facelets)} found): an arm or the light hides it, or the camera "
                    "is far from camera.pose. Look at that view's picture; move the light or the camera, or "
                    "drop the sticker from that view's facelets in scan3.views if the arms hide it there")
        return None


def find_regions3(frames: dict, sequence, pose: Pose) -> Found3:
    """The regions of every view of a 3x3x3 scan of a solved cube: the camera pose fitted to the stickers
    detected in all views, each region then snapped to the detection under it."""
    from .pose_fit import fit_camera_pose

    first = frames[sequence.views[0].name]
    size = (int(first.shape[1]), int(first.shape[0]))
    pose = replace(pose, width=size[0], height=size[1])
    detected = {view.name: detect_sticker_quads(frames[view.name]) for view in sequence.views}
    fitted, offset = fit_camera_pose(detected, sequence, pose, scan_regions=scan_regions3,
                                     facelet_quads=facelet_quads3)
    guess = scan_regions3(fitted, sequence, offset)
    configured = scan_regions3(pose, sequence)
    found = Found3(image_size=size, fitted=(
        f"elevation {fitted.elevation_deg:g} deg, azimuth {fitted.azimuth_deg:g} deg, distance "
        f"{fitted.distance_mm:g} mm, shift ({offset[0]:+.1f}, {offset[1]:+.1f}) px"))
    for view in sequence.views:
        predicted = guess.quads(view.name)
        quads, _ = refine_with_detections(predicted, detected[view.name], image=frames[view.name])
        placed = np.any(np.abs(quads - predicted) > 1e-9, axis=(1, 2))
        for k, seen in _confirmed(predicted, detected[view.name]).items():
            if not placed[k]:  # a sticker-sized patch the body frames on one axis only: moved along that one
                quads[k] = _moved_along_framed(predicted[k], seen, bordered_sides(frames[view.name], seen))
                placed[k] = True
        for k in np.flatnonzero(~placed):  # no edge closed it (a thin dark rim at the cube's edge): by its colour
            centre = _by_colour(frames[view.name], predicted[k])
            if centre is not None:
                quads[k] = predicted[k] + (centre - predicted[k].mean(axis=0))
                placed[k] = True
        moved = np.linalg.norm(quads.mean(axis=1) - configured.quads(view.name).mean(axis=1), axis=1)
        found.views.append(ViewRegions(view.name, tuple(view.facelets), quads, int(placed.sum()),
                                       tuple(f for f, ok in zip(view.facelets, placed) if not ok),
                                       float(moved.max()) if len(moved) else 0.0))
    return found


# A detection of about a sticker's size (within CONFIRM_SIZE) whose centre is this close (sticker sizes) to
# a region the snap left (regions.bordered_sides: the dark body frames it on one axis only, as a whole
# sticker seen at a slant at the cube's edge, or one beside an arm's lit jaw) confirms the sticker is there:
# the region moves along the framed axis as the snap would, and stays where the fitted pose puts it along
# the other (where the patch ends there is not the sticker's edge).
CONFIRM_DISTANCE = 0.25
CONFIRM_SIZE = (0.8, 1.25)


def _moved_along_framed(quad: np.ndarray, seen: np.ndarray, sides) -> np.ndarray:
    low, high = quad.min(axis=0), quad.max(axis=0)
    seen_low, seen_high = seen.min(axis=0), seen.max(axis=0)
    shift = np.zeros(2)
    for axis, (first, second) in enumerate((sides[0:2], sides[2:4])):
        moves = ([seen_low[axis] - low[axis]] if first else []) + ([seen_high[axis] - high[axis]] if second else [])
        shift[axis] = float(np.mean(moves)) if moves else 0.0
    return quad + shift


def _confirmed(predicted: np.ndarray, detected: list) -> dict:
    """{region index: the detected quad of about its size nearest it}, for the regions with one."""
    import cv2

    out: dict[int, np.ndarray] = {}
    if not detected:
        return out
    centres = np.array([q.mean(axis=0) for q in detected])
    sizes = np.array([np.sqrt(abs(cv2.contourArea(np.asarray(q, np.float32)))) for q in detected])
    for k, quad in enumerate(predicted):
        size = np.sqrt(abs(cv2.contourArea(np.asarray(quad, np.float32))))
        distance = np.linalg.norm(centres - quad.mean(axis=0), axis=1)
        fits = (distance < CONFIRM_DISTANCE * size) & (sizes > CONFIRM_SIZE[0] * size) & (sizes < CONFIRM_SIZE[1] * size)
        if fits.any():
            out[k] = np.asarray(detected[int(np.flatnonzero(fits)[np.argmin(distance[fits])])], dtype=np.float64)
    return out


# A sticker found by its colour: the pixels within BY_COLOUR_DELTA_E of the colour at the region's centre,
# connected to it, not reaching the search window's edge, of about the region's size and convex.
BY_COLOUR_DELTA_E = 14.0
BY_COLOUR_SOLIDITY = 0.85


def _by_colour(image: np.ndarray, quad: np.ndarray) -> np.ndarray | None:
    """The centre of the uniform patch of the sticker's colour under a predicted region (None if there is none
    of about its size): the stickers of a face are one colour, so only the dark body separates them, and
    the arms and the background are grey."""
    import cv2

    from .regions import inner_quad, region_pixels

    size = float(np.sqrt(abs(cv2.contourArea(np.asarray(quad, np.float32)))))
    h, w = image.shape[:2]
    low = np.floor(quad.min(axis=0) - 0.5 * size).astype(int)
    high = np.ceil(quad.max(axis=0) + 0.5 * size).astype(int)
    x0, y0, x1, y1 = max(low[0], 0), max(low[1], 0), min(high[0], w), min(high[1], h)
    centre = np.round(quad.mean(axis=0)).astype(int) - [x0, y0]
    if x1 - x0 < 3 or y1 - y0 < 3 or not (0 <= centre[0] < x1 - x0 and 0 <= centre[1] < y1 - y0):
        return None
    seen = region_pixels(image, inner_quad(quad, 0.3))
    if len(seen) == 0:
        return None
    colour = np.median(srgb_to_lab(seen[:, ::-1].astype(float)), axis=0)
    window = srgb_to_lab(image[y0:y1, x0:x1, ::-1].astype(float))
    near = (np.linalg.norm(window - colour, axis=2) < BY_COLOUR_DELTA_E).astype(np.uint8)
    count, labels, stats, centroids = cv2.connectedComponentsWithStats(near, connectivity=4)
    label = labels[centre[1], centre[0]]
    if label == 0:
        return None
    x, y, bw, bh, area = stats[label]
    if x == 0 or y == 0 or x + bw >= x1 - x0 or y + bh >= y1 - y0:  # it runs on past the window
        return None
    mask = (labels == label).astype(np.uint8)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    hull = cv2.contourArea(cv2.convexHull(max(contours, key=cv2.contourArea)))
    if not CONFIRM_SIZE[0] < np.sqrt(area) / size < CONFIRM_SIZE[1] or area < BY_COLOUR_SOLIDITY * hull:
        return None
    return np.asarray(centroids[label], dtype=np.float64) + [x0, y0]


def pictures3(frames: dict, found: Found3, folder, inner_fraction: float) -> list[Path]:
    """Each view's picture with its regions drawn (view name, found count) and one overview of all views
    at half size: the paths written."""
    import cv2

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written, small = [], []
    for view in found.views:
        image = draw_regions(frames[view.name], view.quads, view.facelets, inner_fraction=inner_fraction)
        for name in view.missing:  # a sticker not found: its guessed place crossed out in red
            quad = np.round(view.quads[view.facelets.index(name)]).astype(np.int32)
            cv2.line(image, tuple(map(int, quad[0])), tuple(map(int, quad[2])), (0, 0, 255), 2)
            cv2.line(image, tuple(map(int, quad[1])), tuple(map(int, quad[3])), (0, 0, 255), 2)
        text = f"{view.name}: {view.found} of {len(view.facelets)} stickers found"
        (width, height), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.6, 1)
        cv2.rectangle(image, (4, 4), (16 + width, 16 + height), (0, 0, 0), -1)
        cv2.putText(image, text, (10, 10 + height), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 1, cv2.LINE_AA)
        path = folder / f"regions3-{view.name}.png"
        cv2.imwrite(str(path), image)
        written.append(path)
        small.append(cv2.resize(image, (image.shape[1] // 2, image.shape[0] // 2), interpolation=cv2.INTER_AREA))
    columns = 4
    blank = np.zeros_like(small[0])
    rows = [np.hstack(small[k:k + columns] + [blank] * (columns - len(small[k:k + columns])))
            for k in range(0, len(small), columns)]
    overview = folder / "regions3.png"
    cv2.imwrite(str(overview), np.vstack(rows))
    return [overview] + written


# ---------------------------------------------------------------------------
# Reading and learning the colours.


@dataclass(frozen=True)
class Reading3:
    view: str
    facelet: str  # the facelet's name in the robot frame at that view (a region of it)
    start: int  # which sticker of the cube as put in (cube3 layout) this is
    final: int  # where it is at the end of the scan
    rgb: np.ndarray


def read3(frames: dict, sequence, regions: Regions, sampling=None) -> list[Reading3]:
    """Every region of every view sampled (regions.sample_sticker)."""
    sources = sequence.sources_at_views()
    where_final = np.argsort(sequence.final_source())  # start sticker -> its place at the end
    out = []
    for view, source in zip(sequence.views, sources):
        quads = regions.quads(view.name)
        regions.check_frame(view.name, frames[view.name])
        for name, quad in zip(view.facelets, quads):
            start = int(source[facelet_index(name)])
            out.append(Reading3(view.name, name, start, int(where_final[start]),
                                np.asarray(sample_sticker(frames[view.name], quad, sampling).rgb)))
    return out


def readings54(readings: list[Reading3]) -> np.ndarray:
    """(54, 3) sRGB in the scan's final frame (decode3's input): the median of each sticker's readings."""
    by_final: dict[int, list] = {}
    for r in readings:
        by_final.setdefault(r.final, []).append(r.rgb)
    missing = [facelet_name(i) for i in range(54) if i not in by_final]
    if missing:
        raise Calibration3Error(f"the scan never read {' '.join(missing)} (named at its end)")
    return np.array([np.median(by_final[i], axis=0) for i in range(54)])


def learn_colours3(readings: list[Reading3], sequence, settings=None) -> tuple[Calibration, dict]:
    """(Calibration, face -> colour name) from a solved cube's readings: each start face's colour is its
    centre's; every sticker must read as its own face's centre, else Calibration3Error names the first
    (the view and sticker), and how many more do not.  Faces are named where they are at the scan's end.
    settings: the config's decode section (the colour distance's weights; default: its defaults)."""
    from .calibrate import standard_colour_names
    from .decode import _features, decode_settings
    from .naming import rough_colour_name

    settings = decode_settings(settings)

    def feature(rgb) -> np.ndarray:
        return _features(srgb_to_lab(np.asarray(rgb, dtype=float).reshape(1, 3)), settings)[0]
    seen_as = {id(r): feature(r.rgb) for r in readings}
    centre_rgb = {}
    for face in range(6):
        seen = [r.rgb for r in readings if r.start == 9 * face + 4]
        if not seen:
            raise Calibration3Error(f"no view reads the centre of the face that starts as {'URFDLB'[face]} "
                                    "(scan3.views must list every centre)")
        centre_rgb[face] = np.median(seen, axis=0)
    centre = {face: feature(rgb) for face, rgb in centre_rgb.items()}
    wrong = []
    for r in readings:
        face = r.start // 9
        distance = {f: float(np.linalg.norm(seen_as[id(r)] - centre[f])) for f in range(6)}
        nearest = min(distance, key=lambda f: distance[f])
        if distance[face] > MAX_FACE_DISTANCE or nearest != face:
            wrong.append((distance[face], r, nearest))
    if wrong:
        wrong.sort(key=lambda item: -item[0])
        delta, r, nearest = wrong[0]
        where = _centre_place(sequence, r.view)
        others = [f"{w[1].view} {w[1].facelet}" for w in wrong[1:]]
        more = ""
        if others:
            more = f"; {len(others)} more region(s) do not either ({', '.join(others[:8])}{', ...' * (len(others) > 8)})"
        raise Calibration3Error(
            f"view {r.view!r}, sticker {r.facelet}: not the colour of its face's centre "
            f"({where[r.start // 9]} in that view): {delta:.0f} away (colour distance), nearer the centre "
            f"{where[nearest]}{more}. Is the cube solved? (Or a region is off its sticker: look at the "
            "view's picture.)")
    final_face = {int(np.argsort(sequence.final_source())[9 * face + 4]) // 9: face for face in range(6)}
    by_face = {"URFDLB"[k]: final_face[k] for k in range(6)}  # final face letter -> start face
    stats = {letter: ColourStats.from_rgb([r.rgb for r in readings if r.start // 9 == face])
             for letter, face in by_face.items()}
    standard = standard_colour_names({letter: s.lab for letter, s in stats.items()})
    names: dict[str, str] = {}
    for letter in "URFDLB":
        name = str(standard.get(letter) or rough_colour_name(stats[letter].lab))
        while name in names.values():
            name += f"-{letter}"
        names[letter] = name
    return Calibration({names[letter]: stats[letter] for letter in "URFDLB"}), names


def _centre_place(sequence, view_name: str) -> dict:
    """Start face -> the name of its centre's place at that view (e.g. 'U5')."""
    index = [v.name for v in sequence.views].index(view_name)
    source = sequence.sources_at_views()[index]
    return {face: facelet_name(int(np.flatnonzero(source == 9 * face + 4)[0])) for face in range(6)}


# ---------------------------------------------------------------------------
# The files.


def _ours(path: Path) -> bool:
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and data.get("written_by") == WRITER and data.get("puzzle") == PUZZLE


def check_writable3(*paths) -> None:
    """Refuse (Calibration3Error naming it) a file at one of these paths that this command did not write."""
    for path in map(Path, paths):
        if (path.exists() or path.is_symlink()) and not _ours(path):
            raise Calibration3Error(
                f"{path} was not written by '{WRITER}' (it has no 'written_by: {WRITER}' and 'puzzle: {PUZZLE}'), "
                "so it is not overwritten: move it away, or save elsewhere (scan3.regions_file, "
                "scan3.colours_file, or --regions-out / --colours-out); nothing was written")


def _write(path: Path, header: str, data: dict) -> Path:
    """Written to a temporary file beside it, then swapped in: a failure leaves the old file as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(header + yaml.safe_dump(data, default_flow_style=None, sort_keys=False))
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def _stamp(data: dict, simulated: bool) -> dict:
    return {"puzzle": PUZZLE, "written_by": WRITER, "simulated": bool(simulated), **data}


def save_regions3(regions: Regions, path, simulated: bool) -> Path:
    header = ("# The 3x3x3's sticker regions per scan3 view, written by 'cube-robot calibrate colours --puzzle 3x3x3'.\n"
              "# views.<name>[k] is the quad (4 x,y image points) of the k-th facelet listed for that view in\n"
              "# config.yaml's scan3.views." + (" SIMULATED: found on the simulated camera's pictures." if simulated
                                                 else "") + "\n")
    return _write(Path(path), header, _stamp(regions.to_dict(), simulated))


def save_colours3(calibration: Calibration, names: dict, path, simulated: bool) -> Path:
    header = ("# The 3x3x3's sticker colours (cube-robot calibrate colours --puzzle 3x3x3).  Lab = CIELAB D65; "
              "see robot/vision/colour.py.\n# faces: the colour on each face at the end of the scan (its centre's)."
              + (" SIMULATED: the renderer's colours." if simulated else "") + "\n")
    return _write(Path(path), header, _stamp({**calibration.to_dict(), "faces": dict(names)}, simulated))


def _load_ours(path: Path, error_type, what: str) -> dict:
    data = read_yaml_file(path, error_type, what, f"run '{WRITER} --sim' to make it")
    if not isinstance(data, dict) or data.get("puzzle") != PUZZLE:
        raise error_type(f"{path}: not a 3x3x3 {what} (no 'puzzle: {PUZZLE}'); run '{WRITER}' to make one")
    return data


def load_regions3(path) -> Regions:
    path = Path(path)
    return Regions.from_dict(_load_ours(path, RegionsError, "regions file"), str(path))


def load_colours3(path) -> Calibration:
    path = Path(path)
    return Calibration.from_dict(_load_ours(path, CalibrationError, "colour calibration"), source=path)


# ---------------------------------------------------------------------------
# What the 3x3x3 run reads.


def run_regions3(config: Config, pose: Pose, sequence) -> Regions:
    """The 3x3x3 scan's regions: the calibrated ones (scan3.regions_file) when that file exists, else the
    first guess from the camera pose (camera_geometry3.scan_regions3).  A file that does not fit the scan
    sequence or the camera's frame size raises RegionsError naming it and the fix."""
    path = project_path(config.scan3.regions_file)
    if not path.exists():
        return scan_regions3(pose, sequence)
    regions = load_regions3(path)
    fix = f"run '{WRITER}' again (or move {path} away)"
    for view in sequence.views:
        if view.name not in regions.views or len(regions.views[view.name]) != len(view.facelets):
            raise RegionsError(f"{path}: its regions are not those of scan3.views' view {view.name!r} "
                               f"({len(view.facelets)} facelets): the scan sequence changed since; {fix}")
    if tuple(regions.image_size) != (pose.width, pose.height):
        raise RegionsError(f"{path}: regions for {regions.image_size[0]}x{regions.image_size[1]} frames, the camera's "
                           f"are {pose.width}x{pose.height} (camera.width/height); {fix}")
    return regions


def run_colours3(config: Config) -> Calibration | None:
    """The 3x3x3's learnt colours (scan3.colours_file) for decode3's prior, or None when there are none."""
    path = project_path(config.scan3.colours_file)
    return load_colours3(path) if path.exists() else None


def calibration_problem3(config: Config) -> str | None:
    """Why the 3x3x3 run cannot use the calibration files that exist (scan3.regions_file, scan3.colours_file),
    naming the file and the fix; None when they fit or there are none."""
    from ..scan_sequence3 import ScanSequence3
    from .camera_geometry3 import pose3

    try:
        run_regions3(config, pose3(config), ScanSequence3.from_config(config))
        run_colours3(config)
    except (RegionsError, CalibrationError) as exc:
        return str(exc)
    return None
