"""The real firmware in simavr, spoken to over its pty with pyserial.

Each test gets a fresh emulator (power-up state); what moved is read from the
harness's pin log (robot.sim.pinlog) and checked against the commands.
Framing comes from robot.link.protocol (one source of truth for the wire format).
Runs whenever the AVR toolchain and simavr are installed; skips otherwise.
"""

from __future__ import annotations

import random
import time

import pytest
import serial

from robot import config as config_module
from robot.link import protocol as P
from robot.sim import emulator, pinlog

OK, REASON = emulator.available()
pytestmark = [pytest.mark.firmware, pytest.mark.skipif(not OK, reason=f"firmware emulator unavailable: {REASON}")]

US = pinlog.CYCLES_PER_SECOND // 1_000_000  # cycles per microsecond
MS = pinlog.CYCLES_PER_SECOND // 1000
QUARTER = 100  # steps, with the default 400 steps/rev
DEFAULT_MOTION = config_module.defaults()["motion"]
DEFAULT_MAX_SPEED, DEFAULT_ACCEL = DEFAULT_MOTION["max_speed_steps_per_s"], DEFAULT_MOTION["accel_steps_per_s2"]
READ_TIMEOUT_S = 10.0
# `done` durations come from millis(), which counts in 1.024 ms steps and skips
# a value now and then: a measured duration can be off by 2 ms.  The pin log is exact.
DONE_MS_TOLERANCE = 2


class Board:
    """A minimal host: one command at a time, every line parsed."""

    def __init__(self, port: str):
        self.serial = serial.Serial(port, P.BAUD, timeout=READ_TIMEOUT_S)
        self.events = []  # lines that were not the answer being waited for
        self.identity = self.read_reply()
        assert isinstance(self.identity, P.Identity), f"expected the banner, got {self.identity}"
        self.seq = self.identity.last

    def close(self):
        self.serial.close()

    def read_payload(self) -> str:
        raw = self.serial.readline()
        assert raw.endswith(b"\n"), f"no line from the firmware within {READ_TIMEOUT_S} s (got {raw!r})"
        assert len(raw) <= P.MAX_REPLY, f"line longer than MAX_REPLY: {raw!r}"
        return P.unframe(raw.rstrip(b"\r\n"))

    def read_reply(self):
        return P.parse_reply(self.read_payload())

    def send_raw(self, data: bytes):
        self.serial.write(data)

    def send(self, command: str, seq: int | None = None) -> int:
        if seq is None:
            self.seq += 1
            seq = self.seq
        self.serial.write(P.command_line(seq, command))
        return seq

    def answer(self, seq: int | None = None):
        """Lines up to the answer (ok/err/rs) to `seq`; returns (answer, lines before it)."""
        before = []
        while True:
            reply = self.read_reply()
            if isinstance(reply, P.LINE_ANSWERS) and (seq is None or getattr(reply, "seq", None) in (seq, None)
                                                      or isinstance(reply, P.Resend)):
                return reply, before
            before.append(reply)
            self.events.append(reply)

    def request(self, command: str):
        seq = self.send(command)
        reply, before = self.answer(seq)
        return reply, before

    def ok(self, command: str) -> int:
        seq = self.send(command)
        reply, _ = self.answer(seq)
        assert reply == P.Ok(seq), f"{command}: expected ok {seq}, got {reply}"
        return seq

    def error(self, command: str) -> P.ErrorCode:
        seq = self.send(command)
        reply, _ = self.answer(seq)
        assert isinstance(reply, P.Err) and reply.seq == seq, f"{command}: expected err {seq}, got {reply}"
        return reply.code

    def wait_for(self, kind, predicate=lambda r: True):
        for r in list(self.events):
            if isinstance(r, kind) and predicate(r):
                self.events.remove(r)
                return r
        while True:
            reply = self.read_reply()
            if isinstance(reply, kind) and predicate(reply):
                return reply
            self.events.append(reply)

    def done(self, seq: int) -> P.Done:
        return self.wait_for(P.Done, lambda d: d.seq == seq)

    def status(self) -> P.Status:
        _, before = self.request("STATUS")
        assert isinstance(before[-1], P.Status)
        self.events.remove(before[-1])
        return before[-1]


@pytest.fixture
def emu():
    with emulator.Emulator() as e:
        yield e


@pytest.fixture
def board(emu):
    b = Board(emu.port)
    yield b
    b.close()


def wait_for_steps(emu, after_cycle: int, count: int = 1, timeout_s: float = READ_TIMEOUT_S) -> int:
    """Poll the pin log until `count` steps after `after_cycle` appear; returns the cycle now."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        steps = [c for s in pinlog.step_events(emu.pin_events()).values() for c, _ in s if c > after_cycle]
        if len(steps) >= count:
            return emu.cycle()
        time.sleep(0.001)
    raise AssertionError(f"no {count} steps within {timeout_s} s")


def moves_between(events, start: int, end: int | None = None) -> dict:
    """{arm: [signed steps of each move]} for the arms that moved in the window."""
    return {arm: [m.steps for m in moves]
            for arm, moves in pinlog.arm_motions(events, start_cycle=start, end_cycle=end).items() if moves}


def moves_since(emu, cycle: int) -> dict:
    return moves_between(emu.pin_events(), cycle)


# ---------------------------------------------------------------------------
# Build and identity


def test_build_fits_the_uno():
    emulator.build()
    used = emulator.size()
    assert used["flash"] <= 32256, f"flash {used['flash']} bytes exceeds the Uno's 32256 (optiboot)"
    # Leave at least 512 bytes of the 2048 for the stack.
    assert used["ram"] <= 2048 - 512, f"static RAM {used['ram']} bytes leaves too little stack"


def test_banner_at_open_and_hello(board):
    ident = board.identity
    assert ident.firmware == P.FIRMWARE_NAME
    assert ident.proto == P.PROTOCOL_VERSION
    assert ident.board == "uno"
    assert (ident.queue_depth, ident.rx_bytes) == (16, 64)
    assert (ident.last, ident.cut) == (0, 0), "power-up must not claim a previous run"
    seq = board.send("HELLO")
    assert board.read_reply() == ident
    assert board.read_reply() == P.Ok(seq)
    status = board.status()
    assert status == P.Status(P.State.IDLE, 0, 0, 0, seq + 1, P.AlarmCode.NONE)


# ---------------------------------------------------------------------------
# Motion


def test_turns_move_exact_steps_on_the_right_arms(emu, board):
    start = emu.cycle()
    board.done(board.ok("GRIP RL"))
    t1 = emu.cycle()
    d1 = board.done(board.ok("TURN R90 L-90"))
    t2 = emu.cycle()
    board.done(board.ok("TURN R180"))
    t3 = emu.cycle()
    board.done(board.ok("TURN L-180"))
    t4 = emu.cycle()
    board.done(board.ok("GRIP FB"))
    t5 = emu.cycle()
    board.done(board.ok("TURN F-90 B180"))
    events = emu.pin_events()
    assert moves_between(events, start, t1) == {}, "GRIP must not step"
    assert moves_between(events, t1, t2) == {"R": [100], "L": [-100]}
    assert moves_between(events, t2, t3) == {"R": [200]}
    assert moves_between(events, t3, t4) == {"L": [-200]}
    assert moves_between(events, t4, t5) == {}, "GRIP must not step"
    assert moves_between(events, t5) == {"F": [-100], "B": [200]}
    assert pinlog.net_steps(events) == {"R": 300, "L": -300, "F": -100, "B": 200}
    assert abs(d1.ms - 80) <= DONE_MS_TOLERANCE


def test_both_arms_of_a_pair_step_together(emu, board):
    board.done(board.ok("GRIP RL"))
    t = emu.cycle()
    board.done(board.ok("TURN R90 L90"))
    steps = pinlog.step_events(emu.pin_events(), start_cycle=t)
    r, l = [c for c, _ in steps["R"]], [c for c, _ in steps["L"]]
    assert len(r) == len(l) == QUARTER
    assert max(abs(a - b) for a, b in zip(r, l)) <= 2 * US, "the two arms must step within 2 us of each other"
    # A pair with different angles: the shorter arm steps on the longer arm's
    # ticks, and the turn lasts as long as the longer arm alone.
    board.done(board.ok("GRIP FB"))
    t = emu.cycle()
    both = board.done(board.ok("TURN F90 B-180"))
    t2 = emu.cycle()
    alone = board.done(board.ok("TURN B180"))
    steps = pinlog.step_events(emu.pin_events(), start_cycle=t, end_cycle=t2)
    f, b = [c for c, _ in steps["F"]], [c for c, _ in steps["B"]]
    assert (len(f), len(b)) == (QUARTER, 2 * QUARTER)
    assert all(min(abs(c - x) for x in b) <= 2 * US for c in f)
    alone_b = [c for c, _ in pinlog.step_events(emu.pin_events(), start_cycle=t2)["B"]]
    assert abs((b[-1] - b[0]) - (alone_b[-1] - alone_b[0])) <= 20 * US, "a two-arm turn takes its longer arm's time"
    assert abs(both.ms - alone.ms) <= DONE_MS_TOLERANCE
    assert (f[0] - b[0]) <= 4 * MS and (b[-1] - f[-1]) <= 4 * MS, "F's steps must spread over B's whole move"


def test_default_motion_durations(emu, board):
    """The defaults give the timings config.yaml's robot.timing promises (80/130/190 ms)."""
    grip = board.done(board.ok("GRIP RL"))
    t = emu.cycle()
    quarter = board.done(board.ok("TURN R90"))
    half = board.done(board.ok("TURN R180"))
    assert abs(grip.ms - 190) <= DONE_MS_TOLERANCE
    assert abs(quarter.ms - 80) <= DONE_MS_TOLERANCE
    assert abs(half.ms - 130) <= DONE_MS_TOLERANCE
    spans = [s for s in pinlog.action_spans([e for e in emu.pin_events() if e.cycle >= t]) if s.kind == "turn"]
    # The pins show first to last step: the whole move less half a step at each end
    # (4 ms each at the start/end speed of the ramp).
    assert [round(s.ms) for s in spans] == [72, 122]


def test_servo_pulses_match_commanded_widths(emu, board):
    t0 = emu.cycle()
    board.done(board.ok("GRIP RL"))
    board.ok("SERVO O1200 C1800 G50")
    t1 = emu.cycle()
    board.done(board.ok("GRIP FB"))
    board.ok("DWELL 60")
    board.done(board.seq)
    events = emu.pin_events()
    first = pinlog.servo_changes([e for e in events if t0 <= e.cycle < t1])
    # GRIP RL closes R and L (2000 us), then opens F and B (1000 us) grip_ms later.
    for arm, width in {"R": 2000, "L": 2000, "F": 1000, "B": 1000}.items():
        assert abs(first[arm][0].width_us - width) <= SERVO_JITTER_US, f"{arm}: {first[arm][0].width_us} us"
    lag_ms = pinlog.cycles_to_ms(first["F"][0].start_cycle - first["R"][0].start_cycle)
    # Each new width starts with the next 20 ms servo frame after its command.
    assert 95 - 20 < lag_ms < 95 + 20, "the other pair opens grip_ms after the first closes"
    pulses = pinlog.servo_pulses([e for e in events if e.cycle >= t1])
    for arm, width in {"R": 1200, "L": 1200, "F": 1800, "B": 1800}.items():
        assert abs(pulses[arm][-1].width_us - width) <= SERVO_JITTER_US, f"{arm}: {pulses[arm][-1].width_us} us, want {width}"
    periods = [b.start_cycle - a.start_cycle for a, b in zip(pulses["R"], pulses["R"][1:])]
    assert all(abs(p - 20 * MS) <= 5 * US for p in periods), "servo frames must be 20 ms (50 Hz)"
    for p in pinlog.servo_pulses(events).values():
        assert all(490 <= x.width_us <= 2510 for x in p)


def test_servos_stay_limp_until_the_first_grip(emu, board):
    board.ok("DWELL 100")
    board.done(board.seq)
    assert all(p == [] for p in pinlog.servo_pulses(emu.pin_events()).values())


def test_motion_and_servo_settings(emu, board):
    assert board.error("MOTION S401 V2500 A62500") == P.ErrorCode.BAD_ARGUMENT  # not a multiple of 4
    assert board.error("MOTION S400 V9000 A62500") == P.ErrorCode.OUT_OF_RANGE
    assert board.error("MOTION S400 V2500 A1000") == P.ErrorCode.OUT_OF_RANGE
    assert board.error("MOTION S400 V2500") == P.ErrorCode.BAD_ARGUMENT
    assert board.error("SERVO O100 C2000 G95") == P.ErrorCode.OUT_OF_RANGE
    board.ok("MOTION A100000 S800 V5000")  # any order
    board.done(board.ok("GRIP RL"))
    t = emu.cycle()
    seq = board.ok("TURN R-90")
    assert board.error("MOTION S400 V2500 A62500") == P.ErrorCode.BUSY
    board.done(seq)
    assert moves_since(emu, t) == {"R": [-200]}


def test_fastest_settings_keep_exact_steps(emu, board):
    """At the firmware's limits (8000 steps/s: 125 us per step) the step ISR keeps up."""
    board.ok("MOTION S6400 V8000 A200000")
    board.done(board.ok("GRIP RL"))
    t = emu.cycle()
    done = board.done(board.ok("TURN R180 L-90"))
    assert moves_since(emu, t) == {"R": [3200], "L": [-1600]}
    # 2 ramps of 8000/200000 s + (3200 - 2 * 160) steps at 8000/s = 440 ms,
    # of which the pins show all but half a step (2.236 ms) at each end.
    assert abs(done.ms - 440) <= DONE_MS_TOLERANCE
    r = [c for c, _ in pinlog.step_events(emu.pin_events(), start_cycle=t)["R"]]
    assert abs(pinlog.cycles_to_ms(r[-1] - r[0]) - (440 - 2 * 2.236)) < 0.05
    # A step edge can be late by the other interrupts' latency (a few us, rarely ~15), never early.
    assert min(b - a for a, b in zip(r, r[1:])) >= (125 - 20) * US, "no step came faster than the limit"


def test_turn_validation(board):
    assert board.error("TURN R90") == P.ErrorCode.NOT_HOLDING  # nobody holds yet
    board.done(board.ok("GRIP RL"))
    assert board.error("TURN F90") == P.ErrorCode.NOT_HOLDING
    assert board.error("TURN R90 F90") == P.ErrorCode.NOT_HOLDING
    assert board.error("TURN R45") == P.ErrorCode.BAD_ARGUMENT
    assert board.error("TURN R0") == P.ErrorCode.BAD_ARGUMENT
    assert board.error("TURN R270") == P.ErrorCode.OUT_OF_RANGE
    assert board.error("TURN R90 R90") == P.ErrorCode.BAD_ARGUMENT
    assert board.error("TURN X90") == P.ErrorCode.BAD_ARGUMENT
    assert board.error("TURN") == P.ErrorCode.BAD_ARGUMENT
    assert board.error("GRIP RF") == P.ErrorCode.BAD_ARGUMENT
    assert board.error("DWELL 0") == P.ErrorCode.OUT_OF_RANGE
    assert board.error("DWELL 60001") == P.ErrorCode.OUT_OF_RANGE
    assert board.error("DWELL 12345678901") == P.ErrorCode.OUT_OF_RANGE
    assert board.error("JUMP") == P.ErrorCode.UNKNOWN_COMMAND
    assert board.error("HELLO X") == P.ErrorCode.BAD_ARGUMENT
    # A queued GRIP decides what the following TURN may do.
    board.ok("GRIP FB")
    board.done(board.ok("TURN F90 B-90"))


def test_queue_full_and_realtime_status(board):
    board.done(board.ok("GRIP RL"))
    for _ in range(16):
        board.ok("DWELL 1000")
    assert board.error("DWELL 1") == P.ErrorCode.QUEUE_FULL
    board.send_raw(P.RT_STATUS)
    status = board.wait_for(P.Status)
    assert status.state == P.State.RUN and status.queued == 16
    board.send_raw(P.RT_ESTOP)  # end the dwells
    assert board.wait_for(P.Alarm).code == P.AlarmCode.ESTOP_BYTE


# ---------------------------------------------------------------------------
# Emergency stops


LONG_TURN_STEPS = 3200  # a half turn at 6400 steps/rev: 1.3 s, so a stop surely lands mid-move


def start_long_turns(emu, board) -> list[int]:
    board.ok(f"MOTION S{2 * LONG_TURN_STEPS} V{DEFAULT_MAX_SPEED} A{DEFAULT_ACCEL}")
    board.done(board.ok("GRIP RL"))
    return [board.ok("TURN R180 L180") for _ in range(2)]


# Other interrupts (millis, UART, the step ISR's short part) can delay an edge; two of them back
# to back have been seen to delay one edge by 6.2 us (1 run in ~10).  A hobby servo's dead band is
# about 5-10 us, so 8 us of jitter never moves a gripper.
SERVO_JITTER_US = 8


def assert_servos_held(events, cycle, widths):
    """Every servo pulse after `cycle` has the width it had before (within the jitter)."""
    for arm, pulses in pinlog.servo_pulses(events).items():
        after = [p.width_us for p in pulses if p.start_cycle > cycle]
        assert after, f"{arm}: no servo pulses after the stop"
        assert all(abs(w - widths[arm]) <= SERVO_JITTER_US for w in after), f"{arm} servo moved: {set(after)}"


def test_estop_input_stops_at_once_and_latches(emu, board):
    t = emu.cycle()
    seqs = start_long_turns(emu, board)
    wait_for_steps(emu, t, count=30)
    pressed = emu.press("estop")
    alarm = board.wait_for(P.Alarm)
    assert alarm.code == P.AlarmCode.ESTOP_INPUT
    assert alarm.stop_us <= 50, "the input must stop the steppers within microseconds"
    assert board.status() == P.Status(P.State.ALARM, 0, 0, seqs[0] - 1, board.seq, P.AlarmCode.ESTOP_INPUT)
    assert board.error("TURN R90") == P.ErrorCode.ALARM_ACTIVE
    assert board.error("RESET") == P.ErrorCode.ALARM_ACTIVE, "RESET while the button is held must fail"
    emu.release("estop")
    assert board.error("GRIP FB") == P.ErrorCode.ALARM_ACTIVE, "releasing the button must not clear the alarm"
    events = emu.pin_events()
    stop = pinlog.stop_timing(events, pressed)
    assert stop.steps_after <= 2 and stop.stop_us <= 50
    moved = moves_between(events, t).get("R", [])
    assert len(moved) == 1 and 0 < moved[0] < LONG_TURN_STEPS, "the first turn is cut short, the other never starts"
    assert not [d for d in board.events if isinstance(d, P.Done) and d.seq in seqs]
    assert_servos_held(events, pressed, {"R": 2000, "L": 2000, "F": 1000, "B": 1000})
    board.ok("RESET")
    assert board.status().state == P.State.IDLE
    t2 = emu.cycle()
    board.done(board.ok("TURN R90"))  # RL still holds: the servos never moved
    assert moves_since(emu, t2) == {"R": [LONG_TURN_STEPS // 2]}


def test_estop_byte_decelerates_within_bounds(emu, board):
    t = emu.cycle()
    start_long_turns(emu, board)
    wait_for_steps(emu, t, count=2 * 100)  # both arms at full speed (the ramp is 30 steps)
    sent = emu.cycle()
    board.send_raw(P.RT_ESTOP)
    alarm = board.wait_for(P.Alarm)
    assert alarm.code == P.AlarmCode.ESTOP_BYTE
    bound_us = 1e6 * DEFAULT_MAX_SPEED / DEFAULT_ACCEL  # 30 ms from full speed
    assert 0 < alarm.stop_us <= bound_us + 1000
    events = emu.pin_events()
    r = [c for c, _ in pinlog.step_events(events)["R"] if c > t]
    assert r[-1] > sent and len(r) < LONG_TURN_STEPS, "the turn was cut short after `!`"
    # The firmware times stop_us from the trigger to the end of the move, which
    # is half a step (sqrt(1/a): 3.9 ms at this accel) after the last pulse: so the
    # trigger cycle is known, and the steps after it are those of a stop from full
    # speed at `accel`: v^2 / 2a = 30 steps (+1 already scheduled).
    end_of_move = r[-1] + round((1 / DEFAULT_ACCEL) ** 0.5 * 1000 * MS)
    trigger = end_of_move - alarm.stop_us * US
    after = [c for c in r if c >= trigger]
    max_stop_steps = DEFAULT_MAX_SPEED**2 / (2 * DEFAULT_ACCEL)  # 30
    assert max_stop_steps - 2 <= len(after) <= max_stop_steps + 2, f"{len(after)} steps after the trigger"
    intervals_us = [(b - a) / US for a, b in zip(after, after[1:])]
    full_speed_step_us = 1e6 / DEFAULT_MAX_SPEED  # 500 us
    assert intervals_us[0] < 1.05 * full_speed_step_us, "the stop starts at full speed"
    assert intervals_us[-1] > 2500, "and ends slow (the last step of a ramp is ~2.9 ms)"
    assert pinlog.stop_timing(events, trigger).stop_us <= bound_us, "stopped within max_speed/accel"
    assert_servos_held(events, sent, {"R": 2000, "L": 2000, "F": 1000, "B": 1000})
    assert board.status().state == P.State.ALARM
    board.ok("RESET")
    assert board.status().alarm == P.AlarmCode.NONE


def test_realtime_bytes_inside_a_line(emu, board):
    seq = board.seq + 1
    line = P.command_line(seq, "STATUS")
    board.send_raw(line[:4] + b"?" + line[4:])
    status = board.wait_for(P.Status)  # the `?` status, then the line's own
    assert board.wait_for(P.Status).state == status.state == P.State.IDLE
    reply, _ = board.answer(seq)
    assert reply == P.Ok(seq)
    board.seq = seq
    line = P.command_line(seq + 1, "HELLO")
    board.send_raw(line[:5] + b"!" + line[5:])
    assert board.wait_for(P.Alarm) == P.Alarm(P.AlarmCode.ESTOP_BYTE, 0)  # nothing was moving
    assert isinstance(board.wait_for(P.Identity), P.Identity)
    assert board.answer(seq + 1)[0] == P.Ok(seq + 1)


# ---------------------------------------------------------------------------
# Exactly once


def test_resent_seq_is_acknowledged_not_repeated(emu, board):
    t = emu.cycle()
    board.done(board.ok("GRIP RL"))
    seq = board.ok("TURN R90")
    board.done(seq)
    board.send("TURN R90", seq=seq)
    assert board.answer(seq)[0] == P.Ok(seq, dup=True)
    board.send("GRIP RL", seq=seq - 1)
    assert board.answer(seq - 1)[0] == P.Ok(seq - 1, dup=True)
    # A gap is answered with the seq expected next; nothing runs.
    board.send("TURN R90", seq=seq + 5)
    assert board.answer()[0] == P.Resend(seq + 1)
    # A rejected seq resent gets the same rejection.
    bad = board.send("TURN F90")
    assert board.answer(bad)[0] == P.Err(bad, P.ErrorCode.NOT_HOLDING)
    board.send("TURN F90", seq=bad)
    assert board.answer(bad)[0] == P.Err(bad, P.ErrorCode.NOT_HOLDING)
    board.ok("DWELL 30")
    board.done(board.seq)
    assert pinlog.net_steps(emu.pin_events(), start_cycle=t) == {"R": 100, "L": 0, "F": 0, "B": 0}


def test_bad_checksum_asks_for_a_resend(emu, board):
    seq = board.seq + 1
    line = P.command_line(seq, "HELLO")
    corrupt = line[:-3] + (b"00" if line[-3:-1] != b"00" else b"01") + b"\n"
    board.send_raw(corrupt)
    assert board.read_reply() == P.Resend(seq)
    board.send_raw(b"N%d HELLO*zz\n" % seq)
    assert board.read_reply() == P.Err(None, P.ErrorCode.BAD_CHECKSUM)
    board.send_raw(b"N%d HELLO\n" % seq)
    assert board.read_reply() == P.Err(None, P.ErrorCode.BAD_FORMAT)
    board.send_raw(P.frame("N%d HELLO" % seq).replace(b" ", b"  "))
    assert board.read_reply() == P.Resend(seq)  # the checksum no longer matches
    board.send_raw(b"X" * 60 + b"\n")
    assert board.read_reply() == P.Err(None, P.ErrorCode.LINE_TOO_LONG)
    assert board.request("HELLO")[0] == P.Ok(seq)


def test_pair_errors_that_xor_missed_get_a_resend_not_a_move(emu, board):
    # Two identical bytes doubled / dropped in one line: XOR (protocol 1) accepted
    # these; the CRC-8 line check makes the firmware ask again instead.
    seq = board.seq + 1
    for good, damaged in [("SERVO O1000 C2000 G95", b"SERVO O10000 C20000 G95"),
                          ("TURN R-90 L-90", b"TURN R90 L90")]:
        line = P.command_line(seq, good)
        board.send_raw(b"N%d %s" % (seq, damaged) + line[-4:])
        assert board.read_reply() == P.Resend(seq)
    assert board.request("HELLO")[0] == P.Ok(seq)  # the seq was not consumed


def test_fuzzed_input_never_crashes_or_moves(emu, board):
    """Thousands of bad lines: each gets one answer, nothing moves, HELLO still works."""
    rng = random.Random(1234)
    board.seq = board.identity.last
    garbage_bytes = [b for b in range(256) if b not in (0x0A, 0x21, 0x3F)]  # no newline, `!`, `?`

    def random_line() -> tuple[bytes, bool]:
        kind = rng.randrange(6)
        if kind == 0:  # binary garbage
            data = bytes(rng.choice(garbage_bytes) for _ in range(rng.randint(1, 40)))
            if not data.replace(b"\r", b""):
                data += b"x"
            return data + b"\n", False
        if kind == 1:  # overlong
            return bytes(rng.choice(garbage_bytes) for _ in range(rng.randint(48, 120))) + b"\n", False
        if kind == 2:  # bad checksum on a good command
            line = P.command_line(board.seq + 1, "TURN R90")
            return line[:-3] + b"%02X\n" % (int(line[-3:-1], 16) ^ rng.randint(1, 255)), False
        # well framed, right seq, bad command
        command = rng.choice([
            "FOO", "TURN R45", "TURN Q90", "TURN R90", "TURN R-0", "TURN R99999999999", "DWELL 0", "DWELL -5",
            "DWELL 99999", "MOTION S3 V1 A1", "MOTION S400 V2500 A999999", "SERVO O1 C2 G3", "GRIP XY", "GRIP",
            "TURN R90 L90 F90", "HELLO HELLO", "turn r90", "N5", "DWELL", "TURN  R90", "SERVO O1000 C2000",
        ])
        board.seq += 1
        return P.frame(f"N{board.seq} {command}"), True

    answers = 0
    window = []  # bytes of lines not yet answered
    lines = [random_line() for _ in range(2000)]
    for data, _ in lines:
        while window and sum(window) + len(data) > 64:
            reply = board.read_reply()
            assert isinstance(reply, (P.Err, P.Resend, P.Ok)), reply
            assert not (isinstance(reply, P.Ok) and not reply.dup), f"a fuzzed line was accepted: {reply}"
            window.pop(0)
            answers += 1
        board.send_raw(data)
        window.append(min(len(data), 64))
    while window:
        reply = board.read_reply()
        assert isinstance(reply, (P.Err, P.Resend, P.Ok)) and not (isinstance(reply, P.Ok) and not reply.dup)
        window.pop(0)
        answers += 1
    assert answers == len(lines)
    seq = board.send("HELLO")
    assert isinstance(board.read_reply(), P.Identity)
    assert board.read_reply() == P.Ok(seq)
    events = emu.pin_events()
    assert all(not s for s in pinlog.step_events(events).values()), "fuzzed input moved an arm"
    assert all(not p for p in pinlog.servo_pulses(events).values()), "fuzzed input moved a gripper"


# ---------------------------------------------------------------------------
# Resets and the start button


def test_reset_mid_queue_reports_last_and_cut(emu, board):
    t = emu.cycle()
    seqs = start_long_turns(emu, board)
    grip = seqs[0] - 1
    wait_for_steps(emu, t, count=20)
    emu.reset()
    banner = board.read_reply()
    assert banner.last == grip and banner.cut == seqs[0]
    assert board.read_reply() == P.Alarm(P.AlarmCode.RESET_DURING_MOTION, 0)
    board.seq = banner.last + 10  # after a reset any seq above `last` is accepted
    assert board.status().state == P.State.ALARM
    assert board.error("GRIP RL") == P.ErrorCode.ALARM_ACTIVE
    # A second reset still reports the cut (until RESET clears it).
    emu.reset()
    assert board.read_reply().cut == seqs[0]
    board.read_reply()  # its alarm line
    board.seq = banner.last + 20
    board.ok("RESET")
    seq = board.send("HELLO")
    ident = board.read_reply()
    assert (ident.last, ident.cut) == (grip, 0)
    assert board.read_reply() == P.Ok(seq)


def test_reopening_the_port_resets_and_keeps_last(emu, board):
    board.done(board.ok("GRIP RL"))
    last = board.ok("DWELL 5")
    board.done(last)
    board.close()
    again = Board(emu.port)  # the DTR reset: a new banner
    try:
        assert (again.identity.last, again.identity.cut) == (last, 0)
        assert again.status().state == P.State.IDLE
        # Settings and grips are power-up again: nobody holds.
        assert again.error("TURN R90") == P.ErrorCode.NOT_HOLDING
    finally:
        again.close()


def test_start_button_is_reported_once_per_press(emu, board):
    emu.press("start")
    board.ok("DWELL 40")  # the press must last the 20 ms debounce
    board.done(board.seq)
    emu.release("start")
    board.ok("DWELL 40")
    board.done(board.seq)
    assert [e for e in board.events if isinstance(e, P.Button)] == [P.Button("start")]
