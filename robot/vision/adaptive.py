"""The adaptive scan: decode after each view and stop as soon as the decoder is sure.

From view `scan.adaptive_from` on, after each view the stickers seen so far are decoded with the
rest unseen (robot/vision/partial.py: the seen stickers alone must determine the cube, with the
usual margins, and a partial scan's colours must sit well apart).  The default sequence's first
two views (U+F, then D+B after a half turn) show two stickers of every corner: enough when the
readings are clean.  A doubt takes the next view; after the last view the scan is the full scan,
read exactly as before (`Scanner.read`), so its results do not change.

The result of a scan that stopped early is in the robot frame after the views taken
(ScanResult.sequence: those views), which is where the cube is: the solver starts from there.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any

from .. import cube
from ..scan_sequence import ScanSequence
from .scan import NoMotion, ScanResult, StickerReadings, arm_actions, drift_warnings, save_pictures, still_since


def sample_view(frame, view_index: int, sequence: ScanSequence, regions, sampling) -> list:
    """The StickerSample of each region of one view (in region order)."""
    from .regions import sample_sticker

    view = sequence.views[view_index]
    regions.check_frame(view.name, frame)
    return [sample_sticker(frame, quad, sampling) for quad in regions.quads(view.name)]


def partial_readings(samples: list, sequence: ScanSequence) -> StickerReadings:
    """The seen facelets' samples in the frame after `sequence`'s views (None where unseen); a facelet
    seen in more than one view keeps the most uniform reading (as read_stickers does)."""
    best: dict[int, tuple] = {}
    for v, view in enumerate(sequence.views):
        for r, final in enumerate(sequence.final_positions(v)):
            sample = samples[v][r]
            if final not in best or sample.spread < best[final][0].spread:
                best[final] = (sample, (view.name, r))
    return StickerReadings([best[i][0] if i in best else None for i in range(cube.FACELET_COUNT)],
                           [best[i][1] if i in best else None for i in range(cube.FACELET_COUNT)])


def decode_partial(samples: list, sequence: ScanSequence, calibration, config):
    """(StickerReadings, DecodeResult or None, VisionError or None) of the views in `sequence`."""
    from .partial import decode_partial as decode_rgb
    from .readings import VisionError

    readings = partial_readings(samples, sequence)
    unseen = [i for i, s in enumerate(readings.samples) if s is None]
    rgb = [None if s is None else s.rgb for s in readings.samples]
    try:
        return readings, decode_rgb(rgb, unseen, calibration, config), None
    except VisionError as exc:
        return readings, None, exc


def scan(scanner) -> ScanResult:
    """The run's scan: adaptive (`scan.adaptive_from`, with an empty `scan.finish`), else scanner.scan()."""
    if scanner.config.scan.adaptive_from and not scanner.sequence.finish:
        return adaptive_scan(scanner)
    return scanner.scan()


def adaptive_scan(scanner) -> ScanResult:
    """Present views one by one, stop when the decoder is sure (the result names the views taken).

    Overlapped: each view's stickers are sampled in a worker while the robot presents the next view;
    the pictures are saved in the background (ScanResult.images once `wait_pictures` returns), so the
    plan can start the moment the cube is known.  scanner.on_frame and scanner.on_decode are told each
    frame as it is taken and each decode (robot/vision/scan.py Scanner).
    """
    config, sequence = scanner.config, scanner.sequence
    view_mover = scanner.view_mover or NoMotion()
    first = max(1, config.scan.adaptive_from)
    frames, sampled = {}, []
    read_s = 0.0
    from .cameras import capture_moment, capture_record

    marks: dict[str, Any] = {"views": []}
    scanner.marks = marks  # clock times of this scan's stages (robot/run/waterfall.py)
    opening = time.perf_counter()
    with scanner.camera, sampling_worker() as worker:
        marks["camera_open"] = (opening, time.perf_counter())
        for moment in sequence.moments():  # one view, or views of several cameras at once
            views = [sequence.views[i] for i in moment]
            motions, charged = [], []
            for view in views:
                started = time.perf_counter()
                view_mover.move_to(view)  # meanwhile the worker samples the previous views
                motions.append((started, time.perf_counter()))
                charged.append(arm_actions(view_mover, view))
            for index, view, frame, motion, actions in zip(moment, views, capture_moment(scanner.camera, views, still_since(view_mover)),
                                                           motions, charged):
                frames[view.name] = frame
                record = capture_record(scanner.camera, view.name)
                marks["views"].append({"view": view.name, "actions": actions, "motion": motion, "frame": record})
                sampled.append(worker.submit(sample_view, frame, index, sequence, scanner.regions, scanner.sampling))
                if scanner.on_frame is not None:
                    scanner.on_frame(view.name, record)
            k = moment[-1] + 1  # views taken so far
            if k < first and k < len(sequence.views):
                continue
            started = time.perf_counter()
            samples = [future.result() for future in sampled]
            if k == len(sequence.views):  # every view: read as the full scan always was (read_stickers' rule)
                readings = partial_readings(samples, sequence)
                if config.scan.second_look:
                    result = full_or_second_look(scanner, samples, readings, frames, marks, view_mover)
                    result.read_ms += read_s * 1000.0
                    marks["decode"] = (started, time.perf_counter())
                    return result
                result = _full_result(scanner, readings, frames)
                result.read_ms += (time.perf_counter() - started) * 1000.0 + read_s * 1000.0
                marks["decode"] = (started, time.perf_counter())
                return result
            taken = sequence.prefix(k)
            readings, decoded, doubt = decode_partial(samples, taken, scanner.calibration, config)
            read_s += time.perf_counter() - started
            if scanner.on_decode is not None:
                scanner.on_decode(views[-1].name, k, decoded, doubt)
            if decoded is not None:
                marks["decode"] = (started, time.perf_counter())
                return _result(scanner, taken, readings, frames, decoded, read_s)
    raise AssertionError("unreachable: the last view always returns")


@contextmanager
def sampling_worker():
    """The thread that samples each view while the robot presents the next.  Let go without joining it:
    once the scan returns it has nothing left to do, and joining would only wait for a thread switch
    (a few ms of the plan's start); a scan stopped by an error cancels what was queued."""
    from concurrent.futures import ThreadPoolExecutor

    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scan-sampling")
    try:
        yield worker
    finally:
        worker.shutdown(wait=False, cancel_futures=True)


def _full_result(scanner, readings: StickerReadings, frames, decoded_as=None) -> ScanResult:
    """What read_frames makes of every view (the same decode and warnings), pictures in the background.
    decoded_as: (decoded, error, seconds) when the readings were decoded already (robot/vision/second_look.py)."""
    scan_cfg = scanner.config.scan
    if decoded_as is None:
        decoded, error, decode_s = timed_decode(scanner, readings)
    else:
        decoded, error, decode_s = decoded_as
    result = ScanResult(readings, frames, decoded, error, read_ms=decode_s * 1000.0)
    if scanner.on_decode is not None:  # before a refused scan's pictures are saved
        scanner.on_decode(scanner.sequence.views[-1].name, len(scanner.sequence.views), decoded, error)
    result.warnings += drift_warnings(readings, decoded, scanner.calibration, scan_cfg.drift_warn_delta_e)
    _save_pictures(scanner, result, scanner.sequence, background=decoded is not None)
    return result


def _result(scanner, taken: ScanSequence, readings, frames, decoded, read_s: float) -> ScanResult:
    scan_cfg = scanner.config.scan
    result = ScanResult(readings, frames, decoded, None, read_ms=read_s * 1000.0, sequence=taken)
    result.warnings += drift_warnings(readings, decoded, scanner.calibration, scan_cfg.drift_warn_delta_e)
    _save_pictures(scanner, result, taken, background=True)
    return result


def _save_pictures(scanner, result: ScanResult, sequence: ScanSequence, background: bool) -> None:
    """scan.save_images: a decoded scan's pictures are written while the plan runs (wait_pictures
    fills result.images); a refused scan's at once (the run stops or rescans, nothing waits)."""
    import threading

    from ..config import project_path

    scan_cfg = scanner.config.scan
    if not scan_cfg.save_images:
        return
    folder = project_path(scan_cfg.images_dir)
    if not background:
        result.images = save_pictures(result, sequence, scanner.regions, folder)
        return
    saving = threading.Thread(target=_save_into, args=(result, sequence, scanner.regions, folder),
                              name="scan-pictures", daemon=True)
    _SAVING[id(result)] = saving
    saving.start()


_SAVING: dict = {}  # id(ScanResult) -> the thread writing its pictures


def _save_into(result, sequence, regions, folder) -> None:
    try:
        result.images = save_pictures(result, sequence, regions, folder)
    except OSError as exc:  # a full disk must not stop a run: the report says so (wait_pictures)
        result.picture_error = f"scan pictures not saved: {exc}"


def wait_pictures(result: ScanResult) -> list:
    """The paths of the scan's pictures, once written (at once when saved in the foreground); a
    failure to write them is in result.picture_error."""
    saving = _SAVING.pop(id(result), None)
    if saving is not None:
        saving.join()
    return result.images


# ---------------------------------------------------------------------------
# The second look (config `scan.second_look`, on by default: docs/vision.md has its numbers).
#
# A lamp's reflection stays where the lamp is: a rescan from the same pose sees the same washed-out
# stickers.  When the decode after the last view is refused and the best cube sees washed-out stickers
# (robot/vision/fused.py washed_places), the robot presents them again from a pose that puts them on
# the other face of the camera's view (robot/scan_sequence.py choose_second_looks: at most
# SECOND_LOOKS extra views, each sampled with the regions of the sequence's view that shows the same
# places), and every look of every sticker is decoded together (decode_fused), with all the
# single-look decoder's refusals.  The extra views' motions and frames are in the scan's marks like
# the others' (the run's waterfall); the result names the views taken (ScanResult.sequence), so the
# solver starts from where the cube then is.  A scan the first decode is sure of is unchanged.

SECOND_LOOKS = 2  # extra views at most: one view shows stickers of two adjacent faces of the cube


def full_or_second_look(scanner, samples: list, readings: StickerReadings, frames: dict, marks: dict,
                        view_mover) -> ScanResult:
    """The full scan's result, or, when it is refused over washed-out stickers, the fused second look's."""
    decoded, error, decode_s = timed_decode(scanner, readings)
    views = [] if error is None or error.result is None else _views_for(scanner, readings, error.result)
    if error is None or not views:
        return _full_result(scanner, readings, frames, (decoded, error, decode_s))
    if scanner.on_decode is not None:  # the full scan's doubt, as a decode that takes the next view
        scanner.on_decode(scanner.sequence.views[-1].name, len(scanner.sequence.views), None, error)
    return _second_look(scanner, samples, frames, marks, view_mover, views, error.result, decode_s)


def _views_for(scanner, readings: StickerReadings, result) -> list:
    """The second-look views for the stickers `result` sees washed out (none when there are none, or no
    view of the robot can turn them)."""
    from ..scan_sequence import ScanConfigError, choose_second_looks, second_look_views
    from .fused import washed_places

    sequence = scanner.sequence
    doubtful = washed_places(sequence, readings.rgb, result)
    if not doubtful:
        return []
    candidates = [v for v in second_look_views() if sequence.region_view(v) is not None]
    views = choose_second_looks(sequence, doubtful, SECOND_LOOKS, candidates)
    extended = sequence
    for view in views:
        extended = extended.with_view(view)
    try:
        extended.check_robot(scanner.config)
    except ScanConfigError:  # (a robot whose pairs or angles differ: no second look)
        return []
    return views


def _second_look(scanner, samples, frames, marks, view_mover, views, result, decode_s: float) -> ScanResult:
    from .cameras import capture_moment, capture_record
    from .fused import decode_fused
    from .regions import Regions

    sequence: ScanSequence = scanner.sequence
    extended = sequence
    for view in views:
        extended = extended.with_view(view)
    twins = {v.name: sequence.region_view(v) for v in views}  # the second looks' regions are their twins'
    regions = scanner.regions
    regions = Regions({**regions.views, **{name: regions.quads(twin.name) for name, twin in twins.items() if twin}},
                      regions.image_size, regions.source)
    all_samples = list(samples)
    read_s = decode_s
    for index, view in enumerate(views, start=len(sequence.views)):
        started = time.perf_counter()
        view_mover.move_to(view)
        motion = (started, time.perf_counter())
        actions = arm_actions(view_mover, view)
        frame = capture_moment(scanner.camera, [view], still_since(view_mover))[0]
        frames[view.name] = frame
        record = capture_record(scanner.camera, view.name)
        marks["views"].append({"view": view.name, "actions": actions, "motion": motion, "frame": record})
        if scanner.on_frame is not None:
            scanner.on_frame(view.name, record)
        started = time.perf_counter()
        all_samples.append(sample_view(frame, index, extended, regions, scanner.sampling))
        read_s += time.perf_counter() - started
    started = time.perf_counter()
    looks, sources = _looks(extended, sequence, views, all_samples, result)
    readings = _chosen(looks, sources)
    from .readings import VisionError

    decoded, error = None, None
    try:
        decoded = decode_fused(looks, scanner.calibration, scanner.config)
    except VisionError as exc:
        error = exc
    read_s += time.perf_counter() - started
    scan = ScanResult(readings, frames, decoded, error, read_ms=read_s * 1000.0, sequence=extended)
    if scanner.on_decode is not None:
        scanner.on_decode(views[-1].name, len(extended.views), decoded, error)
    scan.warnings += drift_warnings(readings, decoded, scanner.calibration, scanner.config.scan.drift_warn_delta_e)
    saver = _Saver(scanner, regions)
    _save_pictures(saver, scan, extended, background=decoded is not None)
    return scan


def _looks(extended, sequence, views, all_samples, result):
    """Each facelet's looks (robot/vision/fused.py second_looks) and, in the same order, their samples
    and sources (view name, region)."""
    from .fused import second_looks

    looks = second_looks(sequence, views, [[s.rgb for s in view_samples] for view_samples in all_samples], result)
    sources: list[list] = [[] for _ in looks]
    for k, view in enumerate(extended.views):
        for region, final in enumerate(extended.final_positions(k)):
            sources[final].append((all_samples[k][region], (view.name, region)))
    return looks, sources


def _chosen(looks, sources) -> StickerReadings:
    """The sample the fused decode reads for each facelet (its most trusted look)."""
    from .fused import fused_readings

    rgb = fused_readings(looks)
    picked = []
    for facelet, reading in zip(sources, rgb):
        picked.append(next(item for item in facelet if tuple(float(c) for c in item[0].rgb) == tuple(reading)))
    return StickerReadings([sample for sample, _ in picked], [source for _, source in picked])


class _Saver:
    """The scanner as the picture saver sees it, with the second looks' regions."""

    def __init__(self, scanner, regions):
        self.config, self.regions = scanner.config, regions


def timed_decode(scanner, readings):
    """(the decoded cube or None, the VisionError or None, the seconds the decode took) of full readings."""
    from .decode import VisionError, decode

    started = time.perf_counter()
    decoded, error = None, None
    try:
        decoded = decode(readings.rgb, scanner.calibration, scanner.config)
    except VisionError as exc:
        error = exc
    return decoded, error, time.perf_counter() - started
