"""Firmware facts that need no emulator: the pin map in pins.h and README agree,
the pin-log decoder (robot.sim.pinlog) on hand-made logs, and build errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from robot.sim import emulator, pinlog

FIRMWARE = Path(__file__).resolve().parents[1] / "firmware"
MS = pinlog.CYCLES_PER_SECOND // 1000


def test_readme_pin_table_matches_pins_h():
    pins = pinlog.load_pin_map()
    uno_name = {"D": lambda b: f"D{b}", "B": lambda b: f"D{b + 8}", "C": lambda b: f"A{b}"}
    rows = re.findall(r"^\| (\w+) \| ([BCD]\d) \| ([AD]\d+) \|", (FIRMWARE / "README.md").read_text(), re.M)
    table = {name: (pin, uno) for name, pin, uno in rows}
    expected = {name: (p.label, uno_name[p.port](p.bit)) for name, p in pins.items()}
    assert table == expected
    used = {p.label for p in pins.values()}
    assert len(used) == len(pins), "two signals share a pin"
    assert not used & {"D0", "D1"}, "D0/D1 are the USB serial link"


def test_pins_h_parse_error_names_the_line(tmp_path):
    bad = tmp_path / "pins.h"
    bad.write_text("#define PIN_STEP_R  D, 9\n")
    with pytest.raises(pinlog.PinLogError, match=r"pins.h:1: PIN_STEP_R has bit 9"):
        pinlog.load_pin_map(bad)


def _log(tmp_path, lines) -> list:
    path = tmp_path / "pins.log"
    path.write_text("# test log\n" + "\n".join(lines) + "\n")
    return pinlog.read_log(path)


def _steps(pin, cycles):
    out = []
    for c in cycles:
        out += [f"{c} {pin} 1", f"{c + 32} {pin} 0"]
    return out


def test_arm_motions_groups_steps_into_signed_moves(tmp_path):
    pins = pinlog.load_pin_map()
    step_r, dir_r = pins["STEP_R"].label, pins["DIR_R"].label
    step_l = pins["STEP_L"].label
    ramp = [0, 4000, 6000, 7500, 9000, 10500, 12500, 16000]  # slows at both ends
    first = [1000 + c for c in ramp]
    second = [first[-1] + 2 * 8000 + c for c in ramp]  # after a pause of ~2.7 end intervals
    lines = [f"10 {dir_r} 1"] + _steps(step_r, first) + [f"{second[0] - 100} {dir_r} 0"] + _steps(step_r, second)
    lines += _steps(step_l, [5 * MS, 5 * MS + 4000]) + _steps(step_l, [200 * MS])  # 195 ms apart
    lines.sort(key=lambda line: int(line.split()[0]))
    events = _log(tmp_path, lines)
    moves = pinlog.arm_motions(events)
    assert moves["R"] == [pinlog.Move(first[0], first[-1], 8), pinlog.Move(second[0], second[-1], -8)]
    assert [m.steps for m in moves["L"]] == [-2, -1]
    assert pinlog.net_steps(events) == {"R": 0, "L": -3, "F": 0, "B": 0}
    # A window still knows the direction set before it.
    assert pinlog.net_steps(events, start_cycle=first[1]) == {"R": -1, "L": -3, "F": 0, "B": 0}
    assert pinlog.arm_motions(events, start_cycle=first[1], end_cycle=second[0])["R"] == [
        pinlog.Move(first[1], first[-1], 7)]


def test_same_direction_moves_split_on_a_pause(tmp_path):
    pins = pinlog.load_pin_map()
    step_f = pins["STEP_F"].label
    ramp = [0, 4000, 6000, 7500, 9000, 10500, 12500, 16000]
    lines = _steps(step_f, ramp) + _steps(step_f, [ramp[-1] + 16000 + c for c in ramp])
    moves = pinlog.arm_motions(_log(tmp_path, lines))["F"]
    assert [m.steps for m in moves] == [-8, -8]


def test_servo_pulses_and_changes(tmp_path):
    pins = pinlog.load_pin_map()
    servo_b = pins["SERVO_B"].label
    lines = []
    for frame, width_us in enumerate([1000, 1000, 2000, 2000]):
        start = 1000 + frame * 20 * MS
        lines += [f"{start} {servo_b} 1", f"{start + width_us * 16} {servo_b} 0"]
    events = _log(tmp_path, lines)
    pulses = pinlog.servo_pulses(events)["B"]
    assert [p.width_us for p in pulses] == [1000, 1000, 2000, 2000]
    assert pinlog.servo_changes(events)["B"] == [pinlog.Pulse(1000, 1000.0), pinlog.Pulse(1000 + 40 * MS, 2000.0)]
    assert pinlog.servo_pulses(events)["R"] == []


def test_stop_timing_counts_steps_after_the_trigger(tmp_path):
    step_r = pinlog.load_pin_map()["STEP_R"].label
    events = _log(tmp_path, _steps(step_r, [100, 1700, 3300, 4900]))
    assert pinlog.stop_timing(events, 1000) == pinlog.StopTiming(3, 4900, 3900 / 16)
    assert pinlog.stop_timing(events, 5000) == pinlog.StopTiming(0, None, 0.0)


def test_reset_marker_and_bad_lines(tmp_path):
    events = _log(tmp_path, ["5 D4 1", "7 reset", "9 D4 0"])
    assert events[1] == pinlog.PinEvent(7, pinlog.RESET, -1)
    path = tmp_path / "bad.log"
    path.write_text("5 D4 1\nnonsense here now extra\n")
    with pytest.raises(pinlog.PinLogError, match=r"bad.log:2"):
        pinlog.read_log(path)


@pytest.mark.skipif(not emulator.available()[0], reason=f"firmware toolchain unavailable: {emulator.available()[1]}")
def test_build_failure_raises_with_make_output():
    with pytest.raises(emulator.BuildError, match="No rule to make target"):
        emulator.build(targets=("no-such-target",))
