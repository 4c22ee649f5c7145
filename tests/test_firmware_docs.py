"""What docs/protocol.md, firmware/README.md and docs/hardware.md say about the firmware, checked against
the firmware itself: its sources, its headers and (marked `firmware`) the size of its build."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from robot import config as config_module
from robot import firmware_header
from robot.link import protocol as P

ROOT = config_module.PROJECT_ROOT
SKETCH = ROOT / "firmware" / "cube_robot"
FIRMWARE_README = ROOT / "firmware" / "README.md"
NUMBER_WORDS = {2: "two", 4: "four", 8: "eight"}


def command_handlers() -> dict:
    """Command name -> the body of its handler function in command.cpp (the dispatch's `strcmp` lines)."""
    source = (SKETCH / "command.cpp").read_text()
    bodies = {m[1]: m[2] for m in re.finditer(r"^static uint8_t (\w+)\([^)]*\) \{\n(.*?)^\}", source, re.M | re.S)}
    dispatch = re.findall(r'strcmp_P\(name, PSTR\("([A-Z]+)"\)\) == 0\) return (\w+)\(', source)
    assert len(dispatch) >= 10, "command.cpp's dispatch was not found"
    return {name: bodies[function] for name, function in dispatch}


def refused_while_latched(body: str) -> bool:
    """True when the handler refuses whatever its arguments while an alarm is latched."""
    return ("if (system_alarm() != ALARM_NONE) return ERR_ALARM_ACTIVE" in body
            or "queue_action(" in body or "settings_change_allowed()" in body)


def test_protocol_md_never_says_a_command_the_firmware_refuses_is_allowed_while_latched():
    handlers = command_handlers()
    assert refused_while_latched(handlers["MOTION"]) and refused_while_latched(handlers["SERVO"])
    rows = [line for line in (ROOT / "docs" / "protocol.md").read_text().splitlines() if line.startswith("| `")]
    checked = 0
    for row in rows:
        named = re.match(r"\| `([A-Z]+)", row)
        if named and named[1] in handlers and refused_while_latched(handlers[named[1]]):
            checked += 1
            assert "allowed while an alarm is latched" not in row, row
    assert checked >= 8
    for name in ("MOTION", "SERVO"):
        [row] = [r for r in rows if r.startswith(f"| `{name} ")]
        assert "refused while an alarm is latched (`ALARM_ACTIVE`" in row, row


def test_firmware_readme_gives_the_line_limit_and_checksum_of_the_headers():
    text = " ".join(FIRMWARE_README.read_text().split())
    assert f"Lines over {P.MAX_LINE - 1} bytes (`MAX_LINE` {P.MAX_LINE} with the newline" in text
    digits = NUMBER_WORDS[P.CRC_HEX_DIGITS]
    assert f"CRC-32C as {P.CRC_HEX_DIGITS} upper-case hex digits" in text
    assert f"A `*` not followed by {digits} upper-case hex digits" in text
    assert "47 bytes" not in text and "two upper-case hex" not in text


def test_firmware_readme_estop_deceleration_is_computed_from_the_defaults():
    limits = firmware_header.limits()
    speed, accel = limits["DEFAULT_MAX_SPEED"], limits["DEFAULT_ACCEL"]
    text = " ".join(FIRMWARE_README.read_text().split())
    found = re.search(r"`max_speed\^2/\(2 accel\)` = (\d+) steps in `max_speed/accel` = (\d+) ms with the defaults",
                      text)
    assert found, "firmware/README.md no longer states the `!` stop distance and time"
    assert (int(found[1]), int(found[2])) == (round(speed**2 / (2 * accel)), round(1000 * speed / accel))


@pytest.mark.firmware
def test_the_documented_flash_and_ram_sizes_are_the_builds(tmp_path):
    missing = [tool for tool in ("make", "avr-gcc", "avr-size") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"AVR toolchain missing: {', '.join(missing)} not found")
    build = tmp_path / "build"
    made = subprocess.run(["make", "-s", "-C", str(ROOT / "firmware"), f"BUILD={build}", f"{build}/cube_robot.elf"],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr[-2000:]
    report = subprocess.run(["avr-size", "--mcu=atmega328p", "-C", "--format=avr", str(build / "cube_robot.elf")],
                            capture_output=True, text=True, check=True).stdout
    flash, flash_pct = re.search(r"Program:\s+(\d+) bytes \(([\d.]+)% Full\)", report).groups()
    ram, ram_pct = re.search(r"Data:\s+(\d+) bytes \(([\d.]+)% Full\)", report).groups()
    flash, ram = int(flash), int(ram)
    readme = " ".join(FIRMWARE_README.read_text().split())
    assert f"**flash {flash:,} bytes ({flash_pct} %), RAM {ram:,} bytes ({ram_pct} %)**" in readme, report
    hardware = " ".join((ROOT / "docs" / "hardware.md").read_text().split())
    assert (f"about {flash / 1000:.0f} kB of flash and {ram / 1000:.1f} kB of RAM (the Makefile's build: "
            f"{flash:,} and {ram:,} bytes") in hardware, report
