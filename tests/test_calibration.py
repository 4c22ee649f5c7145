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
from robot.vision import camera_geometry
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
    pose = camera_geometry.Pose.from_config(config)
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
    answers = Answers({**ANSWERS, "verify": "no"}, interactive=False, tell_maker=lambda *_: None)
    with pytest.raises(CalibrationAborted, match="nothing saved"):
        run(config, answers, FileCamera(shots / "solved"), FileCamera(shots / "scrambled"), tell_maker=lambda *_: None)
    assert not (tmp_path / "cal" / "colors.yaml").exists()


def test_missing_answer_is_named(tmp_path, shots):
    config = config_module.load(_config_in(tmp_path))
    answers = Answers({"solved_ready": "yes"}, interactive=False, tell_maker=lambda *_: None)
    with pytest.raises(CalibrationAborted, match="no answer for 'regions'"):
        run(config, answers, FileCamera(shots / "solved"), tell_maker=lambda *_: None)


def test_clicked_centres_make_regions(tmp_path, shots):
    config = config_module.load(_config_in(tmp_path))
    sequence = ScanSequence.from_config(config)
    truth = camera_geometry.scan_regions(camera_geometry.Pose.from_config(config), sequence)
    clicks = {view.name: truth.quads(view.name).mean(axis=1).round(1).tolist() for view in sequence.views}
    answers = Answers({**ANSWERS, "regions": "click", "clicks": clicks}, interactive=False, tell_maker=lambda *_: None)
    outcome = run(config, answers, FileCamera(shots / "solved"), FileCamera(shots / "scrambled"),
                  tell_maker=lambda *_: None)
    assert outcome.regions.source == "click" and outcome.verified == "confirmed"
    assert np.allclose(outcome.regions.quads("left").mean(axis=1), truth.quads("left").mean(axis=1), atol=0.2)


def test_not_solved_cube_is_refused(tmp_path, shots):
    config = config_module.load(_config_in(tmp_path))
    answers = Answers(ANSWERS, interactive=False, tell_maker=lambda *_: None)
    with pytest.raises(CalibrationAborted, match="does not look solved"):
        run(config, answers, FileCamera(shots / "scrambled"), tell_maker=lambda *_: None)


def test_close_colours_get_advice():
    config = config_module.defaults()
    sequence = ScanSequence.from_config(config)
    pose = camera_geometry.Pose.from_config(config)
    palette = dict(render.STANDARD_PALETTE, L=(214, 40, 34))  # an "orange" that is nearly red
    frames, regions = render.render_scan(cube.SOLVED_FACELETS, sequence, pose, render.Lighting(), seed=1,
                                         palette=palette)
    calibration, _ = learn_colours(read_stickers(frames, sequence, regions), sequence,
                                   {"R": "red", "L": "orange", "U": "white", "D": "yellow", "F": "green", "B": "blue"})
    closest = separations(calibration)[0]
    assert {closest.first, closest.second} == {"red", "orange"} and closest.too_close
    from robot.vision.calibrate import advice

    assert "more (diffuse) light" in advice(closest) and "matte" in advice(closest)


@pytest.mark.parametrize("temperature_k, brightness", [(6500, 1.0), (5200, 0.9), (3500, 0.8), (8000, 1.1)])
def test_colours_are_named_from_their_measured_values(temperature_k, brightness):
    # No names given: each face's colour gets its standard name, once (blue was saved as "purple",
    # two faces as "green").
    config = config_module.defaults()
    sequence = ScanSequence.from_config(config)
    light = render.Lighting(temperature_k=temperature_k, brightness=brightness)
    frames, regions = render.render_scan(cube.SOLVED_FACELETS, sequence, camera_geometry.Pose.from_config(config), light,
                                         seed=7)
    readings = read_stickers(frames, sequence, regions)
    calibration, problems = learn_colours(readings, sequence)
    assert problems == []
    by_face = dict(zip(cube.FACES, calibration.colours))
    # The renderer's scheme: U white, R red, F green, D yellow, L orange, B blue.
    assert by_face == {"U": "white", "R": "red", "F": "green", "D": "yellow", "L": "orange", "B": "blue"}


@pytest.mark.parametrize("elevation, azimuth, distance", [
    (-10, 12, 40),  # the camera 10 degrees lower, turned 12 degrees, 40 mm farther (was 1 of 4 in side views)
    (15, 0, 0), (-15, 0, 0), (0, 15, 0), (0, -15, 0), (0, 0, 50), (0, 0, -50), (-15, -15, -50), (15, 15, 50),
])
def test_regions_are_found_for_camera_poses_off_the_configured_one(tmp_path, elevation, azimuth, distance):
    import dataclasses

    from robot.vision.calibrate import Preview, setup_regions

    config = config_module.with_settings(config_module.defaults(), {"scan.regions_file": str(tmp_path / "none.yaml")})
    sequence = ScanSequence.from_config(config)
    base = camera_geometry.Pose.from_config(config)
    assert base.distance_mm == 200  # +/-50 mm is +/-25 %
    pose = dataclasses.replace(base, elevation_deg=base.elevation_deg + elevation,
                               azimuth_deg=base.azimuth_deg + azimuth, distance_mm=base.distance_mm + distance)
    frames, truth = render.render_scan(cube.SOLVED_FACELETS, sequence, pose, seed=3)
    answers = Answers({"regions": "detect", "accept_regions": "yes"}, interactive=False)
    regions = setup_regions(frames, sequence, config, answers, Preview(tmp_path / "p", False, lambda m: None),
                            lambda m: None)
    for view in sequence.views:
        found, expected = regions.quads(view.name), truth.quads(view.name)
        size = np.sqrt(np.abs([cv2.contourArea(q.astype(np.float32)) for q in expected]))
        error = np.linalg.norm(found.mean(axis=1) - expected.mean(axis=1), axis=1)
        assert (error < 0.25 * size).all(), (view.name, np.round(error / size, 2))


def test_the_robot_presents_each_view_and_one_view_is_redone(tmp_path, shots):
    from robot.link import protocol
    from robot.sim.mock_firmware import MockFirmware

    config_path = _config_in(tmp_path)
    data = yaml.safe_load(config_path.read_text())
    data["camera"]["device"] = str(shots / "solved")  # the configured camera: pictures of the solved cube
    config_path.write_text(yaml.safe_dump(data))
    config = config_module.load(config_path)
    sequence = ScanSequence.from_config(config)
    answers = tmp_path / "answers.yaml"
    answers.write_text(yaml.safe_dump(ANSWERS))
    mock = MockFirmware(transport="pty", motion=config.motion, time_scale=0.02).start()
    try:
        code = cli.main(["calibrate", "colours", "--config", str(config_path), "--answers", str(answers),
                         "--scrambled-images", str(shots / "scrambled"), "--no-window", "--port", mock.url])
        executed = [protocol.command_action(command) for _, command in mock.executed]
    finally:
        mock.stop()
    assert code == 0
    # The robot presented every view, for the solved cube and again for the check.
    assert executed == list(sequence.all_actions()) * 2
    saved = Regions.load(tmp_path / "cal" / "regions.yaml")

    # Redo one view only (clicked here): the others keep their saved regions exactly.
    from robot.vision.calibrate import Preview, setup_regions
    from robot.vision.camera import FileCamera
    from robot.vision.regions import quads_from_centres

    frames = {view.name: FileCamera(shots / "solved").capture(view.name) for view in sequence.views}
    clicked = [[100, 100], [160, 100], [100, 160], [160, 160]]
    answers = Answers({"regions": "fix", "fix_views": "left", "accept_regions": "no", "clicks": {"left": clicked}},
                      interactive=False)
    fixed = setup_regions(frames, sequence, config, answers, Preview(tmp_path / "p", False, lambda m: None),
                          lambda m: None)
    for view in sequence.views:
        expected = quads_from_centres(clicked) if view.name == "left" else saved.quads(view.name)
        assert np.allclose(fixed.quads(view.name), expected), view.name
    with pytest.raises(CalibrationAborted, match="fix_views"):
        setup_regions(frames, sequence, config, Answers({"regions": "fix", "fix_views": "nowhere"},
                      interactive=False), Preview(tmp_path / "p", False, lambda m: None), lambda m: None)


def test_live_preview_shows_each_view_with_its_regions(tmp_path, shots):
    config_path = _config_in(tmp_path)
    answers = tmp_path / "answers.yaml"
    answers.write_text(yaml.safe_dump(ANSWERS))
    assert cli.main(["calibrate", "colours", "--config", str(config_path), "--answers", str(answers),
                     "--solved-images", str(shots / "solved"), "--scrambled-images", str(shots / "scrambled"),
                     "--no-window", "--no-robot"]) == 0
    config = config_module.load(config_path)
    for view in ScanSequence.from_config(config).views:
        live = cv2.imread(str(tmp_path / "preview" / f"live-{view.name}.png"))
        raw = cv2.imread(str(shots / "solved" / f"{view.name}.png"))
        assert live is not None and live.shape == raw.shape
        changed = np.abs(live.astype(int) - raw.astype(int)).max(axis=2) > 60
        assert changed.mean() > 0.005  # the regions (and the title) are drawn over the frame


def test_a_camera_that_does_not_open_is_named_before_any_question(tmp_path):
    # A maker with the wrong camera.device used to be asked to put a solved cube in first.
    from robot.vision.camera import CameraError, open_camera

    config = config_module.with_settings(config_module.load(_config_in(tmp_path)), {"camera.device": "97"})
    asked = []
    answers = Answers({}, interactive=True, ask=lambda prompt: asked.append(prompt) or "y", tell_maker=lambda *_: None)
    with pytest.raises(CameraError, match="cannot open camera 97"):
        run(config, answers, open_camera(config), tell_maker=lambda *_: None)
    assert asked == []
    assert not (tmp_path / "cal" / "colors.yaml").exists()


def _sticker_behind_a_bar():
    """A dark body with one green sticker at x 100..160, y 100..160, its right third behind a lit grey bar
    (an arm's shaft in front of the cube)."""
    image = np.full((260, 260, 3), 20, np.uint8)
    image[100:160, 100:160] = (40, 150, 30)
    image[60:200, 140:175] = (140, 140, 140)
    return image


def test_a_sticker_cut_off_by_an_arm_moves_its_region_only_by_the_framed_sides():
    from robot.vision.regions import bordered_sides, detect_sticker_quads, refine_with_detections, square_quad

    image = _sticker_behind_a_bar()
    detected = detect_sticker_quads(image)
    assert len(detected) == 1 and bordered_sides(image, detected[0]) == (True, False, True, True)
    predicted = np.array([square_quad((137.0, 125.0), 30.0)])  # the true sticker moved by (7, -5)
    quads, found = refine_with_detections(predicted, detected, image=image)
    assert found == 1 and np.allclose(quads[0].mean(axis=0), (130, 130), atol=1.5), quads[0]
    assert np.allclose(np.ptp(quads[0], axis=0), 60)  # the region keeps the sticker's size
    taken_whole, _ = refine_with_detections(predicted, detected)  # the old snap: the visible part's box
    assert not np.allclose(taken_whole[0].mean(axis=0), (130, 130), atol=3)


def test_a_patch_framed_on_neither_side_of_an_axis_is_not_counted_as_found():
    from robot.vision.regions import refine_with_detections, square_quad

    image = _sticker_behind_a_bar()
    image[60:200, 85:105] = (140, 140, 140)  # a second bar hides the sticker's left edge as well
    patch = square_quad((122.5, 130.0), 17.5)  # what is seen between the bars
    predicted = np.array([square_quad((127.0, 125.0), 30.0)])
    quads, found = refine_with_detections(predicted, [patch], image=image)
    assert found == 0 and np.allclose(quads, predicted)
