"""Bring-up commands at the firmware's pins, read from the simavr harness's pin log.

The protocol answers of the same commands (mock and firmware alike) are in
tests/test_device_conformance.py; here: the ENABLE level, exact step counts and DIR levels after
inversion, each gripper's own pulse widths, and homing against the harness's modelled sensors
(the harness moves each arm by its STEP/DIR pins while ENABLE is low, and drives the shared
homing input from the arms' angles).
"""

from __future__ import annotations

import time

import pytest

from robot import config as config_module
from robot.link import protocol as P
from robot.sim import emulator, pinlog

from conftest import Board

OK, REASON = emulator.available()
pytestmark = [pytest.mark.firmware, pytest.mark.skipif(not OK, reason=f"firmware emulator unavailable: {REASON}")]

PINS = pinlog.load_pin_map()
ENABLE = PINS["ENABLE"].label
HOME = PINS["HOME"].label
STEPS_PER_REV = config_module.defaults().motion.steps_per_rev
SERVO_JITTER_US = 8  # an edge can be late by another interrupt (test_bringup_safety.py)


@pytest.fixture
def emu():
    with emulator.Emulator() as e:
        yield e


@pytest.fixture
def board(emu):
    b = Board(emu.port)
    yield b
    b.close()


def levels(events, pin: str, after: int = 0) -> list[int]:
    return [e.level for e in events if e.pin == pin and e.cycle >= after]


def where(board) -> P.Where:
    _, before = board.request("WHERE")
    board.events.remove(before[-1])
    return before[-1]


def wait_for_frames(emu, after_cycle: int, frames: int = 2, timeout_s: float = 10.0) -> dict:
    """Pulses of each commanded gripper after `after_cycle`, once each has had `frames` of them."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pulses = {arm: [p.width_us for p in ps if p.start_cycle > after_cycle]
                  for arm, ps in pinlog.servo_pulses(emu.pin_events()).items()}
        if all(len(ws) >= frames for ws in pulses.values()):
            return pulses
        time.sleep(0.005)
    raise AssertionError(f"fewer than {frames} servo frames within {timeout_s} s")


def assert_widths(pulses: dict, expected: dict):
    for arm, width in expected.items():
        assert all(abs(w - width) <= SERVO_JITTER_US for w in pulses[arm]), (arm, width, pulses[arm])


def test_enable_is_high_from_power_up_until_motors_on_and_after_off_idle_and_reset(emu, board):
    assert levels(emu.pin_events(), ENABLE) == [1], "drivers must be off (ENABLE high) from power-up"
    t = emu.cycle()
    board.ok("MOTORS ON")
    board.ok("MOTORS OFF")
    board.ok("MOTORS ON")
    assert levels(emu.pin_events(), ENABLE, t) == [0, 1, 0]
    t = emu.cycle()
    board.ok("SETUP I1 H0")  # one second without an action
    board.done(board.ok("DWELL 50"))
    deadline = time.monotonic() + 10
    while where(board).motors_on and time.monotonic() < deadline:
        pass
    events = emu.pin_events()
    off = [e for e in events if e.pin == ENABLE and e.cycle >= t]
    assert [e.level for e in off] == [1]
    board.ok("MOTORS ON")
    t = emu.cycle()
    emu.reset()
    board.read_banner()
    assert levels(emu.pin_events(), ENABLE, t) == [1], "a reset leaves the drivers off"


def test_idle_off_counts_from_the_last_action(emu, board):
    board.ok("SETUP I1 H0")
    board.ok("MOTORS ON")
    on = [e.cycle for e in emu.pin_events() if e.pin == ENABLE and e.level == 0][-1]
    board.ok("DWELL 700")
    board.done(board.ok("DWELL 700"))
    deadline = time.monotonic() + 10
    while where(board).motors_on and time.monotonic() < deadline:
        pass
    off = [e.cycle for e in emu.pin_events() if e.pin == ENABLE and e.level == 1 and e.cycle > on]
    assert len(off) == 1
    seconds_after_actions = (off[0] - on) / pinlog.CYCLES_PER_SECOND
    assert 1.4 + 1.0 <= seconds_after_actions <= 1.4 + 1.0 + 0.1, seconds_after_actions


@pytest.mark.parametrize("invert", [False, True])
def test_jog_makes_exact_steps_with_the_direction_after_inversion(emu, board, invert):
    emu.reverse_wiring("L", invert)  # a motor wired the other way round, corrected by `invert`
    board.ok(f"ARM L I{int(invert)} Z0")
    board.ok("MOTORS ON")
    board.ok("OPEN RLFB")
    t = emu.cycle()
    board.done(board.ok("JOG L 37"))
    board.done(board.ok("JOG L -5"))
    board.done(board.ok("JOG R 3"))
    events = emu.pin_events()
    sign = -1 if invert else 1  # DIR high = positive unless inverted
    moves = {arm: [m.steps for m in ms] for arm, ms in pinlog.arm_motions(events, start_cycle=t).items() if ms}
    assert moves == {"L": [37 * sign, -5 * sign], "R": [3]}
    assert emu.arm_position("L") == 32, "the arm itself turned positively (clockwise from outside) 37 - 5"
    assert emu.arm_position("R") == 3


def test_no_step_reaches_a_disabled_driver(emu, board):
    board.ok("MOTORS ON")
    board.ok("OPEN R")
    t = emu.cycle()
    board.done(board.ok("JOG R 20"))
    board.ok("MOTORS OFF")
    assert board.error("JOG R 20") == P.ErrorCode.MOTORS_OFF
    events = emu.pin_events()
    assert pinlog.net_steps(events, start_cycle=t)["R"] == 20
    enable = [e for e in events if e.pin == ENABLE and e.cycle >= t]
    steps = [c for c, _ in pinlog.step_events(events, start_cycle=t)["R"]]
    assert [e.level for e in enable] == [1] and max(steps) < enable[0].cycle, "every step came with ENABLE low"


def test_each_gripper_has_its_own_widths_with_the_pair_wide_ones_as_defaults(emu, board):
    board.ok("SERVO O1000 C2000 S47")
    board.ok("GRIPPER R O1100 C1900")
    board.ok("GRIPPER L O1250 C1750")
    t = emu.cycle()
    board.done(board.ok("OPEN RLFB"))
    assert_widths(wait_for_frames(emu, emu.cycle()), {"R": 1100, "L": 1250, "F": 1000, "B": 1000})
    board.done(board.ok("CLOSE RL"))
    assert_widths(wait_for_frames(emu, emu.cycle()), {"R": 1900, "L": 1750, "F": 1000, "B": 1000})
    board.ok("GRIPPER F O1300 C1700")  # a gripper in use takes its new width at once
    assert_widths(wait_for_frames(emu, emu.cycle()), {"R": 1900, "L": 1750, "F": 1300, "B": 1000})
    board.ok("SERVO O1000 C2000 S47")  # SERVO sets all four again
    assert_widths(wait_for_frames(emu, emu.cycle()), {"R": 2000, "L": 2000, "F": 1000, "B": 1000})
    assert pinlog.net_steps(emu.pin_events(), start_cycle=t) == {"R": 0, "L": 0, "F": 0, "B": 0}


def homing_moves(events, arm, after):
    return [m.steps for m in pinlog.arm_motions(events, start_cycle=after)[arm]]


def test_homing_steps_seek_back_off_approach_and_offset(emu, board):
    backoff = STEPS_PER_REV // 16
    emu.set_sensor("F", 90, 12, STEPS_PER_REV)
    emu.turn_by_hand("F", 30)  # the arm was turned by hand while the drivers were off
    board.ok("ARM F I0 Z-95")
    board.ok("MOTORS ON")
    board.ok("OPEN F")
    t = emu.cycle()
    board.done(board.ok("HOME F"))
    events = emu.pin_events()
    # Seek from 30 to the edge at 90 (the step that reaches it is the 60th), back off until the
    # sensor releases (1 step back to 89) and a sixteenth of a turn more (one move on the pins),
    # approach to the edge, then the offset.
    assert homing_moves(events, "F", t) == [60, -(1 + backoff), backoff + 1, -95]
    assert emu.arm_position("F") == 30 + 60 - 1 - backoff + backoff + 1 - 95 == -5
    home_edges = [e for e in events if e.pin == HOME and e.cycle >= t]
    assert [e.level for e in home_edges] == [0, 1, 0, 1], "active low: on at the seek, off, on at the approach"
    assert where(board).positions["F"] == 0


def test_homing_two_arms_on_the_shared_input_with_an_inverted_arm(emu, board):
    """Sensors in parallel on one input: a homed arm must leave it released (zero before the edge)."""
    emu.set_sensor("R", 200, 10, STEPS_PER_REV)
    emu.set_sensor("B", 120, 10, STEPS_PER_REV)
    emu.reverse_wiring("B")
    board.ok("ARM R I0 Z-20")
    board.ok("ARM B I1 Z-20")  # B's motor is wired the other way: inverted, it still seeks clockwise
    board.ok("MOTORS ON")
    board.ok("OPEN RB")
    board.done(board.ok("HOME R"))
    board.done(board.ok("HOME B"))
    assert (emu.arm_position("R"), emu.arm_position("B")) == (180, 100)
    state = where(board)
    assert (state.positions["R"], state.positions["B"]) == (0, 0) and not state.sensor_active


def test_homing_with_an_active_high_sensor_and_the_wrong_polarity(emu, board):
    emu.sensor_level(active_high=True)
    emu.set_sensor("L", 50, 10, STEPS_PER_REV)
    board.ok("SETUP I300 H1")
    board.ok("MOTORS ON")
    board.ok("OPEN L")
    board.done(board.ok("HOME L"))
    assert emu.arm_position("L") == 50  # zero offset: L stays at the edge, on its sensor
    board.done(board.ok("JOG L -20"))
    board.ok("SETUP I300 H0")  # wrong: the idle input now reads as "at a sensor"
    assert where(board).sensor_active
    board.ok("HOME L")
    assert board.wait_for(P.Alarm) == P.Alarm(P.AlarmCode.HOME_STUCK, 0)
