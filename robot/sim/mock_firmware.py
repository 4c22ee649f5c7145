"""A Python stand-in for the firmware, for fast unit tests of the link.

It speaks the same protocol as firmware/cube_robot (docs/protocol.md), built
from robot/link/protocol.py: the same framing, codes, queue depth and `rx`
byte window (bytes beyond the window are dropped, like the real receive
ring), real-time `!` and `?` handled as bytes arrive, `ok <seq> dup` for
repeats, `rs` for bad checksums and gaps, and `done` events timed from the
motion settings (optionally sped up with `time_scale`).

It records what a robot would have done: `executed` lists (seq, command) of
every completed action, `interrupted` the actions an e-stop or reset cut short,
so tests can assert exactly-once.  Test hooks: `reset()` (like the reset
button: banner with `last`/`cut`), `estop_input()`, `press_start()`,
`silent = True` (stops answering), `drop_connection()`.

The board holds its parts: `arms` (robot/sim/mock_arms.py MockArms: drivers,
positions, grippers, the homing mechanics) and `device` (robot/sim/serial_device.py
SerialDevice, which also has ForeignDevice, re-exported here), serving it on a pty
(`transport="pty"`, url is the slave path) or on a TCP port of 127.0.0.1
(`transport="tcp"`, url is `socket://127.0.0.1:PORT`).
"""

from __future__ import annotations

import collections
import dataclasses
import time

from .. import firmware_header
from ..config import defaults as config_defaults
from ..config_types import MotionConfig
from .. import motion as motion_time
from ..link import protocol as P
from .mock_arms import MockArms, parse_bounded, parse_lettered
from .mock_puzzle3 import MockPuzzle3, turn_pair
from .mock_regrip import MockRegrip, closing_early, open_releasing, start_grip
from .serial_device import ForeignDevice, SerialDevice  # noqa: F401 (ForeignDevice: re-exported for tests)

DEFAULT_MOTION = config_defaults().motion  # config's defaults = the firmware's (defaults.h)
LIMITS = firmware_header.limits()  # defaults.h: queue depth, rx ring, bounds
PAIR_ARMS = firmware_header.ARM_PAIRS
MAX_TOKENS = 5  # command.cpp: a command and at most four arguments
# MOTION / SERVO / JAWS arguments: letter -> (config key, low, high), as command.cpp checks them.
SETTINGS_ARGS = {
    "MOTION": {"S": ("steps_per_rev", LIMITS["STEPS_PER_REV_MIN"], LIMITS["STEPS_PER_REV_MAX"]),
               "V": ("max_speed_steps_per_s", LIMITS["MAX_SPEED_MIN"], LIMITS["MAX_SPEED_MAX"]),
               "A": ("accel_steps_per_s2", LIMITS["ACCEL_MIN"], LIMITS["ACCEL_MAX"])},
    "SERVO": {"O": ("servo_open_us", LIMITS["SERVO_US_MIN"], LIMITS["SERVO_US_MAX"]),
              "C": ("servo_closed_us", LIMITS["SERVO_US_MIN"], LIMITS["SERVO_US_MAX"]),
              "S": ("servo_speed_us_per_ms", LIMITS["SERVO_SPEED_MIN"], LIMITS["SERVO_SPEED_MAX"])},  # tenths
    "JAWS": {"C": ("jaw_clear_pct", LIMITS["JAW_PCT_MIN"], LIMITS["JAW_PCT_MAX"]),
             "T": ("jaw_contact_pct", LIMITS["JAW_PCT_MIN"], LIMITS["JAW_PCT_MAX"]),
             "G": ("jaw_open_gap_mm", LIMITS["JAW_OPEN_GAP_MM_MIN"], LIMITS["JAW_OPEN_GAP_MM_MAX"]),
             "E": ("cube_mm", LIMITS["CUBE_MM_MIN"], LIMITS["CUBE_MM_MAX"])},
}


class MockFirmware:
    """The board: its protocol and queue here, its arms a MockArms (`arms`), served by a SerialDevice (`device`)."""

    def __init__(self, transport: str = "pty", motion: MotionConfig | None = None, time_scale: float = 1.0,
                 queue_depth: int = LIMITS["QUEUE_DEPTH"], rx_bytes: int = LIMITS["RX_BUFFER_SIZE"], line_delay_s: float = 0.0,
                 reset_on_connect: bool = False, boot_delay_s: float = 0.0, firmware: str = P.FIRMWARE_NAME,
                 proto: int = P.PROTOCOL_VERSION, version: str = "mock"):
        self.device = SerialDevice(transport, self._receive, tick=self._tick, timeout=self._timeout,
                                   on_connect=self._on_connect, name="MockFirmware")
        self.url = self.device.url
        self.arms = MockArms(lambda: self.motion, lambda: self.alarm, self._busy)
        self.regrip = MockRegrip(lambda: self.motion, lambda arm: self.arms.gripper_us[arm])
        self.arms.regrip = self.regrip
        self.puzzle3 = MockPuzzle3(self)  # PUZZLE 2/3, TILT and the 3x3x3 rules
        self.default_motion = motion or DEFAULT_MOTION
        self.motion = self.default_motion  # the board's settings: MOTION and SERVO replace them
        self.time_scale = time_scale  # wall seconds per simulated second
        self.queue_depth, self.rx_bytes = queue_depth, rx_bytes
        self.line_delay_s = line_delay_s  # processing time per line (makes the rx window fill up)
        self.reset_on_connect = reset_on_connect  # imitate an Uno's DTR reset when the port is opened
        self.boot_delay_s = boot_delay_s  # ... and its bootloader's wait before the banner (1.6 s on an Uno)
        self._boot_at: float | None = None
        self.firmware, self.proto, self.version = firmware, proto, version
        self.silent = False
        self.estop_held = False  # the hardware e-stop input is pressed (RESET fails until released)
        self.drop_reply = None  # test hook: reply -> True to lose that line (a lost acknowledgement)
        self.reset_after_seq = None  # test hook: reset right after this action completes (between moves)
        self.start_when = None  # test hook: seq -> False to keep that queued action waiting (not timing)
        self.reset_during_seq = None  # test hook: reset halfway through this action (a cut decided by the
        # device's clock, not by when a host thread gets round to it: at time_scale 0.02 a GRIP lasts ~10 ms)
        self.max_queued = 0
        # What the robot did (kept across resets: it is the physical history).
        self.executed: list[tuple[int, str]] = []
        self.interrupted: list[tuple[int, str]] = []
        self.received_lines: list[bytes] = []
        self.max_rx_fill = 0
        self.rx_overflow_bytes = 0
        self.replies_sent: collections.Counter[str] = collections.Counter()
        # Survives a reset (.noinit RAM on the board).
        self.last = 0
        self.cut = 0
        self.cut_part = (0, 0)  # (parts done or None, of how many) of the cut action
        self.boots = 0  # resets since power-up
        self.times: collections.deque = collections.deque(maxlen=LIMITS["TIME_SLOTS"])  # (seq, ms) for TIME
        self._power_on()

    # -- state -------------------------------------------------------------

    def _power_on(self):
        self._rx = bytearray()  # the receive ring (bytes not yet read by the main loop)
        self._line = bytearray()
        self._overlong = False
        self._next_line_time = 0.0
        self.accepted = self.last
        self._synced = False
        self._rejected = (0, P.ErrorCode.NONE)  # a resent rejected seq gets the same answer
        self._queue: collections.deque = collections.deque()  # (seq, command, args, nominal_ms)
        self._running: tuple[int, str, float, float] | None = None  # (seq, command, nominal_ms, end_time)
        self._running_since = 0.0
        self._grip_phase = 0  # the running GRIP: 0 its pair closing, 1 the other pair opening
        self._grip_ms = 0.0  # ... its ms from its start to this phase's end
        self._turn: tuple[str, float] | None = None  # the last TURN/JOG run: (command, start on the board clock)
        self._early_missed = False  # the GRIP behind the running turn was queued too late to overlap
        self.alarm = P.AlarmCode.NONE
        self.motion = self.default_motion
        self.arms.power_on()  # drivers off, positions unknown, grippers never commanded
        self.puzzle3.power_on()  # 2x2x2

    def _busy(self) -> bool:
        return bool(self._queue or self._running)

    # -- the device ----------------------------------------------------------

    def start(self) -> "MockFirmware":
        self.device.start()
        return self

    def stop(self) -> None:
        self.device.stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def call(self, fn, *args) -> None:
        """Run fn on the device thread (test hooks never race the protocol)."""
        self.device.call(fn, *args)

    def drop_connection(self) -> None:
        """Close the TCP client's connection (the host sees a disconnect)."""
        self.device.drop_connection()

    # -- the mechanics (test hooks, as the emulator's) -------------------------

    def set_sensor(self, arm: str, start: int, width: int) -> None:
        self.call(self.arms.sensors.__setitem__, arm, (start, width))

    def remove_sensor(self, arm: str) -> None:
        self.call(self.arms.sensors.__setitem__, arm, None)

    def stick_sensor(self, arm: str) -> None:
        self.call(self.arms.sensors.__setitem__, arm, "stuck")

    def turn_by_hand(self, arm: str, steps: int) -> None:
        self.call(self.arms.move_physically, arm, steps)

    def reverse_wiring(self, arm: str, reversed_: bool = True) -> None:
        """The motor turns the other way for DIR high (coil wires swapped), as the harness's `wiring`."""
        self.call(self.arms.wiring.__setitem__, arm, -1 if reversed_ else 1)

    def arm_position(self, arm: str) -> int:
        return self.arms.angle[arm]

    @property
    def step_log(self) -> list[tuple[str, int]]:
        return self.arms.step_log  # (arm, signed steps) of every completed move

    def _on_connect(self):
        if self.reset_on_connect:
            if self.boot_delay_s:
                self._boot_at = time.monotonic() + self.boot_delay_s
            else:
                self._reset()

    def reset(self):
        """The reset button (or a watchdog): flush the queue, keep last/cut, print the banner."""
        self.call(self._reset)

    def _reset(self):
        running = self._running
        self.boots += 1
        if running and not running[1].startswith("DWELL"):  # a DWELL moves nothing: not a cut
            self.cut = running[0]  # else an earlier cut is kept until RESET clears it
            self.cut_part = self._part_done(running)
        if running:
            self.interrupted.append((running[0], running[1]))
        self._power_on()
        self._reply(self._identity())
        if self.cut:  # nothing moves until RESET (system.cpp)
            self.alarm = P.AlarmCode.RESET_DURING_MOTION
            self._reply(P.Alarm(self.alarm, 0))

    def estop_input(self):
        """Press the hardware e-stop input (and keep it pressed until release_estop_input)."""
        self.call(self._press_estop)

    def release_estop_input(self):
        self.call(setattr, self, "estop_held", False)

    def _press_estop(self):
        self.estop_held = True
        self._estop(P.AlarmCode.ESTOP_INPUT)

    def press_start(self):
        self.call(self._reply, P.Button("start"))

    def clock_ms(self) -> float:
        """The mock board's clock: its actions take their nominal time on it (wall time / time_scale)."""
        return time.monotonic() * 1000 / self.time_scale

    def _identity(self) -> P.Identity:
        return P.Identity(self.firmware, self.version, self.proto, "mock", self.queue_depth, self.rx_bytes,
                          self.last, self.cut, *self.cut_part, self.boots, self.puzzle3.name)

    def _part_done(self, running) -> tuple:
        """How far a running action got (motion.cpp start(): a move's steps of its longest arm, a GRIP's
        phases, one part for OPEN/CLOSE, HOME not counted); the mock moves at a uniform speed."""
        seq, command, nominal_ms, end = running
        elapsed = min(1.0, (time.monotonic() - self._running_since) / max(end - self._running_since, 1e-9))
        words = command.split()
        if words[0] == "GRIP":
            return self._grip_phase, 2
        if words[0] == "HOME":
            return (0 if elapsed == 0 else None), 0
        if words[0] in ("TURN", "TILT", "JOG"):
            rev = self.motion.steps_per_rev
            total = max(abs(int(w[1:])) * rev // 360 for w in words[1:]) if words[0] != "JOG" else abs(int(words[2]))
            return int(elapsed * total), total
        return 0, 1

    def _status(self) -> P.Status:
        state = P.State.ALARM if self.alarm else (P.State.RUN if self._running or self._queue else P.State.IDLE)
        queued = len(self._queue) + (1 if self._running else 0)
        return P.Status(state, queued, self._running[0] if self._running else 0, self.last, self.accepted, self.alarm)

    def _reply(self, reply) -> None:
        if self.silent or (self.drop_reply is not None and self.drop_reply(reply)):
            return
        line = P.frame(P.format_reply(reply))
        assert len(line) <= P.MAX_REPLY, line
        self.replies_sent[type(reply).__name__] += 1
        self.device.send(line)

    # -- receive "interrupt" -------------------------------------------------

    def _receive(self, data: bytes) -> None:
        if self.silent:
            return
        for byte in data:
            if byte == P.RT_ESTOP[0]:
                self._estop(P.AlarmCode.ESTOP_BYTE)
            elif byte == P.RT_STATUS[0]:
                self._reply(self._status())
            else:
                if len(self._rx) >= self.rx_bytes and not self.line_delay_s:
                    # Bytes arrive at the baud rate and the main loop empties the ring meanwhile:
                    # a chunk larger than the ring is only lost when lines take time (line_delay_s).
                    self._take_lines()
                if len(self._rx) >= self.rx_bytes:
                    self.rx_overflow_bytes += 1  # the ring is full: the byte is lost, as on the board
                    continue
                self._rx.append(byte)
                self.max_rx_fill = max(self.max_rx_fill, len(self._rx))

    def _estop(self, code: P.AlarmCode) -> None:
        if self.alarm == P.AlarmCode.ESTOP_BYTE and code == P.AlarmCode.ESTOP_INPUT:
            self.alarm = code  # a person pressed after a `!`: the alarm says so (reported again)
            self._reply(P.Alarm(code, 0))
            return
        if self.alarm:
            return  # the first alarm stays latched (and was reported once)
        # stop_us as system.cpp reports it: trigger -> the steppers stopped, on this board's clock; 0 when
        # no stepper moved (a GRIP or DWELL, or nothing running).
        trigger = time.monotonic()
        stop_us = 0
        if self._running:
            seq, command, nominal_ms, end = self._running
            self.interrupted.append((seq, command))
            stepping = command.startswith(("TURN", "TILT", "JOG", "HOME"))
            if stepping and code == P.AlarmCode.ESTOP_BYTE:  # decelerates from its speed now to a standstill
                stop_us = round(1e6 * self._speed_at(trigger, nominal_ms) / self.motion.accel_steps_per_s2)
            # The grippers stay where they are; a closing begun during a turn stops driving (limp). Which
            # closings had begun is read at the trigger, with no clock read of its own: the halt timed
            # below is system.cpp's latch -> stepper_halt only (the limping follows in its main loop).
            for arm in closing_early(self, trigger * 1000 / self.time_scale):
                self.arms.grippers[arm] = None
            # The halt is timed on this thread's CPU clock around the halt alone: the ISR it stands for
            # cannot be preempted, while wall time here also counts the host's scheduler and the GIL (ms
            # under load, 5x that on a sped-up mock), and the bookkeeping above is the firmware's main loop.
            halt_from = time.thread_time()
            self._running = None  # the hardware input halts the steppers at once
            if stepping and code != P.AlarmCode.ESTOP_BYTE:
                stop_us = round((time.thread_time() - halt_from) * 1e6 / self.time_scale)
        self._latch(code, stop_us)

    def _speed_at(self, now: float, nominal_ms: float) -> float:
        """The running move's step rate at `now` (steps/s), on a trapezoid of its nominal time: accelerating
        from rest, at most max_speed, decelerating to rest at its end (the mock moves no real steps)."""
        elapsed_s = (now - self._running_since) / self.time_scale
        remaining_s = max(0.0, nominal_ms / 1000 - elapsed_s)
        accel = self.motion.accel_steps_per_s2
        return max(0.0, min(self.motion.max_speed_steps_per_s, accel * elapsed_s, accel * remaining_s))

    def _latch(self, code: P.AlarmCode, stop_us: int = 0) -> None:
        """Flush the queue and latch an alarm (the e-stops, and a homing that failed)."""
        self._running = None
        self._queue.clear()
        self.arms.after_flush()  # the next TURN needs the pair that really holds
        self.alarm = code
        self._reply(P.Alarm(code, stop_us))

    # -- main loop -----------------------------------------------------------

    def _timeout(self) -> float:
        waits = [0.05]
        now = time.monotonic()
        if self._boot_at is not None:
            waits.append(self._boot_at - now)
        if self._running:
            waits.append(self._running[3] - now)
            if self._running[0] == self.reset_during_seq:
                waits.append(self._halfway() - now)
        if b"\n" in self._rx and self.line_delay_s:
            waits.append(self._next_line_time - now)
        return max(0.0, min(waits))

    def _tick(self) -> None:
        if self.silent:
            return
        if self._boot_at is not None and time.monotonic() >= self._boot_at:
            self._boot_at = None
            self._reset()
        self._take_lines()
        self.arms.poll_idle()

    def _take_lines(self) -> None:
        self._advance_motion()
        while self._rx and time.monotonic() >= self._next_line_time:
            if not self._take_line():
                break
            self._next_line_time = time.monotonic() + self.line_delay_s
            self._advance_motion()

    def _take_line(self) -> bool:
        """Move bytes from the ring into the line buffer; handle one complete line. False if none."""
        while self._rx:
            byte = self._rx.pop(0)
            if byte == ord("\r"):
                continue
            if byte != ord("\n"):
                if len(self._line) >= P.MAX_LINE - 1:
                    self._overlong = True
                else:
                    self._line.append(byte)
                continue
            line, overlong = bytes(self._line), self._overlong
            self._line.clear()
            self._overlong = False
            self.received_lines.append(line)
            if overlong:
                self._reply(P.Err(None, P.ErrorCode.LINE_TOO_LONG))
            elif line:
                self._handle_line(line)
            return True
        return False

    def _handle_line(self, line: bytes) -> None:
        # Same decisions, in the same order, as firmware/cube_robot/framing.cpp.
        tail = 1 + P.CRC_HEX_DIGITS  # "*" and the digits
        if len(line) < tail or line[-tail:-tail + 1] != b"*":
            self._reply(P.Err(None, P.ErrorCode.BAD_CHECKSUM if b"*" in line else P.ErrorCode.BAD_FORMAT))
            return
        if any(c not in b"0123456789ABCDEF" for c in line[-P.CRC_HEX_DIGITS:]):
            self._reply(P.Err(None, P.ErrorCode.BAD_CHECKSUM))
            return
        payload = line[:-tail]
        if P.checksum(payload) != int(line[-P.CRC_HEX_DIGITS:], 16):  # the line cannot be trusted, not even its seq
            self._reply(P.Resend(self.accepted + 1))
            return
        if any(c not in _PAYLOAD_BYTES for c in payload):
            self._reply(P.Err(None, P.ErrorCode.BAD_FORMAT))
            return
        text = payload.decode("ascii")
        digits = len(text) - len(text[1:].lstrip("0123456789")) - 1 if text[:1] == "N" else 0
        rest = text[1 + digits:]
        if (len(text) < 3 or digits == 0 or not rest.startswith(" ") or text[1] == "0"
                or int(text[1:1 + digits]) > P.MAX_SEQ):
            self._reply(P.Err(None, P.ErrorCode.BAD_FORMAT))
            return
        seq = int(text[1:1 + digits])
        if seq <= self.accepted:
            self._reply(P.Err(seq, self._rejected[1]) if seq == self._rejected[0] else P.Ok(seq, dup=True))
            return
        if self._synced and seq != self.accepted + 1:
            self._reply(P.Resend(self.accepted + 1))  # a gap: a line was lost
            return
        self.accepted = seq  # consumed whatever the outcome
        self._synced = True  # after a reset the first command may have any seq above `last`
        code = self._execute(seq, rest[1:])
        if code:
            self._rejected = (seq, code)
            self._reply(P.Err(seq, code))
        else:
            self._reply(P.Ok(seq))

    # -- command.cpp ----------------------------------------------------------

    def _execute(self, seq: int, text: str) -> P.ErrorCode | None:
        tokens = text.split(" ")
        if "" in tokens[:MAX_TOKENS + 1]:
            return P.ErrorCode.BAD_FORMAT  # a double or trailing space
        if len(tokens) > MAX_TOKENS:
            return P.ErrorCode.BAD_ARGUMENT
        name, args = tokens[0], tokens[1:]
        if name in P.QUEUED_COMMANDS:
            return self._queue_action(seq, name, args)
        if name in SETTINGS_ARGS:
            return self._settings(name, args)
        if name == "WHERE":
            if args:
                return P.ErrorCode.BAD_ARGUMENT
            self._reply(self.arms.where())
            return None
        if name in ("MOTORS", "ZERO", "ARM", "GRIPPER", "SETUP"):
            return self.arms.immediate(name, args)
        if name == "PUZZLE":
            return self.puzzle3.command(args)
        if name == "TIME":  # read-only: allowed while an alarm is latched
            if len(args) != 1:
                return P.ErrorCode.BAD_ARGUMENT
            seq = parse_bounded(args[0], 1, LIMITS["TIME_SEQ_MAX"])
            if isinstance(seq, P.ErrorCode):
                return seq
            self._reply(P.Time(seq, next((ms for s, ms in self.times if s == seq), None)))
            return None
        if name in ("HELLO", "STATUS", "RESET"):
            if args:
                return P.ErrorCode.BAD_ARGUMENT
            if name == "HELLO":
                self._reply(self._identity())
            elif name == "STATUS":
                self._reply(self._status())
            else:
                return self._clear_alarm()
            return None
        return P.ErrorCode.UNKNOWN_COMMAND

    def _clear_alarm(self) -> P.ErrorCode | None:
        if not self.alarm:
            return None
        if self.estop_held:
            return P.ErrorCode.ALARM_ACTIVE  # release the button first
        self.alarm = P.AlarmCode.NONE
        self.cut = 0
        self.cut_part = (0, 0)
        return None

    def _queue_action(self, seq: int, name: str, args: list[str]) -> P.ErrorCode | None:
        if name == "GRIP":
            if len(args) != 1 or args[0] not in PAIR_ARMS:
                return P.ErrorCode.BAD_ARGUMENT
            if (problem := self.puzzle3.check_close("".join(PAIR_ARMS[args[0]]))):
                return problem
            nominal = 0.0  # timed as it runs (its phases depend on its neighbours)
        elif name == "DWELL":
            if len(args) != 1:
                return P.ErrorCode.BAD_ARGUMENT
            nominal = parse_bounded(args[0], P.DWELL_MS_MIN, P.DWELL_MS_MAX)
            if isinstance(nominal, P.ErrorCode):
                return nominal
        elif name in ("TURN", "TILT"):
            pair = turn_pair(args, name == "TILT")
            if isinstance(pair, P.ErrorCode):
                return pair
            if name == "TILT" and not self.puzzle3.on:
                return P.ErrorCode.PUZZLE_MODE
            if self.alarm:
                return P.ErrorCode.ALARM_ACTIVE
            if not self.arms.motors_on:
                return P.ErrorCode.MOTORS_OFF  # the steps would be lost
            if (problem := self.puzzle3.check_move(name, args, pair)):
                return problem
            nominal = motion_time.turn_ms([int(arg[1:]) for arg in args], self.motion)
        else:  # JOG OPEN CLOSE HOME (mock_arms.py)
            nominal = self.arms.queue_action(seq, name, args)
            if isinstance(nominal, P.ErrorCode):
                return nominal
            if name == "CLOSE" and (problem := self.puzzle3.check_close(args[0])):
                return problem
        if self.alarm:
            return P.ErrorCode.ALARM_ACTIVE
        if len(self._queue) + (1 if self._running else 0) >= self.queue_depth:
            return P.ErrorCode.QUEUE_FULL
        if name == "GRIP" and not self._queue and self._turn:  # right behind the last turn: in time to overlap?
            at = self.regrip.early_close_at(self._turn[0], self._turn[1], args[0], self.arms.grippers)
            if not self._running or self._running[1] != self._turn[0] or (at is not None and self.clock_ms() > at):
                self._early_missed = True  # the turn ended, or its closing should have begun already
        if self.puzzle3.on:
            self.puzzle3.queued(name, args, was_idle=not self._busy())
        self.arms.queued(name, args)
        self._queue.append((seq, f"{name} {' '.join(args)}", nominal))
        self.max_queued = max(self.max_queued, len(self._queue) + (1 if self._running else 0))
        return None

    def _settings(self, name, args) -> P.ErrorCode | None:
        spec = SETTINGS_ARGS[name]  # letter -> (setting, low, high)
        parsed = parse_lettered(args, {letter: (low, high) for letter, (_, low, high) in spec.items()})
        if isinstance(parsed, P.ErrorCode):
            return parsed
        values = {letter: (spec[letter][0], value) for letter, value in parsed.items()}
        if name == "MOTION" and values["S"][1] % 4:
            return P.ErrorCode.BAD_ARGUMENT  # quarter turns must be whole steps
        if name == "JAWS" and (2 * values["G"][1] + values["E"][1]) ** 2 <= 2 * values["E"][1] ** 2:
            return P.ErrorCode.JAWS_IN_REACH  # regrip.cpp regrip_gap_clears: gap <= cube/2 (sqrt 2 - 1)
        if self.alarm:  # after the range check, as in the firmware: nothing changes while latched
            return P.ErrorCode.ALARM_ACTIVE
        if self._queue or self._running:
            return P.ErrorCode.BUSY
        if name == "MOTION" and values["S"][1] != self.motion.steps_per_rev:
            self.arms.forget_positions_for_new_steps()
        if name == "SERVO":
            values["S"] = (values["S"][0], values["S"][1] / 10)  # sent in tenths
        self.motion = dataclasses.replace(self.motion, **dict(values.values()))
        if name == "SERVO":
            self.arms.servo_all(values["O"][1], values["C"][1])
        return None

    def _halfway(self) -> float:
        running = self._running
        assert running is not None  # asked only while an action runs
        return self._running_since + (running[3] - self._running_since) / 2

    def _advance_motion(self) -> None:
        now = time.monotonic()
        if self._running and self._running[0] == self.reset_during_seq and now >= self._halfway():
            self.reset_during_seq = None
            self._reset()  # before a late wake-up could finish the action: the cut is certain
            return
        if self._running and now >= self._running[3] and self._running[1].startswith("GRIP") \
                and self._grip_phase == 0:
            open_releasing(self, now)
        if self._running and now >= self._running[3]:
            seq, command, nominal, _ = self._running
            failed = self.arms.action_finished(seq, command)
            if failed:  # homing: the sensor did not switch (no `done`; the alarm flushes the queue)
                self.interrupted.append((seq, command))
                self._latch(failed)
                return
            self._running = None
            self.executed.append((seq, command))
            self.last = seq
            self.times.append((seq, min(round(nominal), 0xFFFF)))
            self._reply(P.Done(seq, round(nominal)))
            if seq == self.reset_after_seq:
                self.reset_after_seq = None
                self._reset()
        if (self._running is None and self._queue and not self.alarm
                and (self.start_when is None or self.start_when(self._queue[0][0]))):
            seq, command, nominal = self._queue.popleft()
            board_now = self.clock_ms()
            if command.startswith("GRIP"):
                nominal = start_grip(self, command)
            else:
                nominal = self.arms.action_started(seq, command, nominal)
                self._turn = (command, board_now) if command.startswith(("TURN", "JOG")) else None
                self._early_missed = False
                if command.startswith("OPEN"):
                    self.regrip.opened_ms.update({arm: board_now for arm in command.split()[1]})
            self._running = (seq, command, nominal, now + nominal / 1000 * self.time_scale)
            self._running_since = now


# Bytes allowed in a command line's payload (framing.cpp allowed_in_payload: no `*`).
_PAYLOAD_BYTES = frozenset(P.COMMAND_CHARSET - {ord("*")})

