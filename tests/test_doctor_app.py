"""Doctor checks beside what they check: solver tables, colour calibration, camera."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import numpy as np

from robot import config as config_module
from robot.doctor import OK, WARN
from robot.solver.doctor_checks import check_tables
from robot.vision.doctor_checks import check_camera, check_colour_calibration
from robot.plan import RobotProfile
from robot.solver.tables import TableStore

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


def test_camera_not_found_is_a_warning(tmp_path):
    config = config_module.load(ROOT / "config.yaml")
    config["camera"]["device"] = str(tmp_path / "no-such-camera.mp4")
    [result] = check_camera(config, None)
    assert result.status == WARN and "not found" in result.detail
    config["camera"]["device"] = str(tmp_path)
    [result] = check_camera(config, None)
    assert result.status == OK
