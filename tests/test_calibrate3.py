"""`calibrate colours --puzzle 3x3x3` (robot/calibrate/colours3.py, robot/vision/regions3.py) on the
simulated 3x3x3: the regions found from a solved cube, the colours learnt, the files, the refusals."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from robot import cli
from robot import config as config_module
from robot.calibrate.colours3 import calibrate3, faces_by_centres, present_views
from robot.scan_sequence3 import ScanSequence3, facelet_index
from robot.sim import render
from robot.sim.robot_sim3 import SimulatedRobot3
from robot.solver3 import cube3
from robot.vision.camera_geometry3 import pose3, scan_regions3
from robot.vision.decode3 import decode3
from robot.vision.regions import RegionsError
from robot.vision.regions3 import (Calibration3Error, check_writable3, load_colours3, load_regions3, read3,
                                   readings54, run_colours3, run_regions3)

SHIFT = (6.0, -5.0)  # the camera sits a few pixels from where camera.pose says (mount play)


def scrambled(seed: int) -> str:
    return cube3.to_facelets(cube3.random_state(np.random.default_rng(seed)))


def pictures(config, facelets: str, shift=SHIFT):
    """Every scan3 view of `facelets` on the simulated 3x3x3 whose camera is shifted: (frames, the
    regions of what the renderer drew)."""
    robot = SimulatedRobot3(config, facelets, seed=5, firmware="mock")
    robot.camera.lighting = replace(render.Lighting(), offset_px=shift)
    try:
        sequence = ScanSequence3.from_config(config)
        return present_views(robot, sequence, lambda text: None), scan_regions3(robot.camera.pose, sequence, shift)
    finally:
        robot.close()


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """The calibration of a solved cube under the shifted camera, saved into a temporary folder."""
    folder = tmp_path_factory.mktemp("calibrate3")
    config = config_module.defaults()
    frames, drawn = pictures(config, cube3.SOLVED_FACELETS)
    said: list[str] = []
    outcome = calibrate3(config, frames, said.append, folder / "pictures", folder / "regions3.yaml",
                         folder / "colors3.yaml", simulated=True)
    return config, outcome, drawn, said, folder


def test_calibration_brings_a_shifted_cameras_regions_back_onto_the_stickers(calibrated):
    config, outcome, drawn, said, folder = calibrated
    sequence = ScanSequence3.from_config(config)
    guessed = scan_regions3(pose3(config), sequence)  # where camera.pose says the stickers are
    for view in sequence.views:
        truth = drawn.quads(view.name).mean(axis=1)  # the renderer's sticker centres
        before = np.linalg.norm(guessed.quads(view.name).mean(axis=1) - truth, axis=1)
        after = np.linalg.norm(outcome.regions.quads(view.name).mean(axis=1) - truth, axis=1)
        assert before.min() > 7.0, (view.name, before)  # every region off its sticker's centre by the shift
        assert after.max() < 2.0, (view.name, after)
    views = [line for line in said if re.match(r"  view\d+: \d+ of \d+ stickers found", line)]
    assert len(views) == len(sequence.views) and all("NOT found" not in line for line in views)
    assert outcome.pictures[0] == folder / "pictures" / "regions3.png" and outcome.pictures[0].is_file()
    assert {p.name for p in outcome.pictures[1:]} == {f"regions3-{v.name}.png" for v in sequence.views}
    assert any(line.startswith("pictures of the regions found: ") for line in said)
    assert outcome.calibration.camera == {} and len(outcome.calibration.colours) == 6
    assert said[-1].startswith(f"saved {folder / 'regions3.yaml'} and {folder / 'colors3.yaml'} (SIMULATED")


def test_the_saved_files_round_trip_and_the_run_reads_them(calibrated):
    config, outcome, _, _, folder = calibrated
    sequence = ScanSequence3.from_config(config)
    regions = load_regions3(folder / "regions3.yaml")
    assert regions.source == "detected (SIMULATED)" and tuple(regions.image_size) == (640, 480)
    assert set(regions.views) == {v.name for v in sequence.views}
    for name, quads in outcome.regions.views.items():
        assert np.allclose(regions.quads(name), quads, atol=0.051)  # written to 0.1 px
    colours = load_colours3(folder / "colors3.yaml")
    assert list(colours.colours) == list(outcome.calibration.colours)
    for name, stats in outcome.calibration.colours.items():
        assert np.allclose(colours.colours[name].lab, stats.lab, atol=1e-4)
    # The run: the calibrated files when scan3's settings name them, the pose's guess when absent.
    pose = pose3(config)
    named = replace(config, scan3=replace(config.scan3, regions_file=str(folder / "regions3.yaml"),
                                          colours_file=str(folder / "colors3.yaml")))
    assert np.allclose(run_regions3(named, pose, sequence).quads("view3"), regions.quads("view3"))
    assert list(run_colours3(named).colours) == list(colours.colours)
    absent = replace(config, scan3=replace(config.scan3, regions_file=str(folder / "none.yaml"),
                                           colours_file=str(folder / "none.yaml")))
    assert np.allclose(run_regions3(absent, pose, sequence).quads("view3"), scan_regions3(pose, sequence).quads("view3"))
    assert run_colours3(absent) is None
    # A file that no longer fits: the scan sequence changed, or the frames' size.
    fewer = ScanSequence3.from_data([{"name": v.name, "ops": list(v.ops), "facelets": list(v.facelets)[:-1]}
                                     if v.name == "view1" else {"name": v.name, "ops": list(v.ops),
                                                                "facelets": list(v.facelets)}
                                     for v in sequence.views], sequence.finish, sequence.profile)
    with pytest.raises(RegionsError, match=r"view 'view1' \(10 facelets\).*calibrate colours --puzzle 3x3x3"):
        run_regions3(named, pose, fewer)
    with pytest.raises(RegionsError, match="640x480 frames, the camera's are 800x600"):
        run_regions3(named, replace(pose, width=800, height=600), sequence)


def test_decode_with_the_calibrated_regions_reads_a_scrambled_cube_exactly(calibrated):
    config, outcome, _, _, _ = calibrated
    sequence = ScanSequence3.from_config(config)
    start = scrambled(11)
    frames, _ = pictures(config, start)
    truth = faces_by_centres(sequence.final_state(start))
    readings = readings54(read3(frames, sequence, outcome.regions, config.scan.sampling))
    assert decode3(readings, outcome.calibration, config).facelets == truth


def test_a_cube_that_is_not_solved_is_refused_naming_the_view_and_sticker(tmp_path):
    config = config_module.defaults()
    start = scrambled(3)
    frames, _ = pictures(config, start, shift=(0.0, 0.0))
    with pytest.raises(Calibration3Error) as refused:
        calibrate3(config, frames, lambda text: None, tmp_path / "pictures", tmp_path / "r.yaml", tmp_path / "c.yaml")
    said = str(refused.value)
    found = re.match(r"view '(view\d+)', sticker ([URFDLB][1-9]): not the colour of its face's centre "
                     r"\(([URFDLB]5) in that view\)", said)
    assert found, said
    view, sticker, centre = found.groups()
    sequence = ScanSequence3.from_config(config)
    at_view = sequence.states_at_views(start)[[v.name for v in sequence.views].index(view)]
    assert at_view[facelet_index(sticker)] != at_view[facelet_index(centre)]  # truly another colour there
    assert "Is the cube solved?" in said and "more region(s) do not either" in said
    assert not (tmp_path / "r.yaml").exists() and not (tmp_path / "c.yaml").exists()
    assert (tmp_path / "pictures" / "regions3.png").is_file()  # the maker can look at what was found


def test_a_file_the_calibration_did_not_write_is_never_overwritten(tmp_path):
    config = config_module.defaults()
    foreign = tmp_path / "regions3.yaml"
    foreign.write_text("views: {}\n")  # someone's own file at that path
    with pytest.raises(Calibration3Error, match=f"{foreign} was not written by 'cube-robot calibrate colours "
                                                r"--puzzle 3x3x3'.*nothing was written"):
        calibrate3(config, {}, lambda text: None, tmp_path / "pictures", foreign, tmp_path / "colors3.yaml")
    assert foreign.read_text() == "views: {}\n" and not (tmp_path / "colors3.yaml").exists()
    two = replace(config, scan=replace(config.scan, regions_file=str(tmp_path / "regions.yaml")))
    with pytest.raises(Calibration3Error, match="is the 2x2x2's"):
        calibrate3(two, {}, lambda text: None, tmp_path / "pictures", tmp_path / "regions.yaml",
                   tmp_path / "colors3.yaml")
    assert not (tmp_path / "regions.yaml").exists()


def test_the_command_refuses_what_it_cannot_take_by_name(tmp_path, capsys):
    assert cli.main(["calibrate", "colours", "--puzzle", "3x3x3"]) == 2
    err = capsys.readouterr().err
    assert "the 3x3x3 runs only on the simulated robot so far: add --sim" in err and "nothing written" in err
    assert cli.main(["calibrate", "colours", "--puzzle", "3x3x3", "--sim", "--answers", "a.yaml", "--yes"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("SIMULATED | ") and "cannot take --answers; --yes" in err


@pytest.mark.parametrize("elevation, azimuth, shift", [
    (50.0, 6.0, (0.0, 0.0)),  # U1 at a slant beside a jaw: a whole sticker the dark body frames on one axis only
    (47.6, -0.7, (-3.0, -1.2)),  # F7 and F9: no edge closes them at the cube's lower edge, found by their colour
])
def test_a_camera_a_few_degrees_from_its_pose_is_found_too(tmp_path, elevation, azimuth, shift):
    config = config_module.defaults()
    sequence = ScanSequence3.from_config(config)
    robot = SimulatedRobot3(config, cube3.SOLVED_FACELETS, seed=5, firmware="mock")
    robot.camera.pose = replace(robot.camera.pose, elevation_deg=elevation, azimuth_deg=azimuth)
    robot.camera.lighting = replace(render.Lighting(), offset_px=shift)
    try:
        frames = present_views(robot, sequence, lambda text: None)
        drawn = scan_regions3(robot.camera.pose, sequence, shift)
    finally:
        robot.close()
    said: list[str] = []
    outcome = calibrate3(config, frames, said.append, tmp_path / "pictures", tmp_path / "r.yaml", tmp_path / "c.yaml")
    guessed = scan_regions3(pose3(config), sequence)
    before, after = [], []
    for view in sequence.views:
        truth = drawn.quads(view.name).mean(axis=1)
        before += list(np.linalg.norm(guessed.quads(view.name).mean(axis=1) - truth, axis=1))
        after += list(np.linalg.norm(outcome.regions.quads(view.name).mean(axis=1) - truth, axis=1))
    assert max(before) > 5.0 and max(after) < 5.0 and np.median(after) < 1.5, (said, max(before), after)


def test_the_command_on_the_simulated_robot_saves_where_the_config_says(tmp_path, capsys):
    from conftest import scratch_config

    def edit(text):
        text = text.replace("regions_file: calibration/regions3.yaml", f"regions_file: {tmp_path / 'r3.yaml'}")
        text = text.replace("colours_file: calibration/colors3.yaml", f"colours_file: {tmp_path / 'c3.yaml'}")
        return text.replace("preview_dir: runs/preview", f"preview_dir: {tmp_path / 'preview'}")
    code = cli.main(["calibrate", "colours", "--puzzle", "3x3x3", "--sim", "--firmware", "mock", "--seed", "2",
                     "--config", str(scratch_config(tmp_path, edit))])
    out = capsys.readouterr().out
    assert code == 0, out
    lines = out.splitlines()
    assert all(line.startswith("SIMULATED | ") for line in lines)
    assert sum(bool(re.search(r"\| view \d+ of 12 \(view\d+\): presented", line)) for line in lines) == 12
    assert re.search(r"check: the scrambled cube \(seed \d+\) read exactly with the new regions and colours", out)
    assert f"saved {tmp_path / 'r3.yaml'} and {tmp_path / 'c3.yaml'} (SIMULATED" in out
    assert load_regions3(tmp_path / "r3.yaml").source == "detected (SIMULATED)"
    assert (tmp_path / "preview" / "regions3.png").is_file()
    check_writable3(tmp_path / "r3.yaml", tmp_path / "c3.yaml")  # its own files: it may write them again


def test_the_3x3x3_run_reads_the_calibrated_files(calibrated, tmp_path):
    """The run's scan samples the regions of scan3.regions_file: the calibrated ones read the cube; the same
    file with every region moved off its sticker is refused at every scan (the pose's guess would read it)."""
    from robot.plan3 import Plan3
    from robot.run import puzzle3
    from robot.run.options import RunOptions
    from robot.vision.regions3 import save_regions3

    config, outcome, _, _, folder = calibrated

    def run(regions_file):
        named = replace(config, scan3=replace(config.scan3, regions_file=str(regions_file),
                                              colours_file=str(folder / "colors3.yaml")))
        robot = SimulatedRobot3(named, scrambled(8), seed=8, firmware="mock")
        return puzzle3.run_puzzle3(named, RunOptions(sim=True, verify=False), lambda text: None, robot=robot,
                                   solve=lambda facelets, budget: Plan3(facelets, "", [], 0))
    report = run(folder / "regions3.yaml")
    assert report.scan_attempts == 1 and report.scanned == faces_by_centres(report.plan_start_true)
    moved = load_regions3(folder / "regions3.yaml")
    moved.views = {name: quads + [22.0, 0.0] for name, quads in moved.views.items()}  # half a sticker aside
    save_regions3(moved, tmp_path / "moved.yaml", simulated=True)
    report = run(tmp_path / "moved.yaml")
    assert report.scanned is None and len(report.refusals) == config.run.scan_attempts, report.format()


def test_the_run_refuses_a_calibration_file_that_does_not_fit_before_anything_starts(tmp_path, capsys):
    foreign = tmp_path / "regions.yaml"
    foreign.write_text("views: {}\nimage_size: [640, 480]\n")  # a 2x2x2-style file, not the 3x3x3's
    config = tmp_path / "config.yaml"
    config.write_text(f"scan3:\n  regions_file: {foreign}\n")
    assert cli.main(["run", "--puzzle", "3x3x3", "--sim", "--firmware", "mock", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"{foreign}: not a 3x3x3 regions file (no 'puzzle: 3x3x3'); run 'cube-robot calibrate colours " \
           "--puzzle 3x3x3' to make one (nothing moved)" in err, err


def test_pictures_of_a_solved_cube_calibrate_without_a_robot(tmp_path, capsys):
    import cv2
    import yaml

    config = config_module.defaults()
    frames, _ = pictures(config, cube3.SOLVED_FACELETS)
    (tmp_path / "shots").mkdir()
    for name, frame in frames.items():
        cv2.imwrite(str(tmp_path / "shots" / f"{name}.png"), frame)
    settings = tmp_path / "config.yaml"
    settings.write_text(f"scan:\n  preview_dir: {tmp_path / 'preview'}\n")
    code = cli.main(["calibrate", "colours", "--puzzle", "3x3x3", "--solved-images", str(tmp_path / "shots"),
                     "--regions-out", str(tmp_path / "r.yaml"), "--colours-out", str(tmp_path / "c.yaml"),
                     "--config", str(settings)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "SIMULATED" not in out and f"saved {tmp_path / 'r.yaml'} and {tmp_path / 'c.yaml'}\n" in out
    assert "no check" in out.splitlines()[-1]  # nothing to check a scrambled cube with: said, not claimed
    written = yaml.safe_load((tmp_path / "r.yaml").read_text())
    assert written["simulated"] is False and written["source"] == "detected"
    assert load_colours3(tmp_path / "c.yaml").camera == {"camera": f"pictures in {tmp_path / 'shots'}"}
