"""robot/paths.py: where a checkout and an installed copy keep their files (the wheel itself:
tests/test_install.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from robot import config as config_module
from robot import paths

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def installed(monkeypatch, tmp_path):
    """paths as an installed copy sees them, with HOME in tmp_path and no data-folder variables."""
    monkeypatch.setattr(paths, "CHECKOUT_ROOT", None)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv(paths.HOME_ENV, raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    return tmp_path


def test_a_checkout_keeps_its_layout(monkeypatch, tmp_path):
    monkeypatch.setenv(paths.HOME_ENV, str(tmp_path))  # for installed copies only
    assert paths.CHECKOUT_ROOT == ROOT and paths.data_root() == ROOT
    assert config_module.PROJECT_ROOT == ROOT and config_module.DEFAULT_CONFIG_PATH == ROOT / "config.yaml"
    assert paths.FIRMWARE_SRC == ROOT / "firmware" / "cube_robot"
    assert paths.firmware_build_dir() == ROOT / "firmware" / "build"
    assert paths.make_advice("flash", "PORT=/dev/ttyACM0") == "make -C firmware flash PORT=/dev/ttyACM0"
    assert paths.make_command("harness") == ["make", "-C", str(ROOT / "firmware"), "harness"]


def test_installed_copy_data_folder_rule(installed, monkeypatch):
    assert paths.data_root() == installed / "home" / ".local" / "share" / "cube-robot"
    assert "~/.local/share/cube-robot" in paths.data_root_rule()
    monkeypatch.setenv("XDG_DATA_HOME", str(installed / "xdg"))
    assert paths.data_root() == installed / "xdg" / "cube-robot"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/xdg")  # the XDG spec: a relative path is ignored
    assert paths.data_root() == installed / "home" / ".local" / "share" / "cube-robot"
    monkeypatch.setenv(paths.HOME_ENV, str(installed / "mine"))
    assert paths.data_root() == installed / "mine" and paths.HOME_ENV in paths.data_root_rule()


def test_installed_copy_builds_the_firmware_in_its_data_folder(installed, monkeypatch):
    monkeypatch.setenv(paths.HOME_ENV, str(installed / "data"))
    command = paths.make_command("all")
    assert command[:4] == ["make", "-C", str(paths.FIRMWARE_DIR), "all"]
    assert command[4] == f"BUILD={installed / 'data' / 'firmware-build'}"
    assert paths.make_advice("flash", "PORT=X") == " ".join(paths.make_command("flash", "PORT=X"))


def test_installed_copy_makes_its_config_once_and_never_replaces_it(installed, monkeypatch):
    packaged = installed / "packaged.yaml"
    packaged.write_text("# the packaged default\n")
    monkeypatch.setattr(paths, "PACKAGED_CONFIG", packaged)
    monkeypatch.setenv(paths.HOME_ENV, str(installed / "data"))
    made = paths.ensure_default_config()
    assert made == installed / "data" / "config.yaml" and made.read_text() == "# the packaged default\n"
    made.write_text("# the maker's own\n")
    packaged.write_text("# a newer packaged default\n")
    assert paths.ensure_default_config().read_text() == "# the maker's own\n"


def test_installed_copy_without_its_packaged_config_leaves_no_empty_file(installed, monkeypatch):
    monkeypatch.setattr(paths, "PACKAGED_CONFIG", installed / "missing.yaml")
    monkeypatch.setenv(paths.HOME_ENV, str(installed / "data"))
    with pytest.raises(OSError):
        paths.ensure_default_config()
    assert not (installed / "data" / "config.yaml").exists()


def test_config_load_names_the_file_it_could_not_make(installed, monkeypatch):
    monkeypatch.setattr(paths, "PACKAGED_CONFIG", installed / "missing.yaml")
    monkeypatch.setenv(paths.HOME_ENV, str(installed / "data"))
    monkeypatch.setattr(config_module, "DEFAULT_CONFIG_PATH", paths.default_config_path())
    with pytest.raises(config_module.ConfigError, match=r"cannot make the default config file .*missing\.yaml"):
        config_module.load()


def test_doctor_names_each_folder_of_a_checkout():
    import argparse

    from robot.doctor.folders import check_folders

    config = config_module.load()
    items = [r.item for r in check_folders(config, argparse.Namespace(config=None))]
    where = config_module.project_path  # (tests point run and scan folders at temporary folders)
    for expected in [f"data folder {ROOT}", f"config {ROOT / 'config.yaml'}", f"tables {where(config.tables.dir)}",
                     f"data {where(config.run.data_dir)}", f"runs {where(config.scan.images_dir).parent}",
                     f"calibration {where(config.scan.colours_file).parent}", f"firmware {ROOT / 'firmware'}"]:
        assert expected in items
