"""Guided colour calibration: `cube-robot calibrate colours`.

Steps (each prompt can be answered from an answers file or flags, so the
whole run also works without a person, e.g. in tests):

1. Camera: open it with exposure and white balance locked (config `camera`).
2. Solved cube: the user puts a solved cube in; every scan view is captured.
3. Regions: per view, the regions guessed from the camera pose
   (config `camera.pose`) are snapped to detected stickers; the user accepts
   them, keeps the saved ones, or clicks the sticker centres.  A live preview
   with the regions drawn is shown in a window when there is a display,
   otherwise written as PNGs to a folder whose path is printed.
4. Learning: each colour's Lab centre and spread from its 4 stickers, and a
   brightness gain per region (evens out uneven light).
5. Separability: every pair of colours is checked; colours too close get a
   warning with advice (red/orange: more light, lower exposure, matte stickers).
6. Verification: a scrambled cube is scanned with the new calibration and its
   decoded net shown for the user to confirm.
7. Saved: calibration/colors.yaml (versioned, timestamped, with the camera
   settings used) and calibration/regions.yaml.  Simulated (`--sim`: the
   virtual robot presents the views to the simulated webcam) nothing is
   saved: it says what a real calibration would save, and where.

Answers (YAML mapping; every key optional, missing ones are asked, or take
their default with --yes):
    solved_ready: yes            # a solved cube is in the robot
    regions: detect              # detect | keep (the saved regions file) | fix | click
    fix_views: left right        # regions: fix: redo only these views, keep the saved others
    accept_regions: yes          # accept the detected regions of every view
    clicks: {top-front: [[x, y], ...]}   # sticker centres per view, in facelet order (regions: click)
    names: {U: white, R: red, ...}       # colour names, by the face each colour is on at the start
    scrambled_ready: yes         # a scrambled cube is in the robot (verification)
    verify: yes                  # the shown net matches the cube (no = do not save)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from .. import cube
from ..config_types import Config
from .naming import STANDARD_COLOURS, standard_colour_names  # noqa: F401  (re-exported)
from .pose_fit import detected_regions_guess, fit_camera_pose  # noqa: F401  (re-exported)

# Colours closer than this (Delta-E between centres) are hard to tell apart
# once light varies; pairs within SEPARATION_RATIO spreads are flagged too.
MIN_DELTA_E = 15.0
SEPARATION_RATIO = 4.0
GAIN_LIMITS = (0.6, 1.6)


class LiveViewMover:
    """Presents each view with the given view mover (the robot's, as in a run), then shows it live with
    the regions expected there overlaid, so the person sees the cube sits where the regions are."""

    def __init__(self, view_mover, camera, preview, regions, seconds: float):
        self.view_mover, self.camera, self.preview = view_mover, camera, preview
        self.regions, self.seconds = regions, seconds

    def move_to(self, view) -> None:
        self.view_mover.move_to(view)
        quads = self.regions.quads(view.name) if self.regions is not None else None
        self.preview.live(self.camera, view, quads, self.seconds)


class CalibrationAborted(RuntimeError):
    """The calibration stopped (the user said no, or an answer is missing); nothing was saved."""


# ---------------------------------------------------------------------------
# Talking to the user.


class Answers:
    """Prompts answered from a mapping first, then interactively, else by default (with assume_yes)."""

    def __init__(self, given: dict | None = None, interactive: bool = True, assume_yes: bool = False,
                 ask=input, tell_maker=print):
        self.given = dict(given or {})
        self.interactive, self.assume_yes = interactive, assume_yes
        self.ask, self.tell_maker = ask, tell_maker

    @classmethod
    def from_file(cls, path, **kwargs) -> "Answers":
        try:
            if str(path) == "-":  # the answers on stdin
                import sys

                data = yaml.safe_load(sys.stdin.read()) or {}
            else:
                data = yaml.safe_load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise CalibrationAborted(f"cannot read answers file {path}: {exc}") from None
        if not isinstance(data, dict):
            raise CalibrationAborted(f"answers file {path}: expected a mapping of answers")
        return cls(data, **kwargs)

    def get(self, key: str, prompt: str, default=None):
        if key in self.given:
            self.tell_maker(f"{prompt} -> {self.given[key]} (from answers)")
            return self.given[key]
        if self.interactive:
            reply = self.ask(f"{prompt} " + (f"[{default}] " if default is not None else "")).strip()
            return reply if reply else default
        if self.assume_yes and default is not None:
            self.tell_maker(f"{prompt} -> {default} (default)")
            return default
        raise CalibrationAborted(f"no answer for {key!r} ({prompt}); add it to the answers file or run interactively")

    def yes(self, key: str, prompt: str, default: bool = True) -> bool:
        reply = self.get(key, prompt + " (y/n)", "y" if default else "n")
        if isinstance(reply, bool):
            return reply
        return str(reply).strip().lower() in ("y", "yes", "true", "1", "ok")


class Preview:
    """Shows annotated frames: an OpenCV window with a display, else PNG files in a folder."""

    def __init__(self, folder, use_window: bool, tell_maker=print):
        self.folder = Path(folder)
        self.use_window = use_window
        self.tell_maker = tell_maker
        self.told = False

    def show(self, name: str, image: np.ndarray) -> Path | None:
        import cv2

        if self.use_window:
            try:
                cv2.imshow("cube-robot calibrate", image)
                cv2.waitKey(300)
                return None
            except cv2.error:  # OpenCV built without GUI support (opencv-python-headless)
                self.use_window = False
                self.tell_maker("no OpenCV window support here; writing previews as pictures instead")
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{name}.png"
        cv2.imwrite(str(path), image)
        if not self.told:
            self.tell_maker(f"previews are written to {self.folder} (open them to check the regions)")
            self.told = True
        else:
            self.tell_maker(f"  preview: {path}")
        return path

    def click(self, image: np.ndarray, count: int, title: str):
        """Sticker centres clicked in the window (None when there is no window)."""
        if not self.use_window:
            return None
        import cv2

        points: list[tuple[float, float]] = []

        def on_mouse(event, x, y, flags, param):
            if event == cv2.EVENT_LBUTTONDOWN and len(points) < count:
                points.append((float(x), float(y)))

        window = "cube-robot calibrate"
        cv2.imshow(window, image)
        cv2.setMouseCallback(window, on_mouse)
        while len(points) < count:
            shown = image.copy()
            for k, (x, y) in enumerate(points):
                cv2.circle(shown, (int(x), int(y)), 5, (0, 0, 255), -1)
            cv2.putText(shown, f"{title}: click sticker {len(points) + 1} of {count}", (10, 25),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 2)
            cv2.imshow(window, shown)
            if cv2.waitKey(30) == 27:
                raise CalibrationAborted("clicking cancelled (Esc)")
        return points

    def live(self, camera, view, quads, seconds: float = 0.0, wait_key=None) -> Path | None:
        """A live preview of the view with the regions overlaid: frames refreshed in the window until a
        key (or `seconds`), or without a display the picture live-<view>.png rewritten with each frame."""
        import time

        import cv2

        from .regions import draw_regions

        deadline = time.monotonic() + seconds
        path = None
        while True:
            frame = camera.capture(view.name)
            image = draw_regions(frame, quads, view.facelets) if quads is not None else frame
            cv2.putText(image, f"{view.name}: live" + (" (any key: go on)" if self.use_window else ""), (10, 25),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 2)
            if self.use_window:
                try:
                    cv2.imshow("cube-robot calibrate", image)
                    if (wait_key or cv2.waitKey)(100) != -1:
                        return None
                except cv2.error:
                    self.use_window = False
                    continue
            else:
                self.folder.mkdir(parents=True, exist_ok=True)
                path = self.folder / f"live-{view.name}.png"
                tmp = path.with_name(path.stem + ".tmp.png")
                cv2.imwrite(str(tmp), image)
                tmp.replace(path)  # a viewer never sees half a picture
            if time.monotonic() >= deadline:
                return path

    def close(self):
        if self.use_window:
            import cv2

            try:
                cv2.destroyAllWindows()
            except cv2.error:
                pass


# ---------------------------------------------------------------------------
# Learning and checking.


@dataclass
class Separation:
    first: str
    second: str
    delta_e: float
    ratio: float  # delta_e / combined spread

    @property
    def too_close(self) -> bool:
        return self.delta_e < MIN_DELTA_E or self.ratio < SEPARATION_RATIO


def learn_colours(readings, sequence, names: dict | None = None):
    """Calibration from a solved-cube scan: (Calibration without camera info, problems list).

    The colour of each reading is the face it was on in the solved cube at the
    start of the scan; names maps those face letters to colour names.
    """
    from .colour import Calibration, ColourStats, RegionStats
    from .decode import rough_colour_name

    solved_final = sequence.final_state(cube.SOLVED_FACELETS)
    rgb = readings.rgb
    lab = readings.lab
    groups = {face: [i for i in range(cube.FACELET_COUNT) if solved_final[i] == face] for face in cube.FACES}
    problems = []
    for face, members in groups.items():
        centre = np.median(lab[members], axis=0)
        for i in members:
            if np.linalg.norm(lab[i] - centre) > 25:
                problems.append(
                    f"{cube.facelet_name(i)} (seen as {readings.source[i][0]} region {readings.source[i][1]}) "
                    f"does not match the other stickers of its face: is the cube solved and are the regions right?"
                )
    stats = {face: ColourStats.from_rgb(rgb[members]) for face, members in groups.items()}
    # Names: given, else the standard colour names matched one to one to the measured colours.
    standard = standard_colour_names({face: stats[face].lab for face in cube.FACES})
    named: dict[str, str] = {}
    for face in cube.FACES:
        name = str((names or {}).get(face) or standard.get(face) or rough_colour_name(stats[face].lab))
        while name in named.values():
            name += f"-{face}"
        named[face] = name
    colours = {named[face]: stats[face] for face in cube.FACES}
    # Brightness gain per region (final-frame facelet): evens out uneven light.
    regions = {}
    for face, members in groups.items():
        mean = rgb[members].mean(axis=0)
        for i in members:
            gain = float(np.clip(mean.sum() / max(rgb[i].sum(), 1.0), *GAIN_LIMITS))
            regions[cube.facelet_name(i)] = RegionStats(gain=np.full(3, gain))
    return Calibration(colours, regions=regions), problems


def separations(calibration, spreads: dict | None = None) -> list[Separation]:
    """Every pair of colours, closest first."""
    out = []
    for (a, sa), (b, sb) in itertools.combinations(calibration.colours.items(), 2):
        delta = float(np.linalg.norm(sa.lab - sb.lab))
        spread = float(np.sqrt(np.sum(sa.sigma**2) + np.sum(sb.sigma**2)))
        if spreads:
            spread = max(spread, spreads.get(a, 0.0) + spreads.get(b, 0.0))
        out.append(Separation(a, b, delta, delta / max(spread, 1.0)))
    return sorted(out, key=lambda s: s.ratio)


def advice(pair: Separation) -> str:
    names = {pair.first.split("-")[0], pair.second.split("-")[0]}
    if names == {"red", "orange"}:
        return ("red and orange: add more (diffuse) light, lower the exposure so reds do not clip towards orange, "
                "and prefer matte stickers (gloss reflects the lamp)")
    if names == {"white", "yellow"}:
        return "white and yellow: use whiter light (4000-6500 K) and lock the white balance"
    if names == {"blue", "green"}:
        return "blue and green: more light, and check the white balance is locked and not too cool"
    return "add diffuse light, lock exposure and white balance, and avoid glossy reflections"


# ---------------------------------------------------------------------------
# The guided run.


@dataclass
class CalibrationOutcome:
    calibration: object
    regions: object
    colours_path: Path | None
    regions_path: Path | None
    warnings: list = field(default_factory=list)
    verified: str = "skipped"  # confirmed / rejected / skipped / refused


def _annotated(frame, quads, labels, inner_fraction):
    from .regions import draw_regions

    return draw_regions(frame, quads, labels, inner_fraction=inner_fraction)


def setup_regions(frames, sequence, config: Config, answers: Answers, preview: Preview, tell_maker=print,
                  default_mode=None):
    """Regions for every view: keep the saved ones, detect (pose guess snapped to stickers), or click.
    default_mode: the default answer (else keep when the regions file exists, detect when not)."""
    from . import pose_fit
    from .camera_geometry import scan_regions
    from .regions import Regions, RegionsError, detect_sticker_quads, quads_from_centres, refine_with_detections
    from ..config import project_path

    inner = config.scan.sampling.inner_fraction
    regions_path = project_path(config.scan.regions_file)
    mode = str(answers.get("regions", "Regions: detect, keep (the saved file), fix (redo some views of the "
                           "saved file) or click?",
                           default_mode or ("keep" if regions_path.exists() else "detect"))).strip().lower()
    first = frames[sequence.views[0].name]
    size = (first.shape[1], first.shape[0])
    kept: dict = {}
    if mode in ("keep", "fix"):
        regions = Regions.load(regions_path)
        regions.check(sequence)
        for view in sequence.views:
            regions.check_frame(view.name, frames[view.name])
        if mode == "keep":
            return regions
        names = [v.name for v in sequence.views]
        redo = str(answers.get("fix_views", f"Which views to redo ({' '.join(names)})?", "")).replace(",", " ").split()
        unknown = [name for name in redo if name not in names]
        if unknown or not redo:
            raise CalibrationAborted(f"fix_views: name views to redo from {' '.join(names)} (got {redo or 'none'})")
        kept = {name: regions.quads(name) for name in names if name not in redo}
        tell_maker(f"keeping the saved regions of {', '.join(kept) or 'no view'}; redoing {', '.join(redo)}")
        mode = "detect"
    if mode not in ("detect", "click"):
        raise CalibrationAborted(f"regions: answer detect, keep, fix or click (got {mode!r})")
    detected = {view.name: detect_sticker_quads(frames[view.name]) for view in sequence.views} \
        if mode == "detect" else {}
    guess = pose_fit.detected_regions_guess(detected, sequence, _pose_for(config, size)) if detected \
        else scan_regions(_pose_for(config, size), sequence)
    views = {}
    clicks = answers.given.get("clicks") or {}
    for view in sequence.views:
        frame = frames[view.name]
        quads = None
        if view.name in kept:  # `fix`: this view's saved regions stay as they were
            views[view.name] = np.asarray(kept[view.name], dtype=np.float64)
            continue
        if mode == "detect":
            quads, found = refine_with_detections(guess.quads(view.name), detected[view.name], image=frame)
            tell_maker(f"view {view.name!r}: {found} of {len(view.facelets)} stickers detected "
                f"({len(view.facelets) - found} placed from the camera pose fitted to the stickers of all views)")
            preview.show(f"regions-{view.name}", _annotated(frame, quads, view.facelets, inner))
            if not answers.yes(f"accept_regions.{view.name}" if f"accept_regions.{view.name}" in answers.given
                               else "accept_regions", f"Regions of view {view.name!r} right?"):
                quads = None
        if quads is None:
            points = clicks.get(view.name)
            if points is None:
                points = preview.click(frame, len(view.facelets), view.name)
            if points is None:
                preview.show(f"frame-{view.name}", frame)
                text = answers.get(f"clicks.{view.name}",
                                   f"Sticker centres of view {view.name!r} in order {' '.join(view.facelets)} "
                                   "as 'x,y x,y ...'")
                points = [[float(v) for v in p.split(",")] for p in str(text).split()]
            if len(points) != len(view.facelets):
                raise CalibrationAborted(f"view {view.name!r}: {len(points)} centres given, "
                                         f"need {len(view.facelets)} ({' '.join(view.facelets)})")
            try:
                quads = quads_from_centres(points)
            except RegionsError as exc:
                raise CalibrationAborted(f"view {view.name!r}: {exc}") from None
            preview.show(f"regions-{view.name}", _annotated(frame, quads, view.facelets, inner))
        views[view.name] = np.asarray(quads, dtype=np.float64)
    return Regions(views, size, source=mode if not kept else "fixed")


def _expected_regions(config: Config, sequence, regions_path):
    """The regions to overlay on the live preview: the saved ones, else those of camera.pose."""
    from .camera_geometry import scan_regions
    from .regions import Regions, RegionsError

    try:
        return Regions.load(regions_path) if regions_path.exists() else scan_regions(
            _pose_for(config, (config.camera.width, config.camera.height)), sequence)
    except (RegionsError, OSError, ValueError):
        return None


def _pose_for(config: Config, size):
    from dataclasses import replace

    from .camera_geometry import Pose

    return replace(Pose.from_config(config), width=size[0], height=size[1])


def net_rows(facelets: str, names: dict) -> list[str]:
    """The net as one line of colour names per face ('  U: white green yellow blue')."""
    return [f"  {face}: " + " ".join(names[facelets[i]] for i in range(4 * k, 4 * k + 4))
            for k, face in enumerate(cube.FACES)]


def run(config: Config, answers: Answers, solved_camera=None, scrambled_camera=None, view_mover=None,
        use_window: bool = False, colours_path=None, regions_path=None, tell_maker=print,
        simulated: bool = False, put_in=None, scanned=None) -> CalibrationOutcome:
    """The guided calibration (see the module doc).  Returns what was learned and where it was saved.

    simulated: the cameras show a virtual cube: nothing is saved (the outcome's paths are None), the
    saved regions file (for the real camera) is not the default, and the run says what it would save.
    put_in(kind): called once the person said a "solved" / "scrambled" cube is in (the simulation puts
    that cube in the virtual robot); scanned(kind): called once its views are captured (the simulation
    shows how the virtual cube stands after the scan's turns)."""
    from .camera import describe_settings, open_camera
    from .colour import CalibrationError
    from .decode import VisionError, decode
    from ..config import project_path
    from .scan import ManualViewMover, NoMotion, ScanSequence, capture_views, read_stickers

    sequence = ScanSequence.from_config(config)
    sampling = config.scan.sampling
    colours_path = Path(colours_path) if colours_path else project_path(config.scan.colours_file)
    regions_path = Path(regions_path) if regions_path else project_path(config.scan.regions_file)
    preview = Preview(project_path(config.scan.preview_dir), use_window, tell_maker)
    solved_camera = solved_camera or open_camera(config, log=tell_maker)
    scrambled_camera = scrambled_camera or solved_camera
    if view_mover is None:
        view_mover = NoMotion() if not answers.interactive else ManualViewMover(answers.ask, tell_maker)
    warnings: list[str] = []

    try:
        # 1-2. Solved cube, all views (the camera opened first: a missing camera is said before any question).
        with solved_camera:
            camera_settings = solved_camera.settings()
            tell_maker(f"camera: {describe_settings(camera_settings)}")
            if not answers.yes("solved_ready", "Put a SOLVED cube in the robot. Ready?"):
                raise CalibrationAborted("no solved cube: calibration needs one (nothing saved)")
            if put_in:
                put_in("solved")
            expected = _expected_regions(config, sequence, regions_path)
            live = LiveViewMover(view_mover, solved_camera, preview, expected, 0.0 if not answers.interactive else 2.0)
            frames = capture_views(solved_camera, sequence, live)
        # 3. Regions.
        regions = setup_regions(frames, sequence, config, answers, preview, tell_maker,
                                default_mode="detect" if simulated else None)
        regions.check(sequence)
        # 4. Learn.
        readings = read_stickers(frames, sequence, regions, sampling)
        names = answers.given.get("names") or {}
        calibration, problems = learn_colours(readings, sequence, names)
        if problems:
            raise CalibrationAborted("the solved-cube scan does not look solved:\n  " + "\n  ".join(problems))
        calibration.camera = camera_settings
        for letter, (name, stats) in zip(cube.FACES, calibration.colours.items()):
            tell_maker(f"  {letter}: {name:>8}  Lab {np.round(stats.lab, 1).tolist()}  sigma {np.round(stats.sigma, 1).tolist()}")
        # 5. Separability.
        for pair in separations(calibration):
            if pair.too_close:
                text = (f"{pair.first} and {pair.second} are close ({pair.delta_e:.1f} Delta-E, "
                        f"{pair.ratio:.1f} x their spread): {advice(pair)}")
                warnings.append(text)
                tell_maker("WARNING: " + text)
        # 6. Verify on a scrambled cube.
        verified = "skipped"
        if answers.yes("scrambled_ready", "Now put a SCRAMBLED cube in the robot to check. Ready?"):
            if put_in:
                put_in("scrambled")
            with scrambled_camera:
                check_frames = capture_views(scrambled_camera, sequence, view_mover)
            if scanned:
                scanned("scrambled")
            check = read_stickers(check_frames, sequence, regions, sampling)
            try:
                result = decode(check.rgb, calibration, config)
            except VisionError as exc:
                verified = "refused"
                tell_maker(f"the check scan could not be read: {exc}")
                if not answers.yes("save_anyway", "Save the calibration anyway?", default=False):
                    raise CalibrationAborted("check scan refused; nothing saved. " + str(exc)) from None
            else:
                preview.show("check-net", _net_picture(result))
                # The scan turned the cube: its net is of the cube as it stands now, not as it was put in.
                tell_maker(f"decoded: {result.facelets} (confidence {result.confidence:.2f}), the cube as it "
                           "stands after the scan's turns:")
                for row in net_rows(result.facelets, result.colours):
                    tell_maker(row)
                if answers.yes("verify", "Does the shown net match the cube?"):
                    verified = "confirmed"
                else:
                    raise CalibrationAborted(
                        "the check scan was wrong; nothing saved. Check the regions previews, the light, then rerun."
                    )
        # 7. Save.
        if simulated:  # the virtual cube's colours are the renderer's, not the maker's camera's
            tell_maker(f"not saved (simulated): a real calibration writes the {len(calibration.colours)} colours "
                f"above into {colours_path} and the regions of {len(sequence.views)} views "
                f"({regions.source}) into {regions_path}; both files are unchanged")
            return CalibrationOutcome(calibration, regions, None, None, warnings, verified)
        try:
            saved_colours = calibration.save(colours_path)
        except (OSError, CalibrationError) as exc:
            raise CalibrationAborted(f"cannot save {colours_path}: {exc}") from None
        saved_regions = regions.save(regions_path)
        tell_maker(f"saved {saved_colours} and {saved_regions}")
        return CalibrationOutcome(calibration, regions, saved_colours, saved_regions, warnings, verified)
    finally:
        preview.close()


def _net_picture(result):
    """The decoded net as a BGR image (robot.vision.net)."""
    from .net import net_for

    return net_for(result)
