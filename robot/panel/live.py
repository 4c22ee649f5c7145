"""The live camera of the panel: the run's grabber's frames as JPEGs, with the sticker regions drawn in.

    live = LiveView()
    live.attach(camera.grabber, simulated=True)    # again whenever the camera is reopened (a new grabber)
    live.set_overlay(regions_overlay(regions, "top-front"), colours, label="top-front")
    handle = live.subscribe(callback)              # callback(LiveFrame) on the encoder thread, once per frame
    live.unsubscribe(handle)
    frame = live.latest()                          # the newest encoded frame, or None
    stream.write(mjpeg_part(frame))                # one part of a multipart/x-mixed-replace stream
    live.close()

One owner of the camera: the frames are the grabber's (robot/vision/grabber.py FrameGrabber.watch), the
same the run picks its views from, decoded once and shared.  The LiveView watches the grabber only while
someone subscribes, so with nobody looking nothing extra is decoded or encoded.  Encoding runs on the
LiveView's own thread, never the grabber's; when frames come faster than it encodes, it skips to the
newest.  Times: the grabber's clock is time.perf_counter; they are given in ms since the epoch, with the
offset between the two clocks measured at each conversion.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import cv2
import numpy as np

if TYPE_CHECKING:
    from ..vision.grabber import Frame, FrameGrabber
    from ..vision.regions import Regions

QUALITY = 80  # JPEG quality (cv2.IMWRITE_JPEG_QUALITY)
BOUNDARY = "frame"
MJPEG_CONTENT_TYPE = f"multipart/x-mixed-replace; boundary={BOUNDARY}"
STATS_WINDOW_S = 2.0
OUTLINE_BGR = (255, 255, 0)  # cyan: the colour of no sticker, so a region's outline always shows
OUTLINE_PX = 2
LABEL_BGR = (255, 255, 255)
SIMULATED_BGR = (0, 215, 255)  # amber

Colour = tuple[int, int, int]


@dataclass(frozen=True)
class LiveFrame:
    index: int  # frames this LiveView encoded, this one included (1 = first; grows across re-attaching)
    jpeg: bytes
    exposure_end_epoch_ms: float  # the end of the frame's exposure, ms since the epoch
    encoded_epoch_ms: float  # when its JPEG was ready
    width: int
    height: int
    grab_index: int = 0  # the grabber's frame index (robot/vision/grabber.py Frame.index)


@dataclass(frozen=True)
class Overlay:
    quads: tuple[np.ndarray, ...]  # (n, 2) int32 pixel polygons
    colours: tuple[Colour | None, ...]
    label: str = ""


def epoch_ms(perf_t: float) -> float:
    """A time.perf_counter time (the grabber's clock) in ms since the epoch."""
    return (perf_t + (time.time() - time.perf_counter())) * 1000.0


def regions_overlay(regions: Regions, view_name: str, image_size: tuple[int, int] | None = None) -> list[np.ndarray]:
    """The quads (4 x, y pixel points each) of one scan view's sticker regions, in the order of the view's
    facelets; scaled to image_size (width, height) when the frames are not the size the regions were set
    for.  An unknown view raises RegionsError naming the views there are."""
    quads = [np.asarray(quad, dtype=np.float64) for quad in regions.quads(view_name)]
    if image_size is not None and tuple(image_size) != tuple(regions.image_size):
        scale = np.array(image_size, dtype=np.float64) / np.array(regions.image_size, dtype=np.float64)
        quads = [quad * scale for quad in quads]
    return quads


def make_overlay(quads: Sequence, colours: Sequence | None = None, label: str = "") -> Overlay:
    """Check and convert what set_overlay is given; the errors name the quad or colour at fault."""
    polygons = []
    for number, quad in enumerate(quads):
        array = np.asarray(quad, dtype=np.float64)
        if array.ndim != 2 or array.shape[0] < 3 or array.shape[1] != 2 or not np.isfinite(array).all():
            raise ValueError(f"overlay quad {number}: expected at least 3 finite [x, y] points, got shape "
                             f"{array.shape}")
        polygons.append(np.round(array).astype(np.int32))
    if colours is None:
        read: list[Colour | None] = [None] * len(polygons)
    else:
        if len(colours) != len(polygons):
            raise ValueError(f"overlay colours: {len(colours)} given for {len(polygons)} quads (one per quad, "
                             "None for a sticker not read)")
        read = []
        for number, colour in enumerate(colours):
            if colour is None:
                read.append(None)
                continue
            values = tuple(int(round(float(v))) for v in colour)
            if len(values) != 3 or not all(0 <= v <= 255 for v in values):
                raise ValueError(f"overlay colour {number}: expected a BGR triple of 0..255, got {colour!r}")
            read.append((values[0], values[1], values[2]))
    return Overlay(tuple(polygons), tuple(read), str(label))


def draw_overlay(image: np.ndarray, overlay: Overlay, simulated: bool = False) -> np.ndarray:
    """A copy of the BGR image with the regions' outlines, a swatch of each read colour at its sticker's
    centre, the label top-left and, for a simulated camera, SIMULATED bottom-left."""
    out = image.copy()  # the grabber's picture may be a view's too: never drawn on
    height = out.shape[0]
    if overlay.label:  # first: the regions' outlines are drawn over a label's box, never hidden by it
        _text(out, overlay.label, (8, 22), LABEL_BGR)
    if simulated:
        _text(out, "SIMULATED", (8, height - 10), SIMULATED_BGR)
    if overlay.quads:
        cv2.polylines(out, list(overlay.quads), True, OUTLINE_BGR, OUTLINE_PX, cv2.LINE_AA)
    for quad, colour in zip(overlay.quads, overlay.colours):
        if colour is None:
            continue
        cx, cy = (int(v) for v in quad.mean(axis=0))
        size = quad.max(axis=0) - quad.min(axis=0)
        half = max(3, int(min(size) * 0.18))
        cv2.rectangle(out, (cx - half, cy - half), (cx + half, cy + half), colour, -1)
        cv2.rectangle(out, (cx - half, cy - half), (cx + half, cy + half), (0, 0, 0), 1)
    return out


def _text(image: np.ndarray, text: str, origin: tuple[int, int], colour: Colour) -> None:
    # On a dark box of the text's own size: a thicker outline pass is wider than the text and read as a
    # doubled last letter ("SIMULATEDD").
    (width, height), baseline = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.6, 1)
    x, y = origin
    cv2.rectangle(image, (x - 3, y - height - 3), (x + width + 3, y + baseline + 1), (0, 0, 0), cv2.FILLED)
    cv2.putText(image, text, origin, cv2.FONT_HERSHEY_SIMPLEX, 0.6, colour, 1, cv2.LINE_AA)


def mjpeg_part(frame: LiveFrame) -> bytes:
    """One part of a `multipart/x-mixed-replace; boundary=frame` stream (MJPEG_CONTENT_TYPE)."""
    head = (f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(frame.jpeg)}\r\n"
            f"X-Frame-Index: {frame.index}\r\nX-Exposure-End: {frame.exposure_end_epoch_ms:.3f}\r\n\r\n")
    return head.encode("ascii") + frame.jpeg + b"\r\n"


class LiveView:
    """JPEGs of a grabber's newest frames with an overlay, encoded on its own thread for its subscribers."""

    def __init__(self, quality: int = QUALITY):
        self.quality = quality
        self._cond = threading.Condition()
        self._grabber: FrameGrabber | None = None
        self._simulated = False
        self._watch: int | None = None  # the grabber's watch handle, while someone subscribes
        self._pending: tuple[Frame, float] | None = None  # (newest frame not yet encoded, its exposure length)
        self._overlay = Overlay((), ())
        self._latest: LiveFrame | None = None
        self._subscribers: dict[int, Callable[[LiveFrame], object]] = {}
        self._next_handle = 1
        self._recent: deque[tuple[float, float]] = deque()  # (encoded, perf_counter s; age ms) of recent frames
        self.encoded = 0
        self.skipped = 0  # frames replaced by a newer one before they were encoded
        self.errors: list[str] = []  # subscribers dropped, frames that did not encode (the newest few)
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="panel live view", daemon=True)
        self._thread.start()

    # -- the camera ---------------------------------------------------------------

    def attach(self, grabber: FrameGrabber, simulated: bool = False) -> None:
        """Show this grabber's frames (a reopened camera has a new grabber: attach it again).  simulated:
        the frames are the simulated webcam's, and say SIMULATED."""
        with self._cond:
            if grabber is self._grabber:
                self._simulated = simulated
                return
            self._unwatch()
            self._grabber, self._simulated = grabber, simulated
            self._update_watch()

    def detach(self) -> None:
        """Stop showing the grabber's frames (the camera is closing)."""
        with self._cond:
            self._unwatch()
            self._grabber = None

    def _update_watch(self) -> None:  # holds self._cond
        grabber = self._grabber
        if grabber is None or self._closing or not self._subscribers:
            self._unwatch()
        elif self._watch is None:
            self._watch = grabber.watch(lambda frame: self._on_frame(grabber, frame))

    def _unwatch(self) -> None:  # holds self._cond
        if self._watch is not None and self._grabber is not None:
            self._grabber.unwatch(self._watch)
        self._watch, self._pending = None, None

    def _on_frame(self, grabber: FrameGrabber, frame: Frame) -> None:
        """The grabber thread's hand-on: keep only the newest frame for the encoder."""
        with self._cond:
            if grabber is not self._grabber or self._watch is None:
                return  # a frame of a grabber already let go
            if self._pending is not None:
                self.skipped += 1
            self._pending = (frame, grabber.timing.exposure_s)
            self._cond.notify_all()

    # -- what is drawn --------------------------------------------------------------

    def set_overlay(self, quads: Sequence, colours: Sequence | None = None, label: str = "") -> None:
        """Draw these sticker polygons (pixel coordinates; regions_overlay gives a view's) from the next
        frame on; colours: one BGR triple per quad (None: not read), drawn as a swatch at its centre."""
        overlay = make_overlay(quads, colours, label)
        with self._cond:
            self._overlay = overlay

    # -- subscribers ---------------------------------------------------------------

    def subscribe(self, callback: Callable[[LiveFrame], object]) -> int:
        """callback(LiveFrame) on the encoder thread, once per encoded frame (quick: hand it on).  A
        callback that raises is dropped."""
        with self._cond:
            if self._closing:
                raise RuntimeError("the live view is closed: make a new LiveView")
            handle = self._next_handle
            self._next_handle += 1
            self._subscribers[handle] = callback
            self._update_watch()
            return handle

    def unsubscribe(self, handle: int) -> None:
        with self._cond:
            self._subscribers.pop(handle, None)
            self._update_watch()

    def next_frame(self, timeout_s: float = 5.0) -> LiveFrame | None:
        """The first frame encoded from now (None when none came within timeout_s: no camera attached, or
        it stopped): a snapshot that watches the camera only while it waits."""
        got: list[LiveFrame] = []
        arrived = threading.Event()

        def take(frame: LiveFrame) -> None:
            if not got:
                got.append(frame)
            arrived.set()

        handle = self.subscribe(take)
        try:
            arrived.wait(timeout_s)
        finally:
            self.unsubscribe(handle)
        return got[0] if got else None

    def latest(self) -> LiveFrame | None:
        with self._cond:
            return self._latest

    def stats(self) -> dict:
        """fps: frames encoded per second over the last STATS_WINDOW_S; age_ms: the median over them of
        encoded - exposure end (None without frames); frames: all encoded so far; skipped: frames a newer
        one replaced before they were encoded; watching: the grabber is watched (someone subscribes)."""
        with self._cond:
            self._trim(time.perf_counter())
            recent = list(self._recent)
            frames, skipped, watching = self.encoded, self.skipped, self._watch is not None
        fps = (len(recent) - 1) / (recent[-1][0] - recent[0][0]) if len(recent) >= 2 and recent[-1][0] > recent[0][0] else 0.0
        age = statistics.median(a for _, a in recent) if recent else None
        return {"fps": round(fps, 2), "age_ms": None if age is None else round(age, 1), "frames": frames,
                "skipped": skipped, "watching": watching}

    def _trim(self, now: float) -> None:  # holds self._cond
        while self._recent and self._recent[0][0] < now - STATS_WINDOW_S:
            self._recent.popleft()

    def close(self) -> None:
        """Let go of the grabber and stop the encoder thread (a frame being encoded is not handed on)."""
        with self._cond:
            self._closing = True
            self._unwatch()
            self._subscribers.clear()
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)

    # -- the encoder thread ----------------------------------------------------------

    def _note(self, message: str) -> None:
        with self._cond:
            self.errors = (self.errors + [message])[-10:]

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._closing:
                    self._cond.wait()
                if self._closing or self._pending is None:
                    return
                (frame, exposure_s), self._pending = self._pending, None
                overlay, simulated = self._overlay, self._simulated
            try:
                picture = draw_overlay(frame.image, overlay, simulated)
                ok, buffer = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, self.quality])
            except cv2.error as exc:
                self._note(f"frame {frame.index} did not encode: {exc}")
                continue
            if not ok:
                self._note(f"frame {frame.index} did not encode (cv2.imencode failed)")
                continue
            done = time.perf_counter()
            encoded_ms = epoch_ms(done)
            exposure_end_ms = epoch_ms(frame.exposure_start + exposure_s)
            height, width = frame.image.shape[:2]
            with self._cond:
                if self._closing:
                    return
                self.encoded += 1
                live = self._latest = LiveFrame(self.encoded, buffer.tobytes(), exposure_end_ms, encoded_ms,
                                                int(width), int(height), frame.index)
                self._recent.append((done, encoded_ms - exposure_end_ms))
                self._trim(done)
                subscribers = list(self._subscribers.items())
            for handle, callback in subscribers:
                try:
                    callback(live)
                except Exception as exc:  # one broken viewer must not stop the others
                    with self._cond:
                        self._subscribers.pop(handle, None)
                        self._update_watch()
                    self._note(f"subscriber {handle} ({callback!r}) dropped: it raised {exc!r}")
