"""The calibration files `cube-robot calibrate colours` writes into calibration/ (the config's default paths) are one
robot's measurements, as the solve log and the tables are: git ignores them, so a maker's checkout stays clean."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from robot import config as config_module

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git and a checkout")
def test_git_ignores_the_calibration_files_at_their_default_paths_but_not_the_readme():
    config = config_module.defaults()
    written = [config.scan.regions_file, config.scan.colours_file, config.scan3.regions_file, config.scan3.colours_file]
    ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "--no-index", "--stdin"],
                             input="\n".join(written + ["calibration/README.md"]), capture_output=True, text=True)
    assert ignored.stdout.split() == written
