"""The scan pictures: labels readable on every sticker colour and explained on the picture, and the
pictures of doubtful scan attempts listed in the run report."""

import numpy as np

from robot import config as config_module
from robot import cube
from robot.run.report import RunReport
from robot.sim import render
from robot.vision import camera_geometry
from robot.vision.scan import ScanSequence, add_legend, label_box, read_frames


def test_labels_are_white_on_black_whatever_the_sticker():
    for sticker in ((255, 255, 255), (0, 215, 250), (30, 20, 200)):  # white, yellow, red (BGR)
        image = np.full((480, 640, 3), sticker, np.uint8)
        x0, y0, x1, y1 = label_box(image, "R3 B", (320, 240))
        box = image[y0:y1, x0:x1].reshape(-1, 3).max(axis=1)
        assert (box < 40).mean() > 0.6 and (box > 200).sum() > 20  # a dark box with light text on it
        assert x1 - x0 > 30 and y1 - y0 > 12  # not the old tiny 0.4 scale text


def test_saved_pictures_carry_the_legend_and_the_final_facelet_names(tmp_path):
    config = config_module.load()
    sequence = ScanSequence.from_config(config)
    start = cube.SOLVED.apply("R U F'").to_facelets()
    frames, regions = render.render_scan(start, sequence, camera_geometry.Pose.from_config(config), seed=2)
    result = read_frames(frames, sequence, regions, save_dir=tmp_path)
    import cv2

    first = cv2.imread(str(result.images[0]))
    frame = frames[sequence.views[0].name]
    assert first.shape[0] > frame.shape[0]  # the legend band below the frame
    band = first[frame.shape[0]:]
    assert (band.max(axis=2) > 200).sum() > 200  # legend text is written there
    legend = add_legend(np.zeros((10, 800, 3), np.uint8), ["a", "b"])
    assert legend.shape[0] > 10 + 2 * 12


def test_failed_attempts_pictures_are_listed_in_the_report():
    report = RunReport(time="t", mode="hardware", failed_scan_images=[
        {"attempt": 1, "error": "too dark", "images": ["/scans/a/01-top-front.png", "/scans/a/net.png"]}])
    text = report.format()
    assert "doubtful    attempt 1: /scans/a/01-top-front.png, /scans/a/net.png" in text
