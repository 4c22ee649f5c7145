"""Saving edits to a config file: only a text that loads replaces the file, permissions kept."""

import pytest

from robot import config as config_module
from robot.config_edit import replace_validated


def test_a_valid_edit_replaces_the_file_and_keeps_its_permissions(tmp_path):
    path = tmp_path / "config.yaml"
    original = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    path.write_text(original)
    path.chmod(0o640)
    edited = original.replace("  dir: tables", "  dir: elsewhere", 1)
    loaded = replace_validated(path, edited)
    assert path.read_text() == edited
    assert loaded["tables"]["dir"] == "elsewhere"
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"], "no temporary file left behind"


def test_an_invalid_edit_names_the_line_and_leaves_the_file_untouched(tmp_path):
    path = tmp_path / "config.yaml"
    original = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    path.write_text(original)
    bad_line = original.splitlines().index("  dir: tables") + 1
    with pytest.raises(config_module.ConfigError, match=f"^{path}:{bad_line}: tables.dir: the edit would") as info:
        replace_validated(path, original.replace("  dir: tables", "  dir: [1, 2]", 1))
    assert "not changed" in str(info.value) and ".config.yaml." not in str(info.value)
    assert path.read_text() == original
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"]


def test_a_failed_check_leaves_the_file_untouched(tmp_path):
    path = tmp_path / "config.yaml"
    original = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    path.write_text(original)

    def refuse(loaded):
        raise ValueError("reads back wrong")

    with pytest.raises(ValueError, match="reads back wrong"):
        replace_validated(path, original.replace("  dir: tables", "  dir: elsewhere", 1), refuse)
    assert path.read_text() == original
