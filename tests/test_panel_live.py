"""The panel's live view: a grabber's frames as JPEGs with the sticker regions drawn in.

The unit tests hand frames to the LiveView through a fake grabber (the test calls its watcher); the
last tests run the real simulated webcam at real time, looking at a still solved cube, and wait on
events a subscriber sets.
"""

import threading

import cv2
import numpy as np
import pytest

from robot import config as config_module
from robot.panel.live import (BOUNDARY, MJPEG_CONTENT_TYPE, OUTLINE_BGR, LiveView, draw_overlay, make_overlay,
                              mjpeg_part, regions_overlay)
from robot.vision.grabber import CameraTiming, Frame
from robot.vision.regions import RegionsError

SQUARE = [(20, 20), (60, 20), (60, 60), (20, 60)]
GREY = 90


class FakeGrabber:
    """The watch side of a FrameGrabber; the test hands frames on with push()."""

    def __init__(self):
        self.timing = CameraTiming()
        self.watchers = {}
        self.handles = 0

    def watch(self, callback):
        self.handles += 1
        self.watchers[self.handles] = callback
        return self.handles

    def unwatch(self, handle):
        self.watchers.pop(handle, None)

    def push(self, index, value=GREY):
        frame = Frame(np.full((80, 100, 3), value, np.uint8), index, 1000.0 + index / 30, 1000.01 + index / 30)
        for callback in list(self.watchers.values()):
            callback(frame)
        return frame


class Collector:
    """A subscriber that keeps every frame and lets a test wait for the n-th."""

    def __init__(self):
        self.frames, self.cond = [], threading.Condition()

    def __call__(self, frame):
        with self.cond:
            self.frames.append(frame)
            self.cond.notify_all()

    def wait_for(self, count, timeout=60):
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.frames) >= count, timeout), \
                f"only {len(self.frames)} of {count} frames were encoded"
            return list(self.frames)


@pytest.fixture
def live():
    view = LiveView()
    yield view
    view.close()


def decode(frame):
    image = cv2.imdecode(np.frombuffer(frame.jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None, "not a JPEG"
    return image


def near(pixel, colour, tolerance=40):
    return int(np.abs(pixel.astype(int) - np.array(colour)).max()) <= tolerance


def test_the_overlay_draws_outlines_read_colours_and_the_label_on_a_copy():
    image = np.full((80, 100, 3), GREY, np.uint8)
    drawn = draw_overlay(image, make_overlay([SQUARE], [(0, 0, 200)], label="top-front"), simulated=True)
    assert (image == GREY).all()  # the grabber's picture is untouched
    assert near(drawn[40, 20], OUTLINE_BGR, 10) and near(drawn[20, 40], OUTLINE_BGR, 10)  # the quad's edges
    assert tuple(drawn[40, 40]) == (0, 0, 200)  # the read colour at the sticker's centre
    assert (drawn[5:25, 5:60] != GREY).any()  # the label, top-left
    assert (drawn[66:78, 5:60] != GREY).any()  # SIMULATED, bottom-left
    plain = draw_overlay(image, make_overlay([SQUARE]))
    assert tuple(plain[40, 40]) == (GREY,) * 3 and (plain[66:78] == GREY).all()  # nothing read, nothing simulated


def test_overlay_mistakes_are_named():
    with pytest.raises(ValueError, match=r"colours: 2 given for 1 quads"):
        make_overlay([SQUARE], [(0, 0, 0), None])
    with pytest.raises(ValueError, match=r"quad 1: expected at least 3 finite"):
        make_overlay([SQUARE, [(1, 2)]])
    with pytest.raises(ValueError, match=r"colour 0: expected a BGR triple of 0..255"):
        make_overlay([SQUARE], [(0, 0, 300)])


def test_regions_overlay_gives_one_views_quads_scaled_to_the_frame():
    from robot.scan_sequence import ScanSequence
    from robot.vision.camera_geometry import Pose, scan_regions

    config = config_module.defaults()
    sequence = ScanSequence.from_config(config)
    regions = scan_regions(Pose.from_config(config), sequence)
    view = sequence.views[0]
    quads = regions_overlay(regions, view.name)
    assert len(quads) == len(view.facelets) and np.allclose(quads[0], regions.views[view.name][0])
    width, height = regions.image_size
    halved = regions_overlay(regions, view.name, (width // 2, height // 2))
    assert np.allclose(halved[0], regions.views[view.name][0] / 2)
    with pytest.raises(RegionsError, match=r"no regions for scan view 'nowhere' \(have: "):
        regions_overlay(regions, "nowhere")


def test_an_mjpeg_part_carries_the_frame_and_its_times(live):
    grabber, got = FakeGrabber(), Collector()
    live.attach(grabber)
    live.subscribe(got)
    grabber.push(7)
    (frame,) = got.wait_for(1)
    part = mjpeg_part(frame)
    assert MJPEG_CONTENT_TYPE == "multipart/x-mixed-replace; boundary=frame"
    head, body = part.split(b"\r\n\r\n", 1)
    lines = head.decode("ascii").split("\r\n")
    assert lines[0] == f"--{BOUNDARY}"
    headers = dict(line.split(": ", 1) for line in lines[1:])
    assert headers["Content-Type"] == "image/jpeg" and int(headers["Content-Length"]) == len(frame.jpeg)
    assert headers["X-Frame-Index"] == "1" and frame.grab_index == 7
    assert float(headers["X-Exposure-End"]) == pytest.approx(frame.exposure_end_epoch_ms, abs=0.001)
    assert body == frame.jpeg + b"\r\n"
    assert decode(frame).shape == (80, 100, 3) and (frame.width, frame.height) == (100, 80)


def test_the_grabber_is_watched_only_while_someone_subscribes(live):
    grabber = FakeGrabber()
    live.attach(grabber)
    assert grabber.watchers == {}  # nobody looks: the grabber decodes nothing for the panel
    got = Collector()
    handle = live.subscribe(got)
    assert len(grabber.watchers) == 1 and live.stats()["watching"]
    grabber.push(1)
    got.wait_for(1)
    live.unsubscribe(handle)
    assert grabber.watchers == {} and not live.stats()["watching"]
    assert live.latest().grab_index == 1 and live.stats()["frames"] == 1


def test_the_encoder_skips_to_the_newest_frame_when_frames_come_faster(live):
    grabber, got = FakeGrabber(), Collector()
    entered, release = threading.Event(), threading.Event()

    def slow(frame):  # holds the encoder thread on the first frame
        if frame.index == 1:
            entered.set()
            assert release.wait(60)

    live.attach(grabber)
    live.subscribe(slow)
    live.subscribe(got)
    grabber.push(1)
    assert entered.wait(60)
    for index in (2, 3, 4):  # arrive while the encoder is busy: only the newest is kept
        grabber.push(index, value=GREY + index)
    release.set()
    frames = got.wait_for(2)
    assert [f.grab_index for f in frames] == [1, 4] and [f.index for f in frames] == [1, 2]
    assert live.skipped == 2
    assert abs(int(decode(frames[1])[5, 90, 0]) - (GREY + 4)) <= 2


def test_reattaching_follows_the_new_grabber_and_ignores_the_old(live):
    old, new, got = FakeGrabber(), FakeGrabber(), Collector()
    live.attach(old)
    live.subscribe(got)
    stale_hand_on = next(iter(old.watchers.values()))
    live.attach(new)  # the camera was reopened
    assert old.watchers == {} and len(new.watchers) == 1
    stale_hand_on(old.push(5))  # a frame the old grabber was handing on as it was let go
    new.push(1)
    frames = got.wait_for(1)
    assert [f.grab_index for f in frames] == [1]
    live.detach()
    assert new.watchers == {}


def test_a_subscriber_that_raises_is_dropped_and_the_others_go_on(live):
    grabber, got = FakeGrabber(), Collector()

    def broken(frame):
        raise RuntimeError("socket closed")

    live.attach(grabber)
    live.subscribe(broken)
    live.subscribe(got)
    grabber.push(1)
    got.wait_for(1)
    grabber.push(2)
    assert [f.grab_index for f in got.wait_for(2)] == [1, 2]
    assert any("socket closed" in e for e in live.errors)


def test_closed_it_encodes_nothing_and_refuses_subscribers():
    grabber, got = FakeGrabber(), Collector()
    view = LiveView()
    view.attach(grabber)
    view.subscribe(got)
    grabber.push(1)
    got.wait_for(1)
    view.close()
    assert grabber.watchers == {} and not view._thread.is_alive()
    with pytest.raises(RuntimeError, match="closed"):
        view.subscribe(got)
    assert view.stats()["frames"] == 1 and len(got.frames) == 1


# -- the real simulated webcam, at real time ---------------------------------------------------------


@pytest.fixture
def still_camera():
    """The simulated webcam as `cube-robot doctor --sim` makes it: a solved virtual cube nothing moves."""
    from robot.doctor.simulated import StillCube
    from robot.scan_sequence import ScanSequence
    from robot.sim.webcam import SimulatedCamera
    from robot.vision.camera_geometry import Pose, scan_regions

    config = config_module.defaults()
    pose = Pose.from_config(config)
    camera = SimulatedCamera(StillCube(config), pose).open()
    sequence = ScanSequence.from_config(config)
    yield camera, scan_regions(pose, sequence), sequence.views[0].name
    camera.close()


def test_the_simulated_webcam_streams_jpegs_with_the_regions_drawn(still_camera, live):
    camera, regions, view = still_camera
    quads = regions_overlay(regions, view)
    live.set_overlay(quads, label=view)
    live.attach(camera.grabber, simulated=True)
    drawn_before = camera.rng.bit_generator.state
    got = Collector()
    live.subscribe(got)
    frames = got.wait_for(4)
    assert camera.rng.bit_generator.state == drawn_before  # watching draws nothing a seeded run's pictures use
    assert [f.index for f in frames[:4]] == [1, 2, 3, 4]
    assert all(a.grab_index < b.grab_index for a, b in zip(frames, frames[1:]))
    assert all(f.encoded_epoch_ms > f.exposure_end_epoch_ms for f in frames)
    image = decode(frames[-1])
    assert image.shape == (camera.pose.height, camera.pose.width, 3)
    assert (frames[-1].width, frames[-1].height) == (camera.pose.width, camera.pose.height)
    # The outline colour lies along each region's edges (the midpoints of its sides) and not in the
    # camera's own picture there.
    raw = camera.render_exposure(0.0, camera.timing.exposure_s)
    for quad in quads:
        for a, b in zip(quad, np.roll(quad, -1, axis=0)):
            x, y = (int(round(v)) for v in (a + b) / 2)
            assert near(image[y, x], OUTLINE_BGR, 60), (x, y, image[y, x])
            assert not near(raw[y, x], OUTLINE_BGR, 60)
    stats = live.stats()
    assert stats["frames"] >= 4 and stats["fps"] > 0 and stats["age_ms"] > 0


def test_without_a_subscriber_or_once_closed_the_simulated_webcam_is_not_encoded(still_camera, live):
    camera, _, _ = still_camera
    grabber = camera.grabber
    live.attach(grabber)
    got = Collector()
    handle = live.subscribe(got)
    got.wait_for(2)
    live.unsubscribe(handle)
    encoded = live.stats()["frames"]
    # The grabber goes on: once two more frames came, none was handed to the live view.
    later = Collector()
    watch = grabber.watch(later)
    later.wait_for(2)
    grabber.unwatch(watch)
    assert live.stats()["frames"] == encoded and live.latest().index == encoded
    handle = live.subscribe(got)
    got.wait_for(len(got.frames) + 1)
    live.close()
    encoded = live.stats()["frames"]
    later = Collector()
    watch = grabber.watch(later)
    later.wait_for(2)
    grabber.unwatch(watch)
    assert live.stats()["frames"] == encoded
