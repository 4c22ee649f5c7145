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

Served on a pty (`transport="pty"`, url is the slave path) or on a TCP port of
127.0.0.1 (`transport="tcp"`, url is `socket://127.0.0.1:PORT`).
"""

from __future__ import annotations

import collections
import os
import queue
import random
import select
import socket
import threading
import time
import tty

from ..config import defaults as config_defaults
from ..link import motion as motion_time
from ..link import protocol as P

DEFAULT_MOTION = dict(config_defaults()["motion"])  # the same defaults as config.yaml and the firmware
PAIR_ARMS = {"RL": "RL", "FB": "FB"}


class _Endpoint:
    """The device side of a pty or of a TCP port on 127.0.0.1 (one client at a time)."""

    def __init__(self, transport: str):
        self.transport = transport
        self.conn = None
        if transport == "pty":
            self.master, self._slave = os.openpty()
            tty.setraw(self._slave)  # before any byte flows: no echo, no newline rewriting
            self.url = os.ttyname(self._slave)
        elif transport == "tcp":
            self.listener = socket.socket()
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.listener.bind(("127.0.0.1", 0))
            self.listener.listen(1)
            self.url = f"socket://127.0.0.1:{self.listener.getsockname()[1]}"
        else:
            raise ValueError(f"transport must be 'pty' or 'tcp', not {transport!r}")

    def wait_fds(self) -> list:
        if self.transport == "pty":
            return [self.master]
        return [self.conn if self.conn is not None else self.listener]

    def read(self, ready) -> bytes:
        """Bytes from a ready fd (b'' if none); accepts a new TCP client."""
        if self.transport == "pty":
            try:
                return os.read(self.master, 4096)
            except OSError:
                return b""
        if self.conn is None:
            self.conn, _ = self.listener.accept()
            self.conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.on_connect()
            return b""
        try:
            data = self.conn.recv(4096)
        except OSError:
            data = b""
        if not data:
            self.drop()
        return data

    def on_connect(self):
        pass

    def write(self, data: bytes) -> None:
        try:
            if self.transport == "pty":
                os.write(self.master, data)
            elif self.conn is not None:
                self.conn.sendall(data)
        except OSError:
            self.drop()

    def drop(self) -> None:
        if self.transport == "tcp" and self.conn is not None:
            try:
                self.conn.close()
            except OSError:
                pass
            self.conn = None

    def close(self) -> None:
        if self.transport == "pty":
            for fd in (self.master, self._slave):
                try:
                    os.close(fd)
                except OSError:
                    pass
        else:
            self.drop()
            self.listener.close()


class _Device:
    """A background thread serving an endpoint; subclasses handle bytes and timers."""

    def __init__(self, transport: str = "pty"):
        self._endpoint = _Endpoint(transport)
        self._endpoint.on_connect = self._on_connect
        self.url = self._endpoint.url
        self._calls: queue.Queue = queue.Queue()  # functions to run on the device thread
        self._wake_r, self._wake_w = os.pipe()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=type(self).__name__, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=2)
        self._endpoint.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def call(self, fn, *args) -> None:
        """Run fn on the device thread (test hooks never race the protocol)."""
        done = threading.Event()
        self._calls.put((fn, args, done))
        os.write(self._wake_w, b"x")
        done.wait(timeout=2)

    def drop_connection(self) -> None:
        """Close the TCP client's connection (the host sees a disconnect)."""
        self.call(self._endpoint.drop)

    def _loop(self):
        while not self._stop.is_set():
            timeout = self._timeout()
            ready, _, _ = select.select(self._endpoint.wait_fds() + [self._wake_r], [], [], timeout)
            if self._wake_r in ready:
                os.read(self._wake_r, 64)
                while not self._calls.empty():
                    fn, args, done = self._calls.get()
                    try:
                        fn(*args)
                    finally:
                        done.set()
            for fd in ready:
                if fd != self._wake_r:
                    data = self._endpoint.read(fd)
                    if data:
                        self._receive(data)
            self._tick()

    def _send(self, data: bytes) -> None:
        self._endpoint.write(data)

    def _on_connect(self):
        pass

    def _timeout(self) -> float:
        return 0.05

    def _receive(self, data: bytes) -> None:
        raise NotImplementedError

    def _tick(self) -> None:
        pass


class MockFirmware(_Device):
    def __init__(self, transport: str = "pty", motion: dict | None = None, time_scale: float = 1.0,
                 queue_depth: int = 16, rx_bytes: int = 64, line_delay_s: float = 0.0,
                 reset_on_connect: bool = False, firmware: str = P.FIRMWARE_NAME,
                 proto: int = P.PROTOCOL_VERSION, version: str = "mock"):
        super().__init__(transport)
        self.default_motion = dict(motion or DEFAULT_MOTION)
        self.motion = dict(self.default_motion)
        self.time_scale = time_scale  # wall seconds per simulated second
        self.queue_depth, self.rx_bytes = queue_depth, rx_bytes
        self.line_delay_s = line_delay_s  # processing time per line (makes the rx window fill up)
        self.reset_on_connect = reset_on_connect  # imitate an Uno's DTR reset when the port is opened
        self.firmware, self.proto, self.version = firmware, proto, version
        self.silent = False
        self.drop_reply = None  # test hook: reply -> True to lose that line (a lost acknowledgement)
        self.reset_after_seq = None  # test hook: reset right after this action completes (between moves)
        self.max_queued = 0
        # What the robot did (kept across resets: it is the physical history).
        self.executed: list[tuple[int, str]] = []
        self.interrupted: list[tuple[int, str]] = []
        self.received_lines: list[bytes] = []
        self.max_rx_fill = 0
        self.rx_overflow_bytes = 0
        self.replies_sent = collections.Counter()
        # Survives a reset (.noinit RAM on the board).
        self.last = 0
        self.cut = 0
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
        self._running = None  # (seq, command, nominal_ms, end_time)
        self.holding = None  # pair holding the cube after the last completed GRIP
        self._queued_holding = None  # ... after the last queued GRIP (what a queued TURN will see)
        self.alarm = P.AlarmCode.NONE
        self.motion = dict(self.default_motion)

    def _on_connect(self):
        if self.reset_on_connect:
            self._reset()

    def reset(self):
        """The reset button (or a watchdog): flush the queue, keep last/cut, print the banner."""
        self.call(self._reset)

    def _reset(self):
        running = self._running
        self.cut = running[0] if running else 0
        if running:
            self.interrupted.append((running[0], running[1]))
        self._power_on()
        if self.cut:
            self.alarm = P.AlarmCode.RESET_DURING_MOTION
        self._reply(self._identity())

    def estop_input(self):
        self.call(self._estop, P.AlarmCode.ESTOP_INPUT)

    def press_start(self):
        self.call(self._reply, P.Button("start"))

    def _identity(self) -> P.Identity:
        return P.Identity(self.firmware, self.version, self.proto, "mock", self.queue_depth, self.rx_bytes,
                          self.last, self.cut)

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
        self._send(line)

    # -- receive "interrupt" -------------------------------------------------

    def _receive(self, data: bytes) -> None:
        if self.silent:
            return
        for byte in data:
            if byte == P.RT_ESTOP[0]:
                self._estop(P.AlarmCode.ESTOP_BYTE)
            elif byte == P.RT_STATUS[0]:
                self._reply(self._status())
            elif len(self._rx) >= self.rx_bytes:
                self.rx_overflow_bytes += 1  # the ring is full: the byte is lost, as on the board
            else:
                self._rx.append(byte)
                self.max_rx_fill = max(self.max_rx_fill, len(self._rx))

    def _estop(self, code: P.AlarmCode) -> None:
        stop_us = 0
        if self._running:
            seq, command, nominal_ms, end = self._running
            self.interrupted.append((seq, command))
            # Bounded deceleration from at most full speed (the hardware input stops at once).
            if code == P.AlarmCode.ESTOP_BYTE:
                stop_us = int(1e6 * self.motion["max_speed_steps_per_s"] / self.motion["accel_steps_per_s2"])
        self._running = None
        self._queue.clear()
        self.alarm = code
        self._reply(P.Alarm(code, stop_us))

    # -- main loop -----------------------------------------------------------

    def _timeout(self) -> float:
        waits = [0.05]
        now = time.monotonic()
        if self._running:
            waits.append(self._running[3] - now)
        if b"\n" in self._rx and self.line_delay_s:
            waits.append(self._next_line_time - now)
        return max(0.0, min(waits))

    def _tick(self) -> None:
        if self.silent:
            return
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
        if len(line) < 3 or line[-3:-2] != b"*" or any(c not in b"0123456789ABCDEF" for c in line[-2:]):
            self._reply(P.Err(None, P.ErrorCode.BAD_CHECKSUM if b"*" in line else P.ErrorCode.BAD_FORMAT))
            return
        try:
            payload = P.unframe(line)
        except P.FrameError:  # the line cannot be trusted, not even its seq
            self._reply(P.Resend(self.accepted + 1))
            return
        head = payload.split(" ", 1)
        if (len(head) < 2 or not head[0].startswith("N") or not head[0][1:].isdigit() or head[0][1] == "0"
                or not 1 <= int(head[0][1:]) <= P.MAX_SEQ or any(c not in P.COMMAND_CHARSET for c in line[:-3])):
            self._reply(P.Err(None, P.ErrorCode.BAD_FORMAT))
            return
        seq = int(head[0][1:])
        if seq <= self.accepted:
            self._reply(P.Err(seq, self._rejected[1]) if seq == self._rejected[0] else P.Ok(seq, dup=True))
            return
        if self._synced and seq != self.accepted + 1:
            self._reply(P.Resend(self.accepted + 1))  # a gap: a line was lost
            return
        self.accepted = seq  # consumed whatever the outcome
        self._synced = True  # after a reset the first command may have any seq above `last`
        try:
            _, name, args = P.parse_command(payload)
        except ValueError:
            code = P.ErrorCode.BAD_FORMAT
        else:
            code = self._execute(seq, name, args)
        if code:
            self._rejected = (seq, code)
            self._reply(P.Err(seq, code))
        else:
            self._reply(P.Ok(seq))

    def _execute(self, seq: int, name: str, args: list[str]) -> P.ErrorCode | None:
        if name == "HELLO":
            self._reply(self._identity())
            return None
        if name == "STATUS":
            self._reply(self._status())
            return None
        if name == "RESET":
            self.alarm = P.AlarmCode.NONE
            return None
        if name in ("MOTION", "SERVO"):
            return self._settings(name, args)
        if name not in P.QUEUED_COMMANDS:
            return P.ErrorCode.UNKNOWN_COMMAND
        parsed = self._parse_action(name, args)
        if isinstance(parsed, P.ErrorCode):
            return parsed
        if self.alarm:
            return P.ErrorCode.ALARM_ACTIVE
        if len(self._queue) + (1 if self._running else 0) >= self.queue_depth:
            return P.ErrorCode.QUEUE_FULL
        if name == "TURN":
            holding = self._queued_holding
            if holding is None or any(arm not in PAIR_ARMS[holding] for arm, _ in parsed):
                return P.ErrorCode.NOT_HOLDING
            nominal = motion_time.turn_ms([a for _, a in parsed], self.motion)
        elif name == "GRIP":
            self._queued_holding = parsed
            nominal = motion_time.grip_ms(self.motion)
        else:
            nominal = parsed
        self._queue.append((seq, f"{name} {' '.join(args)}", nominal))
        self.max_queued = max(self.max_queued, len(self._queue) + (1 if self._running else 0))
        return None

    def _parse_action(self, name, args):
        if name == "GRIP":
            if len(args) != 1 or args[0] not in P.GRIP_PAIRS:
                return P.ErrorCode.BAD_ARGUMENT
            return args[0]
        if name == "DWELL":
            if len(args) != 1 or not args[0].isdigit():
                return P.ErrorCode.BAD_ARGUMENT
            ms = int(args[0])
            return ms if P.DWELL_MS_MIN <= ms <= P.DWELL_MS_MAX else P.ErrorCode.OUT_OF_RANGE
        arms = []
        if not 1 <= len(args) <= 2:
            return P.ErrorCode.BAD_ARGUMENT
        for arg in args:
            arm, angle = arg[:1], arg[1:]
            if arm not in P.ARMS or not angle.lstrip("-").isdigit() or arm in [a for a, _ in arms]:
                return P.ErrorCode.BAD_ARGUMENT
            value = int(angle)
            if value == 0 or value % 90 or abs(value) > P.TURN_ANGLE_MAX:
                return P.ErrorCode.OUT_OF_RANGE
            arms.append((arm, value))
        return arms

    def _settings(self, name, args) -> P.ErrorCode | None:
        keys = {"MOTION": {"S": "steps_per_rev", "V": "max_speed_steps_per_s", "A": "accel_steps_per_s2"},
                "SERVO": {"O": "servo_open_us", "C": "servo_closed_us", "G": "grip_ms"}}[name]
        values = {}
        for arg in args:
            if arg[:1] not in keys or not arg[1:].isdigit():
                return P.ErrorCode.BAD_ARGUMENT
            values[keys[arg[:1]]] = int(arg[1:])
        if set(values) != set(keys.values()):
            return P.ErrorCode.BAD_ARGUMENT
        from ..config import SCHEMA  # the firmware's limits, mirrored in the config schema

        for key, value in values.items():
            spec = SCHEMA["motion"][key]
            if not spec.min <= value <= spec.max or (key == "steps_per_rev" and value % 4):
                return P.ErrorCode.OUT_OF_RANGE
        if self.alarm:  # after the range check, as in the firmware: nothing changes while latched
            return P.ErrorCode.ALARM_ACTIVE
        if self._queue or self._running:
            return P.ErrorCode.BUSY
        self.motion.update(values)
        return None

    def _advance_motion(self) -> None:
        now = time.monotonic()
        if self._running and now >= self._running[3]:
            seq, command, nominal, _ = self._running
            self._running = None
            self.executed.append((seq, command))
            self.last = seq
            if command.startswith("GRIP"):
                self.holding = command.split()[1]
            self._reply(P.Done(seq, round(nominal)))
            if seq == self.reset_after_seq:
                self.reset_after_seq = None
                self._reset()
        if self._running is None and self._queue and not self.alarm:
            seq, command, nominal = self._queue.popleft()
            self._running = (seq, command, nominal, now + nominal / 1000 * self.time_scale)


class ForeignDevice(_Device):
    """Something that is not our firmware, for handshake tests.

    kind "grbl": readable text of another firmware; "garbage": what a baud mismatch looks like
    (unreadable bytes); "silent": nothing at all.
    """

    def __init__(self, kind: str, transport: str = "tcp", seed: int = 1):
        super().__init__(transport)
        self.kind = kind
        self._rng = random.Random(seed)
        self.bytes_received = 0

    def _receive(self, data: bytes) -> None:
        self.bytes_received += len(data)
        if self.kind == "grbl":
            if b"?" in data:
                self._send(b"<Idle|MPos:0.000,0.000,0.000|FS:0,0>\r\n")
            if b"\n" in data:
                self._send(b"\r\nGrbl 1.1h ['$' for help]\r\nerror:20\r\n")
        elif self.kind == "garbage":
            # At the wrong baud every byte decodes as noise, with an occasional newline.
            self._send(bytes(self._rng.choice([0x80, 0xF8, 0x00, 0xFE, 0x1C, 0xE0, 0x0A, 0x9F])
                             for _ in range(3 * len(data))))
