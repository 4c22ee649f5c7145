"""The live colour-calibration preview (robot/vision/calibrate.py Preview.live): in a window it
refreshes frames until a key is pressed (or its time is up); without window support it falls back to
a picture rewritten with each frame.  The window is replaced by recorders (no display in CI)."""

from __future__ import annotations

from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from robot.vision.calibrate import Preview

VIEW = SimpleNamespace(name="front", facelets=("F1", "F2", "F3", "F4"))


class CountingCamera:
    def __init__(self):
        self.frames = 0

    def capture(self, view: str) -> np.ndarray:
        self.frames += 1
        frame = np.zeros((60, 80, 3), np.uint8)
        frame[:, :] = self.frames  # each frame differs, so the shown pictures can be told apart
        return frame


@pytest.fixture
def window(monkeypatch):
    shown = []
    monkeypatch.setattr(cv2, "imshow", lambda title, image: shown.append((title, int(image[59, 79, 0]))))
    return shown


def keys(*codes):
    """A cv2.waitKey stand-in: returns the given codes in turn (-1: no key within the wait)."""
    pending = list(codes)
    waits = []

    def wait_key(ms: int) -> int:
        waits.append(ms)
        return pending.pop(0)
    wait_key.waits = waits
    return wait_key


def test_the_window_refreshes_frames_until_a_key(window, tmp_path):
    camera, wait_key = CountingCamera(), keys(-1, -1, -1, ord(" "))
    result = Preview(tmp_path, use_window=True, tell_maker=lambda text: None).live(camera, VIEW, None, seconds=60,
                                                                           wait_key=wait_key)
    assert result is None and camera.frames == 4, "four frames: three without a key, the fourth with one"
    assert [level for _, level in window] == [1, 2, 3, 4], "each new frame was shown"
    assert wait_key.waits == [100] * 4
    assert not list(tmp_path.iterdir()), "a window writes no pictures"


def test_the_window_goes_on_when_its_time_is_up_without_a_key(window, tmp_path):
    camera = CountingCamera()
    Preview(tmp_path, use_window=True, tell_maker=lambda text: None).live(camera, VIEW, None, seconds=0,
                                                                  wait_key=keys(-1))
    assert camera.frames == 1 and len(window) == 1


def test_without_window_support_the_preview_becomes_a_picture(monkeypatch, tmp_path):
    def no_gui(title, image):
        raise cv2.error("The function is not implemented (no GUI)")
    monkeypatch.setattr(cv2, "imshow", no_gui)
    preview = Preview(tmp_path, use_window=True, tell_maker=lambda text: None)
    wait_key = keys()  # never asked: there is no window to wait on
    path = preview.live(CountingCamera(), VIEW, None, seconds=0, wait_key=wait_key)
    assert preview.use_window is False and wait_key.waits == []
    assert path == tmp_path / "live-front.png" and cv2.imread(str(path))[59, 79, 0] == 2, "the second frame, as a file"
