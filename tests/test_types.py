"""robot/ type-checks: mypy, configured in pyproject.toml's [tool.mypy], passes.

mypy runs as a subprocess from the checkout's root so it reads that configuration (files = robot,
check_untyped_defs: the bodies of unannotated functions are checked too).  Its cache goes to a
temporary folder, so every run is a cold one (about 10-15 s on the 2-core machine).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (pip install -e '.[test]' installs it)")
def test_robot_type_checks(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(tmp_path / "mypy-cache")],
        cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"mypy found problems in robot/:\n{result.stdout}{result.stderr}"
