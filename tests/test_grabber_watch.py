"""Watching a live camera: FrameGrabber.watch hands every fresh frame on, decoded once and shared with a view.

The fake device and clock are test_camera_timing's: a grab() waits until the test moves the clock past the
next frame's arrival, so the grabber has finished with a frame once it waits for the next one.
"""

import threading

import numpy as np

from test_camera_timing import CountingDevice, ManualClock, in_thread
from robot.vision.grabber import CameraTiming, FrameGrabber

# Times exact in binary, so the clock's sums land exactly on the frames' arrivals ((k + 1) * period).
TIMING = CameraTiming(period_s=0.125, exposure_s=0.015625, delivery_s=0.0078125, settle_s=0.03125, buffer_frames=3)


def step(clock, frames):
    """Let `frames` frames arrive, one at a time; return once the grabber is done with the last."""
    for _ in range(frames):
        clock.wait_for_waiter()
        clock.advance(TIMING.period_s)
    clock.wait_for_waiter()


def running(buffer=3, queued_for=0.0):
    clock = ManualClock(0.0)
    device = CountingDevice(clock, TIMING, buffer=buffer)
    clock.advance(queued_for)
    return clock, device, FrameGrabber(device, TIMING, clock).start()


def test_without_watchers_nothing_is_retrieved_and_with_one_every_fresh_frame_is_once():
    clock, device, grabber = running()
    try:
        step(clock, 3)
        assert grabber.grabbed == 3 and device.retrieved == []  # nobody asked: nothing decoded
        seen = []
        handle = grabber.watch(seen.append)
        step(clock, 4)
        assert [f.index for f in seen] == [4, 5, 6, 7]
        assert [int(f.image[0, 0, 0]) for f in seen] == [3, 4, 5, 6]  # the device's frames 3..6, in order
        assert device.retrieved == [3, 4, 5, 6]  # each once
        assert all(f.exposure_start == f.delivered_at - TIMING.delivery_s - TIMING.exposure_s for f in seen)
        grabber.unwatch(handle)
        step(clock, 2)
        assert len(seen) == 4 and device.retrieved == [3, 4, 5, 6]  # unwatched: no more decoding
    finally:
        grabber.stop()


def test_stale_frames_are_not_handed_to_watchers():
    clock, device, grabber = running(buffer=3, queued_for=0.55)  # frames 0-2 wait in the driver queue, 3 was lost
    seen = []
    grabber.watch(seen.append)
    try:
        step(clock, 2)
        assert grabber.stale == 3
        assert [int(f.image[0, 0, 0]) for f in seen] == [4, 5]
        assert device.retrieved == [4, 5]
    finally:
        grabber.stop()


def test_a_frame_a_view_waits_for_is_retrieved_once_and_shared_with_the_watchers():
    clock, device, grabber = running()
    seen = []
    grabber.watch(seen.append)
    try:
        step(clock, 2)
        thread, out = in_thread(grabber, lambda: grabber.frames_after(0.3, timeout_s=10))
        step(clock, 2)  # device frames 2 (exposed from 0.35) and 3
        thread.join(10)
        (frame,) = out["result"]
        assert int(frame.image[0, 0, 0]) == 2
        assert device.retrieved == [0, 1, 2, 3]  # no frame decoded twice
        shared = [f for f in seen if f.index == frame.index]
        assert len(shared) == 1 and shared[0].image is frame.image
    finally:
        grabber.stop()


def test_a_watcher_that_raises_is_dropped_and_the_camera_goes_on():
    clock, device, grabber = running()
    good, calls = [], []

    def broken(frame):
        calls.append(frame.index)
        raise ValueError("overlay went wrong")

    grabber.watch(broken)
    grabber.watch(good.append)
    try:
        step(clock, 3)
        assert calls == [1]  # dropped after its first failure
        assert [f.index for f in good] == [1, 2, 3]
        assert len(grabber.watch_errors) == 1 and "overlay went wrong" in grabber.watch_errors[0]
        thread, out = in_thread(grabber, lambda: grabber.frames_after(0.0, timeout_s=10))
        step(clock, 1)
        thread.join(10)
        assert [f.index for f in out["result"]] == [4]  # views are still served
    finally:
        grabber.stop()


def test_a_watcher_may_unwatch_itself_from_its_callback_and_others_may_watch_from_any_thread():
    clock, device, grabber = running()
    once, later = [], []
    handle = {}

    def first_only(frame):
        once.append(frame.index)
        grabber.unwatch(handle["once"])  # from the grabber thread, inside the hand-on: must not deadlock

    handle["once"] = grabber.watch(first_only)
    try:
        step(clock, 1)
        watcher = threading.Thread(target=lambda: handle.update(later=grabber.watch(later.append)))
        watcher.start()
        watcher.join(10)
        step(clock, 2)
        assert once == [1]
        assert [f.index for f in later] == [2, 3]
        grabber.unwatch(handle["later"])
        grabber.unwatch(handle["later"])  # twice is harmless
        step(clock, 1)
        assert len(later) == 2
    finally:
        grabber.stop()


def test_a_failed_retrieve_for_a_watcher_is_noted_without_failing_the_next_view():
    clock, device, grabber = running()
    real_retrieve, failures = device.retrieve, [True]

    def flaky():
        if failures:
            failures.pop()
            return False, None
        return real_retrieve()

    device.retrieve = flaky
    seen = []
    grabber.watch(seen.append)
    try:
        step(clock, 2)
        assert [f.index for f in seen] == [2]
        assert "no picture for frame 1" in grabber.watch_errors[0]
        thread, out = in_thread(grabber, lambda: grabber.frames_after(0.0, timeout_s=10))
        step(clock, 1)
        thread.join(10)
        assert [f.index for f in out["result"]] == [3]
    finally:
        grabber.stop()


def test_a_frame_only_watchers_want_is_decoded_the_devices_own_way_and_a_views_frame_as_always():
    clock, device, grabber = running()
    previews = []
    device.retrieve_for_watchers = lambda: (previews.append(device.current), (True, device.retrieve()[1]))[1]
    seen = []
    grabber.watch(seen.append)
    try:
        step(clock, 1)
        thread, out = in_thread(grabber, lambda: grabber.frames_after(0.15, timeout_s=10))
        step(clock, 2)
        thread.join(10)
        assert previews == [0, 2]  # device frame 1 was the view's: decoded by retrieve() alone
        assert [int(f.image[0, 0, 0]) for f in out["result"]] == [1]
        assert [int(f.image[0, 0, 0]) for f in seen] == [0, 1, 2]
    finally:
        grabber.stop()


def test_watching_the_simulated_webcam_leaves_a_seeded_runs_pictures_as_they_were():
    from types import SimpleNamespace

    from test_camera_timing import config_module
    from robot.sim.webcam import SimulatedCamera
    from robot.vision import camera_geometry

    solved, turned = "UUUURRRRFFFFDDDDLLLLBBBB", "UUUUBBRRRRFFDDDDFFLLLLBB"

    def camera():
        virtual = SimpleNamespace(state=solved)
        virtual.facelets = lambda: virtual.state
        # a stand-in robot with no arms to stand anywhere: the pictures without them (a bare cube)
        bare = config_module.with_settings(config_module.defaults(), {"simulated_robot.draw_arms": False})
        robot = SimpleNamespace(config=bare, virtual=virtual, sync=lambda: None, time_scale=1.0)
        made = SimulatedCamera(robot, camera_geometry.Pose(width=64, height=48), seed=3, clock=ManualClock(1.0))
        return made, virtual

    def run(watched):
        cam, virtual = camera()
        pictures = [cam.render_exposure(1.0, 1.02)]
        cam.motion_started = 1.1
        virtual.state = turned
        cam.clock.advance(0.2)
        cam.motion_ended()  # the cube turned from 1.1 to 1.3 s
        if watched:  # a live view showed the turn, rendering the new state first
            for k in range(10):
                cam.render_for_watchers(1.0 + k * 0.04, 1.02 + k * 0.04)
        pictures.append(cam.render_exposure(1.5, 1.52))
        return pictures

    plain, watched = run(False), run(True)
    assert all(np.array_equal(a, b) for a, b in zip(plain, watched))
    assert not np.array_equal(plain[0], plain[1])
