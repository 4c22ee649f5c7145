"""docs/hardware.md holds what a maker needs before the first power-on: power, the
driver current limit, the microstep jumpers matching motion.steps_per_rev, a bill of materials, and
the Arduino IDE route step by step naming files that exist."""

from __future__ import annotations

import re

from robot import config as config_module

ROOT = config_module.PROJECT_ROOT
TEXT = (ROOT / "docs" / "hardware.md").read_text()


def section(heading: str) -> str:
    body = TEXT.split(heading + "\n", 1)[1]
    return re.split(r"\n#{2,3} ", body, maxsplit=1)[0]


def test_power_names_the_supplies_the_servo_rule_and_the_common_ground():
    power = section("## Power")
    assert "Servos get their own 5-6 V supply, never the Uno's 5V pin" in power
    assert "Common ground" in power and "stepper supply" in power.lower()
    assert "pull-up from ENABLE" in power  # drivers stay off while the Uno boots


def test_current_limit_and_microstep_jumpers_match_the_config():
    assert "Vref" in section("### Driver current limit (Vref)")
    rev = config_module.defaults().motion.steps_per_rev
    micro = section(f"### Microstepping: {rev} steps per revolution")
    assert "A4988" in micro and "DRV8825" in micro and f"steps_per_rev: {rev}" in micro


def test_bill_of_materials_lists_every_part_the_wiring_needs():
    bom = section("## Bill of materials").lower()
    for part in ("arduino uno", "stepper motor", "a4988", "servo", "emergency-stop", "start", "webcam",
                 "hall sensor", "10 kohm"):
        assert part in bom, part


def test_the_arduino_ide_route_is_step_by_step_and_names_real_files():
    route = section("### The Arduino IDE route")
    steps = [int(n) for n in re.findall(r"^(\d+)\. ", route, flags=re.M)]
    assert steps == list(range(1, len(steps) + 1)) and len(steps) >= 5
    sketches = re.findall(r"`(firmware/[^`]+\.ino)`", route)
    assert sketches and all((ROOT / s).exists() for s in sketches), sketches
    assert "Arduino Uno" in route and "Upload" in route and "Serial Monitor" in route
