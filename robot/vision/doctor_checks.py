"""Doctor checks of the vision side: the colour calibration and the camera."""

from __future__ import annotations

import datetime as _dt
import os
import threading

from ..checks import FAIL, OK, WARN, Result
from ..config_types import Config

CALIBRATION_MAX_AGE_DAYS = 30
CAMERA_OPEN_TIMEOUT_S = 3.0


def check_colour_calibration(config: Config, args) -> list[Result]:
    """Is there a colour calibration, and how old is it?"""
    from ..config import project_path
    from .colour import Calibration, CalibrationError

    path = project_path(config.scan.colours_file)
    if not path.exists():
        return [Result(str(path), WARN, "missing: run `cube-robot calibrate colours` (scans work without it "
                                        "but cannot warn about colour drift)")]
    try:
        calibration = Calibration.load(path)
    except (CalibrationError, OSError, ValueError) as exc:
        return [Result(str(path), FAIL, f"unreadable: {exc}; run `cube-robot calibrate colours` again")]
    try:
        created = _dt.datetime.fromisoformat(str(calibration.created))
    except ValueError:
        return [Result(str(path), WARN, f"created date {calibration.created!r} is not a date; "
                                        "recalibrate with `cube-robot calibrate colours`")]
    if created.tzinfo is None:
        created = created.replace(tzinfo=_dt.timezone.utc)
    age_days = (_dt.datetime.now(_dt.timezone.utc) - created).total_seconds() / 86400
    if age_days > CALIBRATION_MAX_AGE_DAYS:
        return [Result(str(path), WARN, f"{age_days:.0f} days old (over {CALIBRATION_MAX_AGE_DAYS}): lighting "
                                        "may have changed; rerun `cube-robot calibrate colours`")]
    return [Result(str(path), OK, f"{age_days:.0f} days old")]


def _grab_first_view(config: Config, camera, outcome: dict) -> None:
    from ..scan_sequence import ScanSequence

    try:
        view = ScanSequence.from_config(config).views[0].name
        with camera:
            frame = camera.capture(view)
        outcome["size"] = (int(frame.shape[1]), int(frame.shape[0]))
    except Exception as exc:  # what the camera said is the finding
        outcome["error"] = f"{type(exc).__name__}: {exc}"


def check_camera(config: Config, args) -> list[Result]:
    """Does the camera open and give a frame?  Never blocks longer than CAMERA_OPEN_TIMEOUT_S.

    The run's pre-flight passes its own camera (args.camera); the frame size found is left in
    args.camera_frame_size for the regions check.
    """
    from .camera import open_camera

    device = str(config.camera.device).strip()
    item = f"camera.device {device}"
    fix = "plug the camera in (not used by another program) or set camera.device in config.yaml"
    camera = getattr(args, "camera", None)
    if camera is None:
        if device.isdigit() and os.name == "posix" and not os.path.exists(f"/dev/video{device}"):
            return [Result(item, FAIL, f"not found: no /dev/video{device}; {fix}")]
        if not device.isdigit() and "%" not in device and not os.path.exists(device):
            return [Result(item, FAIL, f"not found: {device} does not exist; {fix}")]
        camera = open_camera(config)
    outcome: dict = {}
    # A wedged driver can block VideoCapture for a long time: open it in a daemon thread.
    grabber = threading.Thread(target=_grab_first_view, args=(config, camera, outcome), daemon=True)
    grabber.start()
    grabber.join(CAMERA_OPEN_TIMEOUT_S + float(config.camera.settle_frames) / 10)
    if grabber.is_alive():
        return [Result(item, FAIL, f"not answering: no frame within {CAMERA_OPEN_TIMEOUT_S:.0f} s; {fix}")]
    if "error" in outcome:  # a CameraError already says what to set; other errors get the fix
        said = outcome["error"]
        return [Result(item, FAIL, f"gives no frame: {said}" + ("" if "camera.device" in said else f"; {fix}"))]
    width, height = outcome["size"]
    if args is not None:
        args.camera_frame_size = (width, height)
    return [Result(item, OK, f"opens and gives a {width}x{height} frame")]


def check_regions(config: Config, args) -> list[Result]:
    """Is the regions file there, readable, complete for the scan views, and for this camera's frame size?"""
    from ..config import project_path
    from ..scan_sequence import ScanSequence
    from .regions import Regions

    path = project_path(config.scan.regions_file)
    fix = "run 'cube-robot calibrate colours' (it writes the regions) or set scan.regions_file"
    if not path.exists():
        return [Result(str(path), FAIL, f"missing: {fix}")]
    try:
        regions = Regions.load(path)
        regions.check(ScanSequence.from_config(config))
    except Exception as exc:
        return [Result(str(path), FAIL, f"unusable: {exc}; {fix}")]
    size = getattr(args, "camera_frame_size", None)
    width, height = (int(v) for v in regions.image_size)
    if size is not None and tuple(size) != (width, height):
        return [Result(str(path), FAIL, f"set for {width}x{height} frames but the camera gives {size[0]}x{size[1]}: "
                                        f"set camera.width/height to {width}x{height} or {fix}")]
    checked = "matches the camera's frame size" if size is not None else "camera frame size not checked"
    return [Result(str(path), OK, f"{width}x{height}, {checked}")]
