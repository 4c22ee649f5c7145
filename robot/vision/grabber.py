"""A live camera's frames, picked by time: a grabber thread and the camera timing facts.

    timing = CameraTiming.from_config(config)          # camera.fps, exposure_ms, delivery_ms, settle_ms, ...
    grabber = FrameGrabber(device, timing).start()     # device: cv2.VideoCapture or anything with grab()/retrieve()
    frames = grabber.frames_after(t)                   # the first fresh frame(s) whose exposure began at or after t
    handle = grabber.watch(callback)                   # callback(Frame) for every fresh frame (a live view)
    grabber.unwatch(handle)
    grabber.stop()

A webcam delivers a frame every period into a small driver queue; a program that
reads now and then gets stale frames first (taken before the arm moved).  The
grabber thread grabs continuously, so the queue stays empty, and keeps only the
newest frame's times; it retrieves (decodes) a frame only when a view waits for it
or someone watches (watch(): every fresh frame, decoded once and shared with the view).

When a frame began its exposure (one clock: time.perf_counter, CLOCK_MONOTONIC on
Linux):
  - from the driver's timestamp (CAP_PROP_POS_MSEC) when it is on the same clock
    (V4L2 stamps buffers with CLOCK_MONOTONIC): stamp - delivery - exposure (a driver
    that stamps the start of the frame makes this earlier: a safe error, a frame later);
  - else from the host clock, trusted only when grab() had to wait for the frame
    (at least FRESH_WAIT of a period): a grab that returns at once handed out a
    queued, stale frame whose time is unknown, and it is never used.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from ..config_schema import SCHEMA
from ..config_types import Config

if TYPE_CHECKING:  # numpy is imported where frames are averaged
    import numpy as np

_CAMERA = {key: setting.default for key, setting in SCHEMA["camera"].items() if hasattr(setting, "default")}

FRESH_WAIT = 0.1  # share of a frame period grab() must wait for its frame to count as just delivered
POS_MSEC = 0  # cv2.CAP_PROP_POS_MSEC (a constant of OpenCV's API; not imported so tests need no cv2)


class GrabberError(RuntimeError):
    """The camera stopped giving frames (the message names the device and the wait)."""


@dataclass(frozen=True)
class CameraTiming:
    """The camera's timing facts (config `camera`), in seconds of the grabber's clock; the defaults
    are config.yaml's (robot/config_schema.py)."""

    period_s: float = 1 / _CAMERA["fps"]
    exposure_s: float = _CAMERA["exposure_ms"] / 1000
    delivery_s: float = _CAMERA["delivery_ms"] / 1000
    settle_s: float = _CAMERA["settle_ms"] / 1000
    buffer_frames: int = _CAMERA["buffer_frames"]
    average_frames: int = _CAMERA["average_frames"]

    @classmethod
    def from_config(cls, config: Config) -> "CameraTiming":
        c = config.camera
        return cls(1.0 / c.fps, c.exposure_ms / 1000, c.delivery_ms / 1000, c.settle_ms / 1000,
                   c.buffer_frames, c.average_frames)

    def scaled(self, factor: float) -> "CameraTiming":
        """The same camera running `factor` times as long (a sped-up simulation: factor < 1)."""
        return replace(self, period_s=self.period_s * factor, exposure_s=self.exposure_s * factor,
                       delivery_s=self.delivery_s * factor, settle_s=self.settle_s * factor)


class RealClock:
    """The host clock (the pipeline's timing marks use it too)."""

    now = staticmethod(time.perf_counter)

    @staticmethod
    def wait_until(t: float, stop: threading.Event | None = None) -> None:
        """Until clock time t, or until `stop` is set."""
        stop = stop or threading.Event()
        while not stop.is_set():
            left = t - time.perf_counter()
            if left <= 0:
                return
            stop.wait(left)


@dataclass(frozen=True)
class Frame:
    image: np.ndarray  # BGR uint8
    index: int  # grab count since the grabber started (1 = first)
    exposure_start: float  # clock seconds
    delivered_at: float  # clock seconds: the frame reached the host


class _Request:
    def __init__(self, after: float, count: int):
        self.after, self.count = after, count
        self.frames: list[Frame] = []


class FrameGrabber:
    """Grabs every frame on a thread; hands out the first fresh frames exposed after a given time."""

    def __init__(self, device, timing: CameraTiming, clock=RealClock, name: str = "camera"):
        self.device, self.timing, self.clock, self.name = device, timing, clock, name
        self.grabbed = 0  # frames grabbed (stale ones included)
        self.stale = 0  # frames not used because their exposure time was unknown (came out of the queue)
        self.newest: tuple[int, float | None, float] | None = None  # (index, exposure_start or None, delivered_at) of the newest frame grabbed
        self._cond = threading.Condition()
        self._request: _Request | None = None
        self._error: str | None = None
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._watchers: dict[int, Callable[[Frame], object]] = {}
        self._next_watch = 1
        self.watch_errors: list[str] = []  # why watchers were dropped, and pictures a watcher missed (the newest few)

    def watch(self, callback: Callable[[Frame], object]) -> int:
        """Hand every fresh frame (exposure start known) to callback(frame) on the grabber thread, until
        unwatch(handle).  The callback must be quick (hand the frame on) and must not draw on frame.image:
        the same picture may be a view's.  A callback that raises is dropped (said in watch_errors).  A
        frame no view waits for is decoded by device.retrieve_for_watchers() when the device has one."""
        with self._cond:
            handle = self._next_watch
            self._next_watch += 1
            self._watchers[handle] = callback
            return handle

    def unwatch(self, handle: int) -> None:
        """Stop handing frames to that watcher (a frame being handed on right now may still reach it)."""
        with self._cond:
            self._watchers.pop(handle, None)

    def _note_watch_error(self, message: str) -> None:
        with self._cond:
            self.watch_errors = (self.watch_errors + [message])[-10:]

    def start(self) -> "FrameGrabber":
        thread = self._thread = threading.Thread(target=self._run, name=f"grabber {self.name}", daemon=True)
        thread.start()
        return self

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        interrupt = getattr(self.device, "interrupt", None)  # a simulated device waiting on its clock
        if interrupt is not None:
            interrupt()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        self._thread = None

    def _exposure_start(self, called: float, delivered: float) -> float | None:
        """When the frame just grabbed began its exposure, or None when that is unknown (a queued frame)."""
        lag = self.timing.delivery_s + self.timing.exposure_s
        get = getattr(self.device, "get", None)
        if get is not None:
            stamp = get(POS_MSEC) / 1000.0  # the driver's timestamp of the frame's arrival
            if delivered - 10.0 <= stamp <= delivered + 0.001:  # on our clock (else 0 or a stream position)
                return stamp - lag
        if delivered - called >= FRESH_WAIT * self.timing.period_s:  # it had to wait: this frame just arrived
            return delivered - lag
        return None

    def _run(self) -> None:
        while not self._stopping:
            called = self.clock.now()
            ok = self.device.grab()
            delivered = self.clock.now()
            if self._stopping:
                return
            if not ok:
                with self._cond:
                    self._error = f"camera {self.name} gave no frame (grab failed after {self.grabbed} frames)"
                    self._cond.notify_all()
                return
            exposure_start = self._exposure_start(called, delivered)
            with self._cond:
                self.grabbed += 1
                index = self.grabbed
                self.newest = (index, exposure_start, delivered)
                if exposure_start is None:
                    self.stale += 1
                request = self._request
                wanted = (request is not None and len(request.frames) < request.count
                          and exposure_start is not None and exposure_start >= request.after)
                watchers = list(self._watchers.items()) if exposure_start is not None else []
            if exposure_start is None or not (wanted or watchers):
                with self._cond:
                    self._cond.notify_all()
                continue
            # Once per grab (OpenCV's rule): the view and the watchers share it.  A device may decode a frame
            # only watchers want its own way (the simulated webcam keeps the run's random draws untouched).
            for_watchers = None if wanted else getattr(self.device, "retrieve_for_watchers", None)
            ok, image = for_watchers() if for_watchers is not None else self.device.retrieve()
            frame = Frame(image, index, exposure_start, delivered) if ok and image is not None else None
            if wanted and request is not None:
                with self._cond:
                    if frame is None:
                        self._error = f"camera {self.name} gave no picture for frame {index} (retrieve failed)"
                    else:
                        request.frames.append(frame)
                    self._cond.notify_all()
            else:
                with self._cond:
                    self._cond.notify_all()
            if watchers:
                self._hand_on(frame, index, watchers)

    def _hand_on(self, frame: Frame | None, index: int,
                 watchers: list[tuple[int, Callable[[Frame], object]]]) -> None:
        """Give the frame to each watcher (after the view's request is served: a run never waits for them)."""
        if frame is None:
            self._note_watch_error(f"camera {self.name} gave no picture for frame {index} (retrieve failed)")
            return
        for handle, callback in watchers:
            try:
                callback(frame)
            except Exception as exc:  # a broken watcher must not stop the camera the run uses
                with self._cond:
                    self._watchers.pop(handle, None)
                self._note_watch_error(f"watcher {handle} ({callback!r}) dropped: it raised {exc!r}")

    def frames_after(self, after: float, count: int = 1, timeout_s: float = 5.0) -> list[Frame]:
        """The first `count` fresh frames whose exposure began at or after `after` (clock seconds)."""
        return self.collect(self.ask(after, count), timeout_s)

    def ask(self, after: float, count: int = 1) -> _Request:
        """Start watching for the frames (collect() waits for them): nothing arriving from now is missed."""
        with self._cond:
            if self._thread is None:
                raise GrabberError(f"camera {self.name}: the grabber is not running (open the camera first)")
            self._request = _Request(after, count)
            return self._request

    def collect(self, request: _Request, timeout_s: float = 5.0) -> list[Frame]:
        count = request.count
        deadline = time.monotonic() + timeout_s  # a safety net only: the frames arrive on the camera's clock
        with self._cond:
            try:
                while len(request.frames) < count and self._error is None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise GrabberError(
                            f"camera {self.name}: no frame exposed after the motion within {timeout_s:g} s "
                            f"({self.grabbed} grabbed, {self.stale} stale): is the camera still streaming?")
                    self._cond.wait(timeout=min(left, 0.5))
                if len(request.frames) < count:
                    raise GrabberError(self._error)
            finally:
                self._request = None
        return request.frames[:count]


def view_frames(grabber: FrameGrabber, motion_end: float | None = None, meanwhile=None,
                still_since: float | None = None):
    """One view's picture: the first fresh frame(s) exposed from `settle` after the cube last moved.

    It last moved at motion_end (default: now) or, when known, at still_since (the last motion's `done`
    or the start press: ArmViewMover.still_since), and no exposure starting before motion_end counts: a
    view that moved nothing waits only for what is left of the settle time.  meanwhile() runs while the
    frame is awaited.  Returns (image, record): the image (averaged over camera.average_frames) and, for the
    run's waterfall, the clock times motion_end, asked_after, exposure_start, delivered_at (reached the
    host's driver), received_at (decoded) and the frames' indices."""
    import numpy as np

    timing = grabber.timing
    motion_end = grabber.clock.now() if motion_end is None else motion_end
    after = motion_end + timing.settle_s if still_since is None else max(motion_end, still_since + timing.settle_s)
    request = grabber.ask(after, timing.average_frames)
    if meanwhile is not None:
        meanwhile()
    frames = grabber.collect(request)
    if len(frames) == 1:
        image = frames[0].image
    else:
        total = np.zeros(frames[0].image.shape, np.float32)
        for frame in frames:
            total += frame.image
        image = np.clip(np.round(total / len(frames)), 0, 255).astype(np.uint8)
    record = {"motion_end": motion_end, "asked_after": after, "exposure_start": frames[0].exposure_start,
              "delivered_at": frames[-1].delivered_at, "received_at": grabber.clock.now(),
              "frames": [f.index for f in frames]}
    return image, record
