"""robot/ type-checks: mypy, configured in pyproject.toml's [tool.mypy], passes.

mypy runs as a subprocess from the checkout's root so it reads that configuration (files = robot,
check_untyped_defs: the bodies of unannotated functions are checked too).  Its cache goes to a
temporary folder, so every run is a cold one (about 10-15 s on the 2-core machine).
"""

from __future__ import annotations

import importlib.util
import os
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


def test_code_classes_are_held_to_the_firmware_list():
    """protocol.py spells out the error and alarm codes (so the checker sees them); a list that differs
    from protocol.h's is refused at import, naming both places."""
    from robot import firmware_header
    from robot.link import protocol

    listed = firmware_header.alarm_codes()
    protocol._same_codes(protocol.AlarmCode, listed, "ALARM_CODES")  # the shipped lists agree
    renumbered = listed[:-1] + (firmware_header.Code(listed[-1].name, 99, listed[-1].text),)
    with pytest.raises(RuntimeError, match=r"AlarmCode .* differs from ALARM_CODES in firmware/cube_robot/protocol.h"):
        protocol._same_codes(protocol.AlarmCode, renumbered, "ALARM_CODES")
    with pytest.raises(RuntimeError, match="ErrorCode"):
        protocol._same_codes(protocol.ErrorCode, firmware_header.error_codes()[:-1], "ERROR_CODES")


def test_opening_no_port_is_refused_naming_the_setting():
    """open_port(None) (a link made on a port object, reopened without a URL) was refused as "cannot open
    serial port None: Port must be configured before it can be used"; it names where a port is given."""
    from robot.link.errors import PortError
    from robot.link.ports import open_port

    with pytest.raises(PortError, match=r"no serial port to open: set link.port in config.yaml or give --port"):
        open_port(None, 115200)


def test_config_attribute_reads_are_checked(tmp_path):
    """The loaded config is typed (frozen dataclasses): a function that takes a Config has its attribute
    reads checked, so a misspelt setting is a type error, not a run-time AttributeError."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]' installs it)")
    source = tmp_path / "reads.py"
    source.write_text("from robot.config_types import Config\n\n\n"
                      "def timeout_ms(config: Config) -> int:\n"
                      "    return config.link.ack_timeout_ms + config.motion.arms['R'].zero_offset_steps\n\n\n"
                      "def misspelt(config: Config) -> int:\n"
                      "    return config.link.ack_timeout_mss\n")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--python-version", "3.11", "--cache-dir", str(tmp_path / "cache"),
         "--no-error-summary", str(source)],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "MYPYPATH": str(ROOT)})
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and '"LinkConfig" has no attribute "ack_timeout_mss"' in errors[0], result.stdout
    assert "reads.py:9:" in errors[0], result.stdout
