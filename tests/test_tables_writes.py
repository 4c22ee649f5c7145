"""`tables build` writes only the files it made, under temporary names no one else uses, says so in
one line when the disk is full (the old tables intact), and calls only an implicit build "first use".
The 2x2x2 tables (robot/solver/tables.py) and the 3x3x3 ones (robot/solver3/tables.py) share the code.
"""

import errno
import os
import shutil

import numpy as np
import pytest

from conftest import copy_tables
from robot import cli
from robot import config as config_module
from robot import tables_store
from robot.solver import tables
from robot.solver.coords import N_STATES


def _write_config(tmp_path, folder):
    path = tmp_path / "config.yaml"
    text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    assert "  dir: tables\n" in text
    path.write_text(text.replace("  dir: tables\n", f"  dir: {folder}\n", 1))
    return path


@pytest.fixture(scope="module")
def valid_tables(tmp_path_factory):
    """coords.npz and robot-cost.npy as tables.load leaves them (htm/qtm are built by the tests that need them)."""
    return copy_tables(tmp_path_factory.mktemp("valid") / "tables")


@pytest.fixture
def folder(valid_tables, tmp_path):
    copy = tmp_path / "tables"
    shutil.copytree(valid_tables, copy)
    return copy


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def _fake_metric_tables(monkeypatch):
    # The htm/qtm tables' contents do not matter here; their building takes seconds.
    monkeypatch.setattr(tables, "build_metric_table",
                        lambda coords, metric, progress=None: np.full(N_STATES, 3, np.uint8))


@pytest.mark.parametrize("force", [False, True], ids=["build", "build --force"])
@pytest.mark.parametrize("foreign", ["htm.npy", "qtm.npy", "robot-cost.npy"])
def test_build_refuses_to_overwrite_a_table_file_the_manifest_does_not_list(folder, tmp_path, capsys,
                                                                           monkeypatch, foreign, force):
    _fake_metric_tables(monkeypatch)
    manifest = tables_store.TableStore(folder).manifest()
    manifest["files"].pop(foreign, None)  # robot-cost.npy: a file of that name the manifest does not list
    (folder / tables_store.MANIFEST).write_text(__import__("json").dumps(manifest))
    (folder / foreign).write_bytes(b"someone else's file")
    before = _snapshot(folder)
    code = cli.main(["tables", "build", *(["--force"] if force else []), "--config", str(_write_config(tmp_path, folder))])
    err = capsys.readouterr().err.strip()
    assert code == 1 and "Traceback" not in err
    refusal = [line for line in err.splitlines() if "cube-robot tables:" in line]
    assert len(refusal) == 1 and str(folder / foreign) in refusal[0] and "manifest" in refusal[0], err
    assert _snapshot(folder) == before  # nothing written, nothing rebuilt


def test_a_foreign_manifest_tmp_and_old_style_temporary_names_are_left_alone(tmp_path):
    store = tables_store.TableStore(tmp_path, log=lambda m: None, show_progress=False)
    theirs = {"manifest.tmp": b"theirs", f".tiny.npy.{os.getpid()}.tmp": b"theirs too",
              f".write-test.{os.getpid()}.tmp": b"and this"}
    for name, data in theirs.items():
        (tmp_path / name).write_bytes(data)
    store.load_or_build("tiny.npy", None, lambda bar: np.arange(4, dtype=np.uint8), "tiny table", 1)
    store.load_or_build("tiny.npy", None, lambda bar: np.arange(5, dtype=np.uint8), "tiny table", 1, force=True)
    assert np.load(tmp_path / "tiny.npy").tolist() == [0, 1, 2, 3, 4] and store.problem("tiny.npy", None) is None
    assert {name: (tmp_path / name).read_bytes() for name in theirs} == theirs
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*theirs, "manifest.json", "tiny.npy"])


def _disk_full_after(nbytes):
    """A replacement for numpy.save/savez that writes nbytes, then fails as a full disk does."""
    def write(file, *args, **kwargs):
        file.write(b"\0" * nbytes)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return write


@pytest.mark.parametrize("force", [False, True], ids=["build", "build --force"])
def test_full_disk_is_one_line_naming_the_folder_and_the_space_and_the_old_tables_stay(
        folder, tmp_path, capsys, monkeypatch, force):
    _fake_metric_tables(monkeypatch)
    before = _snapshot(folder)
    monkeypatch.setattr(np, "save", _disk_full_after(1000))
    monkeypatch.setattr(np, "savez", _disk_full_after(1000))
    code = cli.main(["tables", "build", *(["--force"] if force else []), "--config", str(_write_config(tmp_path, folder))])
    err = capsys.readouterr().err.strip()
    assert code == 1 and "Traceback" not in err, err
    line = [line for line in err.splitlines() if line.startswith("cube-robot tables:")]
    assert len(line) == 1 and str(folder) in line[0] and "no space" in line[0].lower() and "MiB" in line[0], err
    assert _snapshot(folder) == before  # old tables byte for byte, no temporary file left
    assert sorted(p.name for p in folder.iterdir()) == sorted(before)


def test_full_disk_while_writing_the_manifest_keeps_the_old_table_and_manifest(tmp_path, monkeypatch):
    store = tables_store.TableStore(tmp_path, log=lambda m: None, show_progress=False)
    store.load_or_build("tiny.npy", None, lambda bar: np.arange(4, dtype=np.uint8), "tiny table", 1)
    before = _snapshot(tmp_path)
    real = tables_store._write_new_file

    def manifest_fails(directory, name, write):
        if name == tables_store.MANIFEST:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(directory, name, write)

    monkeypatch.setattr(tables_store, "_write_new_file", manifest_fails)
    with pytest.raises(tables_store.TableError, match=f"no space left .*{tmp_path}"):
        store.load_or_build("tiny.npy", None, lambda bar: np.arange(9, dtype=np.uint8), "tiny table", 1, force=True)
    assert _snapshot(tmp_path) == before


def test_explicit_build_does_not_say_first_use(folder, tmp_path, capsys, monkeypatch):
    _fake_metric_tables(monkeypatch)
    assert cli.main(["tables", "build", "--config", str(_write_config(tmp_path, folder))]) == 0
    err = capsys.readouterr().err
    assert "building the htm distance table" in err and "building the qtm distance table" in err, err
    assert "first use" not in err


def test_implicit_build_before_a_solve_says_first_use(tmp_path):
    messages = []
    store = tables_store.TableStore(tmp_path, log=messages.append, show_progress=False)
    store.load_or_build("tiny.npy", None, lambda bar: np.arange(4, dtype=np.uint8), "tiny table", 1)
    assert messages == [f"building the tiny table (first use; saved to {tmp_path})"]


def test_3x3x3_build_refuses_a_foreign_file_and_force_deletes_nothing_first(tmp_path, capsys):
    # The 3x3x3 tables take a minute to build: a foreign phase1.npy in their folder must stop the
    # build before anything is built or deleted, with and without --force.
    folder = tmp_path / "tables"
    (folder / "3x3x3").mkdir(parents=True)
    (folder / "3x3x3" / "phase1.npy").write_bytes(b"not ours")
    config = _write_config(tmp_path, folder)
    for force in ([], ["--force"]):
        code = cli.main(["tables", "build", "--puzzle", "3x3x3", *force, "--config", str(config)])
        err = capsys.readouterr().err.strip()
        assert code == 1 and "Traceback" not in err and str(folder / "3x3x3" / "phase1.npy") in err, err
        assert (folder / "3x3x3" / "phase1.npy").read_bytes() == b"not ours"
        assert sorted(p.name for p in (folder / "3x3x3").iterdir()) == ["phase1.npy"]


def test_tables_of_another_format_version_stay_ours_and_are_rebuilt(tmp_path):
    store = tables_store.TableStore(tmp_path, log=lambda m: None, show_progress=False)
    for name in ("a.npy", "b.npy"):
        store.load_or_build(name, None, lambda bar: np.arange(4, dtype=np.uint8), "table", 1)
    manifest = store.manifest()
    manifest["format_version"] = tables_store.FORMAT_VERSION - 1
    (tmp_path / tables_store.MANIFEST).write_text(__import__("json").dumps(manifest))
    assert store.problem("a.npy", None) == f"a.npy was built by table format 0, this program's is {tables_store.FORMAT_VERSION}"
    messages = []
    store.log = messages.append
    store.load_or_build("a.npy", None, lambda bar: np.arange(5, dtype=np.uint8), "table", 1)
    assert messages == [f"a.npy was built by table format 0, this program's is {tables_store.FORMAT_VERSION}: rebuilding"]
    # b.npy, still of the old format, is still ours: rebuilt, not refused as someone else's.
    assert store.load_or_build("b.npy", None, lambda bar: np.arange(6, dtype=np.uint8), "table", 1).tolist() == list(range(6))
    assert store.problem("a.npy", None) is None and store.problem("b.npy", None) is None
