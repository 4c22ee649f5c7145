"""Saving edits to a config file: only a text that loads replaces the file, permissions kept."""

import errno
import os

import pytest

from robot import config as config_module
from robot.config_edit import SaveError, replace_validated, save_target


def test_a_valid_edit_replaces_the_file_and_keeps_its_permissions(tmp_path):
    path = tmp_path / "config.yaml"
    original = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    path.write_text(original)
    path.chmod(0o640)
    edited = original.replace("  dir: tables", "  dir: elsewhere", 1)
    loaded = replace_validated(path, edited)
    assert path.read_text() == edited
    assert loaded.tables.dir == "elsewhere"
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


def _shipped_copy(tmp_path, name="config.yaml"):
    path = tmp_path / name
    original = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    path.write_text(original)
    return path, original


def test_a_read_only_file_is_refused_and_left_as_it_was(tmp_path):
    path, original = _shipped_copy(tmp_path)
    path.chmod(0o444)
    with pytest.raises(SaveError, match=f"^{path} is read-only: not saved"):
        replace_validated(path, original.replace("  dir: tables", "  dir: elsewhere", 1))
    assert path.read_text() == original and path.stat().st_mode & 0o777 == 0o444
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"]


def test_a_symlink_is_followed_its_target_written_and_the_link_kept(tmp_path):
    (tmp_path / "real").mkdir()
    target, original = _shipped_copy(tmp_path / "real", "robot-settings.yaml")
    link = tmp_path / "config.yaml"
    link.symlink_to(target)
    edited = original.replace("  dir: tables", "  dir: elsewhere", 1)
    replace_validated(link, edited)
    assert link.is_symlink() and link.resolve() == target, "the link stays a link to the same file"
    assert target.read_text() == edited
    assert save_target(link) == target
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["robot-settings.yaml"]


def test_a_read_only_symlink_target_is_refused_naming_both(tmp_path):
    target, original = _shipped_copy(tmp_path, "target.yaml")
    target.chmod(0o444)
    link = tmp_path / "config.yaml"
    link.symlink_to(target)
    with pytest.raises(SaveError, match=f"^{target} \\(the target of the link {link}\\) is read-only"):
        replace_validated(link, original.replace("  dir: tables", "  dir: elsewhere", 1))
    assert target.read_text() == original and link.is_symlink()


def no_space_in(monkeypatch, folder):
    """os.write into files under `folder` fails as on a full disk (after writing a few bytes)."""
    real_write = os.write

    def write(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(folder)):
            if len(data) > 10:
                return real_write(fd, bytes(data[:10]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)


def test_a_full_disk_says_the_folder_and_the_space_needed_and_keeps_the_old_file(tmp_path, monkeypatch):
    path, original = _shipped_copy(tmp_path)
    edited = original.replace("  dir: tables", "  dir: elsewhere", 1)
    no_space_in(monkeypatch, tmp_path)
    with pytest.raises(SaveError) as info:
        replace_validated(path, edited)
    assert str(info.value) == (f"no space left in {tmp_path}: saving needs {len(edited.encode())} bytes there "
                               f"(free some space and save again; {path} is unchanged)")
    monkeypatch.undo()
    assert path.read_text() == original
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"], "no temporary file left behind"
