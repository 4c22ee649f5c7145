"""Camera timing: the grabber picks frames by exposure time; the simulated webcam's buffer and blur.

The devices run on a clock the test controls (ManualClock): a grab() waits until the
test moves the clock past the next frame's arrival, so nothing here sleeps.
"""

import threading

import numpy as np
import pytest

from robot import config as config_module
from robot.sim.webcam import SimulatedWebcam, pose_weights
from robot.vision.grabber import CameraTiming, FrameGrabber, GrabberError, view_frames

TIMING = CameraTiming(period_s=0.1, exposure_s=0.02, delivery_s=0.01, settle_s=0.03, buffer_frames=3)


class ManualClock:
    """A clock that moves only when the test says so; wait_until blocks until it has."""

    def __init__(self, t=0.0):
        self.t, self.cond = t, threading.Condition()
        self.targets = []  # the times threads blocked in wait_until wait for

    def now(self):
        with self.cond:
            return self.t

    def advance(self, dt):
        with self.cond:
            self.t += dt
            self.cond.notify_all()

    def wait_until(self, t, stop=None):
        with self.cond:
            self.targets.append(t)
            self.cond.notify_all()
            while self.t < t and not (stop and stop.is_set()):
                self.cond.wait(0.05)
            self.targets.remove(t)
            self.cond.notify_all()

    def wait_for_waiter(self):
        """Until a thread is blocked waiting for a time still to come (the grabber waits for a frame)."""
        with self.cond:
            assert self.cond.wait_for(lambda: any(t > self.t for t in self.targets), timeout=5), \
                "the grabber never waited for a frame"


# A stand-in robot with no arms to stand anywhere: the simulated pictures without them (a bare cube).
BARE = config_module.with_settings(config_module.defaults(), {"simulated_robot.draw_arms": False})


def frame_of(index):
    return np.full((4, 4, 3), index, np.uint8)


class CountingDevice:
    """A fake capture device without driver timestamps: frame k arrives at (k + 1) * period on the clock;
    the driver queues up to `buffer` frames (a queued frame comes out of grab() at once)."""

    def __init__(self, clock, timing, buffer):
        self.clock, self.timing, self.buffer = clock, timing, buffer
        self.next, self.queue, self.current, self.stop = 0, [], None, threading.Event()
        self.retrieved = []

    def arrival(self, k):
        return (k + 1) * self.timing.period_s

    def grab(self):
        while self.arrival(self.next) <= self.clock.now():
            if len(self.queue) < self.buffer:
                self.queue.append(self.next)
            self.next += 1
        if not self.queue:
            self.clock.wait_until(self.arrival(self.next), self.stop)
            if self.stop.is_set():
                return False
            self.queue.append(self.next)
            self.next += 1
        self.current = self.queue.pop(0)
        return True

    def retrieve(self):
        self.retrieved.append(self.current)
        return True, frame_of(self.current)

    def read(self):
        return self.retrieve() if self.grab() else (False, None)

    def interrupt(self):
        self.stop.set()

    release = interrupt


def in_thread(grabber, call):
    """Run call() (which asks the grabber for frames) on a thread; return once its request is registered."""
    out = {}
    thread = threading.Thread(target=lambda: out.update(result=call()))
    thread.start()
    with grabber._cond:
        assert grabber._cond.wait_for(lambda: grabber._request is not None, timeout=5)
    return thread, out


def test_stale_queued_frames_are_never_used_and_the_first_frame_exposed_after_the_time_is():
    clock = ManualClock(0.0)
    device = CountingDevice(clock, TIMING, buffer=3)
    clock.advance(0.55)  # frames 0..4 arrived while nobody read: frames 0, 1, 2 sit in the driver queue
    grabber = FrameGrabber(device, TIMING, clock).start()
    try:
        motion_end = 0.56
        thread, out = in_thread(grabber, lambda: grabber.frames_after(motion_end + TIMING.settle_s, timeout_s=10))
        for _ in range(4):  # frame 5 arrives at 0.60 (exposed from 0.57), frame 6 at 0.70 (from 0.67)
            clock.wait_for_waiter()
            clock.advance(0.05)
        thread.join(10)
        frames = out["result"]
        # Frames 0-2 came out of the queue at once (their time is unknown: stale, never used); frame 5 began
        # before motion end + settle = 0.59; frame 6 is the first exposed after it.
        assert [f.image[0, 0, 0] for f in frames] == [6]
        assert frames[0].exposure_start >= motion_end + TIMING.settle_s
        assert grabber.stale == 3
        assert device.retrieved == [6]  # nothing else was decoded
    finally:
        grabber.stop()


def test_averaging_takes_consecutive_fresh_frames_only_when_asked():
    clock = ManualClock(0.0)
    timing = CameraTiming(period_s=0.1, exposure_s=0.02, delivery_s=0.01, settle_s=0.0, average_frames=3)
    device = CountingDevice(clock, timing, buffer=2)
    grabber = FrameGrabber(device, timing, clock).start()
    try:
        thread, out = in_thread(grabber, lambda: view_frames(grabber, motion_end=0.0))
        for _ in range(3):
            clock.wait_for_waiter()
            clock.advance(0.1)
        thread.join(10)
        image, record = out["result"]
        assert record["frames"] == [1, 2, 3]  # grab counts: frames 0, 1, 2 of the device
        assert image[0, 0, 0] == 1  # the mean of frames 0, 1, 2
        assert record["exposure_start"] == pytest.approx(0.1 - 0.03)
        assert record["delivered_at"] == pytest.approx(0.3)
    finally:
        grabber.stop()


def test_opencv_camera_of_a_live_device_takes_each_view_after_the_motion_and_settle():
    from robot.vision.camera import OpenCVCamera

    clock = ManualClock(0.0)
    device = CountingDevice(clock, TIMING, buffer=3)
    camera = OpenCVCamera("0")  # a live camera's settings; its capture device is the fake
    camera.capture_device, camera.timing = device, TIMING
    camera.start_grabber(clock)
    clock.advance(0.42)  # the view's motion ends at 0.42; frames 0-3 have arrived (3 queued: stale)
    try:
        thread, out = in_thread(camera.grabber, lambda: camera.capture("top-front"))
        while thread.is_alive():
            clock.wait_for_waiter()
            clock.advance(0.1)
            thread.join(0.05)
        # Frame 4 (arrives 0.5) began 0.47 >= 0.42 + 0.03 settle: the first fresh frame after it.
        assert out["result"][0, 0, 0] == 4
        assert camera.last_capture["motion_end"] == pytest.approx(0.42)
        assert camera.grabber.stale == 3
    finally:
        camera.close()
    assert device.stop.is_set()  # closing released the device


@pytest.mark.parametrize("still_since, first_frame", [
    (None, 5),  # a motion just ended (not known otherwise): frame 4 began 0.47 < 0.452 + 0.03 settle
    (0.0, 4),  # no arm moved since 0.0: no settle, but exposed after the view was asked for (0.452)
    (0.46, 5),  # an arm stopped at 0.46: its settle counts from then (0.49)
])
def test_a_view_that_moved_nothing_takes_the_first_frame_exposed_after_it_was_asked_for(still_since, first_frame):
    from robot.vision.camera import OpenCVCamera

    clock = ManualClock(0.0)
    device = CountingDevice(clock, TIMING, buffer=3)
    camera = OpenCVCamera("0")
    camera.capture_device, camera.timing = device, TIMING
    camera.start_grabber(clock)
    clock.advance(0.452)  # frame k arrives at (k + 1) * 0.1 and began its exposure 0.03 before
    try:
        thread, out = in_thread(camera.grabber, lambda: camera.capture("top-front", still_since=still_since))
        while thread.is_alive():
            clock.wait_for_waiter()
            clock.advance(0.01)
            thread.join(0.01)
        assert out["result"][0, 0, 0] == first_frame
        record = camera.last_capture
        assert record["exposure_start"] >= record["asked_after"] >= record["motion_end"] == pytest.approx(0.452)
    finally:
        camera.close()


def test_a_camera_that_stops_streaming_is_named_in_the_error():
    clock = ManualClock(0.0)
    device = CountingDevice(clock, TIMING, buffer=1)
    grabber = FrameGrabber(device, TIMING, clock, name="'/dev/video7'").start()
    clock.wait_for_waiter()
    device.interrupt()  # grab() now fails: the camera was unplugged
    with pytest.raises(GrabberError, match="/dev/video7"):
        grabber.frames_after(1.0, timeout_s=10)
    grabber.stop()


def test_simulated_webcam_serves_stale_frames_first_and_drops_when_its_queue_is_full():
    clock = ManualClock(0.0)
    shown = []
    device = SimulatedWebcam(lambda start, end: shown.append((start, end)) or frame_of(len(shown)), TIMING, clock)
    clock.advance(1.0)  # ten frames were delivered; the queue keeps the first three
    assert device.grab() and device.current == 0
    assert device.get(0) == pytest.approx((0.0 + 0.02 + 0.01) * 1000)  # the driver's stamp: its arrival
    assert device.grab() and device.grab() and device.current == 2
    assert device.dropped == 7
    ok, _ = device.retrieve()
    assert ok and shown[-1] == pytest.approx((0.2, 0.22))  # frame 2 shows the cube as it was at 0.2 s


def test_a_frame_exposed_during_a_motion_blends_before_and_after():
    changes = [(1.0, 1.2)]  # an arm moved from 1.0 s to 1.2 s
    assert pose_weights(changes, 0.9, 0.95) == {0: 1.0}
    assert pose_weights(changes, 1.25, 1.3) == {1: 1.0}
    during = pose_weights(changes, 0.98, 1.02)  # half before, half while moving
    assert during[0] == pytest.approx(0.75) and during[1] == pytest.approx(0.25)


def test_camera_timing_comes_from_config_and_bad_values_name_their_line(tmp_path):
    config = config_module.defaults()
    timing = CameraTiming.from_config(config)
    assert timing.period_s == pytest.approx(1 / 30) and timing.buffer_frames == 4 and timing.average_frames == 1
    path = tmp_path / "config.yaml"
    path.write_text("camera:\n  fps: 60\n  exposure_ms: 25\n")
    with pytest.raises(config_module.ConfigError, match=r"config.yaml:3: camera.exposure_ms: 25 ms is longer"):
        config_module.load(path)
    path.write_text("camera:\n  buffer_frames: 0\n")
    with pytest.raises(config_module.ConfigError, match=r":2: camera.buffer_frames: 0 is below"):
        config_module.load(path)


def test_simulated_camera_blurs_a_frame_exposed_while_the_arms_move():
    from types import SimpleNamespace

    from robot.sim import render
    from robot.vision import camera_geometry
    from robot.sim.webcam import SimulatedCamera

    solved, turned = "UUUURRRRFFFFDDDDLLLLBBBB", "UUUUBBRRRRFFDDDDFFLLLLBB"
    virtual = SimpleNamespace(state=solved)
    virtual.facelets = lambda: virtual.state
    robot = SimpleNamespace(config=BARE, virtual=virtual, sync=lambda: None, time_scale=1.0)
    clock = ManualClock(1.0)
    camera = SimulatedCamera(robot, camera_geometry.Pose(), seed=1, clock=clock)
    camera.lighting = render.Lighting(noise_sigma=0.0)
    camera.motion_started = 1.0
    virtual.state = turned
    clock.advance(0.2)
    camera.motion_ended()  # the arm turned from 1.0 s to 1.2 s
    assert camera.changes == [(1.0, 1.2)]
    before, after = camera.render_exposure(0.9, 0.92), camera.render_exposure(1.3, 1.32)
    blurred = camera.render_exposure(0.99, 1.01)  # half before the motion, half during it: 3/4 old, 1/4 new
    assert not np.array_equal(before, after)
    expected = 0.75 * before.astype(float) + 0.25 * after.astype(float)
    assert np.abs(blurred.astype(float) - expected).max() <= 1.0


def test_the_simulated_camera_renders_the_next_state_on_its_thread_not_before_the_motion_is_sent(monkeypatch):
    import threading
    from types import SimpleNamespace

    from robot import cube
    from robot.plan import Grip, Turn
    from robot.sim import render
    from robot.vision import camera_geometry
    from robot.sim.webcam import SimulatedCamera

    solved = "UUUURRRRFFFFDDDDLLLLBBBB"
    virtual = SimpleNamespace(facelets=lambda: solved)
    robot = SimpleNamespace(config=BARE, virtual=virtual, sync=lambda: None, time_scale=1.0)
    camera = SimulatedCamera(robot, camera_geometry.Pose(), seed=1, clock=ManualClock(1.0))
    rendering, release, rendered = threading.Event(), threading.Event(), []
    real_render = render.render_state

    def slow_render(facelets, *args, **kwargs):
        rendering.set()
        assert release.wait(10)
        rendered.append(facelets)
        return real_render(facelets, *args, **kwargs)

    monkeypatch.setattr(render, "render_state", slow_render)
    camera.prerender([Grip("RL"), Turn({"R": 180, "L": 180})])  # returns while the render still runs
    assert rendering.wait(10) and not rendered
    release.set()
    camera._prerenderer.shutdown(wait=True)
    assert rendered == [cube.apply_moves(solved, ["R2", "L2"])]  # the state the view's turn leads to
    camera.close()


def test_a_missing_camera_is_one_clear_error_without_opencvs_backend_noise():
    import subprocess
    import sys

    code = ("from robot.vision.camera import OpenCVCamera, CameraError\n"
            "try:\n    OpenCVCamera(37).open()\nexcept CameraError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "cannot open camera 37" in done.stdout and "camera.device" in done.stdout
    assert "VIDEOIO" not in done.stderr and "WARN" not in done.stderr, done.stderr
