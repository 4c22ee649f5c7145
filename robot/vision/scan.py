"""The scan: present each view, grab frames, read the 24 stickers, decode.

The scan sequence is data (config.yaml `scan.views`, modelled in
robot/scan_sequence.py): each view lists the robot actions that present it
(same op format as plans: {"op": "grip", "pair": "RL"} / {"op": "turn",
"arms": {"R": 90, "L": -90}}) and the facelets the camera sees in that view's
regions, named in the robot frame *at that moment*.  The result is in the
robot frame at the END of the sequence (after `scan.finish` actions too): that
is the state the solver starts from.  Each view's facelets are carried forward
through the later actions with the cube model's facelet permutations
(robot.cube), never with a table of our own.

Pipeline (each step usable alone, so tests and the bench can enter anywhere):
    capture_views(camera, sequence, view_mover)  -> {view: frame}      (camera waits)
    read_stickers(frames, sequence, regions)    -> StickerReadings    (24 samples, final frame)
    read_frames(frames, sequence, regions, ...) -> ScanResult         (+ decode, drift, pictures)
    Scanner(config, camera, view_mover).scan()   -> ScanResult         (all of it, from the config)
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from .. import cube
from ..config import project_path
from ..plan import Grip, Turn
# The sequence model lives beside the cube model (config.py checks it at load); re-exported here.
from ..scan_sequence import ScanConfigError, ScanSequence, ScanView  # noqa: F401

if TYPE_CHECKING:  # decoding is imported when a scan is read
    from .decode import DecodeResult

# Watchers a scan calls as it goes, on its own thread (the run passes plain callables: vision knows no bus).
# on_frame(view, times): a view's frame was taken; times are camera.last_capture's (None: not known).
FrameWatcher = Callable[[str, Optional[dict]], None]
# on_decode(view, views, decoded, error): the first `views` views, up to `view`, were decoded together
# (decoded None: not sure, error says why).
DecodeWatcher = Callable[[str, int, "Optional[DecodeResult]", Optional[Exception]], None]


# ---------------------------------------------------------------------------
# Presenting views.


class NoMotion:
    """For recorded or rendered frames: the views are already in the images."""

    def move_to(self, view: ScanView) -> None:
        return None


def still_since(view_mover) -> float | None:
    """Since when the view mover knows no arm has moved (None: not known; robot/arms/view_mover.py ArmViewMover.still_since)."""
    return getattr(view_mover, "still_since", None)


def arm_actions(view_mover, view: ScanView) -> list:
    """The actions of the view `view_mover` just presented that cost arm time (all, unless it knows)."""
    charged = getattr(view_mover, "last_charged", None)
    return list(view.actions) if charged is None else list(charged)


class ManualViewMover:
    """No robot link: ask the person to do the view's actions by hand."""

    def __init__(self, ask=input, tell_maker=print):
        self.ask, self.tell_maker = ask, tell_maker

    def move_to(self, view: ScanView) -> None:
        turns = [a.notation() for a in view.actions if isinstance(a, Turn)]
        grips = [a.pair for a in view.actions if isinstance(a, Grip)]
        steps = []
        if grips:
            steps.append(f"grip with pair {grips[-1]}")
        if turns:
            steps.append("turn " + " then ".join(turns))
        todo = "; ".join(steps) if steps else "nothing to move"
        self.ask(f"View {view.name!r}: {todo}. Press Enter when the cube is in place. ")


# ---------------------------------------------------------------------------
# Reading.


@dataclass
class StickerReadings:
    """The 24 sticker samples in facelet order of the final robot frame."""

    samples: list  # StickerSample per facelet index
    source: list  # (view name, region index) per facelet index

    @property
    def rgb(self) -> np.ndarray:
        return np.array([s.rgb for s in self.samples])

    @property
    def lab(self) -> np.ndarray:
        return np.array([s.lab for s in self.samples])

    @property
    def spread(self) -> np.ndarray:
        return np.array([s.spread for s in self.samples])


def capture_views(camera, sequence: ScanSequence, view_mover=None, marks: list | None = None,
                  on_frame: FrameWatcher | None = None) -> dict:
    """Present each view (robot actions) and take its frame.

    marks: when a list, gets per view its motion's (start, end) and the frame's times
    (camera.last_capture, for cameras that pick frames by time) for the run's waterfall.
    on_frame: told each view's frame as soon as it is taken.
    """
    from .cameras import capture_view

    view_mover = view_mover or NoMotion()
    frames = {}
    for view in sequence.views:
        started = time.perf_counter()
        view_mover.move_to(view)
        moved = time.perf_counter()
        frames[view.name] = capture_view(camera, view.name, still_since(view_mover))
        record = getattr(camera, "last_capture", None)
        if marks is not None:
            marks.append({"view": view.name, "actions": arm_actions(view_mover, view), "motion": (started, moved),
                          "frame": record})
        if on_frame is not None:
            on_frame(view.name, record)
    return frames


def read_stickers(frames: dict, sequence: ScanSequence, regions, sampling=None) -> StickerReadings:
    """Sample every region of every view and put the samples in final-frame facelet order.

    A facelet seen in more than one view keeps the most uniform reading.
    """
    from .regions import default_sampling, sample_sticker

    sampling = sampling or default_sampling()
    regions.check(sequence)
    best: dict[int, tuple] = {}
    for v, view in enumerate(sequence.views):
        if view.name not in frames:
            raise ScanConfigError(f"no frame for scan view {view.name!r}")
        frame = frames[view.name]
        regions.check_frame(view.name, frame)
        quads = regions.quads(view.name)
        for r, final in enumerate(sequence.final_positions(v)):
            sample = sample_sticker(frame, quads[r], sampling)
            if final not in best or sample.spread < best[final][0].spread:
                best[final] = (sample, (view.name, r))
    return StickerReadings(
        [best[i][0] for i in range(cube.FACELET_COUNT)], [best[i][1] for i in range(cube.FACELET_COUNT)]
    )


# ---------------------------------------------------------------------------
# The whole scan.


@dataclass
class ScanResult:
    readings: StickerReadings
    frames: dict
    decoded: DecodeResult | None  # None when decoding failed
    error: Exception | None = None  # the VisionError when decoding failed
    warnings: list = field(default_factory=list)
    read_ms: float = 0.0  # frames -> facelets, excluding camera waits
    images: list = field(default_factory=list)  # saved picture paths
    sequence: ScanSequence | None = None  # the views taken, when an adaptive scan stopped early (else all)
    picture_error: str | None = None  # the pictures could not be written (robot/vision/adaptive.py)

    @property
    def facelets(self) -> str:
        if self.decoded is None:
            assert self.error is not None, "a scan without a decoded cube keeps its error"
            raise self.error
        return self.decoded.facelets


def drift_warnings(readings: StickerReadings, decoded, calibration, threshold: float) -> list[str]:
    """Warn when this scan's colours sit far from the calibration (robot.vision.decode.colour_drift).

    The decoder re-estimates centres from each scan, so drift does not break a
    scan by itself; but a large drift means the light or camera changed, and
    the margin between colours shrinks.
    """
    if calibration is None:
        return []
    from .decode import VisionError, colour_drift

    try:
        drift = colour_drift(decoded if decoded is not None else readings.rgb, calibration)
    except VisionError:
        return []
    if drift.max_delta_e <= threshold:
        return []
    return [
        f"sticker colours have drifted from the calibration of {calibration.created or 'unknown date'}: "
        f"{drift.worst} moved {drift.max_delta_e:.1f} Delta-E (warning above {threshold:g}). The light or "
        "camera settings changed: re-run 'cube-robot calibrate colours'."
    ]


class Scanner:
    """Everything a scan needs, from the loaded config.

        scanner = Scanner(config, camera=open_camera(config), view_mover=robot_view_mover)
        result = scanner.scan()          # ScanResult; result.facelets raises the VisionError if refused

    view_mover: an object with move_to(view) that makes the robot do the view's
    actions (default: NoMotion, for file cameras).  calibration: a
    Calibration, None, or "auto" (load scan.colours_file if it exists).
    on_frame, on_decode: watchers told each frame and each decode as the scan goes (FrameWatcher,
    DecodeWatcher; robot/vision/adaptive.py decodes after each view).
    """

    def __init__(self, config, camera=None, view_mover=None, calibration="auto", regions=None,
                 on_frame: FrameWatcher | None = None, on_decode: DecodeWatcher | None = None):
        from .colour import Calibration
        from .regions import Regions

        self.config = config
        self.camera = camera
        self.view_mover = view_mover
        self.sequence = ScanSequence.from_config(config)
        self.regions = regions if regions is not None else Regions.load(project_path(config.scan.regions_file))
        self.regions.check(self.sequence)
        if calibration == "auto":
            path = project_path(config.scan.colours_file)
            calibration = Calibration.load(path) if path.exists() else None
        self.calibration = calibration
        self.sampling = config.scan.sampling
        self.on_frame, self.on_decode = on_frame, on_decode
        self.marks: dict[str, Any] | None = None  # the last scan's stage times (scan())

    def scan(self) -> "ScanResult":
        if self.camera is None:
            from .camera import open_camera

            self.camera = open_camera(self.config)
        self.marks = {"views": []}  # clock times of this scan's stages (robot/run/waterfall.py)
        opening = time.perf_counter()
        with self.camera:
            self.marks["camera_open"] = (opening, time.perf_counter())
            frames = capture_views(self.camera, self.sequence, self.view_mover, self.marks["views"], self.on_frame)
        reading = time.perf_counter()
        result = self.read(frames, on_decode=self.on_decode)
        decoded = reading + result.read_ms / 1000
        self.marks["decode"] = (reading, decoded)
        if result.images:
            self.marks["save_pictures"] = (decoded, time.perf_counter())
        return result

    def read(self, frames, save: bool | None = None, on_decode: DecodeWatcher | None = None) -> "ScanResult":
        scan_cfg = self.config.scan
        save = scan_cfg.save_images if save is None else save
        return read_frames(
            frames, self.sequence, self.regions, self.calibration, self.sampling, config=self.config,
            drift_threshold=scan_cfg.drift_warn_delta_e,
            save_dir=project_path(scan_cfg.images_dir) if save else None, on_decode=on_decode,
        )


def read_frames(frames, sequence, regions, calibration=None, sampling=None, config=None,
                drift_threshold: float = 15.0, save_dir=None, on_decode: DecodeWatcher | None = None) -> ScanResult:
    """Frames -> ScanResult (what `Scanner.scan` does after the camera).  read_ms excludes saving pictures.
    on_decode: told the decode of every view, before the pictures are saved."""
    from .decode import VisionError, decode

    start = time.perf_counter()
    readings = read_stickers(frames, sequence, regions, sampling)
    decoded, error = None, None
    try:
        decoded = decode(readings.rgb, calibration, config)
    except VisionError as exc:
        error = exc
    read_ms = (time.perf_counter() - start) * 1000.0
    if on_decode is not None:
        on_decode(sequence.views[-1].name, len(sequence.views), decoded, error)
    result = ScanResult(readings, frames, decoded, error, read_ms=read_ms)
    result.warnings += drift_warnings(readings, decoded, calibration, drift_threshold)
    if save_dir is not None:
        result.images = save_pictures(result, sequence, regions, save_dir)
    return result


def label_box(image: np.ndarray, text: str, centre, scale: float | None = None) -> tuple:
    """White text on a black box above a sticker's centre: readable on any sticker colour.
    Returns the box (x0, y0, x1, y1)."""
    import cv2

    scale = scale or max(0.5, image.shape[1] / 1000)
    (width, height), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
    x0 = int(np.clip(centre[0] - width / 2 - 3, 0, max(0, image.shape[1] - width - 6)))
    y0 = int(np.clip(centre[1] - height - base - 12, 0, max(0, image.shape[0] - height - base - 6)))
    x1, y1 = x0 + width + 6, y0 + height + base + 6
    cv2.rectangle(image, (x0, y0), (x1, y1), (0, 0, 0), thickness=-1)
    cv2.putText(image, text, (x0 + 3, y1 - base - 3), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), 1,
                cv2.LINE_AA)
    return x0, y0, x1, y1


def add_legend(image: np.ndarray, lines: list) -> np.ndarray:
    """The image with a black band below it holding the legend lines in white."""
    import cv2

    scale = max(0.4, image.shape[1] / 1600)
    line_px = int(30 * scale) + 6
    band = np.zeros((line_px * len(lines) + 8, image.shape[1], 3), dtype=image.dtype)
    for k, line in enumerate(lines):
        cv2.putText(band, line, (6, line_px * (k + 1)), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), 1,
                    cv2.LINE_AA)
    return np.vstack([image, band])


READINGS_FILE = "readings.json"  # in each scan's folder: what `cube-robot vision decode` reads


def readings_json(readings: StickerReadings) -> str:
    """The 24 readings as `cube-robot vision decode` reads them: [R, G, B] per facelet, U1..B4, null for
    a sticker no view showed (an adaptive scan that stopped early); full float precision, so decoding
    the file gives the same cube as the scan did."""
    import json

    rows = [None if s is None else [float(c) for c in s.rgb] for s in readings.samples]
    return "[\n" + ",\n".join(f"  {json.dumps(row)}" for row in rows) + "\n]\n"


def save_pictures(result: ScanResult, sequence: ScanSequence, regions, folder) -> list[Path]:
    """A scan as kept, in a new timestamped folder: the raw frames as the camera gave them
    (raw-NN-<view>.png) and the 24 readings (READINGS_FILE), so a misread can be replayed and reported;
    then the pictures it returns: annotated frames (regions, facelet names, read colour) and the
    decoded net (stickers inferred rather than seen marked)."""
    import cv2

    from .regions import draw_regions

    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    folder = Path(folder) / stamp
    folder.mkdir(parents=True, exist_ok=True)
    for v, view in enumerate(sequence.views):
        cv2.imwrite(str(folder / f"raw-{v + 1:02d}-{view.name}.png"), result.frames[view.name])
    (folder / READINGS_FILE).write_text(readings_json(result.readings))
    paths = []
    for v, view in enumerate(sequence.views):
        finals = sequence.final_positions(v)
        labels, swatches = [], []
        for r, final in enumerate(finals):
            letter = result.decoded.facelets[final] if result.decoded is not None else "?"
            labels.append(f"{cube.facelet_name(final)} {letter}")
            sample = result.readings.samples[final]
            swatches.append(tuple(int(c) for c in sample.rgb[::-1]))
        quads = regions.quads(view.name)
        image = draw_regions(result.frames[view.name], quads, (), swatches)
        for quad, label in zip(quads, labels):
            label_box(image, label, np.asarray(quad, dtype=np.float64).mean(axis=0))
        image = add_legend(image, [
            f"view {view.name}: each sticker shows the facelet it is in the scanned cube (e.g. R3) and the",
            "colour letter read for it (? = not decoded); the small square is the colour measured there."])
        path = folder / f"{v + 1:02d}-{view.name}.png"
        cv2.imwrite(str(path), image)
        paths.append(path)
    # The net (robot.vision.net): decoded colours, or the raw readings with the doubtful stickers marked.
    from .net import save_net

    paths.append(save_net(result, folder / "net.png"))
    return paths
