"""Solver tables are swapped in only when verified, never delete what we did not write, and a
read-only tables folder gives one clear line (robot/solver/tables.py)."""

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import copy_tables
from robot import config as config_module
from robot import tables_store
from robot.solver import Solver, tables


def _config(folder):
    return config_module.with_settings(config_module.load(), {"tables.dir": str(folder)})


@pytest.fixture(scope="module")
def valid_tables(tmp_path_factory):
    return copy_tables(tmp_path_factory.mktemp("valid") / "tables")  # as tables.load leaves them


def _tiny(store, value, force=False, builder=None):
    return store.load_or_build("tiny.npy", None, builder or (lambda bar: value), "tiny table", 1, force=force)


def test_interrupted_forced_rebuild_keeps_the_valid_table(tmp_path):
    store = tables_store.TableStore(tmp_path, log=lambda m: None, show_progress=False)
    _tiny(store, np.arange(10, dtype=np.uint8))
    before = (tmp_path / "tiny.npy").read_bytes()

    def interrupted(bar):
        raise KeyboardInterrupt  # Ctrl-C during the build

    with pytest.raises(KeyboardInterrupt):
        _tiny(store, None, force=True, builder=interrupted)
    assert (tmp_path / "tiny.npy").read_bytes() == before and store.problem("tiny.npy", None) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "tiny.npy"]  # no temporary left


def test_forced_rebuild_swaps_in_the_new_table_and_leaves_other_files(tmp_path):
    store = tables_store.TableStore(tmp_path, log=lambda m: None, show_progress=False)
    (tmp_path / "my-notes.txt").write_text("mine")
    (tmp_path / "subfolder").mkdir()
    (tmp_path / "subfolder" / "keep.bin").write_bytes(b"x")
    _tiny(store, np.arange(10, dtype=np.uint8))
    rebuilt = _tiny(store, np.arange(5, dtype=np.uint8), force=True)
    assert rebuilt.tolist() == [0, 1, 2, 3, 4] and np.load(tmp_path / "tiny.npy").tolist() == [0, 1, 2, 3, 4]
    assert store.problem("tiny.npy", None) is None  # the manifest describes the new file
    assert (tmp_path / "my-notes.txt").read_text() == "mine" and (tmp_path / "subfolder" / "keep.bin").exists()


def test_a_table_that_does_not_read_back_is_never_swapped_in(tmp_path, monkeypatch):
    store = tables_store.TableStore(tmp_path, log=lambda m: None, show_progress=False)
    _tiny(store, np.arange(10, dtype=np.uint8))
    before = (tmp_path / "tiny.npy").read_bytes()
    real_read = tables_store._read
    monkeypatch.setattr(tables_store, "_read", lambda path, archive=None: real_read(path, archive)[:3])  # a short write
    with pytest.raises(tables_store.TableError, match="does not read back"):
        _tiny(store, np.arange(7, dtype=np.uint8), force=True)
    assert (tmp_path / "tiny.npy").read_bytes() == before


def _deny_writes(monkeypatch):
    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    for name in ("write_bytes", "write_text", "mkdir", "unlink"):
        monkeypatch.setattr(Path, name, denied)
    monkeypatch.setattr(os, "replace", denied)


def test_solver_works_from_a_read_only_folder_of_valid_tables(valid_tables, tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    shutil.copytree(valid_tables, folder)
    _deny_writes(monkeypatch)  # as root chmod does not stop writes: refuse them all instead
    solver = Solver(_config(folder), log=lambda m: pytest.fail(f"unexpected message: {m}"))
    assert solver.solve(scramble="R U").cost_ms > 0


def test_a_read_only_folder_that_needs_a_build_is_one_clear_line(tmp_path, monkeypatch, capsys):
    from robot import cli

    folder = tmp_path / "empty"
    folder.mkdir()
    config_path = tmp_path / "config.yaml"
    text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    assert "dir: tables" in text
    config_path.write_text(text.replace("dir: tables", f"dir: {folder}"))
    _deny_writes(monkeypatch)
    code = cli.main(["solve", "--scramble", "R", "--config", str(config_path)])
    err = capsys.readouterr().err.strip()
    assert code == 1 and "Traceback" not in err and len(err.splitlines()) == 1
    assert f"the tables folder {folder} cannot be written" in err and "chmod u+w" in err and "tables.dir" in err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes to read-only folders")
def test_really_read_only_folder(valid_tables, tmp_path):
    folder = tmp_path / "ro"
    shutil.copytree(valid_tables, folder)
    os.chmod(folder, 0o555)
    try:
        assert Solver(_config(folder), log=lambda m: None).solve(scramble="R").cost_ms > 0
        (folder.parent / "empty").mkdir()
        os.chmod(folder.parent / "empty", 0o555)
        with pytest.raises(tables_store.TableError, match="cannot be written"):
            tables.load(_config(folder.parent / "empty"), log=lambda m: None, show_progress=False)
    finally:
        os.chmod(folder, 0o755)


@pytest.mark.slow
def test_tables_build_force_keeps_other_files_and_leaves_valid_tables(tmp_path, capsys):
    from robot import cli

    folder = tmp_path / "tables"
    config_path = tmp_path / "config.yaml"
    config_path.write_text((config_module.PROJECT_ROOT / "config.yaml").read_text().replace(
        "dir: tables", f"dir: {folder}"))
    assert cli.main(["tables", "build", "--config", str(config_path)]) == 0
    (folder / "my-notes.txt").write_text("mine")
    (folder / "old").mkdir()
    (folder / "old" / "keep.npy").write_bytes(b"x")
    assert cli.main(["tables", "build", "--force", "--config", str(config_path)]) == 0
    assert (folder / "my-notes.txt").read_text() == "mine" and (folder / "old" / "keep.npy").exists()
    assert cli.main(["tables", "status", "--config", str(config_path)]) == 0
    assert not list(folder.glob(".*.tmp"))


def test_a_changed_cost_table_setting_names_the_entries_that_changed_not_the_whole_mapping():
    built = {"quarter_turn_ms": 80, "regrips": {"FB<RL": "->90:173 ->180:173", "RL<FB": "->90:173 ->180:173"}}
    now = {"quarter_turn_ms": 80, "regrips": {"FB<RL": "->90:88 ->180:88", "RL<FB": "->90:173 ->180:173"}}
    said = tables_store._profile_changes(built, now)
    assert said == "regrips changed for FB<RL", said
