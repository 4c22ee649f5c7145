"""Cameras: a real one through OpenCV VideoCapture, and file-based ones.

Every camera has the same interface:
    with camera:                      # open() / close()
        frame = camera.capture(view)  # BGR uint8 frame of that scan view
    camera.settings()                 # what it ran with (saved in calibrations)

`OpenCVCamera` locks exposure and white balance (manual values from config, or
'auto-then-freeze': let the automatics settle, then lock what they chose;
when the driver refuses a manual value it falls back to that).  A live camera
then runs a grabber thread (robot/vision/grabber.py): each view uses the first
frame whose exposure began camera.settle_ms after the view's motion ended
(averaged over camera.average_frames).  It also reads video files and image
sequences (anything VideoCapture opens: frames skipped by flush_frames), which
is how tests run it without hardware.

`FileCamera` reads <folder>/<view>.png (or a <folder>/<view>/ folder of frames,
averaged), so the whole pipeline runs on recorded or rendered pictures.
`MemoryCamera` serves frames held in memory (rendered in the same process).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config_types import Config

if TYPE_CHECKING:  # the grabber is imported when a live camera opens
    from .grabber import CameraTiming, FrameGrabber

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")
AUTO, FREEZE = "auto", "auto-then-freeze"


class CameraError(RuntimeError):
    """The camera cannot be opened or gives no frame (message names the device / view)."""


class Camera:
    """Base: context manager plumbing."""

    timing: CameraTiming | None = None  # a live camera's (the waterfall's floors); None: unknown

    def open(self) -> "Camera":
        return self

    def close(self) -> None:
        return None

    def capture(self, view: str, still_since: float | None = None) -> np.ndarray:
        """The view's frame; still_since: since when no arm has moved (grabber.view_frames), for cameras
        that pick frames by time (a recorded picture ignores it)."""
        raise NotImplementedError

    def settings(self) -> dict:
        return {}

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()
        return False


class MemoryCamera(Camera):
    """Frames held in memory: {view name: BGR frame}."""

    def __init__(self, frames: dict):
        self.frames = dict(frames)

    def capture(self, view: str, still_since: float | None = None) -> np.ndarray:
        if view not in self.frames:
            raise CameraError(f"no frame for view {view!r} (have: {', '.join(self.frames)})")
        return self.frames[view]

    def settings(self) -> dict:
        return {"device": "memory"}


class FileCamera(Camera):
    """A folder of pictures, one per scan view: <folder>/<view>.png, or <folder>/<view>/*.png averaged."""

    def __init__(self, folder):
        self.folder = Path(folder)

    def open(self) -> "FileCamera":
        if not self.folder.is_dir():
            raise CameraError(f"file camera: {self.folder} is not a folder of <view>.png pictures")
        return self

    def capture(self, view: str, still_since: float | None = None) -> np.ndarray:
        import cv2

        frames_dir = self.folder / view
        if frames_dir.is_dir():
            paths = sorted(p for p in frames_dir.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        else:
            paths = [self.folder / f"{view}{suffix}" for suffix in IMAGE_SUFFIXES]
            paths = [p for p in paths if p.is_file()][:1]
        if not paths:
            raise CameraError(f"file camera: no picture for view {view!r} in {self.folder} "
                              f"(expected {view}.png or a {view}/ folder of frames)")
        frames: list[np.ndarray] = []
        for path in paths:
            frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if frame is None:
                raise CameraError(f"file camera: cannot read {path} as an image")
            if frames and frame.shape != frames[0].shape:
                raise CameraError(f"file camera: {path} is {frame.shape[1]}x{frame.shape[0]}, "
                                  f"unlike the other frames of view {view!r}")
            frames.append(frame)
        return average_frames(frames)

    def settings(self) -> dict:
        return {"device": str(self.folder), "kind": "file"}


_UNITS = {"_k": "K", "_s": "s", "_ms": "ms", "_px": "px"}


def describe_settings(settings: dict) -> str:
    """A camera's settings() (saved with a calibration as they are) in words: 'simulated camera, 1500 fps,
    exposure 0.0004 s, ...'; a settings object's repr (the simulated lighting) by its fields."""
    import re

    def words(key: str, value) -> str:
        text = f"{value:g}" if isinstance(value, float) else str(value)
        if key in ("camera", "fps"):
            return f"{text} {key}"
        for suffix, unit in _UNITS.items():
            if key.endswith(suffix):
                return f"{key[:-len(suffix)].replace('_', ' ')} {text} {unit}"
        return f"{key.replace('_', ' ')} {text}"

    parts = []
    for key, value in settings.items():
        fields = re.fullmatch(r"[A-Za-z_]\w*\((.*)\)", value) if isinstance(value, str) else None
        if isinstance(value, dict):  # several cameras: each by name
            parts.append(f"{key} ({describe_settings(value)})")
        elif fields:
            pairs = re.findall(r"(\w+)=(\([^)]*\)|[^,]+)", fields[1])
            parts.append(f"{key} (" + ", ".join(words(k, v.strip()) for k, v in pairs) + ")")
        else:
            parts.append(words(key, value))
    return ", ".join(parts)


def average_frames(frames) -> np.ndarray:
    if len(frames) == 1:
        return frames[0]
    total = np.zeros(frames[0].shape, np.float32)
    for frame in frames:
        total += frame
    return np.clip(np.round(total / len(frames)), 0, 255).astype(np.uint8)


class OpenCVCamera(Camera):
    """A camera, video file or image sequence opened with cv2.VideoCapture."""

    def __init__(self, device, width: int = 640, height: int = 480, exposure: str = FREEZE,
                 white_balance: str = FREEZE, settle_frames: int = 30, flush_frames: int = 4,
                 average_frames: int = 3, log=None):
        self.device = _parse_device(device)
        self.width, self.height = width, height
        self.exposure, self.white_balance = str(exposure), str(white_balance)
        self.settle_frames, self.flush_frames, self.average_count = settle_frames, flush_frames, average_frames
        self.capture_device: Any = None  # a cv2.VideoCapture while open
        self.log = log or (lambda message: None)
        self.locked: dict = {}
        self.timing = None  # from_config's; default timing otherwise
        self.grabber: FrameGrabber | None = None  # a live camera's frame grabber thread, while open
        self.last_capture: dict | None = None  # times of the last view's frame (the run's waterfall)

    @classmethod
    def from_config(cls, config: Config, log=None) -> "OpenCVCamera":
        from .grabber import CameraTiming

        c = config.camera
        camera = cls(c.device, c.width, c.height, c.exposure, c.white_balance,
                     c.settle_frames, c.flush_frames, c.average_frames, log=log)
        camera.timing = CameraTiming.from_config(config)
        return camera

    def open(self) -> "OpenCVCamera":
        import cv2

        # OpenCV tries backend after backend and prints each one's failure; our own error names the device.
        logging = cv2.utils.logging
        level = logging.getLogLevel()
        logging.setLogLevel(logging.LOG_LEVEL_SILENT)
        try:
            cap = cv2.VideoCapture(self.device)
        finally:
            logging.setLogLevel(level)
        if not cap.isOpened():
            cap.release()
            hint = " (is it plugged in, and not used by another program?)" if isinstance(self.device, int) \
                or str(self.device).startswith("/dev/") else " (does the file exist, and can OpenCV read it?)"
            raise CameraError(f"cannot open camera {self.device!r}{hint}; set camera.device in config.yaml")
        self.capture_device = cap
        self.is_live = isinstance(self.device, int) or str(self.device).startswith("/dev/")
        if self.is_live:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.width)
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.height)
            cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)  # fewer stale frames where the backend allows it
            self._lock_exposure_and_white_balance()
            self.start_grabber()
        return self

    def start_grabber(self, clock=None) -> None:
        """From now on frames are grabbed on a thread and picked by time (live cameras)."""
        from .grabber import CameraTiming, FrameGrabber, RealClock

        timing = self.timing or CameraTiming(average_frames=self.average_count)
        self.grabber = FrameGrabber(self.capture_device, timing, clock or RealClock, name=repr(self.device)).start()

    def close(self) -> None:
        if self.grabber is not None:
            self.grabber.stop()
            self.grabber = None
        if self.capture_device is not None:
            self.capture_device.release()
            self.capture_device = None

    def _read(self, what: str) -> np.ndarray:
        ok, frame = self.capture_device.read()
        if not ok or frame is None:
            raise CameraError(f"camera {self.device!r} gave no frame ({what})")
        return frame

    def _lock_exposure_and_white_balance(self) -> None:
        """Manual values where the driver takes them; otherwise let auto settle, then freeze it."""
        import cv2

        cap = self.capture_device
        controls = {
            # name: (auto property, auto-on, auto-off, value property, configured); V4L2 values: auto
            # exposure 3 = auto, 1 = manual.
            "exposure": (cv2.CAP_PROP_AUTO_EXPOSURE, 3, 1, cv2.CAP_PROP_EXPOSURE, self.exposure),
            "white_balance": (cv2.CAP_PROP_AUTO_WB, 1, 0, cv2.CAP_PROP_WB_TEMPERATURE, self.white_balance),
        }
        to_freeze = []
        for name, (auto_prop, auto_on, auto_off, value_prop, wanted) in controls.items():
            if wanted == AUTO:
                cap.set(auto_prop, auto_on)
                self.locked[name] = AUTO
                continue
            if wanted != FREEZE:
                value = float(wanted)
                cap.set(auto_prop, auto_off)
                accepted = cap.set(value_prop, value) and abs(cap.get(value_prop) - value) <= max(1.0, abs(value) * 0.05)
                if accepted:
                    self.locked[name] = value
                    continue
                self.log(f"camera refused manual {name} {wanted}; letting auto settle, then freezing it")
            cap.set(auto_prop, auto_on)
            to_freeze.append((name, auto_prop, auto_off, value_prop))
        if to_freeze:
            for _ in range(self.settle_frames):
                self._read("while auto exposure / white balance settle")
            for name, auto_prop, auto_off, value_prop in to_freeze:
                chosen = cap.get(value_prop)
                frozen = cap.set(auto_prop, auto_off) and cap.set(value_prop, chosen)
                self.locked[name] = float(chosen) if frozen else "auto (driver cannot lock it)"
                if not frozen:
                    self.log(f"camera cannot lock {name}: colours may drift; prefer a camera with manual controls")

    def capture(self, view: str, still_since: float | None = None) -> np.ndarray:
        # The view's motion is done when the scan asks for its frame (still_since: grabber.view_frames).
        motion_end = self.grabber.clock.now() if self.grabber is not None else time.perf_counter()
        if self.capture_device is None:
            self.open()
        if self.grabber is not None:
            from .grabber import GrabberError, view_frames

            try:
                image, self.last_capture = view_frames(self.grabber, motion_end, still_since=still_since)
            except GrabberError as exc:
                raise CameraError(f"{exc} (view {view!r})") from None
            return image
        # A video file or image sequence: skip flush_frames, average average_frames.
        for _ in range(self.flush_frames):
            if not self.capture_device.grab():
                raise CameraError(f"camera {self.device!r} gave no frame (flushing before view {view!r})")
        frames = [self._read(f"view {view!r}") for _ in range(self.average_count)]
        return average_frames(frames)

    def settings(self) -> dict:
        out = {"device": str(self.device), "width": self.width, "height": self.height,
               "flush_frames": self.flush_frames, "average_frames": self.average_count}
        if self.capture_device is not None:
            import cv2

            out["width"] = int(self.capture_device.get(cv2.CAP_PROP_FRAME_WIDTH)) or self.width
            out["height"] = int(self.capture_device.get(cv2.CAP_PROP_FRAME_HEIGHT)) or self.height
            out["backend"] = self.capture_device.getBackendName()
        out["exposure"] = self.locked.get("exposure", self.exposure)
        out["white_balance"] = self.locked.get("white_balance", self.white_balance)
        return out


def _parse_device(device):
    text = str(device).strip()
    return int(text) if text.isdigit() else text


def open_camera(config: Config, device=None, log=None) -> Camera:
    """The configured camera (or `device` instead of camera.device): a folder -> FileCamera, else OpenCV."""
    device = config.camera.device if device is None else device
    if os.path.isdir(str(device)):
        return FileCamera(device)
    camera = OpenCVCamera.from_config(config, log=log)
    camera.device = _parse_device(device)
    return camera
