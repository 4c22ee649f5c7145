"""Doctor checks beside what they check: solver tables, colour calibration, camera."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import numpy as np

from robot import config as config_module
from robot.checks import FAIL, OK, WARN
from robot.solver.doctor_checks import check_tables
from robot.vision.doctor_checks import check_camera, check_colour_calibration
from robot.plan import RobotProfile
from robot.tables_store import TableStore

ROOT = Path(__file__).resolve().parents[1]


def _config(tmp_path, **replace) -> config_module.Config:
    text = (ROOT / "config.yaml").read_text()
    for old, new in replace.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return config_module.load(path)


def test_tables_missing_stale_and_valid(tmp_path):
    tables = tmp_path / "tables"
    config = _config(tmp_path, **{"  dir: tables": f"  dir: {tables}"})
    by_name = {Path(r.item).name: r for r in check_tables(config, None)}
    assert by_name["coords.npz"].status == WARN and "not built yet" in by_name["coords.npz"].detail

    # A robot-cost table built for other timings is stale; coords built and intact is valid.
    store = TableStore(tables, log=lambda text: None, show_progress=False)
    store.load_or_build("coords.npz", None, lambda bar: {"a": np.arange(4)}, "coords", 1)
    other = dict(RobotProfile.from_config(config).describe(), half_turn_ms=999)
    store.load_or_build("robot-cost.npy", other, lambda bar: np.zeros(3, np.uint16), "cost", 1)
    by_name = {Path(r.item).name: r for r in check_tables(config, None)}
    assert by_name["coords.npz"].status == OK
    cost = by_name["robot-cost.npy"]
    assert cost.status == WARN and "profile" in cost.detail and "rebuilt" in cost.detail

    # A damaged file is reported, not trusted.
    (tables / "coords.npz").write_bytes(b"x" * (tables / "coords.npz").stat().st_size)
    by_name = {Path(r.item).name: r for r in check_tables(config, None)}
    assert by_name["coords.npz"].status == WARN and "corrupt" in by_name["coords.npz"].detail


def test_colour_calibration_missing_fresh_and_old(tmp_path):
    from robot.vision.colour import Calibration, ColourStats

    colours = tmp_path / "colors.yaml"
    config = _config(tmp_path, **{"colours_file: calibration/colors.yaml": f"colours_file: {colours}"})
    [result] = check_colour_calibration(config, None)
    assert result.status == WARN and "missing" in result.detail

    names = ("white", "yellow", "red", "orange", "blue", "green")
    calibration = Calibration({name: ColourStats([10.0 * i, 0, 0]) for i, name in enumerate(names)})
    calibration.save(colours)
    [result] = check_colour_calibration(config, None)
    assert result.status == OK and "0 days" in result.detail

    calibration.created = (_dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(days=45)).isoformat()
    calibration.save(colours)
    [result] = check_colour_calibration(config, None)
    assert result.status == WARN and "45 days" in result.detail


def test_camera_not_found_fails_and_a_folder_gives_a_frame(tmp_path):
    import cv2
    from types import SimpleNamespace

    config = config_module.load(ROOT / "config.yaml")
    config = config_module.with_settings(config, {"camera.device": str(tmp_path / "no-such-camera.mp4")})
    [result] = check_camera(config, None)
    assert result.status == FAIL and "not found" in result.detail and "camera.device" in result.detail
    config = config_module.with_settings(config, {"camera.device": str(tmp_path)})
    [result] = check_camera(config, None)  # a folder without the first view's picture
    assert result.status == FAIL and "gives no frame" in result.detail
    first_view = config.scan.views[0].name
    cv2.imwrite(str(tmp_path / f"{first_view}.png"), np.zeros((120, 160, 3), np.uint8))
    context = SimpleNamespace()
    [result] = check_camera(config, context)
    assert result.status == OK and "160x120 frame" in result.detail and context.camera_frame_size == (160, 120)


def test_regions_file_missing_and_for_another_frame_size(tmp_path):
    from types import SimpleNamespace

    from robot.sim import render
    from robot.vision import camera_geometry
    from robot.vision.doctor_checks import check_regions
    from robot.vision.scan import ScanSequence

    regions_path = tmp_path / "regions.yaml"
    config = _config(tmp_path, **{"regions_file: calibration/regions.yaml": f"regions_file: {regions_path}"})
    [result] = check_regions(config, None)
    assert result.status == FAIL and "missing" in result.detail and "calibrate colours" in result.detail
    _, regions = render.render_scan("U" * 4 + "R" * 4 + "F" * 4 + "D" * 4 + "L" * 4 + "B" * 4,
                                    ScanSequence.from_config(config), camera_geometry.Pose.from_config(config), seed=1)
    regions.save(regions_path)
    width, height = regions.image_size
    [result] = check_regions(config, SimpleNamespace(camera_frame_size=(width, height)))
    assert result.status == OK and "matches" in result.detail
    [result] = check_regions(config, SimpleNamespace(camera_frame_size=(width * 2, height * 2)))
    assert result.status == FAIL and f"set for {width}x{height} frames" in result.detail


def test_doctor_runs_the_preflight_checks_first():
    from robot.doctor.commands import CHECKS
    from robot.doctor.preflight import PREFLIGHT_CHECKS

    assert CHECKS[:len(PREFLIGHT_CHECKS)] == PREFLIGHT_CHECKS
    assert [title for title, _ in PREFLIGHT_CHECKS][:5] == [
        "firmware handshake", "camera", "regions file", "colour calibration", "solver tables"]


def test_tables_status_names_what_changed_and_does_not_fail_on_optional_tables(tmp_path, capsys):
    from types import SimpleNamespace

    from robot.solver.commands import run_tables_status

    tables = tmp_path / "tables"
    config = _config(tmp_path, **{"  dir: tables": f"  dir: {tables}"})
    store = TableStore(tables, log=lambda text: None, show_progress=False)
    store.load_or_build("coords.npz", None, lambda bar: {"a": np.arange(4)}, "coords", 1)
    profile = RobotProfile.from_config(config).describe()
    store.load_or_build("robot-cost.npy", profile, lambda bar: np.zeros(3, np.uint16), "cost", 1)
    args = SimpleNamespace(config=config.path)
    assert run_tables_status(args) == 0  # htm/qtm are only for `solve --metric htm/qtm`
    out = capsys.readouterr().out
    assert "htm.npy         not built yet (only `solve --metric htm`" in out

    other = dict(profile, half_turn_ms=999)
    store.load_or_build("robot-cost.npy", other, lambda bar: np.zeros(3, np.uint16), "cost", 1, force=True)
    assert run_tables_status(args) == 1
    out = capsys.readouterr().out
    cost_line = next(line for line in out.splitlines() if "robot-cost.npy " in line)
    assert "half_turn_ms 999, config now says" in cost_line and "regrip_ms" not in cost_line  # only what changed
    assert "cube-robot tables build" in out


def test_a_camera_that_does_not_open_says_its_fix_once():
    # The run's pre-flight passes its own camera; the CameraError already says what to set.
    from types import SimpleNamespace

    from robot.vision.camera import open_camera

    config = config_module.load(ROOT / "config.yaml")
    config = config_module.with_settings(config, {"camera.device": "97"})
    [result] = check_camera(config, SimpleNamespace(camera=open_camera(config)))
    assert result.status == FAIL and "cannot open camera 97" in result.detail
    assert result.detail.count("camera.device") == 1, result.detail
