"""`cube-robot calibrate timing`: measurement against the mock and the real firmware, and --save.

Tests that start simavr carry the `firmware` marker."""

from __future__ import annotations

import difflib
import statistics
from pathlib import Path

import pytest

from robot import config as config_module
from robot.cli import main
from robot import motion as motion_time
from robot import regrip
from robot.link.driver import Link
from robot.sim import emulator
from robot.sim.mock_firmware import MockFirmware
from robot.calibrate.timing import TIMING_KEYS, measure, medians, rewrite_timing

ROOT = Path(__file__).resolve().parents[1]


def test_measurement_sorts_each_done_duration_into_its_timing_key():
    """Slow settings whose turn durations are worked out by hand here (not by robot/motion.py)."""
    config = config_module.load(ROOT / "config.yaml")
    config = config_module.with_settings(config, {"motion.max_speed_steps_per_s": 1000})
    motion = config.motion
    # Quarter turn, 100 steps at 1000 steps/s, 66667 steps/s^2: two 15 ms ramps (15 steps)
    # + 85 steps cruising = 115 ms; half turn 30 + 185 = 215 ms.  The regrips overlap the turns around
    # them (robot/regrip.py): GRIP FB between quarter turns of RL and a half turn of F, GRIP RL
    # between quarter turns; the first GRIP (no turn before it) is not sampled.
    jaws = [regrip.Jaws(motion.servo_open_us, motion.servo_closed_us, motion.servo_speed_us_per_ms,
                        motion.jaw_clear_pct / 100, motion.jaw_contact_pct / 100, motion.jaw_open_gap_mm)]
    quarter, half = (regrip.turn_reach([steps], 400, 1000, motion.accel_steps_per_s2, motion.cube_mm)
                     for steps in (100, 200))
    fb, rl = regrip.regrip_ms(quarter, half, jaws, jaws), regrip.regrip_ms(quarter, quarter, jaws, jaws)
    expected = {"quarter_turn_ms": 115, "half_turn_ms": 215, "regrip_ms": round(statistics.median([fb, rl, fb]))}
    # time_scale only speeds the wall clock; `done` reports the modelled ms.
    mock = MockFirmware(transport="pty", motion=motion, time_scale=0.05).start()
    try:
        with Link.open(config, port=mock.url) as link:
            samples = measure(link, repeats=2)
    finally:
        mock.stop()
    measured = medians(samples)
    for key in TIMING_KEYS:
        assert abs(measured[key] - expected[key]) <= 2, (key, measured[key], expected[key])
    assert len(samples["regrip_ms"]) == 3 and len(samples["half_turn_ms"]) == 8


@pytest.mark.firmware
def test_emulator_measurement_matches_the_motion_model():
    """The real firmware's measured durations against robot/motion.py's model (what the solver plans with)."""
    ok, reason = emulator.available()
    if not ok:
        pytest.skip(f"simavr/AVR toolchain not available: {reason}")
    config = config_module.load(ROOT / "config.yaml")
    with emulator.Emulator() as emu, Link.open(config, port=emu.port) as link:
        measured = medians(measure(link, repeats=2))
    assert abs(measured["quarter_turn_ms"] - 80) <= 5, measured
    assert abs(measured["half_turn_ms"] - 130) <= 5, measured
    assert abs(measured["regrip_ms"] - 128) <= 5, measured  # between two turns, overlapped (robot/regrip.py)
    model = motion_time.derived_timing(config.motion)
    assert all(abs(measured[key] - model[key]) <= 2 for key in TIMING_KEYS), (measured, model)


@pytest.mark.firmware
def test_save_changes_exactly_the_three_timing_lines(tmp_path, capsys):
    original = (ROOT / "config.yaml").read_text()
    # Start from values no robot measures, so all three lines must change.
    text = rewrite_timing(original, {"quarter_turn_ms": 411, "half_turn_ms": 422, "regrip_ms": 433})
    path = tmp_path / "config.yaml"
    path.write_text(text)

    # Saved only from a robot on a port (here the real firmware in simavr behind a pty, as a maker's Uno):
    # with --sim the values would be the emulator's and are refused (test below).
    with emulator.Emulator() as emu:
        assert main(["calibrate", "timing", "--port", emu.port, "--repeats", "1", "--save", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert "rebuilt" in out

    after = path.read_text()
    before_lines, after_lines = text.splitlines(), after.splitlines()
    assert len(before_lines) == len(after_lines)
    changed = [i for i, (a, b) in enumerate(zip(before_lines, after_lines)) if a != b]
    assert [before_lines[i].split(":")[0].strip() for i in changed] == list(TIMING_KEYS), \
        "".join(difflib.unified_diff(text.splitlines(True), after.splitlines(True)))
    for i in changed:  # the comment is kept
        assert before_lines[i].split("#")[1] == after_lines[i].split("#")[1]
    timing = config_module.load(path).robot.timing
    assert 60 <= timing.quarter_turn_ms < 411 and 60 <= timing.regrip_ms < 433, timing
    assert not [p for p in tmp_path.iterdir() if p.name != "config.yaml"], "temporary file left behind"


def test_rewrite_refuses_a_config_without_timing_lines():
    from robot.calibrate.timing import TimingCalibrationError

    with pytest.raises(TimingCalibrationError, match="robot.timing.regrip_ms"):
        rewrite_timing("robot:\n  timing:\n    quarter_turn_ms: 80\n    half_turn_ms: 120\n",
                       {"quarter_turn_ms": 1, "half_turn_ms": 2, "regrip_ms": 3})


def test_timings_measured_on_the_emulated_robot_say_simulated(monkeypatch, capsys):
    """--sim measures the firmware's timing model, not the maker's robot: every line says so."""
    monkeypatch.setattr(emulator, "available", lambda: (False, "not used by this test"))  # the mock: fast
    assert main(["calibrate", "timing", "--sim", "--repeats", "1"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert any("robot.timing.quarter_turn_ms" in line for line in lines), lines
    assert all(line.startswith("SIMULATED | ") for line in lines), lines
    # it does not suggest --save, which --sim refuses: emulator timings are never saved
    assert "never saved" in lines[-1] and "add --save" not in lines[-1], lines[-1]


def test_timings_measured_on_the_emulator_are_never_saved(tmp_path, capsys):
    path = tmp_path / "config.yaml"
    path.write_text((ROOT / "config.yaml").read_text())
    before = path.read_text()
    assert main(["calibrate", "timing", "--sim", "--repeats", "1", "--save", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "not saved" in err and "emulator's, not your robot's" in err and str(path) in err
    assert path.read_text() == before
