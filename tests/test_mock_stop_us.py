"""The mock firmware's `alarm <CODE> <stop_us>`: trigger -> steppers stopped on its own clock, as
system.cpp reports it, never a fixed number it did not work out."""

import types

import pytest

from robot.link import protocol as P
from robot.sim import mock_firmware
from robot.sim.mock_firmware import MockFirmware


class Clock:
    """time.monotonic for the mock: each read advances it by `step` (the halt takes that long)."""

    def __init__(self, now: float, step: float = 0.0):
        self.now, self.step = now, step

    def monotonic(self) -> float:
        value = self.now
        self.now += self.step
        return value


def _turning(monkeypatch, clock: Clock, since: float, nominal_ms: float, time_scale: float = 0.5):
    # One clock for both: the mock times its halt on its thread's CPU clock (thread_time).
    monkeypatch.setattr(mock_firmware, "time",
                        types.SimpleNamespace(monotonic=clock.monotonic, thread_time=clock.monotonic))
    mock = MockFirmware(time_scale=time_scale)  # not started: its replies are collected here
    replies = []
    mock._reply = replies.append
    mock._running = (7, "TURN R180 L180", nominal_ms, since + nominal_ms / 1000 * time_scale)
    mock._running_since = since
    return mock, replies


@pytest.mark.parametrize("elapsed_s", [0.01, 0.9, 1.99])  # accelerating, at full speed, decelerating
def test_the_stop_byte_reports_the_deceleration_from_the_speed_at_the_trigger(monkeypatch, elapsed_s):
    time_scale, nominal_ms = 0.5, 2000.0
    mock, replies = _turning(monkeypatch, Clock(100.0 + elapsed_s * time_scale), 100.0, nominal_ms, time_scale)
    motion = mock.motion
    speed = min(motion.max_speed_steps_per_s, motion.accel_steps_per_s2 * elapsed_s,
                motion.accel_steps_per_s2 * (nominal_ms / 1000 - elapsed_s))
    mock._estop(P.AlarmCode.ESTOP_BYTE)
    [alarm] = replies
    assert alarm.code == P.AlarmCode.ESTOP_BYTE
    assert alarm.stop_us == pytest.approx(1e6 * speed / motion.accel_steps_per_s2, abs=1)
    assert 0 < alarm.stop_us <= 1e6 * motion.max_speed_steps_per_s / motion.accel_steps_per_s2 + 1  # rounding


def test_the_estop_input_reports_the_halt_as_timed_on_the_mock_clock(monkeypatch):
    time_scale, halt_s = 0.5, 3e-6  # the halt takes 3 us of wall time: 6 us on a board at half speed
    mock, replies = _turning(monkeypatch, Clock(100.5, step=halt_s), 100.0, 2000.0, time_scale)
    mock._estop(P.AlarmCode.ESTOP_INPUT)
    [alarm] = replies
    assert alarm == P.Alarm(P.AlarmCode.ESTOP_INPUT, 6)


def test_nothing_moving_reports_zero(monkeypatch):
    mock, replies = _turning(monkeypatch, Clock(100.5, step=1e-3), 100.0, 2000.0)
    mock._running = None
    mock._estop(P.AlarmCode.ESTOP_INPUT)
    assert replies == [P.Alarm(P.AlarmCode.ESTOP_INPUT, 0)]  # as system.cpp: no stepper was moving
