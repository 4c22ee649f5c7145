"""What a scan keeps: the raw frames and the 24 readings beside the annotated pictures, so a misread can
be replayed (`cube-robot vision decode` on the saved file gives the same cube as the run); the net
marks the stickers inferred rather than seen; the run's report names the rescan's pictures too."""

import io
import json
import sys
from pathlib import Path

import cv2
import numpy as np

from conftest import scratch_config
from robot import cli, cube
from robot import config as config_module
from robot.sim import render
from robot.vision import camera_geometry
from robot.vision import net
from robot.vision.scan import READINGS_FILE, ScanSequence, read_frames


def _cube_robot(capsys, monkeypatch, *args):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _inferred_pixels(image) -> int:
    return int((np.abs(image.astype(int) - np.array(net.INFERRED)).max(axis=2) == 0).sum())


def test_a_saved_scan_keeps_its_raw_frames_and_readings_that_decode_to_the_same_cube(tmp_path):
    config = config_module.load()
    sequence = ScanSequence.from_config(config)
    start = cube.SOLVED.apply("R U F' U2").to_facelets()
    frames, regions = render.render_scan(start, sequence, camera_geometry.Pose.from_config(config), seed=5)
    result = read_frames(frames, sequence, regions, config=config, save_dir=tmp_path)
    folder = result.images[0].parent
    for v, view in enumerate(sequence.views):
        raw = cv2.imread(str(folder / f"raw-{v + 1:02d}-{view.name}.png"))
        assert raw is not None and np.array_equal(raw, frames[view.name]), view.name  # as taken, lossless
    readings = json.loads((folder / READINGS_FILE).read_text())
    assert np.array_equal(np.array(readings), result.readings.rgb)  # every digit kept
    from robot.vision.decode import decode

    assert decode(readings, None, config).facelets == result.decoded.facelets
    # All 24 seen, none read past: nothing is marked inferred on the net.
    assert result.decoded.unread == ()
    assert _inferred_pixels(cv2.imread(str(folder / "net.png"))) == 0


def test_the_net_marks_inferred_stickers():
    plain = net.draw_net("UUUURRRRFFFFDDDDLLLLBBBB")
    marked = net.draw_net("UUUURRRRFFFFDDDDLLLLBBBB", inferred=["F3"])
    assert _inferred_pixels(plain) == 0 and _inferred_pixels(marked) > 50
    assert marked.shape[0] > plain.shape[0]  # the line below the net that says what '*' means


def test_a_run_keeps_readings_that_replay_to_its_cube_and_names_the_rescans_pictures(tmp_path, capsys, monkeypatch):
    c = str(scratch_config(tmp_path))
    code, out, err = _cube_robot(capsys, monkeypatch, "run", "--sim", "--firmware", "mock", "--scramble", "R U F'",
                                 "--seed", "3", "--json", "--config", c)
    report = json.loads(out)
    assert code == 0 and report["solved"], err
    scan_folder = Path(report["scan_images"][0]).parent
    assert scan_folder.parent == tmp_path / "scans"
    assert report["scan_readings"] == str(scan_folder / READINGS_FILE)
    views = len(report["scan_images"]) - 1  # each view taken, and the net
    assert len(list(scan_folder.glob("raw-*.png"))) == views
    readings = json.loads(Path(report["scan_readings"]).read_text())
    assert len(readings) == 24 and all(r is None or len(r) == 3 for r in readings)
    unseen = [i for i, r in enumerate(readings) if r is None]
    # The replay the report names decodes the same cube.
    assert report["scan_replay"] == f"cube-robot vision decode --no-calibration {report['scan_readings']}"
    code, out, err = _cube_robot(capsys, monkeypatch, "vision", "decode", "--no-calibration", "--json",
                                 "--config", c, report["scan_readings"])
    assert code == 0, err
    assert json.loads(out)["facelets"] == report["facelets"]
    # The scan stopped once sure (scan.adaptive_from): the stickers no view showed are null in the
    # readings and marked inferred on the net.
    assert views < len(ScanSequence.from_config(config_module.load(c)).views) and unseen
    assert _inferred_pixels(cv2.imread(str(scan_folder / "net.png"))) > 0
    # The rescan after the solve keeps its own pictures, frames and readings, and the report names them.
    assert report["verify"] == "rescan shows solved"
    check = [Path(p) for p in report["verify_images"]]
    assert check and all(p.exists() for p in check) and check[0].parent != scan_folder
    assert (check[0].parent / READINGS_FILE).exists() and list(check[0].parent.glob("raw-*.png"))


def test_the_text_report_names_the_replay_and_the_rescans_pictures():
    from robot.run.report import RunReport

    report = RunReport(time="t", mode="hardware", scan_images=["/s/a/01-top-front.png", "/s/a/net.png"],
                       scan_readings="/s/a/readings.json", scan_replay="cube-robot vision decode /s/a/readings.json",
                       verify="rescan shows solved", verify_images=["/s/b/01-top-front.png", "/s/b/net.png"])
    text = report.format()
    assert "  pictures    /s/a (raw frames and readings.json too)" in text
    assert "  replay      cube-robot vision decode /s/a/readings.json" in text
    assert "  check pics  /s/b" in text


def test_decode_names_bad_null_readings(tmp_path, capsys, monkeypatch):
    path = tmp_path / "readings.json"
    for readings, said in (([None] * 24, "every reading is null"), ([None, "x"], "readings must be 24")):
        path.write_text(json.dumps(readings))
        code, _, err = _cube_robot(capsys, monkeypatch, "vision", "decode", "--no-calibration", str(path))
        assert code == 2 and said in err, err
