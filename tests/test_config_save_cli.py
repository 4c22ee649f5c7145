"""`tune grippers --save` and `calibrate timing --save` from the command line: what is written and what
is said when the config file is a symlink, read-only, or its disk is full (the mock firmware on a pty
stands in for the robot, named with --port as a real one would be)."""

from __future__ import annotations

import io
import sys

import pytest

from robot import cli
from robot import config as config_module
from robot.sim.mock_firmware import MockFirmware

from test_config_edit import no_space_in

ROOT = config_module.PROJECT_ROOT


@pytest.fixture
def robot_port():
    mock = MockFirmware(transport="pty", motion=config_module.defaults().motion, time_scale=0.02).start()
    try:
        yield mock.url
    finally:
        mock.stop()


def config_copy(folder, name="other.yaml"):
    path = folder / name
    path.write_text((ROOT / "config.yaml").read_text())
    return path


def cube_robot(capsys, monkeypatch, *args, stdin=""):
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_quitting_the_keys_names_the_config_file_that_was_used(robot_port, tmp_path, capsys, monkeypatch):
    path = config_copy(tmp_path)
    before = path.read_text()
    code, out, err = cube_robot(capsys, monkeypatch, "tune", "grippers", "--port", robot_port,
                                "--config", str(path), stdin="+\nq\n")
    assert code == 1, err
    assert f"Not saved: {path} is unchanged." in out and "config.yaml" not in out
    assert path.read_text() == before


def test_saving_through_a_symlink_writes_its_target_and_says_so(robot_port, tmp_path, capsys, monkeypatch):
    (tmp_path / "settings").mkdir()
    target = config_copy(tmp_path / "settings", "robot.yaml")
    link = tmp_path / "config.yaml"
    link.symlink_to(target)
    code, out, err = cube_robot(capsys, monkeypatch, "tune", "grippers", "--set", "R.open=1100", "--save",
                                "--port", robot_port, "--config", str(link))
    assert code == 0, err
    assert f"Saved 1 width(s) into {target} " in out
    assert link.is_symlink() and link.resolve() == target
    assert config_module.load(target).motion.arms["R"].servo_open_us == 1100


def test_a_read_only_config_is_refused_in_one_line(robot_port, tmp_path, capsys, monkeypatch):
    path = config_copy(tmp_path)
    before = path.read_text()
    path.chmod(0o444)
    code, out, err = cube_robot(capsys, monkeypatch, "tune", "grippers", "--set", "R.open=1100", "--save",
                                "--port", robot_port, "--config", str(path))
    assert code != 0 and "Saved" not in out
    assert err.strip().splitlines() == [f"cube-robot tune: {path} is read-only: not saved, the file is unchanged "
                                        f"(make it writable, e.g. chmod u+w {path}, and save again)"]
    assert path.read_text() == before


def test_a_full_disk_is_one_line_naming_the_folder_and_the_space_needed(robot_port, tmp_path, capsys, monkeypatch):
    path = config_copy(tmp_path)
    before = path.read_text()
    no_space_in(monkeypatch, tmp_path)
    code, out, err = cube_robot(capsys, monkeypatch, "tune", "grippers", "--set", "R.open=1100", "--save",
                                "--port", robot_port, "--config", str(path))
    monkeypatch.undo()
    assert code != 0 and "Traceback" not in err and "Saved" not in out
    [line] = err.strip().splitlines()
    assert line.startswith(f"cube-robot tune: no space left in {tmp_path}: saving needs ") and " bytes there" in line
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["other.yaml"]


def test_calibrate_timing_saves_into_a_symlinks_target_and_says_so(robot_port, tmp_path, capsys, monkeypatch):
    (tmp_path / "settings").mkdir()
    target = config_copy(tmp_path / "settings", "robot.yaml")
    link = tmp_path / "config.yaml"
    link.symlink_to(target)
    code, out, err = cube_robot(capsys, monkeypatch, "calibrate", "timing", "--port", robot_port, "--save",
                                "--repeats", "1", "--config", str(link))
    assert code == 0, err
    assert f"saved robot.timing in {target};" in out
    assert link.is_symlink() and isinstance(config_module.load(target).robot.timing.regrip_ms, int)
