"""`cube-robot calibrate colours` end to end without a person: answers file + rendered pictures.

The command is called by its old name, the alias `calibrate colors`, which must keep working.
"""

import cv2
import numpy as np
import pytest
import yaml

from robot import cli, cube
from robot import config as config_module
from robot.sim import render
from robot.vision.calibrate import Answers, CalibrationAborted, learn_colours, run, separations
from robot.vision.camera import FileCamera
from robot.vision.colour import Calibration
from robot.vision.regions import Regions
from robot.vision.scan import ScanSequence, read_stickers

ANSWERS = {
    "solved_ready": "yes", "regions": "detect", "accept_regions": "yes",
    "names": {"U": "white", "R": "red", "F": "green", "D": "yellow", "L": "orange", "B": "blue"},
    "scrambled_ready": "yes", "verify": "yes",
}


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    """Rendered pictures of a solved and a scrambled cube, as a file camera would read them."""
    folder = tmp_path_factory.mktemp("shots")
    config = config_module.defaults()
    sequence = ScanSequence.from_config(config)
    pose = render.Pose.from_config(config)
    light = render.Lighting(glare_spots=1, temperature_k=5200, brightness=0.9)
    for name, start in (("solved", cube.SOLVED_FACELETS),
                        ("scrambled", cube.random_state(np.random.default_rng(3)).to_facelets())):
        (folder / name).mkdir()
        frames, _ = render.render_scan(start, sequence, pose, light, seed=len(name))
        for view, frame in frames.items():
            cv2.imwrite(str(folder / name / f"{view}.png"), frame)
    return folder


def _config_in(tmp_path):
    """The shipped config with every calibration path under tmp_path."""
    text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    data = yaml.safe_load(text)
    data["scan"]["regions_file"] = str(tmp_path / "cal" / "regions.yaml")
    data["scan"]["colours_file"] = str(tmp_path / "cal" / "colors.yaml")
    data["scan"]["preview_dir"] = str(tmp_path / "preview")
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_headless_calibration_from_answers_file_writes_valid_files(tmp_path, shots, capsys):
    config_path = _config_in(tmp_path)
    answers = tmp_path / "answers.yaml"
    answers.write_text(yaml.safe_dump(ANSWERS))
    code = cli.main(["calibrate", "colors", "--config", str(config_path), "--answers", str(answers),
                     "--solved-images", str(shots / "solved"), "--scrambled-images", str(shots / "scrambled"),
                     "--no-window"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "confirmed on a scrambled cube" in out
    assert f"previews are written to {tmp_path / 'preview'}" in out
    calibration = Calibration.load(tmp_path / "cal" / "colors.yaml")
    assert sorted(calibration.names) == ["blue", "green", "orange", "red", "white", "yellow"]
    assert calibration.version == 1 and calibration.created
    assert calibration.camera["device"] == str(shots / "solved")
    assert sorted(calibration.regions) == sorted(cube.facelet_name(i) for i in range(24))
    red, orange = calibration.colours["red"].lab, calibration.colours["orange"].lab
    assert red[2] < orange[2]  # orange is yellower than red
    regions = Regions.load(tmp_path / "cal" / "regions.yaml")
    regions.check(ScanSequence.from_config(config_module.load(config_path)))
    assert (tmp_path / "preview" / "check-net.png").exists()
    assert (tmp_path / "preview" / "regions-top-front.png").exists()


def test_rejected_check_saves_nothing(tmp_path, shots):
    config = config_module.load(_config_in(tmp_path))
    answers = Answers({**ANSWERS, "verify": "no"}, interactive=False, say=lambda *_: None)
    with pytest.raises(CalibrationAborted, match="nothing saved"):
        run(config, answers, FileCamera(shots / "solved"), FileCamera(shots / "scrambled"), say=lambda *_: None)
    assert not (tmp_path / "cal" / "colors.yaml").exists()


def test_missing_answer_is_named(tmp_path, shots):
    config = config_module.load(_config_in(tmp_path))
    answers = Answers({"solved_ready": "yes"}, interactive=False, say=lambda *_: None)
    with pytest.raises(CalibrationAborted, match="no answer for 'regions'"):
        run(config, answers, FileCamera(shots / "solved"), say=lambda *_: None)


def test_clicked_centres_make_regions(tmp_path, shots):
    config = config_module.load(_config_in(tmp_path))
    sequence = ScanSequence.from_config(config)
    truth = render.scan_regions(render.Pose.from_config(config), sequence)
    clicks = {view.name: truth.quads(view.name).mean(axis=1).round(1).tolist() for view in sequence.views}
    answers = Answers({**ANSWERS, "regions": "click", "clicks": clicks}, interactive=False, say=lambda *_: None)
    outcome = run(config, answers, FileCamera(shots / "solved"), FileCamera(shots / "scrambled"),
                  say=lambda *_: None)
    assert outcome.regions.source == "click" and outcome.verified == "confirmed"
    assert np.allclose(outcome.regions.quads("left").mean(axis=1), truth.quads("left").mean(axis=1), atol=0.2)


def test_not_solved_cube_is_refused(tmp_path, shots):
    config = config_module.load(_config_in(tmp_path))
    answers = Answers(ANSWERS, interactive=False, say=lambda *_: None)
    with pytest.raises(CalibrationAborted, match="does not look solved"):
        run(config, answers, FileCamera(shots / "scrambled"), say=lambda *_: None)


def test_close_colours_get_advice():
    config = config_module.defaults()
    sequence = ScanSequence.from_config(config)
    pose = render.Pose.from_config(config)
    palette = dict(render.STANDARD_PALETTE, L=(214, 40, 34))  # an "orange" that is nearly red
    frames, regions = render.render_scan(cube.SOLVED_FACELETS, sequence, pose, render.Lighting(), seed=1,
                                         palette=palette)
    calibration, _ = learn_colours(read_stickers(frames, sequence, regions), sequence,
                                   {"R": "red", "L": "orange", "U": "white", "D": "yellow", "F": "green", "B": "blue"})
    closest = separations(calibration)[0]
    assert {closest.first, closest.second} == {"red", "orange"} and closest.too_close
    from robot.vision.calibrate import advice

    assert "more (diffuse) light" in advice(closest) and "matte" in advice(closest)
