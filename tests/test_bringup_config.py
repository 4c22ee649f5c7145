"""The bring-up settings of config.yaml (motion.arms, motion.homing, motion.idle_off_s): each error
names the file, the line and the key; and every connect sends them to the board (the mock records
what it received and what it now uses)."""

from __future__ import annotations

import pytest

from robot import config as config_module
from robot.config import ConfigError
from robot.link.driver import Link
from robot.sim.mock_firmware import MockFirmware

ROOT = config_module.PROJECT_ROOT


def shipped_with(tmp_path, *replacements) -> "object":
    """config.yaml with (old, new, nth occurrence) line edits; returns the path."""
    lines = (ROOT / "config.yaml").read_text().splitlines(keepends=True)
    for old, new, nth in replacements:
        hits = [i for i, line in enumerate(lines) if old in line]
        lines[hits[nth]] = lines[hits[nth]].replace(old, new, 1)
    path = tmp_path / "config.yaml"
    path.write_text("".join(lines))
    return path


def line_of(path, text: str, nth: int = 0) -> int:
    return [i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line][nth]


@pytest.mark.parametrize("edit, nth, key, words", [
    (("servo_open_us: null", "servo_open_us: 400"), 1, "motion.arms.L.servo_open_us", "below the minimum"),
    (("servo_closed_us: null", "servo_closed_us: 2600"), 3, "motion.arms.B.servo_closed_us", "above the maximum"),
    (("zero_offset_steps: 0", "zero_offset_steps: 400"), 2, "motion.arms.F.zero_offset_steps", "a whole turn"),
    (("invert: false", "invert: 3"), 0, "motion.arms.R.invert", "expected true or false"),
    (("sensor_active: low", "sensor_active: medium"), 0, "motion.homing.sensor_active", "medium"),
    (("idle_off_s: 300", "idle_off_s: -1"), 0, "motion.idle_off_s", "below the minimum 0"),
    (("servo_closed_us: null", "servo_closed_us: 1300"), 2, "motion.arms.F.servo_closed_us", "would never move"),
])
def test_a_bad_bringup_setting_names_its_line(tmp_path, edit, nth, key, words):
    path = shipped_with(tmp_path, (*edit, nth))
    with pytest.raises(ConfigError) as info:
        config_module.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line_of(path, edit[1], 0)}: {key}:"), message
    assert words in message


def test_a_gripper_with_its_own_equal_widths_is_refused_and_different_ones_pass(tmp_path):
    path = shipped_with(tmp_path, ("servo_open_us: null", "servo_open_us: 1500", 0),
                       ("servo_closed_us: null", "servo_closed_us: 1500", 0))
    with pytest.raises(ConfigError, match="gripper R's open and closed widths are both 1500 us"):
        config_module.load(path)
    path = shipped_with(tmp_path, ("servo_open_us: null", "servo_open_us: 1500", 0),
                       ("servo_closed_us: null", "servo_closed_us: 1510", 0))
    assert config_module.load(path).motion.arms["R"].servo_closed_us == 1510


def test_every_connect_sends_the_bringup_settings(tmp_path):
    path = shipped_with(tmp_path, ("invert: false", "invert: true", 3), ("zero_offset_steps: 0", "zero_offset_steps: -12", 0),
                        ("servo_open_us: null", "servo_open_us: 1080", 0), ("servo_closed_us: null", "servo_closed_us: 1920", 1),
                        ("idle_off_s: 300", "idle_off_s: 45", 0), ("sensor_active: low", "sensor_active: high", 0))
    config = config_module.load(path)
    mock = MockFirmware("pty", motion=config.motion, reset_on_connect=True).start()
    try:
        for connect in (1, 2):  # opening a real Uno's port resets it: the settings must come again
            link = Link.open(config, port=mock.url, motors=False)
            try:
                mock.call(lambda: None)
                assert mock.arms.invert == {"R": False, "L": False, "F": False, "B": True}
                assert mock.arms.zero_offset["R"] == -12
                m = config.motion  # R and L keep the common width they do not name (1300 / 1700 us)
                assert mock.arms.gripper_us["R"] == (1080, m.servo_closed_us)
                assert mock.arms.gripper_us["L"] == (m.servo_open_us, 1920)
                assert mock.arms.idle_off_s == 45 and mock.arms.sensor_active_level == 1
            finally:
                link.close()
            sent = [raw for raw in mock.received_lines if b"ARM B I1 Z0" in raw]
            assert len(sent) == connect, f"connect {connect}: ARM B sent {len(sent)} times"
    finally:
        mock.stop()
