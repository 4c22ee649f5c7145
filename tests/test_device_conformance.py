"""One protocol conformance suite for every device that claims to speak docs/protocol.md.

Runs against the `device` fixture (tests/conftest.py): the mock firmware on a
pty and over TCP, the real firmware in simavr (marker `firmware`), and a real
robot with `pytest --robot-port /dev/ttyACM0`.  Wherever the mock and the
firmware differ, the firmware is right: these cases were written against it.

What the firmware does at the pins (exact steps, stop timing, servo pulses) is
checked in tests/test_firmware_emulator.py; here only what the wire shows, plus
`device.moved_since()` (the pin log, or the mock's record of what it executed).
"""

from __future__ import annotations

import random
import time

import pytest

from robot import config as config_module
from robot import firmware_header
from robot import motion
from robot import regrip
from robot.link import protocol as P

LIMITS = firmware_header.limits()
MOTION = config_module.defaults().motion
DEFAULT_MOTION_COMMAND = P.motion_command(MOTION)
DEFAULT_SERVO_COMMAND = P.servo_command(MOTION)
DEFAULT_JAWS_COMMAND = P.jaws_command(MOTION)
# Every gripper with the default widths (the board's power-up settings): the regrip's arithmetic.
JAWS = regrip.Jaws(MOTION.servo_open_us, MOTION.servo_closed_us, MOTION.servo_speed_us_per_ms,
                   MOTION.jaw_clear_pct / 100, MOTION.jaw_contact_pct / 100, MOTION.jaw_open_gap_mm)
CLOSING_MS = regrip.closing_ms(JAWS)  # one gripper phase with nothing to overlap: a frame and the travel
# `done` durations come from millis(), which counts in 1.024 ms steps and skips
# a value now and then: a measured duration can be off by 2 ms
# from the true one, and the model's is fractional (129.9998 ms measured as 132: seen).
DONE_MS_TOLERANCE = 2.5
LONG_TURN_STEPS = 3200  # a half turn at 6400 steps/rev: 1.6 s, so a stop surely lands mid-move
E = P.ErrorCode


def start_long_turns(board) -> list[int]:
    board.ok(f"MOTION S{2 * LONG_TURN_STEPS} V{MOTION.max_speed_steps_per_s} A{MOTION.accel_steps_per_s2}")
    board.ok("MOTORS ON")
    board.done(board.ok("GRIP RL"))
    seqs = [board.ok("TURN R180 L180") for _ in range(2)]
    while board.status().running != seqs[0]:  # the first turn has started
        pass
    return seqs


# ---------------------------------------------------------------------------
# Identity and every command


def test_banner_and_hello_identify_the_firmware(device):
    board = device.connect()
    ident = board.identity
    assert ident.firmware == P.FIRMWARE_NAME and ident.proto == P.PROTOCOL_VERSION
    assert (ident.queue_depth, ident.rx_bytes) == (LIMITS["QUEUE_DEPTH"], LIMITS["RX_BUFFER_SIZE"])
    if device.power_up:
        assert (ident.last, ident.cut) == (0, 0), "power-up must not claim a previous run"
    seq = board.send("HELLO")
    assert board.read_reply() == ident
    assert board.read_reply() == P.Ok(seq)
    assert board.status() == P.Status(P.State.IDLE, 0, 0, ident.last, seq + 1, P.AlarmCode.NONE)


def test_every_command_is_acknowledged_and_actions_report_done(device):
    board = device.connect()
    board.ok(DEFAULT_MOTION_COMMAND)
    board.ok(DEFAULT_SERVO_COMMAND)
    board.ok(DEFAULT_JAWS_COMMAND)
    board.ok("RESET")  # no alarm: nothing to clear
    board.ok("MOTORS ON")  # the drivers are off at power-up
    mark = device.mark()
    grip = board.done(board.ok("GRIP RL"))
    quarter = board.done(board.ok("TURN R90 L-90"))
    half = board.done(board.ok("TURN R180"))
    dwell = board.done(board.ok("DWELL 50"))
    # The durations the firmware measures are those robot/motion.py and robot/regrip.py predict (the GRIP
    # had no turn before it and none queued behind it when it opened the other pair: no overlap).
    assert abs(grip.ms - regrip.regrip_ms(None, None, [JAWS], [JAWS])) <= DONE_MS_TOLERANCE
    assert abs(quarter.ms - motion.turn_ms([90, -90], MOTION)) <= DONE_MS_TOLERANCE
    assert abs(half.ms - motion.turn_ms([180], MOTION)) <= DONE_MS_TOLERANCE
    assert abs(dwell.ms - 50) <= DONE_MS_TOLERANCE
    quarter_steps = MOTION.steps_per_rev // 4
    device.assert_moved_since(mark, {"R": 3 * quarter_steps, "L": -quarter_steps, "F": 0, "B": 0})
    status = board.status()
    assert (status.state, status.queued, status.done) == (P.State.IDLE, 0, board.seq - 1)


def test_settings_change_the_motion(device):
    board = device.connect()
    board.ok("MOTION A100000 S800 V5000")  # any order
    board.ok("MOTORS ON")
    board.done(board.ok("GRIP RL"))
    mark = device.mark()
    seq = board.ok("TURN R-90")
    assert board.error(DEFAULT_MOTION_COMMAND) == E.BUSY  # not while an arm turns
    board.done(seq)
    device.assert_moved_since(mark, {"R": -200, "L": 0, "F": 0, "B": 0})


def test_a_grip_skips_the_half_its_grippers_already_did(device):
    """GRIP closes its pair, then opens the other; a half whose grippers are already there is skipped
    (each half a servo frame and the travel, robot/regrip.py closing_ms), so a GRIP to the pair that
    holds takes 0 ms."""
    board = device.connect()
    board.ok(DEFAULT_SERVO_COMMAND)
    # The firmware works out its regrip table from the main loop for a while after settings change,
    # which can make a `done` a few ms late; the dwell lets it finish first (nothing moves meanwhile).
    board.done(board.ok("DWELL 1000"))
    half = CLOSING_MS
    cases = [  # (setup commands, GRIP, halves the GRIP must take, grippers after it)
        ([], "GRIP RL", 2, "RL"),            # power-up: both pairs limp (never commanded)
        ([], "GRIP RL", 0, "RL"),            # the pair already holds: done at once
        (["CLOSE FB"], "GRIP FB", 1, "FB"),  # all four closed: only RL must open
        (["OPEN FB"], "GRIP FB", 1, "FB"),   # all four open: only FB must close
        ([], "GRIP RL", 2, "RL"),            # an ordinary regrip
    ]
    for setup, grip, halves, holding in cases:
        for command in setup:
            board.done(board.ok(command))
        done = board.done(board.ok(grip))
        assert abs(done.ms - halves * half) <= DONE_MS_TOLERANCE, \
            f"{setup} then {grip}: {done.ms} ms, want {halves} x {half} ms"
        closed = {arm: ("closed" if arm in holding else "open") for arm in "RLFB"}
        assert where(board).grippers == closed, f"{setup} then {grip}"
    board.ok("MOTORS ON")
    board.done(board.ok("TURN R90"))  # the skipped halves still leave RL holding: a turn is accepted


# A GRIP overlaps the turn before it only if it is queued by the moment its closing must start (35 ms
# before a quarter turn's end): a host on a loaded machine can take longer than that between two lines,
# so the plans below are queued behind a dwell.
QUEUEING_DWELL = "DWELL 1000"


def _reach(*angles: int):
    return regrip.turn_reach([abs(a) * MOTION.steps_per_rev // 360 for a in angles], MOTION.steps_per_rev,
                             MOTION.max_speed_steps_per_s, MOTION.accel_steps_per_s2, MOTION.cube_mm)


def test_a_regrip_between_queued_turns_overlaps_them(device):
    """A GRIP queued behind a turn starts closing its pair before the turn ends, and is done when the
    next turn (queued behind it) may start: its `done` is robot/regrip.py's regrip_ms for those turns,
    much less than closing fully and then opening fully."""
    board = device.connect()
    board.ok("MOTORS ON")
    board.done(board.ok("GRIP RL"))
    mark = device.mark()
    # The turns plans make: one arm, both arms alike, both arms a quarter and a half.
    plan = ["TURN R90", "GRIP FB", "TURN F90 B-90", "GRIP RL", "TURN R180 L-90", "GRIP FB", "TURN F-90"]
    board.ok(QUEUEING_DWELL)
    seqs = [board.ok(command) for command in plan]  # all queued before the first turn starts
    done = [board.done(seq).ms for seq in seqs]
    quarter, mixed = _reach(90), _reach(180, -90)
    want = {1: regrip.regrip_ms(quarter, _reach(90, -90), [JAWS], [JAWS]),
            3: regrip.regrip_ms(_reach(90, -90), mixed, [JAWS], [JAWS]),
            5: regrip.regrip_ms(mixed, quarter, [JAWS], [JAWS])}
    for i, ms in want.items():
        assert abs(done[i] - ms) <= DONE_MS_TOLERANCE, (plan[i], done[i], ms)
        assert ms < regrip.regrip_ms_without_overlap([JAWS], [JAWS]) - 50
    # The turns themselves take as long as ever, and every one of them happened.
    assert abs(done[2] - motion.turn_ms([90], MOTION)) <= DONE_MS_TOLERANCE
    quarter_steps = MOTION.steps_per_rev // 4
    device.assert_moved_since(mark, {"R": 3 * quarter_steps, "L": -quarter_steps, "F": 0, "B": -quarter_steps})


def test_each_gripper_times_the_regrip_with_its_own_widths(device):
    """Per-arm widths (`GRIPPER`, from `tune grippers`) make each jaw's travel its own: the taking pair's
    fastest jaw decides how early the closing starts, the slowest when it holds (robot/regrip.py)."""
    board = device.connect()
    board.ok("MOTORS ON")
    board.ok("GRIPPER R O1250 C1750")  # 500 us: the slowest jaw
    board.ok("GRIPPER F O1350 C1650")  # 300 us: the fastest
    try:
        board.done(board.ok("GRIP FB"))
        board.ok(QUEUEING_DWELL)
        seqs = [board.ok(c) for c in ["TURN F90", "GRIP RL", "TURN R90 L90", "GRIP FB", "TURN B180"]]
        done = [board.done(seq).ms for seq in seqs]
    finally:
        for arm in "RF":
            board.ok(f"GRIPPER {arm} O{MOTION.servo_open_us} C{MOTION.servo_closed_us}")
    r = regrip.Jaws(1250, 1750, *list(vars(JAWS).values())[2:])
    f = regrip.Jaws(1350, 1650, *list(vars(JAWS).values())[2:])
    rl, fb = [r, JAWS], [f, JAWS]
    want = [regrip.regrip_ms(_reach(90), _reach(90, 90), rl, fb), regrip.regrip_ms(_reach(90, 90), _reach(180), fb, rl)]
    assert want[0] != regrip.regrip_ms(_reach(90), _reach(90, 90), [JAWS], [JAWS])  # the widths matter
    for got, ms in zip(done[1::2], want):
        assert abs(got - ms) <= DONE_MS_TOLERANCE, (done, want)


def test_a_grip_that_arrives_after_the_turn_does_not_overlap_it(device):
    """The GRIP came once the turn had ended (a line fault, a slow host): its pair closes fully from its
    start.  With the next turn queued before it opens the other pair it still waits only until the
    opening jaws are out of that turn's reach; with nothing queued, until they are fully open."""
    board = device.connect()
    board.ok("MOTORS ON")
    board.done(board.ok("GRIP RL"))
    board.done(board.ok("TURN R90"))
    alone = board.done(board.ok("GRIP FB"))
    assert abs(alone.ms - regrip.regrip_ms(None, None, [JAWS], [JAWS])) <= DONE_MS_TOLERANCE, alone
    board.done(board.ok("TURN F90"))
    grip, turn = board.send("GRIP RL"), board.send("TURN R90")  # together: the turn is queued at once
    assert board.answer(grip)[0] == P.Ok(grip) and board.answer(turn)[0] == P.Ok(turn)
    done = board.done(grip)
    assert abs(done.ms - regrip.regrip_ms(None, _reach(90), [JAWS], [JAWS])) <= DONE_MS_TOLERANCE, done
    board.done(turn)


# ---------------------------------------------------------------------------
# Every error code, and the order the firmware checks in


REJECTED_WHILE_RL_HOLDS = [
    ("TURN F90", E.NOT_HOLDING),
    ("TURN R90 F90", E.NOT_HOLDING),
    ("TURN R45", E.BAD_ARGUMENT),
    ("TURN R0", E.BAD_ARGUMENT),
    ("TURN R-0", E.BAD_ARGUMENT),
    ("TURN R270", E.OUT_OF_RANGE),
    ("TURN R99999999999", E.OUT_OF_RANGE),
    ("TURN R90 R90", E.BAD_ARGUMENT),
    ("TURN X90", E.BAD_ARGUMENT),
    ("TURN R", E.BAD_ARGUMENT),
    ("TURN R-", E.BAD_ARGUMENT),
    ("TURN", E.BAD_ARGUMENT),
    ("TURN R90 L90 F90", E.BAD_ARGUMENT),
    ("TURN R90 L90 F90 B90 X1", E.BAD_ARGUMENT),
    ("TURN  R90", E.BAD_FORMAT),
    ("GRIP RF", E.BAD_ARGUMENT),
    ("GRIP", E.BAD_ARGUMENT),
    ("GRIP RL FB", E.BAD_ARGUMENT),
    ("DWELL 0", E.OUT_OF_RANGE),
    ("DWELL -5", E.OUT_OF_RANGE),
    ("DWELL 60001", E.OUT_OF_RANGE),
    ("DWELL 12345678901", E.OUT_OF_RANGE),
    ("DWELL 5x", E.BAD_ARGUMENT),
    ("DWELL", E.BAD_ARGUMENT),
    ("JUMP", E.UNKNOWN_COMMAND),
    ("turn r90", E.UNKNOWN_COMMAND),
    ("N5", E.UNKNOWN_COMMAND),
    ("HELLO X", E.BAD_ARGUMENT),
    ("STATUS X", E.BAD_ARGUMENT),
    ("RESET X", E.BAD_ARGUMENT),
    ("MOTION S401 V2500 A62500", E.BAD_ARGUMENT),  # in range, not a multiple of 4
    ("MOTION S400 V9000 A62500", E.OUT_OF_RANGE),
    ("MOTION S400 V2500 A1000", E.OUT_OF_RANGE),
    ("MOTION S400 V2500", E.BAD_ARGUMENT),
    ("MOTION S400 S400 V2500", E.BAD_ARGUMENT),
    ("MOTION s400 V2500 A62500", E.BAD_ARGUMENT),
    ("MOTION S3 V1 A1", E.OUT_OF_RANGE),
    ("SERVO O100 C2000 S47", E.OUT_OF_RANGE),
    ("SERVO O1000 C2000", E.BAD_ARGUMENT),
    ("SERVO O1000 C2000 X47", E.BAD_ARGUMENT),
    ("SERVO O1000 C2000 S", E.BAD_ARGUMENT),
    ("SERVO O1000 C2000 G95", E.BAD_ARGUMENT),  # protocol 4's settle time: gone
    ("JAWS C50 T70 G12", E.BAD_ARGUMENT),
    ("JAWS C50 T70 G12 E50 X1", E.BAD_ARGUMENT),
    ("JAWS C50 T70 G10 E50", E.JAWS_IN_REACH),  # a 50 mm cube's layer reaches 10.4 mm past its faces
    ("JAWS C50 T70 G24 E120", E.JAWS_IN_REACH),
    ("JAWS C50 T70 G10 E999", E.OUT_OF_RANGE),  # the bounds first
]


def test_rejections_name_the_problem_and_consume_the_seq(device):
    board = device.connect()
    board.ok("MOTORS ON")
    assert board.error("TURN R90") == E.NOT_HOLDING  # nobody holds yet
    board.done(board.ok("GRIP RL"))
    mark = device.mark()
    got = [(command, board.error(command)) for command, _ in REJECTED_WHILE_RL_HOLDS]
    assert got == REJECTED_WHILE_RL_HOLDS
    # A queued GRIP decides what the following TURN may do.
    board.ok("GRIP FB")
    board.done(board.ok("TURN F90 B-90"))
    quarter = MOTION.steps_per_rev // 4
    device.assert_moved_since(mark, {"R": 0, "L": 0, "F": quarter, "B": -quarter})


def test_every_error_code_can_be_produced(device):
    """Each code of firmware/cube_robot/protocol.h's ERROR_CODES, as the firmware sends it."""
    board = device.connect()
    seen = {}
    seq = board.seq + 1
    board.send_raw(b"N%d HELLO*zz\n" % seq)
    seen[E.BAD_CHECKSUM] = board.read_reply()
    board.send_raw(b"X" * P.MAX_LINE + b"\n")
    seen[E.LINE_TOO_LONG] = board.read_reply()
    board.send_raw(b"N%d HELLO\n" % seq)
    seen[E.BAD_FORMAT] = board.read_reply()
    for code, command in [(E.UNKNOWN_COMMAND, "JUMP"), (E.BAD_ARGUMENT, "GRIP XY"), (E.OUT_OF_RANGE, "DWELL 0"),
                          (E.JAWS_IN_REACH, "JAWS C50 T70 G10 E50"),
                          (E.MOTORS_OFF, "TURN R90"), (None, "MOTORS ON"), (E.NOT_HOLDING, "TURN R90"),
                          (E.ARM_BLOCKED, "JOG R 10")]:
        reply = board.answer(board.send(command))[0]
        if code is not None:
            seen[code] = reply
    board.done(board.ok("GRIP RL"))
    for _ in range(LIMITS["QUEUE_DEPTH"]):
        board.ok("DWELL 1000")
    seen[E.BUSY] = board.answer(board.send(DEFAULT_MOTION_COMMAND))[0]
    seen[E.QUEUE_FULL] = board.answer(board.send("DWELL 1"))[0]
    board.send_raw(P.RT_ESTOP)
    board.wait_for(P.Alarm)
    seen[E.ALARM_ACTIVE] = board.answer(board.send("DWELL 1"))[0]
    board.ok("RESET")
    # The 3x3x3 mode's (tests/test_device_conformance3.py has them in context).  RL closed, FB open.
    seen[E.PUZZLE_MODE] = board.answer(board.send("TILT R90 L-90"))[0]
    board.ok("PUZZLE 3")
    seen[E.POSITION_UNKNOWN] = board.answer(board.send("CLOSE F"))[0]
    board.ok("ZERO RLFB")
    seen[E.OTHER_PAIR_OPEN] = board.answer(board.send("TURN R90"))[0]
    board.done(board.ok("CLOSE FB"))
    seen[E.OTHER_PAIR_CLOSED] = board.answer(board.send("TILT R90 L-90"))[0]
    board.done(board.ok("TURN F90"))
    seen[E.GRIPPER_ACROSS] = board.answer(board.send("TURN R90"))[0]
    board.ok("OPEN R")
    board.done(board.ok("JOG R 10"))
    seen[E.NOT_SQUARE] = board.answer(board.send("CLOSE R"))[0]
    assert set(seen) == set(E) - {E.NONE}, "a code of protocol.h is not exercised here"
    for code, reply in seen.items():
        assert isinstance(reply, P.Err) and reply.code == code, (code, reply)
    assert all(seen[c].seq is None for c in (E.BAD_CHECKSUM, E.LINE_TOO_LONG, E.BAD_FORMAT))


def test_a_space_after_the_seq_is_a_consumed_bad_format(device):
    board = device.connect()
    seq = board.seq + 1
    board.send_raw(P.frame(f"N{seq} "))
    assert board.read_reply() == P.Err(seq, E.BAD_FORMAT)
    board.send_raw(P.frame(f"N{seq + 1}*HELLO"))  # `*` is not allowed in a payload
    assert board.read_reply() == P.Err(None, E.BAD_FORMAT)
    board.send_raw(P.frame(f"N0{seq + 1} HELLO"))
    assert board.read_reply() == P.Err(None, E.BAD_FORMAT)
    board.seq = seq
    assert board.request("HELLO")[0] == P.Ok(seq + 1)


# ---------------------------------------------------------------------------
# Bounds (from firmware/cube_robot/defaults.h)


def _bounded_commands():
    m = MOTION
    cases = []

    def bounds(template, low, high):
        for value, ok in [(low - 1, False), (low, True), (high, True), (high + 1, False)]:
            cases.append((template.format(value), ok))

    bounds("MOTION S{} V%d A%d" % (m.max_speed_steps_per_s, m.accel_steps_per_s2),
           LIMITS["STEPS_PER_REV_MIN"], LIMITS["STEPS_PER_REV_MAX"])
    bounds("MOTION S%d V{} A%d" % (m.steps_per_rev, m.accel_steps_per_s2),
           LIMITS["MAX_SPEED_MIN"], LIMITS["MAX_SPEED_MAX"])
    bounds("MOTION S%d V%d A{}" % (m.steps_per_rev, m.max_speed_steps_per_s),
           LIMITS["ACCEL_MIN"], LIMITS["ACCEL_MAX"])
    speed = P.servo_speed_tenths(m)
    bounds("SERVO O{} C%d S%d" % (m.servo_closed_us, speed), LIMITS["SERVO_US_MIN"], LIMITS["SERVO_US_MAX"])
    bounds("SERVO O%d C{} S%d" % (m.servo_open_us, speed), LIMITS["SERVO_US_MIN"], LIMITS["SERVO_US_MAX"])
    bounds("SERVO O%d C%d S{}" % (m.servo_open_us, m.servo_closed_us), LIMITS["SERVO_SPEED_MIN"],
           LIMITS["SERVO_SPEED_MAX"])
    pct = (LIMITS["JAW_PCT_MIN"], LIMITS["JAW_PCT_MAX"])
    bounds("JAWS C{} T70 G12 E50", *pct)
    bounds("JAWS C50 T{} G12 E50", *pct)
    # The gap's bounds with the smallest cube (whose layer reaches 4.1 mm: the least gap it takes is 5),
    # the cube's with the largest gap.
    gap_min = LIMITS["JAW_OPEN_GAP_MM_MIN"]
    cases.append((f"JAWS C50 T70 G{gap_min - 1} E{LIMITS['CUBE_MM_MIN']}", False))
    cases.append((f"JAWS C50 T70 G{LIMITS['JAW_OPEN_GAP_MM_MAX'] + 1} E{LIMITS['CUBE_MM_MIN']}", False))
    cases.append((f"JAWS C50 T70 G{LIMITS['JAW_OPEN_GAP_MM_MAX']} E{LIMITS['CUBE_MM_MIN']}", True))
    bounds("JAWS C50 T70 G%d E{}" % LIMITS["JAW_OPEN_GAP_MM_MAX"], LIMITS["CUBE_MM_MIN"], LIMITS["CUBE_MM_MAX"])
    return cases


def test_settings_bounds(device):
    board = device.connect()
    for command, ok in _bounded_commands():
        if ok:
            board.ok(command)
        else:
            assert board.error(command) == E.OUT_OF_RANGE, command
    board.ok(DEFAULT_MOTION_COMMAND)
    board.ok(DEFAULT_SERVO_COMMAND)
    board.ok(DEFAULT_JAWS_COMMAND)


def test_turn_and_dwell_bounds(device):
    board = device.connect()
    board.ok("MOTORS ON")
    board.done(board.ok("GRIP RL"))
    limit = LIMITS["TURN_ANGLE_MAX"]
    for angle in (limit + 1, -limit - 1):
        assert board.error(f"TURN R{angle}") == E.OUT_OF_RANGE
    board.done(board.ok(f"TURN R{limit}"))
    board.done(board.ok(f"TURN R-{limit}"))
    assert board.error(f"DWELL {LIMITS['DWELL_MS_MIN'] - 1}") == E.OUT_OF_RANGE
    assert board.error(f"DWELL {LIMITS['DWELL_MS_MAX'] + 1}") == E.OUT_OF_RANGE
    board.done(board.ok(f"DWELL {LIMITS['DWELL_MS_MIN']}"))
    board.ok(f"DWELL {LIMITS['DWELL_MS_MAX']}")
    board.send_raw(P.RT_ESTOP)  # do not wait a minute
    assert board.wait_for(P.Alarm).code == P.AlarmCode.ESTOP_BYTE
    board.ok("RESET")


# ---------------------------------------------------------------------------
# Exactly once: duplicates, gaps, resends


def test_resent_seq_is_acknowledged_not_repeated(device):
    board = device.connect()
    board.ok("MOTORS ON")
    mark = device.mark()
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
    assert board.answer(bad)[0] == P.Err(bad, E.NOT_HOLDING)
    board.send("TURN F90", seq=bad)
    assert board.answer(bad)[0] == P.Err(bad, E.NOT_HOLDING)
    board.done(board.ok("DWELL 30"))
    assert not [e for e in board.events if isinstance(e, P.Done)], "a duplicate ran again"
    device.assert_moved_since(mark, {"R": MOTION.steps_per_rev // 4, "L": 0, "F": 0, "B": 0})


def test_bad_checksum_asks_for_a_resend(device):
    board = device.connect()
    seq = board.seq + 1
    line = P.command_line(seq, "HELLO")
    digits = P.CRC_HEX_DIGITS
    zeros = b"0" * digits
    corrupt = line[:-digits - 1] + (zeros if line[-digits - 1:-1] != zeros else zeros[:-1] + b"1") + b"\n"
    board.send_raw(corrupt)
    assert board.read_reply() == P.Resend(seq)
    board.send_raw(b"N%d HELLO*zz\n" % seq)
    assert board.read_reply() == P.Err(None, E.BAD_CHECKSUM)
    board.send_raw(b"N%d HELLO\n" % seq)
    assert board.read_reply() == P.Err(None, E.BAD_FORMAT)
    board.send_raw(P.frame("N%d HELLO" % seq).replace(b" ", b"  "))
    assert board.read_reply() == P.Resend(seq)  # the checksum no longer matches
    board.send_raw(b"X" * 60 + b"\n")
    assert board.read_reply() == P.Err(None, E.LINE_TOO_LONG)
    board.send_raw(b"\n\r\n")  # empty lines are ignored
    assert board.request("HELLO")[0] == P.Ok(seq)


def test_pair_errors_that_xor_missed_get_a_resend_not_a_move(device):
    # Two identical bytes doubled / dropped in one line: XOR (protocol 1) accepted
    # these; the CRC line check makes the firmware ask again instead.
    board = device.connect()
    seq = board.seq + 1
    for good, damaged in [("SERVO O1000 C2000 G95", b"SERVO O10000 C20000 G95"),
                          ("TURN R-90 L-90", b"TURN R90 L90")]:
        line = P.command_line(seq, good)
        board.send_raw(b"N%d %s" % (seq, damaged) + line[-(P.CRC_HEX_DIGITS + 2):])
        assert board.read_reply() == P.Resend(seq)
    assert board.request("HELLO")[0] == P.Ok(seq)  # the seq was not consumed


def test_fuzzed_input_never_crashes_or_moves(device):
    """Hundreds of bad lines: each gets one answer, nothing moves, HELLO still works."""
    board = device.connect()
    mark = device.mark()
    rng = random.Random(1234)
    garbage_bytes = [b for b in range(256) if b not in (0x0A, 0x21, 0x3F)]  # no newline, `!`, `?`

    def random_line() -> bytes:
        kind = rng.randrange(6)
        if kind == 0:  # binary garbage
            data = bytes(rng.choice(garbage_bytes) for _ in range(rng.randint(1, 40)))
            if not data.replace(b"\r", b""):
                data += b"x"
            return data + b"\n"
        if kind == 1:  # overlong
            return bytes(rng.choice(garbage_bytes) for _ in range(rng.randint(P.MAX_LINE, 120))) + b"\n"
        if kind == 2:  # bad checksum on a good command
            line = P.command_line(board.seq + 1, "TURN R90")
            digits = P.CRC_HEX_DIGITS
            return line[:-digits - 1] + b"%0*X\n" % (digits, int(line[-digits - 1:-1], 16) ^ rng.randint(1, 255))
        # well framed, right seq, bad command
        command = rng.choice([
            "FOO", "TURN R45", "TURN Q90", "TURN R90", "TURN R-0", "TURN R99999999999", "DWELL 0", "DWELL -5",
            "DWELL 99999", "MOTION S3 V1 A1", "MOTION S400 V2500 A999999", "SERVO O1 C2 G3", "GRIP XY", "GRIP",
            "TURN R90 L90 F90", "HELLO HELLO", "turn r90", "N5", "DWELL", "TURN  R90", "SERVO O1000 C2000",
        ])
        board.seq += 1
        return P.frame(f"N{board.seq} {command}")

    rx = board.identity.rx_bytes
    answers = 0
    window = []  # bytes of lines not yet answered
    lines = [random_line() for _ in range(device.fuzz_lines)]
    for data in lines:
        while window and sum(window) + len(data) > rx:
            reply = board.read_reply()
            assert isinstance(reply, (P.Err, P.Resend, P.Ok)), reply
            assert not (isinstance(reply, P.Ok) and not reply.dup), f"a fuzzed line was accepted: {reply}"
            window.pop(0)
            answers += 1
        board.send_raw(data)
        window.append(min(len(data), rx))
    while window:
        reply = board.read_reply()
        assert isinstance(reply, (P.Err, P.Resend, P.Ok)) and not (isinstance(reply, P.Ok) and not reply.dup)
        window.pop(0)
        answers += 1
    assert answers == len(lines)
    seq = board.send("HELLO")
    assert isinstance(board.read_reply(), P.Identity)
    assert board.read_reply() == P.Ok(seq)
    device.assert_moved_since(mark, {"R": 0, "L": 0, "F": 0, "B": 0}, grippers=False)


# ---------------------------------------------------------------------------
# Flow control and real-time bytes


def test_queue_full_and_realtime_status(device):
    board = device.connect()
    board.done(board.ok("GRIP RL"))
    for _ in range(board.identity.queue_depth):
        board.ok("DWELL 1000")
    assert board.error("DWELL 1") == E.QUEUE_FULL
    board.send_raw(P.RT_STATUS)
    status = board.wait_for(P.Status)
    assert status.state == P.State.RUN and status.queued == board.identity.queue_depth
    board.send_raw(P.RT_ESTOP)  # end the dwells
    assert board.wait_for(P.Alarm).code == P.AlarmCode.ESTOP_BYTE


def test_a_full_rx_window_of_lines_is_answered_in_order(device):
    board = device.connect()
    rx = board.identity.rx_bytes
    lines, seqs = b"", []
    while True:
        line = P.command_line(board.seq + 1, "STATUS")
        if len(lines) + len(line) > rx:
            break
        board.seq += 1
        lines += line
        seqs.append(board.seq)
    board.send_raw(lines)  # all at once: they fit the receive ring
    for seq in seqs:
        reply, before = board.answer(seq)
        assert reply == P.Ok(seq) and isinstance(before[-1], P.Status) and before[-1].accepted == seq


def test_realtime_bytes_inside_a_line(device):
    board = device.connect()
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
# The alarm latch


def test_estop_byte_latches_until_reset(device):
    board = device.connect()
    seqs = start_long_turns(board)
    board.send_raw(P.RT_ESTOP)
    alarm = board.wait_for(P.Alarm)
    assert alarm.code == P.AlarmCode.ESTOP_BYTE
    bound_us = 1e6 * MOTION.max_speed_steps_per_s / MOTION.accel_steps_per_s2  # a stop from full speed
    assert 0 < alarm.stop_us <= bound_us + 1000
    assert board.status() == P.Status(P.State.ALARM, 0, 0, seqs[0] - 1, board.seq, P.AlarmCode.ESTOP_BYTE)
    board.send_raw(P.RT_ESTOP)  # a second `!` while latched: no second alarm line
    # Nothing that moves anything while latched: settings too (a SERVO line moves closed grippers).
    for command in ("GRIP FB", "TURN R90", "DWELL 5", DEFAULT_MOTION_COMMAND, DEFAULT_SERVO_COMMAND):
        assert board.error(command) == E.ALARM_ACTIVE, command
    assert board.status().state == P.State.ALARM
    assert not [e for e in board.events if isinstance(e, (P.Alarm, P.Done))], board.events
    board.ok("RESET")
    assert board.status() == P.Status(P.State.IDLE, 0, 0, seqs[0] - 1, board.seq, P.AlarmCode.NONE)
    board.done(board.ok("TURN R90"))  # RL still holds: the grippers did not move


def test_estop_input_latches_until_released_and_reset(device):
    device.require_inputs()
    board = device.connect()
    seqs = start_long_turns(board)
    device.press_estop()
    alarm = board.wait_for(P.Alarm)
    assert alarm.code == P.AlarmCode.ESTOP_INPUT
    assert alarm.stop_us <= 50, "the input must stop the steppers within microseconds"
    assert board.status() == P.Status(P.State.ALARM, 0, 0, seqs[0] - 1, board.seq, P.AlarmCode.ESTOP_INPUT)
    assert board.error("TURN R90") == E.ALARM_ACTIVE
    assert board.error("RESET") == E.ALARM_ACTIVE, "RESET while the button is held must fail"
    device.release_estop()
    assert board.error("GRIP FB") == E.ALARM_ACTIVE, "releasing the button must not clear the alarm"
    assert not [d for d in board.events if isinstance(d, P.Done) and d.seq in seqs]
    board.ok("RESET")
    assert board.status().state == P.State.IDLE
    board.done(board.ok("TURN R90"))  # RL still holds: the servos never moved


def test_estop_input_after_a_stop_byte_makes_the_alarm_estop_input(device):
    # A host may clear an ESTOP_BYTE that line noise made (robot/link/driver.py _noise_stop); a person's
    # press after it must show, even when the button is already released again when the host asks.
    device.require_inputs()
    board = device.connect()
    board.send_raw(P.RT_ESTOP)
    assert board.wait_for(P.Alarm).code == P.AlarmCode.ESTOP_BYTE
    device.press_estop()
    assert board.wait_for(P.Alarm).code == P.AlarmCode.ESTOP_INPUT  # reported again
    device.release_estop()
    assert board.status().alarm == P.AlarmCode.ESTOP_INPUT
    board.ok("RESET")
    assert board.status().state == P.State.IDLE


def test_reset_mid_move_reports_last_and_cut(device):
    device.require_inputs()
    board = device.connect()
    seqs = start_long_turns(board)
    grip = seqs[0] - 1
    device.reset()
    banner = board.read_banner()
    assert banner.last == grip and banner.cut == seqs[0]
    # How far the cut turn got: steps of its longest arm (the firmware counts them as it steps).
    assert banner.cut_total == LONG_TURN_STEPS and banner.cut_done is not None
    assert 0 <= banner.cut_done < banner.cut_total
    assert board.read_reply() == P.Alarm(P.AlarmCode.RESET_DURING_MOTION, 0)
    board.seq = banner.last + 10  # after a reset any seq above `last` is accepted
    assert board.status().state == P.State.ALARM
    assert board.error("GRIP RL") == E.ALARM_ACTIVE
    # A second reset still reports the cut (until RESET clears it).
    device.reset()
    second = board.read_banner()
    assert (second.cut, second.cut_done, second.cut_total) == (seqs[0], banner.cut_done, banner.cut_total)
    assert second.boots == banner.boots + 1  # every reset is counted, banner or not
    assert board.read_reply() == P.Alarm(P.AlarmCode.RESET_DURING_MOTION, 0)
    board.seq = banner.last + 20
    board.ok("RESET")
    seq = board.send("HELLO")
    ident = board.read_reply()
    assert (ident.last, ident.cut, ident.cut_done, ident.cut_total) == (grip, 0, 0, 0)
    assert board.read_reply() == P.Ok(seq)


def test_reopening_the_port_resets_and_keeps_last(device):
    board = device.connect()
    board.done(board.ok("GRIP RL"))
    last = board.ok("DWELL 5")
    board.done(last)
    board.close()
    again = device.connect()  # the DTR reset: a new banner
    assert (again.identity.last, again.identity.cut) == (last, 0)
    assert again.identity.boots == board.identity.boots + 1
    assert again.status().state == P.State.IDLE
    # Settings, drivers and grips are power-up again: drivers off, nobody holds.
    assert again.error("TURN R90") == E.MOTORS_OFF
    again.ok("MOTORS ON")
    assert again.error("TURN R90") == E.NOT_HOLDING


def test_time_names_the_duration_of_recent_actions_across_a_reset(device):
    board = device.connect()
    grip = board.done(board.ok("GRIP RL"))
    dwell = board.done(board.ok("DWELL 30"))
    for action in (grip, dwell):
        reply, before = board.request(f"TIME {action.seq}")
        assert reply == P.Ok(board.seq) and before == [P.Time(action.seq, action.ms)]
    _, before = board.request(f"TIME {board.seq}")  # an immediate command, not an action
    assert before == [P.Time(board.seq - 1, None)]
    assert board.error("TIME 0") == E.OUT_OF_RANGE
    assert board.error("TIME 1000000000") == E.OUT_OF_RANGE  # nine digits at most
    assert board.error("TIME x") == E.BAD_ARGUMENT
    assert board.error("TIME") == E.BAD_ARGUMENT
    board.close()
    again = device.connect()  # the DTR reset: the durations are kept (.noinit RAM)
    _, before = again.request(f"TIME {dwell.seq}")
    assert before == [P.Time(dwell.seq, dwell.ms)]
    # Only the last TIME_SLOTS completed actions are kept.
    for _ in range(LIMITS["TIME_SLOTS"] - 1):
        again.done(again.ok("DWELL 1"))
    _, before = again.request(f"TIME {dwell.seq}")
    assert before == [P.Time(dwell.seq, dwell.ms)]
    again.done(again.ok("DWELL 1"))
    _, before = again.request(f"TIME {dwell.seq}")
    assert before == [P.Time(dwell.seq, None)]


def test_start_button_is_reported_once_per_press(device):
    device.require_inputs()
    board = device.connect()
    device.press_start()
    board.done(board.ok("DWELL 40"))  # the press must last the 20 ms debounce
    device.release_start()
    board.done(board.ok("DWELL 40"))
    assert [e for e in board.events if isinstance(e, P.Button)] == [P.Button("start")]


# ---------------------------------------------------------------------------
# Bring-up: drivers, positions, JOG, OPEN/CLOSE, HOME, per-arm settings


def where(board) -> P.Where:
    answer, before = board.request("WHERE")
    assert before, f"WHERE: no where line before the answer {answer}"
    reply = before[-1]
    assert isinstance(reply, P.Where), reply
    board.events.remove(reply)
    return reply


UNKNOWN = {arm: None for arm in "RLFB"}


def test_drivers_are_off_until_the_host_switches_them_on(device):
    board = device.connect()
    assert where(board) == P.Where(False, UNKNOWN, UNKNOWN, False), "power-up: drivers off, nothing known"
    board.ok("GRIP RL")
    for command in ("TURN R90", "JOG R 10", "HOME F", "ZERO RLFB"):
        assert board.error(command) == E.MOTORS_OFF, command
    board.done(board.seq - 4)  # the GRIP
    for command in ("MOTORS", "MOTORS on", "MOTORS ON OFF"):
        assert board.error(command) == E.BAD_ARGUMENT, command
    board.ok("MOTORS ON")
    assert where(board).positions == UNKNOWN, "switching the drivers on does not tell where the arms are"
    board.ok("ZERO RLFB")  # the host's "arms are straight"
    state = where(board)
    assert state.motors_on and state.positions == {arm: 0 for arm in "RLFB"}
    assert state.grippers == {"R": "closed", "L": "closed", "F": "open", "B": "open"}
    dwell = board.ok("DWELL 300")
    assert board.error("MOTORS OFF") == E.BUSY and board.error("ZERO R") == E.BUSY
    board.done(dwell)
    board.ok("MOTORS OFF")
    assert where(board) == P.Where(False, UNKNOWN, state.grippers, False), "off forgets every position"
    board.ok("MOTORS ON")
    assert where(board).positions == UNKNOWN


def test_jog_turns_one_arm_only_in_the_air_or_with_its_pair_holding(device):
    board = device.connect()
    board.ok("MOTORS ON")
    board.ok("ZERO RLFB")
    mark = device.mark()
    assert board.error("JOG R 10") == E.ARM_BLOCKED, "a gripper never commanded may be closed on the cube"
    board.ok("OPEN R")
    board.done(board.ok("JOG R 10"))  # in the air
    board.done(board.ok("JOG R -30"))
    board.ok("CLOSE R")
    assert board.error("JOG R 10") == E.ARM_BLOCKED, "R closed, its pair does not hold (L, F, B unknown)"
    board.ok("GRIP RL")  # RL hold, FB open
    board.ok("JOG R 5")  # its pair holds, the other is open: turns the layer
    board.ok("JOG F 25")  # F is open: in the air
    board.ok("CLOSE F")  # now F holds too: nothing of RL or F may turn
    for command in ("JOG R 5", "JOG L -5", "JOG F 5", "TURN R90", "HOME F"):
        assert board.error(command) == (E.NOT_HOLDING if command.startswith("TURN") else E.ARM_BLOCKED), command
    board.done(board.ok("JOG B -7"))  # B is still open
    for command, code in [("JOG R 0", E.BAD_ARGUMENT), ("JOG R 6401", E.OUT_OF_RANGE), ("JOG R -6401", E.OUT_OF_RANGE),
                          ("JOG X 5", E.BAD_ARGUMENT), ("JOG RL 5", E.BAD_ARGUMENT), ("JOG R", E.BAD_ARGUMENT),
                          ("JOG R 5x", E.BAD_ARGUMENT), ("OPEN RR", E.BAD_ARGUMENT), ("OPEN X", E.BAD_ARGUMENT),
                          ("OPEN", E.BAD_ARGUMENT), ("CLOSE RLFBR", E.BAD_ARGUMENT), ("HOME RL", E.BAD_ARGUMENT),
                          ("HOME", E.BAD_ARGUMENT), ("ZERO Q", E.BAD_ARGUMENT)]:
        assert board.error(command) == code, command
    device.assert_moved_since(mark, {"R": -15, "L": 0, "F": 25, "B": -7})
    state = where(board)
    steps_per_rev = MOTION.steps_per_rev
    assert state.positions == {"R": steps_per_rev - 15, "L": 0, "F": 25, "B": steps_per_rev - 7}
    assert state.grippers == {"R": "closed", "L": "closed", "F": "closed", "B": "open"}
    assert not state.straight("R", steps_per_rev) and state.straight("L", steps_per_rev)


def test_nothing_that_moves_is_accepted_while_latched_but_motors_off_is(device):
    board = device.connect()
    board.ok("MOTORS ON")
    board.ok("OPEN RLFB")
    board.send_raw(P.RT_ESTOP)
    assert board.wait_for(P.Alarm).code == P.AlarmCode.ESTOP_BYTE
    for command in ("JOG R 5", "OPEN R", "CLOSE RL", "HOME R", "ZERO R", "MOTORS ON", "ARM R I1 Z0",
                    "GRIPPER R O1100 C1900", "SETUP I10 H0"):
        assert board.error(command) == E.ALARM_ACTIVE, command
    board.ok("MOTORS OFF")  # letting go moves nothing
    assert not where(board).motors_on
    board.ok("RESET")
    board.ok("MOTORS ON")


def test_per_arm_settings_are_checked_and_forget_what_they_change(device):
    board = device.connect()
    for command, code in [("ARM R I2 Z0", E.OUT_OF_RANGE), ("ARM R I1 Z3201", E.OUT_OF_RANGE),
                          ("ARM R I1 Z-3201", E.OUT_OF_RANGE), ("ARM X I0 Z0", E.BAD_ARGUMENT),
                          ("ARM R I0", E.BAD_ARGUMENT), ("ARM R Z0 Z0", E.BAD_ARGUMENT), ("ARM I0 Z0", E.BAD_ARGUMENT),
                          ("GRIPPER R O499 C2000", E.OUT_OF_RANGE), ("GRIPPER R O1000 C2501", E.OUT_OF_RANGE),
                          ("GRIPPER RL O1000 C2000", E.BAD_ARGUMENT), ("SETUP I3601 H0", E.OUT_OF_RANGE),
                          ("SETUP I0 H2", E.OUT_OF_RANGE), ("SETUP I0", E.BAD_ARGUMENT), ("WHERE R", E.BAD_ARGUMENT)]:
        assert board.error(command) == code, command
    for command in ("ARM R I0 Z-3200", "ARM B I1 Z3200", "GRIPPER F O500 C2500", "SETUP I0 H1", "SETUP I3600 H0"):
        board.ok(command)
    board.ok("MOTORS ON")
    board.ok("ZERO RLFB")
    board.ok("ARM B I1 Z0")  # unchanged direction: B's position stays known
    board.ok("ARM R I1 Z0")  # R's direction flips: its count would run backwards
    assert where(board).positions == {"R": None, "L": 0, "F": 0, "B": 0}
    board.ok(f"MOTION S{2 * MOTION.steps_per_rev} V{MOTION.max_speed_steps_per_s} A{MOTION.accel_steps_per_s2}")
    assert where(board).positions == UNKNOWN, "another steps_per_rev: a step is another angle"
    dwell = board.ok("DWELL 200")
    for command in ("ARM R I0 Z0", "GRIPPER R O1000 C2000", "SETUP I300 H0"):
        assert board.error(command) == E.BUSY, command
    board.done(dwell)


def test_drivers_switch_off_after_the_idle_time(device):
    board = device.connect()
    board.ok("SETUP I1 H0")
    board.ok("MOTORS ON")
    board.ok("ZERO RL")
    board.ok("DWELL 1500")  # longer than the idle time: queued actions keep the drivers on
    board.done(board.ok("DWELL 10"))
    assert where(board).motors_on, "the idle time counts from the end of the last action"
    deadline = time.monotonic() + 10
    while (state := where(board)).motors_on and time.monotonic() < deadline:
        pass  # asking WHERE is not an action: it does not restart the idle time
    assert not state.motors_on and state.positions == UNKNOWN


def test_homing_finds_the_sensor_edge_and_applies_the_zero_offset(device):
    device.require_inputs()
    board = device.connect()
    device.set_sensor("R", 150, 20)  # the sensor switches on 150 steps (positively) from where R is now
    start = device.arm_position("R")
    board.ok("ARM R I0 Z-140")
    board.ok("MOTORS ON")
    board.ok("OPEN R")
    board.done(board.ok("HOME R"))
    assert device.arm_position("R") - start == 150 - 140, "zero = the sensor's edge + the zero offset"
    state = where(board)
    assert state.positions["R"] == 0 and state.positions["L"] is None and not state.sensor_active
    # Homing again from the zero (the sensor is 140 steps ahead) ends in the same place.
    board.done(board.ok("JOG R 145"))  # into the sensor's window: homing backs out first
    assert where(board).sensor_active
    board.done(board.ok("HOME R"))
    assert device.arm_position("R") - start == 10 and where(board).positions["R"] == 0


@pytest.mark.parametrize("fault, alarm", [("missing", P.AlarmCode.HOME_NOT_FOUND), ("stuck", P.AlarmCode.HOME_STUCK)])
def test_homing_without_a_working_sensor_latches_a_named_alarm(device, fault, alarm):
    device.require_inputs()
    board = device.connect()
    if fault == "stuck":
        device.stick_sensor("L")  # another arm's sensor on the shared input, never releasing
    start = device.arm_position("R")
    board.ok("MOTORS ON")
    board.ok("OPEN R")
    home = board.ok("HOME R")
    board.ok("DWELL 10")  # flushed by the alarm
    assert board.wait_for(P.Alarm) == P.Alarm(alarm, 0)
    turned = device.arm_position("R") - start
    quarter = MOTION.steps_per_rev // 4
    # missing: 1.25 turns seeking; stuck: half a turn backing off, never released.
    assert turned == (5 * quarter if fault == "missing" else -2 * quarter), turned
    assert not [e for e in board.events if isinstance(e, P.Done) and e.seq >= home]
    status = board.status()
    assert status.state == P.State.ALARM and status.queued == 0 and status.alarm == alarm
    assert where(board).positions["R"] is None
    assert board.error("JOG R 5") == E.ALARM_ACTIVE
    board.ok("RESET")
