"""Cameras: the file camera, and OpenCVCamera through a real cv2.VideoCapture on files."""

import cv2
import numpy as np
import pytest

from robot import config as config_module
from robot.vision.camera import CameraError, FileCamera, OpenCVCamera, open_camera


def _solid(value, shape=(48, 64)):
    return np.full(shape + (3,), value, np.uint8)


def test_file_camera_reads_view_pictures(tmp_path):
    cv2.imwrite(str(tmp_path / "top.png"), _solid((10, 20, 30)))
    with FileCamera(tmp_path) as camera:
        frame = camera.capture("top")
    assert frame.shape == (48, 64, 3) and tuple(frame[0, 0]) == (10, 20, 30)


def test_file_camera_averages_a_folder_of_frames(tmp_path):
    (tmp_path / "top").mkdir()
    for k, value in enumerate((10, 20, 60)):
        cv2.imwrite(str(tmp_path / "top" / f"{k}.png"), _solid(value))
    frame = FileCamera(tmp_path).open().capture("top")
    assert tuple(frame[5, 5]) == (30, 30, 30)


def test_file_camera_names_the_missing_view(tmp_path):
    with pytest.raises(CameraError, match="no picture for view 'left'"):
        FileCamera(tmp_path).open().capture("left")
    with pytest.raises(CameraError, match="is not a folder"):
        FileCamera(tmp_path / "nope").open()
    (tmp_path / "bad.png").write_text("not an image")
    with pytest.raises(CameraError, match="cannot read .*bad.png"):
        FileCamera(tmp_path).capture("bad")


def test_opencv_camera_on_an_image_sequence_flushes_and_averages(tmp_path):
    # VideoCapture reads numbered pictures as a stream, like a camera's frames.
    for k, value in enumerate((0, 40, 80, 120, 200, 220)):
        cv2.imwrite(str(tmp_path / f"frame_{k:03d}.png"), _solid(value))
    camera = OpenCVCamera(str(tmp_path / "frame_%03d.png"), flush_frames=1, average_frames=2)
    with camera:
        first = camera.capture("a")  # drops frame 0 (stale), averages 40 and 80
        second = camera.capture("b")  # drops 120, averages 200 and 220
    assert int(first[0, 0, 0]) == 60
    assert int(second[0, 0, 0]) == 210
    settings = camera.settings()
    assert settings["flush_frames"] == 1 and settings["average_frames"] == 2


def test_opencv_camera_reports_the_end_of_frames(tmp_path):
    for k in range(3):
        cv2.imwrite(str(tmp_path / f"f_{k:02d}.png"), _solid(50))
    camera = OpenCVCamera(str(tmp_path / "f_%02d.png"), flush_frames=0, average_frames=2).open()
    camera.capture("one")
    with pytest.raises(CameraError, match="gave no frame \\(view 'two'\\)"):
        camera.capture("two")
    camera.close()


def test_opencv_camera_on_a_video_file(tmp_path):
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    if not writer.isOpened():
        pytest.skip("this OpenCV build cannot write MJPG video")
    for value in (30, 30, 90, 90, 90):
        writer.write(_solid((value, 100, 150)))
    writer.release()
    with OpenCVCamera(str(path), flush_frames=2, average_frames=3) as camera:
        frame = camera.capture("view")
    assert abs(int(frame[20, 30, 0]) - 90) <= 4 and abs(int(frame[20, 30, 2]) - 150) <= 4


def test_opencv_camera_that_does_not_exist():
    with pytest.raises(CameraError, match="cannot open camera '/nonexistent/video.avi'"):
        OpenCVCamera("/nonexistent/video.avi").open()


def test_open_camera_picks_the_file_camera_for_a_folder(tmp_path):
    config = config_module.defaults()
    assert isinstance(open_camera(config, device=str(tmp_path)), FileCamera)
    camera = open_camera(config, device="3")
    assert isinstance(camera, OpenCVCamera) and camera.device == 3
