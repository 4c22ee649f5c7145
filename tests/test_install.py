"""An ordinary (non-editable) install works: a wheel built from this tree, installed into a
fresh venv, runs `solve`, `run --sim`, `tables status` and `doctor` from a folder outside the
checkout, keeping its files in the per-user data folder (robot/paths.py).

No network: the wheel is built with this interpreter's setuptools (--no-build-isolation), the
fresh venv gets no pip, and it finds numpy/cv2/serial/yaml/tornado through a .pth file naming this
interpreter's site-packages (which holds no `robot`: the test checks the wheel's is used).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
CUBE = "BYWGOGGBOYRWBRYWRGBWRYOO"
# Made by builds, runs and tests, never packaged: not copied to the build folder.
NOT_SOURCES_AT_ROOT = {".git", ".venv", "build", "dist", "tables", "data", "runs", ".pytest_cache"}


def _can_build_wheels() -> str:
    """Why this interpreter cannot build a wheel offline, or ""."""
    if importlib.util.find_spec("setuptools") is None:
        return "setuptools is not installed"
    import setuptools

    version = tuple(int(part) for part in setuptools.__version__.split(".")[:2])
    if version < (70, 1) and importlib.util.find_spec("wheel") is None:
        return f"setuptools {setuptools.__version__} needs the wheel package (pip install wheel)"
    return ""


def _ignore(folder, names):
    skipped = {"__pycache__"}
    if Path(folder) == ROOT:
        skipped |= NOT_SOURCES_AT_ROOT | {n for n in names if n.endswith(".egg-info")}
    if Path(folder) == ROOT / "firmware":
        skipped.add("build")
    return [n for n in names if n in skipped]


def _files(folder: Path) -> set:
    return {p.relative_to(folder) for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(the copy of the checkout the wheel was built from, the wheel, the files the build wrote into the copy)."""
    reason = _can_build_wheels()
    if reason:
        pytest.skip(f"cannot build a wheel without the network: {reason}")
    tmp = tmp_path_factory.mktemp("install")
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=_ignore)
    before = _files(source)
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(dist)], check=True, capture_output=True, text=True)
    return source, next(dist.glob("cube_robot-*.whl")), _files(source) - before


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory):
    """(venv bin folder, its site-packages) with the wheel installed."""
    _, wheel, _ = built
    tmp = tmp_path_factory.mktemp("venv")

    venv = tmp / "venv"
    base_python = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base_python, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    dependency_dirs = {str(Path(importlib.util.find_spec(name).origin).parents[1])
                       for name in ("numpy", "cv2", "serial", "yaml", "tornado")}
    (site / "test-dependencies.pth").write_text("\n".join(sorted(dependency_dirs)) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                    "-q", str(wheel)], check=True, capture_output=True, text=True)
    return venv / "bin", site


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_building_leaves_in_the_checkout_only_what_git_ignores(built):
    # pip builds in the source folder (build/, *.egg-info): `git status` of a checkout stays clean after it.
    source, _, written = built
    assert written, "the build wrote nothing into the source folder: this test no longer checks anything"
    subprocess.run(["git", "init", "-q", str(source)], check=True)
    ignored = subprocess.run(["git", "-C", str(source), "check-ignore", "--stdin"], input="\n".join(map(str, written)),
                             capture_output=True, text=True).stdout.split()
    shown = sorted({str(path.parts[0]) for path in written} - {str(Path(p).parts[0]) for p in ignored})
    assert set(map(str, written)) == set(ignored), f"`git status` would show these the build made: {shown}"


def _env(home: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "XDG_DATA_HOME", "CUBE_ROBOT_HOME")}
    env.update(HOME=str(home), **extra)
    return env


def _package_files(site: Path) -> set:
    """The installed package's files (Python's own byte-code caches aside)."""
    return {p for p in (site / "robot").rglob("*") if "__pycache__" not in p.parts}


def _run(bin_dir: Path, args, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_dir / "cube-robot"), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900)


def test_the_wheel_is_what_runs(installed):
    bin_dir, site = installed
    found = subprocess.run([str(bin_dir / "python"), "-c", "import robot; print(robot.__file__)"],
                           capture_output=True, text=True, check=True, cwd=bin_dir).stdout.strip()
    assert Path(found).is_relative_to(site), f"robot imported from {found}, not from the wheel in {site}"
    bundled = site / "robot" / "_bundled"
    assert (bundled / "config.yaml").read_text() == (ROOT / "config.yaml").read_text()
    assert (bundled / "firmware" / "cube_robot" / "protocol.h").is_file()
    assert (bundled / "firmware" / "Makefile").is_file()
    assert not (bundled / "firmware" / "build").exists()
    assert (site / "robot" / "panel" / "static" / "index.html").is_file(), "the panel's page is not in the wheel"
    server = subprocess.run([str(bin_dir / "python"), "-c", "import robot.panel.server"], capture_output=True, text=True,
                            cwd=bin_dir)
    assert server.returncode == 0, f"the installed panel's server does not import (tornado?): {server.stderr[-2000:]}"


def test_installed_copy_solves_runs_and_keeps_its_files_in_the_data_folder(installed, tmp_path):
    bin_dir, site = installed
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    env = _env(home)
    data = home / ".local" / "share" / "cube-robot"
    package_before = _package_files(site)

    solve = _run(bin_dir, ["solve", CUBE], elsewhere, env)
    assert solve.returncode == 0, solve.stderr
    # The cheapest plan for this cube with the default settings, as tests/test_solver_pair_order.py finds
    # it independently of the solver.
    assert "1844 ms machine time" in solve.stdout and "moves" in solve.stdout
    # First use made the data folder and its config.yaml, a copy of the packaged default.
    assert (data / "config.yaml").read_text() == (ROOT / "config.yaml").read_text()
    assert (data / "tables" / "coords.npz").is_file()

    run = _run(bin_dir, ["run", "--sim"], elsewhere, env)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "RESULT      SIMULATED SOLVED" in run.stdout
    assert (data / "data" / "solve-log.jsonl").is_file()

    # Flashing from the installed copy: the advised command builds from the packaged sources into the data folder.
    advice = subprocess.run([str(bin_dir / "python"), "-c", "from robot import paths; "
                             "print(paths.make_advice('flash', 'PORT=/dev/ttyACM0'))"],
                            cwd=elsewhere, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert advice[:3] == ["make", "-C", str(site / "robot" / "_bundled" / "firmware")]
    if shutil.which("make"):
        dry_run = subprocess.run([*advice, "-n"], cwd=elsewhere, env=env, capture_output=True, text=True)
        assert f"flash:w:{data / 'firmware-build' / 'cube_robot.hex'}:i" in dry_run.stdout, dry_run.stderr

    # A config.yaml the user edited is never replaced.
    edited = (data / "config.yaml").read_text() + "# edited by the maker\n"
    (data / "config.yaml").write_text(edited)
    status = _run(bin_dir, ["tables", "status"], elsewhere, env)
    assert status.returncode == 0, status.stdout + status.stderr
    assert "coords.npz      ok" in status.stdout and f"3x3x3 ({data / 'tables' / '3x3x3'})" in status.stdout
    assert (data / "config.yaml").read_text() == edited

    doctor = _run(bin_dir, ["doctor"], elsewhere, env)
    for what, folder in [("data folder", data), ("config", data / "config.yaml"), ("tables", data / "tables"),
                         ("data", data / "data"), ("runs", data / "runs"), ("calibration", data / "calibration"),
                         ("firmware", site / "robot" / "_bundled" / "firmware")]:
        assert f"{what} {folder} " in doctor.stdout, f"doctor does not name {what} {folder}:\n{doctor.stdout}"
    assert "~/.local/share/cube-robot" in doctor.stdout

    # Nothing was written into the installed package or the folder the commands ran in.
    assert _package_files(site) == package_before
    assert list(elsewhere.iterdir()) == []


def test_installed_copy_data_folder_can_be_moved(installed, tmp_path):
    bin_dir, _ = installed
    chosen = tmp_path / "chosen"
    status = _run(bin_dir, ["tables", "status"], tmp_path, _env(tmp_path / "home", CUBE_ROBOT_HOME=str(chosen)))
    assert "coords.npz      not built yet" in status.stdout, status.stdout + status.stderr  # a new, empty folder
    assert f"3x3x3 ({chosen / 'tables' / '3x3x3'})" in status.stdout
    assert (chosen / "config.yaml").is_file() and not (tmp_path / "home" / ".local").exists()
