"""`calibrate colours` in the page, one request per step (robot/vision/calibrate.py does the learning).

    calibration = PanelCalibration(session)
    calibration.start(client)                      # a solved cube is in (the simulated robot: put in)
    calibration.present(client)                    # the robot presents the next scan view; the live view
                                                   #   outlines that view's regions
    calibration.adjust(client, "top-front", "U3", offset=(4, -2))   # or quad=[[x, y] * 4]; no sticker: all
    calibration.detect(client, "top-front")        # a confirmed view's regions snapped to the stickers seen
    calibration.confirm(client, "top-front")       # the view's picture is taken and its stickers sampled
    ...                                            # present/confirm each view, in the scan's order
    calibration.learn(client)                      # learn_colours + separations, as the command
    calibration.check(client); calibration.verify(client, True)     # optional: a scrambled cube decoded
    calibration.save(client)                       # the command's writers; simulated: nothing saved

Each answers `state()`: the step, each view (its facelets, regions, samples), the findings and what was
said.  The views must come in the scan sequence's order from a solved cube, as in the command: the
colours are learned from where each sticker of the solved cube ends up after the scan's turns.  A run
or a new simulated cube in between moves the cube: the walk-through then has to start again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..cli_common import simulated
from .calibrate_fields import (StepGuard, as_put_in, check_names, floats, offset_field, quad_field, rounded, same_cube,
                               sample_json, source_words, sticker_index, within)
from .errors import RequestError
from .words import panel_words

if TYPE_CHECKING:
    from ..scan_sequence import ScanSequence
    from ..vision.regions import Regions
    from .held import HeldRobot
    from .session import PanelSession

STEPS = ("idle", "solved-cube-in", "presented", "confirmed", "views-done", "learned", "checked", "saved")


@dataclass
class Walk:
    """One walk-through: what the robot held when it started, and everything measured since."""

    held: HeldRobot
    run_id: int
    sequence: ScanSequence
    quads: dict[str, np.ndarray]  # view -> (n, 4, 2) regions being aligned
    image_size: tuple[int, int]
    source: str  # where the first regions came from (Regions.source)
    adjusted: set[str] = field(default_factory=set)
    next_index: int = 0  # the next view to present
    presented: str | None = None
    frames: dict[str, np.ndarray] = field(default_factory=dict)
    samples: dict[str, list] = field(default_factory=dict)  # view -> StickerSample per region
    camera_settings: dict = field(default_factory=dict)
    calibration: Any = None
    findings: dict | None = None
    check: dict | None = None
    verified: str = "skipped"  # as CalibrationOutcome.verified (confirmed/rejected/refused/skipped); asked: awaited
    saved: dict | None = None
    step: str = "solved-cube-in"
    arms: tuple | None = None  # the board's arm positions and grippers after the walk-through's last motion
    stickers: dict[str, list[str]] = field(default_factory=dict)  # view -> its stickers named as put in


class PanelCalibration:
    def __init__(self, session: PanelSession):
        self.session = session
        self.walk: Walk | None = None
        self.messages: list[str] = []
        self._data = threading.Lock()  # the walk's data (state() reads it while a step runs)

    # -- what the page shows -----------------------------------------------------------------

    @property
    def simulated(self) -> bool:
        return self.session.held.simulated

    def tell(self, text: str) -> None:
        self.messages.append(simulated(text) if self.simulated else text)

    def state(self) -> dict:
        with self._data:
            walk = self.walk
            answer: dict[str, Any] = {"step": walk.step if walk else "idle", "simulated": self.simulated,
                                      "messages": list(self.messages)}
            if walk is None:
                return answer | {"views": [], "current": None, "next": None, "image_size": None, "findings": None,
                                 "check": None, "saved": None, "stale": None}
            views = []
            for number, view in enumerate(walk.sequence.views):
                status = ("confirmed" if view.name in walk.frames else "presented" if view.name == walk.presented
                          else "waiting")
                samples = walk.samples.get(view.name)
                views.append({"name": view.name, "number": number + 1, "facelets": walk.stickers[view.name],
                              "places": list(view.facelets),
                              "state": status, "adjusted": view.name in walk.adjusted,
                              "quads": rounded(walk.quads[view.name]),
                              "samples": [sample_json(s) for s in samples] if samples else None})
            following = walk.sequence.views[walk.next_index].name if walk.next_index < len(walk.sequence.views) else None
            return answer | {"views": views, "current": walk.presented, "next": following,
                             "image_size": list(walk.image_size), "findings": walk.findings, "check": walk.check,
                             "verified": walk.verified, "saved": walk.saved, "stale": self._stale(walk)}

    def publish(self) -> None:
        """Every open page follows the walk-through: the state after a step, sent as a Calibration message."""
        self.session.send({"type": "Calibration", **self.state()})

    # -- the steps ---------------------------------------------------------------------------

    def start(self, client: str) -> dict:
        """A solved cube is in the robot (the simulated robot: the panel puts one in): a new walk-through."""
        from .. import cube
        from ..scan_sequence import ScanSequence

        with self._moving(client):
            held = self.session.held
            sequence = ScanSequence.from_config(self.session.config)
            self._ready_arms(held)
            regions = self._first_regions(held, sequence)
            with self._data:
                self.messages = []
                self.walk = Walk(held, self.session.run_id, sequence,
                                 {v.name: np.array(regions.quads(v.name), dtype=np.float64) for v in sequence.views},
                                 (int(regions.image_size[0]), int(regions.image_size[1])), regions.source,
                                 stickers={v.name: as_put_in(sequence, k) for k, v in enumerate(sequence.views)})
            if held.simulated:  # what the person does at a real robot, done to the virtual cube
                sim = held.robot
                sim.virtual.state = cube.SOLVED  # type: ignore[union-attr]
                held.sync()
                self.tell(f"a solved cube is now in the virtual robot: {sim.virtual.facelets()} (as put in)")  # type: ignore[union-attr]
            else:
                self.tell("a SOLVED cube must be in the robot now, held as a run starts (Bring-up: Load)")
            self.walk.arms = self._arms_now(held)
            self.tell(f"the robot presents {len(sequence.views)} views in the scan's order "
                      f"({', '.join(v.name for v in sequence.views)}); the regions start from {source_words(regions.source)}")
        return self.state()

    def present(self, client: str, view: str | None = None) -> dict:
        """The robot presents the next view of the scan (a view named must be that one)."""
        with self._moving(client):
            walk = self._walk(moving=True)
            views = walk.sequence.views
            if walk.presented is not None and walk.presented not in walk.frames:
                raise RequestError(409, f"view {walk.presented!r} is presented but not confirmed yet: confirm it "
                                        "(its picture is taken) before the robot moves on", "view")
            if walk.next_index >= len(views):
                raise RequestError(409, "every view is confirmed: learn the colours now", "view")
            target = views[walk.next_index]
            if view is not None and view != target.name:
                raise RequestError(400, f"view: the next view is {target.name!r}, not {view!r} (views come in the "
                                        "scan's order: the colours are learned from where the turns take each "
                                        "sticker)", "view")
            number = walk.next_index + 1
            self._move(walk, target)
            with self._data:
                walk.presented, walk.next_index, walk.step = target.name, number, "presented"
            self._overlay(walk, target.name)
            self.tell(f"view {number} of {len(views)}: "
                      f"{target.name!r} presented (stickers {' '.join(walk.stickers[target.name])}, named by the "
                      "face they were on as the cube was put in); drag a region onto its sticker if "
                      "it is off, then confirm")
        return self.state()

    def adjust(self, client: str, view: str, sticker: str | int | None = None, quad=None, offset=None) -> dict:
        """Move one region (sticker: its facelet name or number in the view) or all of a view's regions
        (no sticker) by `offset` [dx, dy], or set one region's corners `quad` [[x, y] * 4], in image pixels."""
        with self._steady(client):
            walk = self._walk()
            names = self._shown_views(walk)
            if view not in names:
                raise RequestError(409 if view in walk.quads else 400,
                                   f"view: {view!r} is not presented yet (regions are aligned on the view's picture; "
                                   f"presented: {', '.join(names) or 'none'})", "view")
            quads = walk.quads[view].copy()
            facelets = walk.stickers[view]
            index = None if sticker is None else sticker_index(sticker, facelets)
            if (quad is None) == (offset is None):
                raise RequestError(400, "give offset [dx, dy] or quad [[x, y], [x, y], [x, y], [x, y]] (one of them)",
                                   "offset")
            if quad is not None:
                if index is None:
                    raise RequestError(400, "sticker: a quad sets one region: name its sticker", "sticker")
                quads[index] = quad_field(quad)
            else:
                shift = offset_field(offset)
                if index is None:
                    quads += shift
                else:
                    quads[index] = quads[index] + shift
            within(quads if index is None else quads[index:index + 1], walk.image_size,
                    "quad" if quad is not None else "offset")
            self._set_quads(walk, view, quads)
            which = f"region {facelets[index]}" if index is not None else "all regions"
            self.tell(f"view {view!r}: {which} moved" + (f" by {offset_field(offset).tolist()} px" if offset is not None else ""))
        return self.state()

    def detect(self, client: str, view: str) -> dict:
        """A confirmed view's regions snapped onto the stickers detected in its picture (the command's
        detection: robot/vision/regions.py); a region with no sticker found near it stays where it is."""
        from ..vision.regions import detect_sticker_quads, refine_with_detections

        with self._steady(client):
            walk = self._walk()
            frame = walk.frames.get(view)
            if frame is None:
                raise RequestError(409 if view in walk.quads else 400,
                                   f"view: {view!r} has no picture yet: confirm it first", "view")
            quads, found = refine_with_detections(walk.quads[view], detect_sticker_quads(frame), image=frame)
            self._set_quads(walk, view, np.asarray(quads, dtype=np.float64))
            count = len(quads)
            self.tell(f"view {view!r}: {found} of {count} stickers detected; their regions snapped onto them"
                      + (f" (the other {count - found} stay where they were: drag them)" if found < count else ""))
        return self.state()

    def confirm(self, client: str, view: str | None = None) -> dict:
        """The presented view's picture is taken (as a run takes it) and its stickers sampled; again to retake."""
        from ..vision.cameras import capture_view
        from ..vision.scan import still_since

        with self._steady(client):
            walk = self._walk(moving=True)
            current = walk.presented
            if current is None:
                raise RequestError(409, "no view is presented: present the next view first", "view")
            if view is not None and view != current:
                raise RequestError(400, f"view: the presented view is {current!r}, not {view!r}", "view")
            held = walk.held
            camera = held.camera
            try:
                frame = capture_view(camera, current, still_since(held.robot.view_mover))
            except Exception as exc:  # a camera that gives no frame: said, nothing kept
                raise RequestError(409, self._mark(f"the camera gave no picture of {current!r}: {exc}")) from None
            height, width = frame.shape[:2]
            if (width, height) != walk.image_size:
                raise RequestError(409, self._mark(
                    f"view {current!r}: the regions are for {walk.image_size[0]}x{walk.image_size[1]} pictures but "
                    f"the camera gives {width}x{height}: set camera.width/height back, or start again"))
            with self._data:
                walk.frames[current] = frame
                if not walk.camera_settings and camera is not None:
                    walk.camera_settings = camera.settings()
                walk.samples[current] = self._sample(walk, current)
                done = len(walk.frames) == len(walk.sequence.views)
                walk.step = "views-done" if done else "confirmed"
                walk.findings, walk.check, walk.verified = None, None, "skipped"
            self._overlay(walk, current)
            self.tell(f"view {current!r}: picture taken, {len(walk.samples[current])} stickers sampled"
                      + ("; every view is confirmed: learn the colours" if done else "; present the next view"))
        return self.state()

    def learn(self, client: str, names: dict | None = None) -> dict:
        """The command's learning: each colour from its four stickers of the solved cube, a gain per
        region, every pair's separation with advice (robot/vision/calibrate.py)."""
        from .. import cube
        from ..vision.calibrate import advice, learn_colours, separations
        from ..vision.scan import read_stickers

        with self._steady(client):
            walk = self._walk()
            missing = [v.name for v in walk.sequence.views if v.name not in walk.frames]
            if missing:
                raise RequestError(409, f"views not confirmed yet: {', '.join(missing)} (present and confirm each)")
            if names is not None:
                check_names(names)
            readings = read_stickers(walk.frames, walk.sequence, self._regions(walk), self.session.config.scan.sampling)
            calibration, problems = learn_colours(readings, walk.sequence, names or {})
            calibration.camera = walk.camera_settings
            pairs = separations(calibration)
            warnings = []
            for pair in pairs:
                if pair.too_close:
                    warnings.append(f"{pair.first} and {pair.second} are close ({pair.delta_e:.1f} Delta-E, "
                                    f"{pair.ratio:.1f} x their spread): {advice(pair)}")
            colours = []
            for face, (name, stats) in zip(cube.FACES, calibration.colours.items()):
                colours.append({"face": face, "name": name, "lab": floats(stats.lab), "sigma": floats(stats.sigma),
                                "rgb": [int(round(v)) for v in np.clip(stats.rgb, 0, 255)]})
            with self._data:
                walk.calibration = calibration if not problems else None
                walk.findings = {
                    "ok": not problems, "problems": problems, "colours": colours, "warnings": warnings,
                    "separated": not warnings,
                    "separations": [{"first": p.first, "second": p.second, "delta_e": round(p.delta_e, 1),
                                     "ratio": round(p.ratio, 1), "too_close": p.too_close,
                                     "advice": advice(p) if p.too_close else None} for p in pairs]}
                walk.check, walk.verified, walk.step = None, "skipped", "learned"
            if problems:
                self.tell("the solved-cube scan does not look solved (nothing can be saved): " + "; ".join(problems))
            else:
                self.tell(f"learned {len(colours)} colours: " + ", ".join(colour["name"] for colour in colours)
                          + (f"; {len(warnings)} pair(s) too close" if warnings else "; every pair is well apart"))
                for text in warnings:
                    self.tell("WARNING: " + text)
        return self.state()

    def check(self, client: str) -> dict:
        """The optional check: a scrambled cube (the simulated robot: the panel puts one in) scanned with
        the new calibration and decoded; the person then says whether the net matches the cube."""
        from .. import cube
        from ..vision.calibrate import net_rows
        from ..vision.decode import VisionError, decode
        from ..vision.scan import capture_views, read_stickers

        with self._moving(client):
            walk = self._walk(moving=True)
            if walk.calibration is None:
                raise RequestError(409, "learn the colours first (a calibration without problems)")
            held = walk.held
            if held.simulated:
                sim = held.robot
                rng = np.random.default_rng()
                sim.virtual.state = cube.random_placed_state(rng)  # type: ignore[union-attr]
                held.sync()
                self.tell(f"a scrambled cube is now in the virtual robot: {sim.virtual.facelets()} (as put in)")  # type: ignore[union-attr]
            try:
                frames = capture_views(held.camera, walk.sequence, self._mover(held))
            except RequestError:
                raise
            except Exception as exc:
                raise self._refusal(exc) from None
            self._after_motion(held)
            walk.arms = self._arms_now(held)
            readings = read_stickers(frames, walk.sequence, self._regions(walk), self.session.config.scan.sampling)
            result: dict[str, Any] = {"facelets": None, "confidence": None, "net": None, "refused": None}
            try:
                decoded = decode(readings.rgb, walk.calibration, self.session.config)
            except VisionError as exc:
                result["refused"] = str(exc)
                self.tell(f"the check scan could not be read: {exc}")
            else:
                result.update(facelets=decoded.facelets, confidence=round(decoded.confidence, 3),
                              net=net_rows(decoded.facelets, decoded.colours))
                self.tell(f"decoded: {decoded.facelets} (confidence {decoded.confidence:.2f}), the cube as it "
                          "stands after the scan's turns: does the net match it?")
            if held.simulated:  # the virtual cube is known: say whether the decode is right
                truth = held.robot.virtual.facelets()  # type: ignore[union-attr]
                names = {letter: letter for letter in cube.FACES}
                result["virtual"] = {"facelets": truth, "net": net_rows(truth, names),
                                     "same": result["facelets"] is not None and same_cube(result["facelets"], truth)}
            with self._data:  # the robot moved on: no view is presented to retake
                walk.check, walk.step, walk.presented = result, "checked", None
                walk.verified = "refused" if result["refused"] else "asked"
            self._overlay(walk, walk.sequence.views[-1].name)
        return self.state()

    def verify(self, client: str, matches: bool) -> dict:
        with self._steady(client):
            walk = self._walk()
            if walk.check is None or walk.check.get("facelets") is None:
                raise RequestError(409, "no decoded check scan to confirm: run the check first", "matches")
            with self._data:
                walk.verified = "confirmed" if matches else "rejected"
            self.tell("the check's net matches the cube" if matches else
                      "the check scan was wrong: nothing will be saved. Check the regions and the light, then "
                      "start again")
        return self.state()

    def save(self, client: str, anyway: bool = False) -> dict:
        """The command's files and writers (scan.colours_file, scan.regions_file); simulated: nothing is
        written, the answer says what a real calibration would write."""
        from ..config import project_path
        from ..vision.colour import CalibrationError

        with self._steady(client):
            walk = self._walk()
            if walk.calibration is None:
                raise RequestError(409, "nothing to save: learn the colours first (from a scan that looks solved)")
            if walk.verified == "rejected":
                raise RequestError(409, "the check scan was wrong: nothing saved (start again)")
            if walk.verified == "asked":
                raise RequestError(409, "say first whether the check's net matches the cube", "matches")
            if walk.verified == "refused" and not anyway:
                raise RequestError(409, "the check scan could not be read: save anyway ({\"anyway\": true}) or "
                                        "start again", "anyway")
            config = self.session.config
            colours_path = project_path(config.scan.colours_file)
            regions_path = project_path(config.scan.regions_file)
            regions = self._regions(walk)
            if walk.held.simulated:  # the virtual cube's colours are the renderer's, not the maker's camera's
                text = (f"not saved (simulated): a real calibration writes the {len(walk.calibration.colours)} "
                        f"colours above into {colours_path} and the regions of {len(walk.sequence.views)} views "
                        f"({regions.source}) into {regions_path}; both files are unchanged")
                saved = {"saved": False, "colours_file": str(colours_path), "regions_file": str(regions_path),
                         "message": simulated(text)}
            else:
                try:
                    written_colours = walk.calibration.save(colours_path)
                    written_regions = regions.save(regions_path)
                except (OSError, CalibrationError) as exc:
                    raise RequestError(409, f"cannot save: {exc}") from None
                text = f"saved {written_colours} and {written_regions}"
                saved = {"saved": True, "colours_file": str(written_colours), "regions_file": str(written_regions),
                         "message": text}
            with self._data:
                walk.saved, walk.step = saved, "saved"
            self.tell(text)
            self._clear_overlay()
        return self.state()

    def cancel(self, client: str) -> dict:
        with self._steady(client):
            if self.walk is not None:
                with self._data:
                    self.walk = None
                self.tell("calibration cancelled: nothing saved")
                self._clear_overlay()
        return self.state()

    def picture(self, view: str) -> bytes | None:
        """A confirmed view's picture as JPEG (what its stickers were sampled from), or None."""
        import cv2

        walk = self.walk
        frame = walk.frames.get(view) if walk is not None else None
        if frame is None:
            return None
        ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 85])
        return bytes(data) if ok else None

    # -- the rules around each step ------------------------------------------------------------

    def _moving(self, client: str):
        """Held while the robot moves: the controlling client, no run going (the session's lock)."""
        return StepGuard(self.session, client)

    _steady = _moving  # the same rules for a step that moves nothing: the walk-through is one client's

    def _walk(self, moving: bool = False) -> Walk:
        walk = self.walk
        if walk is None:
            raise RequestError(409, "no calibration is going: start one (a solved cube in the robot)")
        if moving:
            stale = self._stale(walk)
            if stale:
                raise RequestError(409, self._mark(stale))
            arms = self._arms_now(walk.held)
            if walk.arms is not None and arms is not None and arms != walk.arms:
                raise RequestError(409, self._mark(
                    "the arms moved since the calibration's last view (a bring-up action?): the cube is no longer "
                    "where the scan's turns put it; start again with a solved cube"))
        return walk

    @staticmethod
    def _arms_now(held: HeldRobot) -> tuple | None:
        """The board's arm positions and grippers (None: not read)."""
        try:
            where = held.link.where()
        except Exception:  # not known: the check is skipped, the step's own motion says what is wrong
            return None
        return tuple(sorted(where.positions.items())), tuple(sorted(where.grippers.items()))

    def _stale(self, walk: Walk) -> str | None:
        """Why the cube is no longer where the walk-through left it, or None."""
        if self.session.held is not walk.held:
            return "a new cube was put in since the calibration started: start again with a solved cube"
        if self.session.run_id != walk.run_id:
            return (f"run {self.session.run_id} turned the cube since the calibration started: start again with a "
                    "solved cube")
        return None

    def _mark(self, text: str) -> str:
        return simulated(text) if self.simulated else text

    def _ready_arms(self, held: HeldRobot) -> None:
        """As a run's start: the simulated arms readied as its start readies them; a real robot's arms must
        be known (homed or squared in Bring-up), or nothing moves."""
        from ..arms.readiness import arms_problems

        try:
            if held.simulated:
                held.robot.prepare_arms()  # type: ignore[union-attr]  # a SimulatedRobot
            else:
                problems = arms_problems(held.link.where(), self.session.config.motion.steps_per_rev)
                if problems:
                    raise RequestError(409, panel_words("the arms are not ready: " + "; ".join(problems)))
            self._mover(held).learn()  # which pair holds: its first GRIP is not sent
        except RequestError:
            raise
        except Exception as exc:
            raise self._refusal(exc) from None

    def _first_regions(self, held: HeldRobot, sequence) -> Regions:
        """The simulated robot: the rendered camera's regions.  A real one: scan.regions_file when it fits
        the scan sequence, else the regions expected from camera.pose."""
        from ..config import project_path
        from ..vision.camera_geometry import Pose, scan_regions
        from ..vision.regions import Regions, RegionsError

        if held.simulated and held.robot.regions is not None:
            return held.robot.regions
        path = project_path(self.session.config.scan.regions_file)
        if path.exists():
            try:
                regions = Regions.load(path)
                regions.check(sequence)
                return regions
            except (RegionsError, OSError) as exc:
                self.tell(f"{path} does not fit ({exc}): the regions start from camera.pose")
        regions = scan_regions(Pose.from_config(self.session.config), sequence)
        regions.source = "camera.pose"
        return regions

    @staticmethod
    def _mover(held: HeldRobot):
        mover = held.robot.view_mover
        if mover is None:
            raise RequestError(409, "the robot is not started: it has no view mover")
        return mover

    def _move(self, walk: Walk, view) -> None:
        try:
            self._mover(walk.held).move_to(view)
        except Exception as exc:
            raise self._refusal(exc) from None
        self._after_motion(walk.held)
        walk.arms = self._arms_now(walk.held)

    def _after_motion(self, held: HeldRobot) -> None:
        from ..sim.virtual_robot import MechanicalError

        try:
            held.sync()
        except MechanicalError as exc:
            raise RequestError(409, simulated(f"the virtual cube cannot go on from here ({exc}): put a new cube "
                                              "in (POST /api/sim/new-cube), then start again")) from None

    def _refusal(self, exc: Exception) -> RequestError:
        from .bringup_api import refused

        return RequestError(409, self._mark(panel_words(f"the robot stopped: {refused(exc)}")))

    @staticmethod
    def _shown_views(walk: Walk) -> list[str]:
        return [v.name for v in walk.sequence.views if v.name in walk.frames or v.name == walk.presented]

    def _sample(self, walk: Walk, view: str) -> list:
        from ..vision.regions import sample_sticker

        frame, sampling = walk.frames[view], self.session.config.scan.sampling
        return [sample_sticker(frame, quad, sampling) for quad in walk.quads[view]]

    @staticmethod
    def _regions(walk: Walk) -> Regions:
        from ..vision.regions import Regions

        source = "panel" if walk.adjusted else walk.source
        return Regions({name: quads.copy() for name, quads in walk.quads.items()}, walk.image_size, source=source)

    def _set_quads(self, walk: Walk, view: str, quads: np.ndarray) -> None:
        with self._data:
            walk.quads[view] = quads
            walk.adjusted.add(view)
            if view in walk.frames:
                walk.samples[view] = self._sample(walk, view)
            if walk.findings is not None or walk.check is not None:  # learned from the old regions
                walk.findings, walk.check, walk.verified = None, None, "skipped"
                walk.step = "views-done"
                self.tell("the regions changed: learn the colours again")
        self._overlay(walk, view)

    def _overlay(self, walk: Walk, view: str) -> None:
        """The live view outlines the view's regions, with the colour sampled in each once confirmed."""
        live = self.session.live
        if live is None:
            return
        samples = walk.samples.get(view)
        colours = [tuple(reversed(s.rgb)) for s in samples] if samples else None  # BGR
        live.set_overlay(list(walk.quads[view]), colours, label=f"calibrate: {view}")

    def _clear_overlay(self) -> None:
        if self.session.live is not None:
            self.session.live.set_overlay([], None, label="")


__all__ = ["PanelCalibration", "STEPS"]
