"""The simulated camera: a USB webcam as a capture device, and the host side that a real camera uses too.

    device = SimulatedWebcam(render_exposure, timing)   # grab()/retrieve()/read()/get() like cv2.VideoCapture
    camera = SimulatedCamera(robot, pose, seed)         # robot/vision/camera.py Camera; frames via FrameGrabber

The webcam (timing from config `camera`: fps, exposure_ms, delivery_ms, buffer_frames):
frame k is exposed from t0 + k * period for exposure_ms and reaches the driver
delivery_ms later; the driver queues up to buffer_frames frames and drops new ones
while its queue is full, so a program that reads now and then gets stale frames
first.  A frame shows the cube as it was during its exposure: while an arm moves
the picture is a blend of the cube before and after the motion (motion blur),
weighted by how much of the exposure fell before, during and after it.  Frames
carry a driver timestamp on the host clock (as V4L2 stamps buffers).

The host side is the real camera's (robot/vision/grabber.py): a grabber thread and
the first frame exposed settle_ms after the motion ended; with auto-then-freeze
exposure or white balance, opening the camera reads settle_frames frames first,
as robot/vision/camera.py OpenCVCamera does.  Not modelled: the driver's own
start-up time when a camera is opened, and the rendering's CPU time is kept off
the camera's clock (each cube state is rendered once, on a thread while the arms
move towards it, SimulatedCamera.prerender).  A frame only a live view watches (the panel) is drawn
without the seeded generator (render_for_watchers), so watching changes none of a seeded run's pictures.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..arms.view_mover import ArmViewMover
from ..vision.camera import FREEZE, Camera
from ..vision.camera_geometry import Pose
from ..vision.grabber import POS_MSEC, CameraTiming, FrameGrabber, RealClock, view_frames
from . import render, render_arms

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

EXPOSURE_SAMPLES = 16  # points of an exposure at which the cube's pose is looked up (blur)
NOISE_BANK = 4  # sensor-noise images drawn once and reused (drawing noise costs more than a frame period)
WATCH_CACHE = 4  # renders kept of states only a live view showed


class SimulatedWebcam:
    """A capture device with a frame period, an exposure time and a driver queue (cv2.VideoCapture's calls)."""

    def __init__(self, render_exposure, timing: CameraTiming, clock=RealClock, started_at: float | None = None,
                 render_for_watchers=None):
        self.render_exposure = render_exposure  # (exposure start, end) -> BGR frame of the cube over that time
        self.render_for_watchers = render_for_watchers or render_exposure  # the same, for a frame only watchers see
        self.timing, self.clock = timing, clock
        self.t0 = clock.now() if started_at is None else started_at  # exposure start of frame 0
        self.next_index = 0  # the next frame the sensor delivers into the queue
        self.queue: deque = deque()
        self.current = None  # the frame the last grab() took out of the queue
        self.dropped = 0  # frames lost because the queue was full
        self._interrupted = threading.Event()

    def exposure_start(self, k: int) -> float:
        return self.t0 + k * self.timing.period_s

    def delivered_at(self, k: int) -> float:
        return self.exposure_start(k) + self.timing.exposure_s + self.timing.delivery_s

    def _fill(self, now: float) -> None:
        while self.delivered_at(self.next_index) <= now:
            if len(self.queue) < self.timing.buffer_frames:
                self.queue.append(self.next_index)
            else:
                self.dropped += 1  # no free driver buffer: the newest frame is lost
            self.next_index += 1

    def grab(self) -> bool:
        self._fill(self.clock.now())
        if not self.queue:
            arrival = self.delivered_at(self.next_index)
            self.clock.wait_until(arrival, self._interrupted)
            if self._interrupted.is_set():
                return False
            self._fill(max(self.clock.now(), arrival))
        self.current = self.queue.popleft()
        return True

    def retrieve(self):
        if self.current is None:
            return False, None
        start = self.exposure_start(self.current)
        return True, self.render_exposure(start, start + self.timing.exposure_s)

    def retrieve_for_watchers(self):
        """retrieve() of a frame no view waits for (robot/vision/grabber.py FrameGrabber.watch)."""
        if self.current is None:
            return False, None
        start = self.exposure_start(self.current)
        return True, self.render_for_watchers(start, start + self.timing.exposure_s)

    def read(self):
        return self.retrieve() if self.grab() else (False, None)

    def get(self, prop) -> float:
        if prop == POS_MSEC and self.current is not None:
            return self.delivered_at(self.current) * 1000.0
        return 0.0

    def isOpened(self) -> bool:  # noqa: N802 (cv2.VideoCapture's name)
        return True

    def interrupt(self) -> None:
        self._interrupted.set()

    def release(self) -> None:
        self.interrupt()


def pose_weights(changes, start: float, end: float) -> dict[int, float]:
    """{state index: share of the exposure [start, end]} for a cube that changes state at `changes`.

    changes: [(motion start, motion end)] of state 1, 2, ... (state 0 before the first); while
    a motion runs the picture is half the old state, half the new one (motion blur).
    """
    weights: dict[int, float] = {}
    for n in range(EXPOSURE_SAMPLES):
        t = start + (n + 0.5) * (end - start) / EXPOSURE_SAMPLES
        state, moving = 0, False
        for i, (a, b) in enumerate(changes, start=1):
            if a <= t:
                state, moving = i, t < b
        for index, share in (((state - 1, 0.5), (state, 0.5)) if moving else ((state, 1.0),)):
            weights[index] = weights.get(index, 0.0) + share / EXPOSURE_SAMPLES
    return weights


class SimulatedCamera(Camera):
    """Renders the virtual cube through a SimulatedWebcam, picked by time like a real camera."""

    def __init__(self, robot, pose: Pose, seed: int = 0, clock=RealClock):
        self.robot, self.pose, self.clock = robot, pose, clock
        self.rng = np.random.default_rng(seed)
        self.lighting = render.Lighting()
        config = robot.config.camera
        self.timing: CameraTiming = CameraTiming.from_config(robot.config).scaled(getattr(robot, "time_scale", 1.0))
        self.settle_frames = config.settle_frames if FREEZE in (config.exposure, config.white_balance) else 0
        self._lock = threading.Lock()  # the timeline (states, changes)
        self._render_lock = threading.Lock()
        self._prerenderer: ThreadPoolExecutor | None = None  # the thread that renders a view's state while the arms move (prerender)
        self.states = [robot.virtual.facelets()]  # the cube's states, oldest first
        # SIMULATED arms in the pictures (config simulated_robot.draw_arms; None: off, a bare cube)
        self.arms_geometry = self.arm_geometry(robot.config)
        self.arm_states = [render_arms.arms_of(robot.virtual, self.arms_geometry)]  # where the arms stood, per state
        self.changes: list[tuple[float, float]] = []  # (motion start, end) that led to states[1:]
        self._cache: dict = {}  # (facelets, lighting) -> clean render (no sensor noise)
        # A live view's frames draw nothing from self.rng, so watching leaves a seeded run's pictures as they
        # were: its own generator for states only it shows (a few kept), its noise picked by the frame's time.
        self._watch_rng = np.random.default_rng([seed, 1])
        self._watch_cache: dict = {}
        # Sensor noise, drawn now (before the start press): drawing it costs more than a frame period.
        shape = (pose.height, pose.width, 3)
        self._noise = [self.rng.standard_normal(shape, dtype=np.float32) for _ in range(NOISE_BANK)]
        self.device: SimulatedWebcam | None = None
        self.grabber: FrameGrabber | None = None
        self.last_capture: dict | None = None  # times of the last view's frame (robot/run/waterfall.py)
        self.motion_started: float | None = None
        self.last_motion: tuple | None = None  # (start, end) of the last view motion not yet captured
        self._changed_by: tuple | None = None  # the motion that made the latest recorded change

    # -- the puzzle (a subclass draws another: robot/sim/webcam3.py) ---------------

    def arm_geometry(self, config):
        """The arms drawn (config simulated_robot; None: a bare cube)."""
        return render_arms.ArmGeometry.from_config(config)

    def draw(self, facelets: str, lighting, rng, **extra) -> np.ndarray:
        """One clean picture of the cube with these facelets."""
        return render.render_state(facelets, self.pose, lighting, rng, **extra)

    # -- the cube's timeline (main thread) -------------------------------------

    def note_state(self, motion: tuple | None = None) -> None:
        """Record the virtual cube's state now.

        motion: (start, end) of the view motion that made any change found now.  The firmware's
        pin log can show the end of a motion only after its `done` (the emulator), so a change
        found at the next capture still belongs to that motion, not to the moment it was seen.
        Without one (the plan ran since the last view), the change happened since the last record.
        """
        self.robot.sync()
        facelets = self.robot.virtual.facelets()
        arms = render_arms.arms_of(self.robot.virtual, self.arms_geometry)
        now = self.clock.now()
        with self._lock:
            if facelets == self.states[-1] and arms == self.arm_states[-1]:
                return
            if motion is not None and motion is self._changed_by:  # the same motion, seen complete only now
                self.states[-1], self.arm_states[-1] = facelets, arms
                return
            self.states.append(facelets)
            self.arm_states.append(arms)
            self.changes.append(motion or ((self.changes[-1][1] if self.changes else now), now))
            self._changed_by = motion

    def motion_ended(self) -> None:
        """The view mover's `after`: the view's actions are done (their `done` lines arrived)."""
        self.last_motion = (self.motion_started, self.clock.now())
        self.note_state(self.last_motion)
        self.motion_started = None

    # -- pictures (grabber thread) ----------------------------------------------

    def _clean(self, facelets: str, lighting, arms=None) -> np.ndarray:
        key = (facelets, lighting) if arms is None else (facelets, lighting, arms)
        with self._render_lock:  # another thread may be rendering this state already: wait for it
            if key not in self._cache:
                clean = replace(lighting, noise_sigma=0.0)
                extra = {} if arms is None else {"arms": arms}  # off: the call as before the arms
                self._cache[key] = self.draw(facelets, clean, self.rng, **extra).astype(np.float32)
            return self._cache[key]

    def prerender(self, actions) -> None:
        """Render the state the cube should reach after `actions` on the prerender thread, while the
        arms move, to keep the renderer's CPU time off the camera's clock.  Only a cache: a wrong guess is not
        used.  Everything, the guess included, happens on the thread: copying the virtual robot here delayed
        sending the motion by up to hundreds of ms under load."""
        from concurrent.futures import ThreadPoolExecutor

        if self._prerenderer is None:
            self._prerenderer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sim-prerender")
        self._prerenderer.submit(self._render_after, self.robot.virtual.facelets(), list(actions), self.lighting,
                                 self.arm_states[-1])

    def _render_after(self, facelets: str, actions, lighting, arms=None) -> None:
        from .. import cube
        from ..plan import Turn

        moves = [move for action in actions if isinstance(action, Turn) for move in action.moves()]
        if arms is not None:  # drawn arms (simulated_robot.draw_arms) stand where the actions leave them
            arms = render_arms.after_actions(arms, actions, self.robot.virtual.profile.faces_of)
        self._clean(cube.apply_moves(facelets, moves), lighting, arms)

    def render_exposure(self, start: float, end: float) -> np.ndarray:
        image, lighting = self._blend(start, end, self._clean)
        return self._add_noise(image, lighting, int(self.rng.integers(NOISE_BANK)))

    def render_for_watchers(self, start: float, end: float) -> np.ndarray:
        """A frame only a watcher (the panel's live view) sees, drawn without touching self.rng."""
        image, lighting = self._blend(start, end, self._clean_for_watchers)
        return self._add_noise(image, lighting, int(round(start / self.timing.period_s)) % NOISE_BANK)

    def _clean_for_watchers(self, facelets: str, lighting, arms=None) -> np.ndarray:
        key = (facelets, lighting) if arms is None else (facelets, lighting, arms)
        with self._render_lock:
            if key in self._cache:
                return self._cache[key]
            if key not in self._watch_cache:  # a state the run has not rendered (yet): not put in its cache
                if len(self._watch_cache) >= WATCH_CACHE:
                    self._watch_cache.pop(next(iter(self._watch_cache)))
                clean = replace(lighting, noise_sigma=0.0)
                extra = {} if arms is None else {"arms": arms}
                self._watch_cache[key] = self.draw(facelets, clean, self._watch_rng, **extra).astype(np.float32)
            return self._watch_cache[key]

    def _blend(self, start: float, end: float, clean) -> tuple[np.ndarray, render.Lighting]:
        with self._lock:
            changes, lighting = list(self.changes), self.lighting
        image: np.ndarray | None = None
        for index, share in pose_weights(changes, start, end).items():
            part = clean(self.states[index], lighting, self.arm_states[index]) * np.float32(share)
            image = part if image is None else image + part
        assert image is not None  # the weights share out the whole exposure
        return image, lighting

    def _add_noise(self, image: np.ndarray, lighting: render.Lighting, pick: int) -> np.ndarray:
        image = image + np.float32(lighting.noise_sigma) * self._noise[pick]
        return np.clip(np.round(image), 0, 255).astype(np.uint8)

    # -- the Camera interface -----------------------------------------------------

    def open(self) -> "SimulatedCamera":
        if self.grabber is None:
            device = self.device = SimulatedWebcam(self.render_exposure, self.timing, self.clock,
                                                   render_for_watchers=self.render_for_watchers)
            if self.settle_frames:  # auto exposure / white balance settle, then are frozen (as OpenCVCamera)
                for _ in range(self.settle_frames):
                    device.grab()
            self.grabber = FrameGrabber(device, self.timing, self.clock, name="simulated").start()
        return self

    def close(self) -> None:
        if self.grabber is not None:
            self.grabber.stop()
            self.grabber = self.device = None
        if self._prerenderer is not None:  # a render under way only fills the cache: not waited for
            self._prerenderer.shutdown(wait=False, cancel_futures=True)
            self._prerenderer = None

    def capture(self, view: str, still_since: float | None = None) -> np.ndarray:
        motion_end = self.clock.now()
        grabber = self.grabber if self.grabber is not None else self.open().grabber
        assert grabber is not None  # open() starts it
        self.note_state(self.last_motion)  # the rest of the view's motion, or what the plan did since
        self.last_motion = None
        with self._lock:
            latest, lighting, arms = self.states[-1], self.lighting, self.arm_states[-1]
        # Render the new state while the frame is awaited (the rendering's CPU time is the sim's, not the camera's).
        image, self.last_capture = view_frames(grabber, motion_end, lambda: self._clean(latest, lighting, arms),
                                               still_since)
        return image

    def settings(self) -> dict:
        return {"camera": "simulated", "lighting": repr(self.lighting), "fps": 1.0 / self.timing.period_s,
                "exposure_s": self.timing.exposure_s, "buffer_frames": self.timing.buffer_frames}


class TimedArmViewMover(ArmViewMover):
    """ArmViewMover that tells the simulated camera when each view's motion started and ended."""

    def __init__(self, link, camera: SimulatedCamera, holding: str | None = None):
        super().__init__(link, after=camera.motion_ended, holding=holding)
        self.camera = camera

    def move_to(self, view) -> None:
        self.camera.note_state()  # what moved before this view (the plan) moved before now
        self.camera.prerender(view.actions)
        self.camera.motion_started = self.camera.clock.now()
        super().move_to(view)
