"""Doctor checks of the vision side: the colour calibration and the camera."""

from __future__ import annotations

import datetime as _dt
import os
import threading

from ..doctor import FAIL, OK, WARN, Result

CALIBRATION_MAX_AGE_DAYS = 30
CAMERA_OPEN_TIMEOUT_S = 3.0


def check_colour_calibration(config, args) -> list[Result]:
    """Is there a colour calibration, and how old is it?"""
    from ..config import project_path
    from .colour import Calibration, CalibrationError

    path = project_path(config["scan"]["colours_file"])
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


def _open_capture(device, outcome: dict) -> None:
    import cv2

    capture = cv2.VideoCapture(device)
    try:
        outcome["opened"] = bool(capture.isOpened())
    finally:
        capture.release()


def check_camera(config, args) -> list[Result]:
    """Can the configured camera be opened?  Never blocks longer than CAMERA_OPEN_TIMEOUT_S."""
    device = str(config["camera"]["device"]).strip()
    item = f"camera.device {device}"
    if os.path.isdir(device):
        views = sorted(p for p in os.listdir(device) if p.endswith(".png"))
        return [Result(item, OK, f"image folder with {len(views)} .png file(s)")]
    if device.isdigit() and os.name == "posix" and not os.path.exists(f"/dev/video{device}"):
        return [Result(item, WARN, f"not found: no /dev/video{device}; plug the camera in or set camera.device")]
    if not device.isdigit() and "%" not in device and not os.path.exists(device):
        return [Result(item, WARN, f"not found: {device} does not exist; set camera.device")]
    outcome: dict = {}
    # A wedged driver can block VideoCapture for a long time: open it in a daemon thread.
    opener = threading.Thread(target=_open_capture, args=(int(device) if device.isdigit() else device, outcome),
                              daemon=True)
    opener.start()
    opener.join(CAMERA_OPEN_TIMEOUT_S)
    if opener.is_alive():
        return [Result(item, WARN, f"not answering: OpenCV did not open it within {CAMERA_OPEN_TIMEOUT_S:.0f} s")]
    if not outcome.get("opened"):
        return [Result(item, WARN, "not found: OpenCV cannot open it (busy, unplugged or no permission?)")]
    return [Result(item, OK, "opens")]
