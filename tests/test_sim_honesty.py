"""The simulated robot says what happened and leaves nothing behind: the speed-up a sped-up run
reports is the one measured, the emulator's temporary folders go on every exit, a Ctrl-C reaches
only the host, a stop that moved nothing latches no alarm, and tests write nothing into the repo."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from robot import cli
from robot import config as config_module
from robot.sim import emulator

OK, REASON = emulator.available()
needs_emulator = [pytest.mark.firmware, pytest.mark.skipif(not OK, reason=f"emulator unavailable: {REASON}")]
ROOT = config_module.PROJECT_ROOT


def test_a_run_with_the_shipped_config_writes_nothing_into_the_repository(capsys, monkeypatch):
    from robot.run import log as run_log

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code = cli.main(["run", "--sim", "--firmware", "mock", "--seed", "3", "--no-verify", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["scan_images"], report
    written = [Path(p) for p in report["scan_images"]] + [run_log.log_path(config_module.load())]
    assert all(path.exists() and not path.is_relative_to(ROOT) for path in written), written
