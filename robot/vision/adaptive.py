"""The adaptive scan (issue 13): decode after each view and stop as soon as the decoder is sure.

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

from .. import cube
from ..scan_sequence import ScanSequence
from .scan import NoMotion, ScanResult, StickerReadings, drift_warnings, save_pictures


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
    if scanner.config["scan"]["adaptive_from"] and not scanner.sequence.finish:
        return adaptive_scan(scanner)
    return scanner.scan()


def adaptive_scan(scanner) -> ScanResult:
    """Present views one by one, stop when the decoder is sure (the result names the views taken)."""
    config, sequence = scanner.config, scanner.sequence
    presenter = scanner.presenter or NoMotion()
    first = max(1, config["scan"]["adaptive_from"])
    frames, samples = {}, []
    read_s = 0.0
    with scanner.camera:
        for k, view in enumerate(sequence.views, start=1):
            presenter.present(view)
            frames[view.name] = scanner.camera.capture(view.name)
            if k == len(sequence.views):
                break  # every view: the full scan, read as it always was
            started = time.perf_counter()
            samples.append(sample_view(frames[view.name], k - 1, sequence, scanner.regions, scanner.sampling))
            if k >= first:
                taken = sequence.prefix(k)
                readings, decoded, _ = decode_partial(samples, taken, scanner.calibration, config)
                read_s += time.perf_counter() - started
                if decoded is not None:
                    return _result(scanner, taken, readings, frames, decoded, read_s)
            else:
                read_s += time.perf_counter() - started
    return scanner.read(frames)


def _result(scanner, taken: ScanSequence, readings, frames, decoded, read_s: float) -> ScanResult:
    scan_cfg = scanner.config["scan"]
    result = ScanResult(readings, frames, decoded, None, read_ms=read_s * 1000.0, sequence=taken)
    result.warnings += drift_warnings(readings, decoded, scanner.calibration, scan_cfg["drift_warn_delta_e"])
    if scan_cfg["save_images"]:
        from ..config import project_path

        result.images = save_pictures(result, taken, scanner.regions, project_path(scan_cfg["images_dir"]))
    return result
