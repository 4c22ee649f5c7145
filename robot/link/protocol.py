"""The wire protocol (docs/protocol.md, version 6): the one Python source of its facts.

Constants, error and alarm codes (read from the firmware's headers), framing (`PAYLOAD*CCCCCCCC\\n`, CRC-32C
of the payload bytes in upper-case hex), command builders and parsers for every line
either side sends.  The error and alarm codes are read at import from
firmware/cube_robot/protocol.h (robot/firmware_header.py); the other constants
are mirrored there and tests/test_link_protocol.py checks that the two agree.

Nothing here does I/O: the driver (driver.py) and the mock firmware
(robot/sim/mock_firmware.py) both build on these functions.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Callable

from ..config_types import MotionConfig
from ..plan import normalise_angle
from .. import firmware_header

PROTOCOL_VERSION = 6  # 6: PUZZLE, TILT, the 3x3x3 rules, `pz` in the id line; 5: SERVO speed, JAWS, the regrip's overlap; 4: id line `part`/`boots`, TIME; 3: CRC-32C (2: CRC-8, 1: XOR)
FIRMWARE_NAME = "cube-robot-fw"
BAUD = 115200  # defaults.h SERIAL_BAUD (config link.baud's default reads it there)
MAX_LINE = 54  # longest command line, including the newline (both sides reject longer)
MAX_REPLY = 127  # longest line the firmware sends, including the newline (id/status lines exceed MAX_LINE)
MAX_SEQ = 2147483647

RT_ESTOP = b"!"  # real-time byte: bounded deceleration, flush queue, latch ESTOP_BYTE
RT_STATUS = b"?"  # real-time byte: a status line at once
REALTIME_BYTES = RT_ESTOP + RT_STATUS

# Bytes a host command line may contain (before the newline).
COMMAND_CHARSET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 -*")


# Error and alarm codes: numbers, names and texts come from the firmware's one list
# (the X-macros ERROR_CODES / ALARM_CODES in firmware/cube_robot/protocol.h).
# `err <seq> <CODE>`: why a command was rejected; `alarm <CODE> <stop_us>`: why an
# alarm latched.  Both are sent by name.  The members are spelled out so that a type
# checker sees them; _same_codes holds them to the firmware's list at import.
class ErrorCode(enum.IntEnum):
    NONE = 0
    BAD_CHECKSUM = 1
    LINE_TOO_LONG = 2
    BAD_FORMAT = 3
    UNKNOWN_COMMAND = 4
    BAD_ARGUMENT = 5
    OUT_OF_RANGE = 6
    NOT_HOLDING = 7
    ALARM_ACTIVE = 8
    BUSY = 9
    QUEUE_FULL = 10
    MOTORS_OFF = 11
    ARM_BLOCKED = 12
    JAWS_IN_REACH = 13
    PUZZLE_MODE = 14
    OTHER_PAIR_OPEN = 15
    GRIPPER_ACROSS = 16
    OTHER_PAIR_CLOSED = 17
    NOT_SQUARE = 18
    POSITION_UNKNOWN = 19


class AlarmCode(enum.IntEnum):
    NONE = 0
    ESTOP_INPUT = 1
    ESTOP_BYTE = 2
    RESET_DURING_MOTION = 3
    HOME_NOT_FOUND = 4
    HOME_STUCK = 5


def _same_codes(codes: type[enum.IntEnum], listed: tuple[firmware_header.Code, ...], macro: str) -> None:
    ours = {c.name: c.value for c in codes}
    theirs = {c.name: c.number for c in listed}
    if ours != theirs:
        raise RuntimeError(f"robot/link/protocol.py {codes.__name__} {ours} differs from {macro} in "
                           f"firmware/cube_robot/protocol.h {theirs}: update the class to the firmware's list")


_same_codes(ErrorCode, firmware_header.error_codes(), "ERROR_CODES")
_same_codes(AlarmCode, firmware_header.alarm_codes(), "ALARM_CODES")

ERROR_TEXT = {ErrorCode(c.number): c.text.replace("MAX_LINE", str(MAX_LINE))
              for c in firmware_header.error_codes() if c.number}
ALARM_TEXT = {AlarmCode(c.number): c.text for c in firmware_header.alarm_codes() if c.number}


class State(str, enum.Enum):
    IDLE = "IDLE"
    RUN = "RUN"
    ALARM = "ALARM"


QUEUED_COMMANDS = ("GRIP", "TURN", "TILT", "DWELL", "JOG", "OPEN", "CLOSE", "HOME")
IMMEDIATE_COMMANDS = ("HELLO", "STATUS", "MOTION", "SERVO", "JAWS", "RESET",
                      "MOTORS", "WHERE", "ZERO", "ARM", "GRIPPER", "SETUP", "PUZZLE")
PUZZLES = ("2x2x2", "3x3x3")  # PUZZLE 2 / PUZZLE 3; the id line's `pz 2` / `pz 3`
PUZZLE_OF_PZ = {puzzle[0]: puzzle for puzzle in PUZZLES}
GRIP_PAIRS = tuple(firmware_header.ARM_PAIRS)  # ("RL", "FB")
ARMS = "".join(arm for arms in firmware_header.ARM_PAIRS.values() for arm in arms)  # "RLFB"
_LIMITS = firmware_header.limits()  # firmware/cube_robot/defaults.h
TURN_ANGLE_MAX = _LIMITS["TURN_ANGLE_MAX"]
DWELL_MS_MIN, DWELL_MS_MAX = _LIMITS["DWELL_MS_MIN"], _LIMITS["DWELL_MS_MAX"]
TIME_SLOTS = _LIMITS["TIME_SLOTS"]  # the board remembers the durations of its last this many actions (TIME)


# ---------------------------------------------------------------------------
# Framing


class FrameError(ValueError):
    """A received line that is not `PAYLOAD*CCCCCCCC`, or whose checksum does not match."""


# The line check: CRC-32C (Castagnoli: reflected poly 0x82F63B78, init and xorout
# 0xFFFFFFFF), eight upper-case hex digits.  Not XOR (blind to pair drops/duplicates),
# not CRC-8 (`done 5 130` arrived as `done 5 13` with a valid CRC-8) and not a 16-bit
# CRC: at the fault proxy's rates every 16-bit polynomial tried let a few corrupted lines
# in a million through (a byte appended or dropped needs only one matching 16-bit value).
# docs/protocol.md, Framing; tests/test_link_crc_monte_carlo.py.
CRC32_POLY = 0x82F63B78
CRC32_INIT = 0xFFFFFFFF
CRC32_XOROUT = 0xFFFFFFFF
CRC32_CHECK = 0xE3069283  # checksum(b"123456789"), the catalogue check value
CRC_HEX_DIGITS = 8


def _crc32_table() -> tuple[int, ...]:
    table = []
    for value in range(256):
        for _ in range(8):
            value = (value >> 1) ^ CRC32_POLY if value & 1 else value >> 1
        table.append(value)
    return tuple(table)


_CRC32_TABLE = _crc32_table()


def checksum(payload: bytes) -> int:
    """The `CCCCCCCC` of a line: CRC-32C of its payload bytes."""
    crc = CRC32_INIT
    for byte in payload:
        crc = (crc >> 8) ^ _CRC32_TABLE[(crc ^ byte) & 0xFF]
    return crc ^ CRC32_XOROUT


def frame(payload: str) -> bytes:
    """`payload` -> b'payload*CCCCCCCC\\n'."""
    data = payload.encode("ascii")
    return data + b"*%08X\n" % checksum(data)


_FRAMED = re.compile(rb"([^*]*)\*([0-9A-F]{8})")


def unframe(line: bytes) -> str:
    """A received line (without the newline; `\\r` already removed) -> its payload.

    Raises FrameError naming the problem when the line is malformed or the checksum is wrong.
    """
    match = _FRAMED.fullmatch(line)
    if not match:
        raise FrameError(f"not a framed line (PAYLOAD*CCCCCCCC): {line[:60]!r}")
    payload, given = match.group(1), int(match.group(2), 16)
    expected = checksum(payload)
    if given != expected:
        raise FrameError(f"checksum {given:08X} != {expected:08X} in {line[:60]!r}")
    try:
        return payload.decode("ascii")
    except UnicodeDecodeError:
        raise FrameError(f"non-ASCII bytes in {line[:60]!r}") from None


# ---------------------------------------------------------------------------
# Host commands


def command_line(seq: int, command: str) -> bytes:
    """The framed line for `N<seq> <command>`; checks length and character set."""
    if not 1 <= seq <= MAX_SEQ:
        raise ValueError(f"sequence number {seq} outside 1..{MAX_SEQ}")
    line = frame(f"N{seq} {command}")
    if len(line) > MAX_LINE:
        raise ValueError(f"command line {line!r} is {len(line)} bytes; the limit is {MAX_LINE}")
    bad = set(line[:-1]) - COMMAND_CHARSET
    if bad:
        raise ValueError(f"command {command!r} contains bytes the firmware rejects: {bytes(sorted(bad))!r}")
    return line


def grip_command(pair: str) -> str:
    if pair not in GRIP_PAIRS:
        raise ValueError(f"GRIP takes a pair {'/'.join(GRIP_PAIRS)}, not {pair!r}")
    return f"GRIP {pair}"


def turn_command(arms: dict) -> str:
    """{'R': 90, 'L': -90} -> 'TURN R90 L-90' (angles normalised to -90, 90, 180)."""
    parts = []
    for arm, angle in arms.items():
        if arm not in ARMS:
            raise ValueError(f"no arm {arm!r} (arms: {', '.join(ARMS)})")
        if angle % 90 or angle % 360 == 0:
            raise ValueError(f"arm {arm}: angle {angle} is not a non-zero multiple of 90")
        parts.append(f"{arm}{normalise_angle(angle)}")
    if not parts:
        raise ValueError("TURN needs at least one arm")
    return "TURN " + " ".join(parts)


def tilt_command(arms: dict) -> str:
    """{'F': 90, 'B': -90} -> 'TILT F90 B-90': both arms of one pair the same way in space (3x3x3 mode)."""
    pairs = [arms_of for arms_of in firmware_header.ARM_PAIRS.values() if set(arms) == set(arms_of)]
    (first, a), (second, b) = list(arms.items()) if pairs else [("", 1), ("", 1)]
    if not pairs or a % 90 or normalise_angle(a) in (0, -180) or normalise_angle(a + b) != 0:
        raise ValueError(f"TILT takes both arms of one pair turning opposite ways, not {arms!r}")
    # The board wants opposite angles: a half turn is 180 and -180 (the same place, not the same motion).
    return f"TILT {first}{normalise_angle(a)} {second}{-normalise_angle(a)}"


def known_puzzle(puzzle: str) -> str:
    if puzzle not in PUZZLES:
        raise ValueError(f"the board knows the puzzles {', '.join(PUZZLES)}, not {puzzle!r}")
    return puzzle


def puzzle_command(puzzle: str) -> str:
    """'3x3x3' -> 'PUZZLE 3': the board's rules for that puzzle (docs/protocol.md)."""
    return f"PUZZLE {known_puzzle(puzzle)[0]}"


def plan3_command(op: dict) -> str:
    """One op of a robot/plan3.py plan -> its command (the board in 3x3x3 mode):
    open/close -> OPEN/CLOSE, turn -> TURN, tilt -> TILT."""
    kind = op.get("op")
    if kind in ("open", "close"):
        return grippers_command(op["arms"], kind == "close")
    if kind == "turn":
        return turn_command(op["arms"])
    if kind == "tilt":
        return tilt_command(op["arms"])
    raise ValueError(f"not a 3x3x3 plan op: {op!r}")


def dwell_command(ms: int) -> str:
    if not DWELL_MS_MIN <= ms <= DWELL_MS_MAX:
        raise ValueError(f"DWELL takes {DWELL_MS_MIN}..{DWELL_MS_MAX} ms, not {ms}")
    return f"DWELL {ms}"


def motion_command(motion: MotionConfig) -> str:
    """From config's `motion` section."""
    return f"MOTION S{motion.steps_per_rev} V{motion.max_speed_steps_per_s} A{motion.accel_steps_per_s2}"


def servo_speed_tenths(motion: MotionConfig) -> int:
    """The servo speed as sent: tenths of a microsecond of pulse width per ms (config keeps one decimal)."""
    return round(motion.servo_speed_us_per_ms * 10)


def servo_command(motion: MotionConfig) -> str:
    """Every gripper's widths (GRIPPER then sets each arm's own) and the servos' speed."""
    return f"SERVO O{motion.servo_open_us} C{motion.servo_closed_us} S{servo_speed_tenths(motion)}"


def jaws_command(motion: MotionConfig) -> str:
    """Where the jaws let go of and touch the cube (% of the travel), their open gap and the cube's edge (mm)."""
    return (f"JAWS C{motion.jaw_clear_pct} T{motion.jaw_contact_pct} G{motion.jaw_open_gap_mm} "
            f"E{motion.cube_mm}")


# Bring-up commands: drivers, one arm, one gripper, homing, per-arm settings.


def _arms(arms) -> str:
    text = "".join(arms)
    if not text or any(a not in ARMS for a in text) or len(set(text)) != len(text):
        raise ValueError(f"arms must be some of {ARMS}, each once, not {arms!r}")
    return text


def motors_command(on: bool) -> str:
    return "MOTORS ON" if on else "MOTORS OFF"


def jog_command(arm: str, steps: int) -> str:
    _arm(arm)
    if steps == 0 or abs(steps) > _LIMITS["JOG_STEPS_MAX"]:
        raise ValueError(f"JOG takes 1..{_LIMITS['JOG_STEPS_MAX']} steps either way, not {steps}")
    return f"JOG {arm} {steps}"


def grippers_command(arms, close: bool) -> str:
    """OPEN/CLOSE some grippers: ('R', 'L') or 'RL' -> 'CLOSE RL'."""
    return f"{'CLOSE' if close else 'OPEN'} {_arms(arms)}"


def _arm(arm: str) -> str:
    if len(arm) != 1 or arm not in ARMS:
        raise ValueError(f"no arm {arm!r} (arms: {', '.join(ARMS)})")
    return arm


def home_command(arm: str) -> str:
    return f"HOME {_arm(arm)}"


def zero_command(arms) -> str:
    return f"ZERO {_arms(arms)}"


def arm_command(arm: str, invert: bool, zero_offset: int) -> str:
    return f"ARM {_arm(arm)} I{int(bool(invert))} Z{zero_offset}"


def gripper_command(arm: str, open_us: int, closed_us: int) -> str:
    return f"GRIPPER {_arm(arm)} O{open_us} C{closed_us}"


def setup_command(idle_off_s: int, sensor_active_high: bool) -> str:
    return f"SETUP I{idle_off_s} H{int(bool(sensor_active_high))}"


def gripper_widths(motion: MotionConfig, arm: str) -> tuple[int, int]:
    """(open_us, closed_us) of one gripper: its own values, else the pair-wide ones."""
    own = motion.arms.get(arm)
    open_us = own.servo_open_us if own is not None else None
    closed_us = own.servo_closed_us if own is not None else None
    return (motion.servo_open_us if open_us is None else open_us,
            motion.servo_closed_us if closed_us is None else closed_us)


def bringup_setting_commands(motion: MotionConfig) -> list[str]:
    """The per-arm, per-gripper and driver settings of config's `motion` section, as sent at every
    connect after MOTION and SERVO (an arm the section does not name: not inverted, no offset)."""
    commands = []
    for arm in ARMS:
        own = motion.arms.get(arm)
        commands.append(arm_command(arm, own.invert if own else False, own.zero_offset_steps if own else 0))
        commands.append(gripper_command(arm, *gripper_widths(motion, arm)))
    commands.append(setup_command(motion.idle_off_s, motion.homing.sensor_active == "high"))
    return commands


def action_command(action) -> str:
    """A plan action (robot.plan.Grip / Turn) -> its command text."""
    from ..plan import Grip, Turn

    if isinstance(action, Grip):
        return grip_command(action.pair)
    if isinstance(action, Turn):
        return turn_command(action.arms)
    raise TypeError(f"not a plan action: {action!r}")


def command_action(command: str):
    """The inverse of action_command: "GRIP RL" -> Grip, "TURN R90 L-90" -> Turn; None for DWELL."""
    from ..plan import Grip, Turn

    name, *args = command.split()
    if name == "GRIP":
        return Grip(args[0])
    if name == "TURN":
        return Turn({arg[0]: int(arg[1:]) for arg in args})
    return None


_COMMAND = re.compile(r"N(\d{1,10}) ([A-Z]+)((?: [A-Za-z0-9-]+)*)")


def parse_command(payload: str) -> tuple[int, str, list[str]]:
    """'N5 TURN R90 L-90' -> (5, 'TURN', ['R90', 'L-90']); raises ValueError if malformed."""
    match = _COMMAND.fullmatch(payload)
    if not match or not 1 <= int(match.group(1)) <= MAX_SEQ:
        raise ValueError(f"not `N<seq> COMMAND [args]`: {payload!r}")
    return int(match.group(1)), match.group(2), match.group(3).split()


# ---------------------------------------------------------------------------
# Firmware replies and events


@dataclass(frozen=True)
class Ok:
    seq: int
    dup: bool = False


@dataclass(frozen=True)
class Err:
    seq: int | None  # None for `err - CODE` (input with no usable sequence number)
    code: ErrorCode


@dataclass(frozen=True)
class Resend:
    seq: int  # the next sequence number the firmware expects


@dataclass(frozen=True)
class Done:
    seq: int
    ms: int


@dataclass(frozen=True)
class Identity:
    firmware: str
    version: str
    proto: int
    board: str
    queue_depth: int
    rx_bytes: int
    last: int
    cut: int
    cut_done: int | None = 0  # parts of the cut action done (a move's steps, a GRIP's phases); None: unknown
    cut_total: int = 0  # ... of how many
    boots: int = 0  # resets since power-up (a reset whose banner was lost is still seen)
    puzzle: str = "2x2x2"  # the board's puzzle mode (`pz 2` / `pz 3`; PUZZLE sets it, a reset makes it 2x2x2)


@dataclass(frozen=True)
class Time:
    """`time <seq> <ms>`: a completed action's measured duration (None: the board no longer has it)."""
    seq: int
    ms: int | None


@dataclass(frozen=True)
class Status:
    state: State
    queued: int
    running: int
    done: int
    accepted: int
    alarm: AlarmCode


@dataclass(frozen=True)
class Alarm:
    code: AlarmCode
    stop_us: int


@dataclass(frozen=True)
class Button:
    name: str


@dataclass(frozen=True)
class Where:
    """`where ...`: the drivers, each arm's position (steps from its zero; None: not known since the
    drivers were last off), each gripper ('open', 'closed', None: never commanded) and the homing input."""
    motors_on: bool
    positions: dict
    grippers: dict
    sensor_active: bool

    def straight(self, arm: str, steps_per_rev: int) -> bool:
        position = self.positions[arm]
        return position is not None and position % (steps_per_rev // 4) == 0


_GRIP_STATE = {"O": "open", "C": "closed", "-": None}


def _where(m) -> Where:
    positions = {arm: None if value == "?" else int(value) for arm, value in zip(ARMS, m.group(2, 3, 4, 5))}
    return Where(m[1] == "ON", positions, {arm: _GRIP_STATE[c] for arm, c in zip(ARMS, m[6])}, m[7] == "1")


def format_where(where: Where) -> str:
    states = {v: k for k, v in _GRIP_STATE.items()}
    arms = " ".join(f"{arm}{'?' if where.positions[arm] is None else where.positions[arm]}" for arm in ARMS)
    grips = "".join(states[where.grippers[arm]] for arm in ARMS)
    return f"where {'ON' if where.motors_on else 'OFF'} {arms} grip {grips} home {int(where.sensor_active)}"


Reply = Ok | Err | Resend | Done | Identity | Status | Alarm | Button | Where | Time

# What is an answer to a command line (one per line received) versus an event.
LINE_ANSWERS = (Ok, Err, Resend)


class UnknownReply(ValueError):
    """A well-framed line this host does not understand."""


def _code(enum_type, text: str):
    if text.isdigit():
        return enum_type(int(text))
    return enum_type[text]


_REPLIES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], Reply]]] = [
    (re.compile(r"ok (\d+)( dup)?"), lambda m: Ok(int(m[1]), bool(m[2]))),
    (re.compile(r"err (\d+|-) ([A-Z_]+|\d+)"),
     lambda m: Err(None if m[1] == "-" else int(m[1]), _code(ErrorCode, m[2]))),
    (re.compile(r"rs (\d+)"), lambda m: Resend(int(m[1]))),
    (re.compile(r"done (\d+) (\d+)"), lambda m: Done(int(m[1]), int(m[2]))),
    # `part` and `boots` are optional so that an older firmware is still named by its `proto`.
    (re.compile(r"id (\S+) (\S+) proto (\d+) board (\S+) q (\d+) rx (\d+) last (\d+) cut (\d+)"
                r"(?: part (\d+|\?)/(\d+) boots (\d+))?(?: pz ([23]))?"),
     lambda m: Identity(m[1], m[2], int(m[3]), m[4], int(m[5]), int(m[6]), int(m[7]), int(m[8]),
                        None if m[9] == "?" else int(m[9] or 0), int(m[10] or 0), int(m[11] or 0),
                        PUZZLE_OF_PZ[m[12] or "2"])),
    (re.compile(r"time (\d+) (\d+|\?)"), lambda m: Time(int(m[1]), None if m[2] == "?" else int(m[2]))),
    (re.compile(r"status (IDLE|RUN|ALARM) q (\d+) run (\d+) done (\d+) acc (\d+) alarm ([A-Z_]+|\d+)"),
     lambda m: Status(State(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), _code(AlarmCode, m[6]))),
    (re.compile(r"alarm ([A-Z_]+|\d+) (\d+)"), lambda m: Alarm(_code(AlarmCode, m[1]), int(m[2]))),
    (re.compile(r"btn ([a-z]+)"), lambda m: Button(m[1])),
    (re.compile(r"where (ON|OFF) R(\d+|\?) L(\d+|\?) F(\d+|\?) B(\d+|\?) grip ([OC-]{4}) home ([01])"), _where),
]


def parse_reply(payload: str) -> Reply:
    for pattern, build in _REPLIES:
        match = pattern.fullmatch(payload)
        if match:
            try:
                return build(match)
            except (KeyError, ValueError):
                break  # a code name or state we do not know
    raise UnknownReply(f"unknown reply {payload!r}")


def format_reply(reply: Reply) -> str:
    """The payload text for a reply (used by the mock firmware; inverse of parse_reply)."""
    match reply:
        case Ok(seq, dup):
            return f"ok {seq}" + (" dup" if dup else "")
        case Err(seq, code):
            return f"err {'-' if seq is None else seq} {code.name}"
        case Resend(seq):
            return f"rs {seq}"
        case Done(seq, ms):
            return f"done {seq} {ms}"
        case Identity(fw, version, proto, board, q, rx, last, cut, cut_done, cut_total, boots, puzzle):
            return (f"id {fw} {version} proto {proto} board {board} q {q} rx {rx} last {last} cut {cut} "
                    f"part {'?' if cut_done is None else cut_done}/{cut_total} boots {boots} pz {puzzle[0]}")
        case Time(seq, ms):
            return f"time {seq} {'?' if ms is None else ms}"
        case Status(state, q, run, done, acc, alarm):
            return f"status {state.value} q {q} run {run} done {done} acc {acc} alarm {alarm.name}"
        case Alarm(code, stop_us):
            return f"alarm {code.name} {stop_us}"
        case Button(name):
            return f"btn {name}"
        case Where():
            return format_where(reply)
    raise TypeError(f"not a reply: {reply!r}")
