"""The host side of the serial link: handshake, flow control, exactly-once streaming.

    link = Link.open(config)                    # finds the port, handshakes, sends MOTION + SERVO
    result = link.run(plan, progress=callback)  # streams Grip/Turn actions; durations from `done`
    link.close()

How the rules of docs/protocol.md are kept:
  * a reader thread turns bytes into parsed lines; protocol traffic goes to an
    inbox the driver consumes, user-facing events (start button, alarm) also go
    to `link.events`;
  * every command line stays "pending" until an `ok`/`done`/`status acc` covers
    its seq; on `rs`, an answer timeout or a garbled reply the pending lines are
    resent with the SAME seq, so the firmware's `ok <seq> dup` makes a repeat
    harmless;
  * the bytes of lines whose answer has not arrived never exceed the firmware's
    `rx`, and sent-but-not-done actions never exceed its `q`;
  * a banner in the middle of a stream means the board reset: resume after
    `last`, or stop if `cut` says an arm was moving;
  * silence while work is outstanding is answered with `?` and, failing that,
    a SilentBoardError: nothing is waited on forever.
"""

from __future__ import annotations

import collections
import queue
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from . import protocol as P
from .errors import (
    AlarmError,
    CommandRejectedError,
    CubeStateUncertainError,
    DisconnectedError,
    HandshakeError,
    LinkError,
    NoAnswerError,
    SilentBoardError,
    TooManyResendsError,
    WrongBaudError,
    WrongFirmwareError,
)

READ_CHUNK_TIMEOUT_S = 0.02  # how often the reader thread checks its stop flag
MIN_STATUS_POLL_S = 0.25  # `?` interval while waiting for an identity
MIN_WAIT_S = 0.001  # shortest wait for the next message


@dataclass(frozen=True)
class LinkSettings:
    port: str | None = None
    baud: int = P.BAUD
    ack_timeout_s: float = 0.2
    silence_timeout_s: float = 0.5
    handshake_timeout_s: float = 3.0
    max_resends: int = 10

    @classmethod
    def from_config(cls, config) -> "LinkSettings":
        link = config["link"]
        return cls(
            port=link["port"], baud=link["baud"],
            ack_timeout_s=link["ack_timeout_ms"] / 1000, silence_timeout_s=link["silence_timeout_ms"] / 1000,
            handshake_timeout_s=link["handshake_timeout_ms"] / 1000, max_resends=link["max_resends"],
        )


# ---------------------------------------------------------------------------
# Reader thread


@dataclass(frozen=True)
class Garbled:
    """A line that failed framing or checksum (or was overlong)."""

    raw: bytes

    @property
    def readable(self) -> bool:
        return bool(self.raw) and all(32 <= b < 127 or b in (9,) for b in self.raw)


@dataclass(frozen=True)
class Foreign:
    """A well-framed line this host does not understand."""

    text: str


@dataclass(frozen=True)
class LinkEvent:
    """An unsolicited event for the application (start button, alarm), with its arrival time."""

    at: float  # time.monotonic() when it arrived
    message: object  # protocol.Button or protocol.Alarm


@dataclass(frozen=True)
class Disconnected:
    reason: str


class Reader(threading.Thread):
    """Reads the port, splits lines, parses them; never blocks the driver."""

    def __init__(self, port, inbox: queue.Queue, events: queue.Queue):
        super().__init__(name="cube-robot-link-reader", daemon=True)
        self.port, self.inbox, self.events = port, inbox, events
        self.stop_flag = threading.Event()
        self.bytes_received = 0
        self.sample = bytearray()  # the first bytes received, to describe a wrong device
        self.last_byte_time = 0.0

    def run(self):
        buffer = bytearray()
        try:
            if hasattr(self.port, "timeout"):
                self.port.timeout = READ_CHUNK_TIMEOUT_S
            while not self.stop_flag.is_set():
                waiting = getattr(self.port, "in_waiting", 0) or 1
                data = self.port.read(waiting)
                if not data:
                    continue
                self.last_byte_time = time.monotonic()
                self.bytes_received += len(data)
                if len(self.sample) < 256:
                    self.sample += data[: 256 - len(self.sample)]
                buffer += data
                while b"\n" in buffer:
                    line, _, rest = buffer.partition(b"\n")
                    buffer = bytearray(rest)
                    self._line(bytes(line).replace(b"\r", b""))
                if len(buffer) > P.MAX_REPLY:  # no newline in sight: garbage (wrong baud?)
                    self.inbox.put((time.monotonic(), Garbled(bytes(buffer))))
                    buffer.clear()
        except Exception as exc:  # pyserial raises SerialException/OSError/TypeError on a vanished port
            if not self.stop_flag.is_set():
                self.inbox.put((time.monotonic(), Disconnected(f"{type(exc).__name__}: {exc}")))

    def _line(self, line: bytes):
        if not line:
            return
        now = time.monotonic()
        try:
            message = P.parse_reply(P.unframe(line)) if len(line) < P.MAX_REPLY else Garbled(line)
        except P.FrameError:
            message = Garbled(line)
        except P.UnknownReply:
            message = Foreign(line.decode("ascii", "replace"))
        if isinstance(message, (P.Button, P.Alarm)):
            self.events.put(LinkEvent(now, message))
        self.inbox.put((now, message))


# ---------------------------------------------------------------------------
# Stream bookkeeping


@dataclass
class _Line:
    seq: int
    command: str
    data: bytes
    entry: "_Entry | None" = None
    sends: int = 0
    needs_send: bool = True


@dataclass
class _Entry:
    """One queued action of a stream (a plan action, or a re-grip inserted after a reset)."""

    command: str
    index: int | None  # plan action index; None for an inserted re-grip
    seq: int | None = None
    done: bool = False
    ms: int | None = None  # measured duration from `done` (None if its `done` line was lost)
    rejected: bool = False  # answered `err`: it never runs


@dataclass
class StreamProgress:
    """Which actions of a stream have completed; attached to errors raised mid-stream."""

    commands: list  # command text per plan action
    durations_ms: list  # per plan action: ms, or None (not done, or its `done` was lost)
    completed: int  # actions 0..completed-1 are done (execution is in order)
    interrupted: int | None = None  # index of an action that may have been stopped part-way

    @property
    def total(self) -> int:
        return len(self.commands)

    def describe(self) -> str:
        if self.completed == 0:
            text = f"No action of the {self.total} was completed"
        else:
            text = (f"Actions 1-{self.completed} of {self.total} completed "
                    f"(last: {self.commands[self.completed - 1]})")
        if self.interrupted is not None:
            text += (f"; action {self.interrupted + 1} ({self.commands[self.interrupted]}) may have stopped "
                     "part-way: the cube may be between positions")
        elif self.completed < self.total:
            text += f"; action {self.completed + 1} ({self.commands[self.completed]}) and later did not start"
        return text + "."


@dataclass
class StreamResult:
    durations_ms: list  # measured duration of each action (None where its `done` line was lost)
    elapsed_s: float
    stats: dict = field(default_factory=dict)


class _Stream:
    def __init__(self, commands: list[str], regrip_before: Callable[[int], str | None]):
        self.commands = commands
        self.regrip_before = regrip_before  # index -> GRIP command to re-take the cube after a reset
        self.entries: list[_Entry] = [_Entry(c, i) for i, c in enumerate(commands)]
        self.next = 0  # next entry to submit
        self.by_seq: dict[int, _Entry] = {}
        self.started = time.monotonic()
        self.stale_cut = 0

    def outstanding(self) -> int:
        return sum(1 for e in self.entries[: self.next] if not e.done)

    def finished(self) -> bool:
        return self.next == len(self.entries) and all(e.done for e in self.entries)

    def progress(self, interrupted: bool = False) -> StreamProgress:
        plan_entries = {e.index: e for e in self.entries if e.index is not None}
        completed = 0
        while completed < len(self.commands) and plan_entries[completed].done:
            completed += 1
        running = None
        if interrupted and completed < len(self.commands) and plan_entries[completed].seq is not None:
            running = completed
        return StreamProgress(
            commands=list(self.commands),
            durations_ms=[plan_entries[i].ms if plan_entries[i].done else None for i in range(len(self.commands))],
            completed=completed, interrupted=running,
        )

    def mark_done_through(self, seq: int, ms_of_last: int | None = None) -> list[_Entry]:
        """Execution is in order: `done seq` completes every earlier submitted action too."""
        newly = []
        for entry in self.entries[: self.next]:
            if entry.seq is not None and entry.seq <= seq and not entry.done and not entry.rejected:
                entry.done = True
                if entry.seq == seq:
                    entry.ms = ms_of_last
                newly.append(entry)
        return newly

    def restart_after_reset(self) -> None:
        """Actions not done were flushed by the reset: renumber them, re-take the cube first."""
        first = next((i for i, e in enumerate(self.entries) if not e.done), len(self.entries))
        rest = [e for e in self.entries[first:] if e.index is not None]
        for e in rest:
            e.seq = None
        regrip = self.regrip_before(rest[0].index) if rest else None
        if regrip:
            rest.insert(0, _Entry(regrip, None))
        self.entries = self.entries[:first] + rest
        self.next = first


# ---------------------------------------------------------------------------
# The driver


class Link:
    """A connection to the cube-robot firmware over any pyserial-like port object."""

    def __init__(self, port, settings: LinkSettings = LinkSettings(), motion: dict | None = None, url=None):
        self.settings, self.motion = settings, motion
        self.url = url  # to reopen the port in resume()
        self.identity: P.Identity | None = None
        self.events: queue.Queue = queue.Queue()  # LinkEvent(at, Button | Alarm) for the application
        self.stats = collections.Counter()
        self._next_seq = 1
        self._pending: dict[int, _Line] = {}  # unacknowledged lines by seq (in seq order)
        self._inflight: collections.deque = collections.deque()  # (seq, nbytes) sent, answer not yet seen
        self._last_answer = time.monotonic()
        self._last_heard = time.monotonic()
        self._status_asked: float | None = None  # when silence made us ask `?` (None: not asking)
        self._status_sent = 0.0
        self._stream: _Stream | None = None
        self._stream_progress_cb = None
        self._port = None
        self._attach(port)

    # -- opening -----------------------------------------------------------

    @classmethod
    def open(cls, config=None, port: str | None = None, configure: bool = True) -> "Link":
        """Open the configured port (or auto-detect), handshake, and send MOTION + SERVO."""
        from .. import config as config_module
        from . import ports

        config = config if config is not None else config_module.load()
        settings = LinkSettings.from_config(config)
        url = port or settings.port
        if url is None:
            url = ports.find_robot(settings).port
        link = cls(ports.open_port(url, settings.baud), settings, config["motion"], url=url)
        try:
            link.handshake()
            if configure:
                link.configure()
        except BaseException:
            link.close()
            raise
        return link

    def _attach(self, port) -> None:
        self._port = port
        self._inbox: queue.Queue = queue.Queue()
        self._reader = Reader(port, self._inbox, self.events)
        self._reader.start()
        self._pending.clear()
        self._inflight.clear()

    def close(self) -> None:
        self._detach()

    def _detach(self) -> None:
        """Stop the reader and close the port (best effort: it may already be gone)."""
        self._reader.stop_flag.set()
        try:
            self._port.close()
        except Exception:
            pass
        self._reader.join(timeout=1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- low level ---------------------------------------------------------

    def _write(self, data: bytes) -> None:
        try:
            self._port.write(data)
        except Exception as exc:
            raise DisconnectedError(
                f"the serial port went away while writing ({type(exc).__name__}: {exc}); "
                "reconnect and call resume()"
            ) from exc

    def _submit(self, command: str, entry: _Entry | None = None) -> int:
        seq = self._next_seq
        self._next_seq += 1
        self._pending[seq] = _Line(seq, command, P.command_line(seq, command), entry)
        if entry is not None:
            entry.seq = seq
        return seq

    def _pump(self) -> None:
        """Send pending lines in seq order while the firmware's receive buffer has room."""
        window = self.identity.rx_bytes if self.identity else P.MAX_LINE
        in_flight = sum(n for _, n in self._inflight)
        for line in self._pending.values():
            if not line.needs_send:
                continue
            if in_flight + len(line.data) > window:
                break
            if line.sends > self.settings.max_resends:
                raise TooManyResendsError(
                    f"command N{line.seq} {line.command!r} was sent {line.sends} times without an answer; "
                    "the link is too noisy (check the USB cable and link.baud)"
                )
            if not self._inflight:
                self._last_answer = time.monotonic()  # the answer clock starts with the first line in flight
            self._write(line.data)
            self.stats["resends" if line.sends else "lines_sent"] += 1
            line.sends += 1
            line.needs_send = False
            self._inflight.append((line.seq, len(line.data)))
            in_flight += len(line.data)

    def _rewind(self, from_seq: int | None = None) -> None:
        """Resend every pending line from `from_seq` (default: the oldest) with the same seq."""
        for line in self._pending.values():
            if from_seq is None or line.seq >= from_seq:
                line.needs_send = True

    def _answered(self, seq: int | None) -> None:
        """One answer arrived: retire the transmission it answers and every earlier one (bytes are in order)."""
        self._last_answer = time.monotonic()
        if seq is not None and any(s == seq for s, _ in self._inflight):
            while self._inflight:
                s, _ = self._inflight.popleft()
                if s == seq:
                    break
        elif self._inflight:
            self._inflight.popleft()

    def _acknowledge_through(self, seq: int) -> None:
        for s in [s for s in self._pending if s <= seq]:
            del self._pending[s]

    def _next_message(self, timeout: float):
        try:
            arrived, message = self._inbox.get(timeout=max(timeout, 0))
        except queue.Empty:
            return None
        self._last_heard = arrived
        self._status_asked = None
        return message

    def _wait_step(self, deadline: float | None = None):
        """Pump, wait for the next message or a timeout, and handle link-level timeouts.

        Returns the message (already applied to the acknowledgement state), or None on a timeout step.
        """
        self._pump()
        now = time.monotonic()
        if self._status_asked is None:
            waits = [self._last_heard + self.settings.silence_timeout_s - now]
        else:  # already asking: the silence deadline has passed and must not make us spin
            waits = [self._status_asked + self.settings.silence_timeout_s - now,
                     self._status_sent + self.settings.ack_timeout_s - now]
        if self._pending:
            waits.append(self._last_answer + self.settings.ack_timeout_s - now)
        if deadline is not None:
            waits.append(deadline - now)
        # Never a zero wait: a spinning driver holds the GIL and starves the reader thread.
        message = self._next_message(max(min(waits), MIN_WAIT_S))
        if message is None:
            self._on_timeout()
            return None
        self._apply(message)
        return message

    def _on_timeout(self) -> None:
        now = time.monotonic()
        if self._status_asked is not None and now - self._status_asked >= self.settings.silence_timeout_s:
            raise SilentBoardError(
                f"the board stopped answering: nothing for {now - self._last_heard:.1f} s, not even to '?' "
                "(board hung, unpowered, or the USB cable was pulled)"
            )
        if self._status_asked is not None and now - self._status_sent >= self.settings.ack_timeout_s:
            self._write(P.RT_STATUS)  # the `?` byte itself may have been lost: repeat it within the bound
            self._status_sent = now
        if self._pending and now - self._last_answer >= self.settings.ack_timeout_s:
            self.stats["timeouts"] += 1
            self._inflight.clear()  # after this long the firmware has read everything we sent
            self._rewind()
            self._last_answer = now
        if now - self._last_heard >= self.settings.silence_timeout_s and self._status_asked is None:
            if self._pending or (self._stream and not self._stream.finished()):
                self._ask_status()
            else:
                self._last_heard = now

    def _report_progress(self, newly) -> None:
        if newly and self._stream_progress_cb:
            self._stream_progress_cb(self._stream.progress())

    def _ask_status(self) -> None:
        self._write(P.RT_STATUS)
        self.stats["status_asked"] += 1
        self._status_asked = self._status_sent = time.monotonic()

    def _apply(self, message) -> None:
        """Acknowledgement bookkeeping common to every phase."""
        match message:
            case P.Ok(seq, dup):
                self._answered(seq)
                self._acknowledge_through(seq)
                self.stats["dup_acks"] += dup
            case P.Err(seq, _):
                self._answered(seq)
                if seq is not None:  # the seq is consumed (nothing moved); earlier ones were accepted
                    self._acknowledge_through(seq)
                else:  # garbage reached the firmware: resend unless a fresh copy is on its way
                    self.stats["err_no_seq"] += 1
                    oldest = next(iter(self._pending), None)
                    if oldest is not None and all(s != oldest for s, _ in self._inflight):
                        self._rewind()
            case P.Resend(seq):
                self._answered(None)
                self.stats["resend_requests"] += 1
                self._acknowledge_through(seq - 1)
                if all(s != seq for s, _ in self._inflight):  # else the resent copy is already on its way
                    self._rewind(seq)
            case P.Done(seq, ms):
                self._acknowledge_through(seq)
                if self._stream is not None:
                    newly = self._stream.mark_done_through(seq, ms)
                    self.stats["done_lost"] += sum(1 for e in newly if e.seq != seq)
                    self._report_progress(newly)
            case P.Status(accepted=acc, done=done):
                self._acknowledge_through(acc)
                if self._stream is not None and done:
                    newly = self._stream.mark_done_through(done)
                    self.stats["done_lost"] += len(newly)
                    self._report_progress(newly)
            case Garbled():
                self.stats["garbled_lines"] += 1
                self._rewind()
            case Disconnected(reason):
                raise DisconnectedError(f"the serial port went away ({reason}); reconnect and call resume()")

    # -- handshake ---------------------------------------------------------

    def handshake(self) -> P.Identity:
        """Get the firmware's identity (banner or HELLO) and check it; classify any failure.

        Asks with the real-time `?` (answered whatever the firmware's sequence state), then sends
        HELLO with the seq the status says it expects.  A banner (the board just reset) is enough.
        """
        settings = self.settings
        poll_interval = max(MIN_STATUS_POLL_S, settings.ack_timeout_s)
        deadline = time.monotonic() + settings.handshake_timeout_s
        self.identity = None
        self._write(b"\n" + P.RT_STATUS)  # end any partial line, then ask for a status
        next_poll = time.monotonic() + poll_interval
        foreign: list[str] = []
        ours = 0  # lines of our protocol seen (even damaged ones)
        hello_seq = None
        while True:
            hello_pending = hello_seq is not None and hello_seq in self._pending
            if self.identity is not None and not hello_pending:
                break
            now = time.monotonic()
            if now >= deadline:
                break
            if hello_pending:
                self._pump()
            try:
                arrived, message = self._inbox.get(timeout=max(0.0, min(deadline, next_poll) - now))
            except queue.Empty:
                if time.monotonic() >= next_poll:
                    if hello_pending:
                        self._inflight.clear()
                        self._rewind()  # HELLO unanswered: resend it (same seq)
                    else:
                        self._write(P.RT_STATUS)
                    next_poll = time.monotonic() + poll_interval
                continue
            self._last_heard = arrived
            match message:
                case P.Identity():
                    ours += 1
                    self._check_identity(message)
                    if not hello_pending:  # a banner: the board just reset; it accepts any seq > last
                        self._next_seq = max(self._next_seq, message.last + 1)
                    self.identity = message
                case P.Status():
                    ours += 1
                    if self.identity is None and not hello_pending:
                        # It speaks our protocol.  Without a reset it expects exactly acc + 1; after a
                        # reset anything above `last` (= done): max(acc, done) + 1 suits both.
                        self._next_seq = max(message.accepted, message.done) + 1
                        self._pending.clear()
                        self._inflight.clear()
                        hello_seq = self._submit("HELLO")
                case Foreign(text):
                    foreign.append(text)
                case Garbled(raw) if _looks_ours(raw):
                    ours += 1
                    next_poll = min(next_poll, time.monotonic() + settings.ack_timeout_s)  # ask again soon
                    self._apply(message)
                case Garbled(raw) if message.readable:
                    foreign.append(raw.decode("ascii"))
                case Disconnected(reason):
                    raise DisconnectedError(f"the serial port went away during the handshake ({reason})")
                case Garbled():
                    pass
                case _:
                    ours += 1
                    self._apply(message)
        if self.identity is None:
            raise self._handshake_failure(foreign, ours)
        self._last_answer = self._last_heard = time.monotonic()
        return self.identity

    def _check_identity(self, identity: P.Identity) -> None:
        if identity.firmware != P.FIRMWARE_NAME:
            raise WrongFirmwareError(
                f"wrong firmware on {self.url or 'the port'}: it calls itself {identity.firmware!r}, "
                f"not {P.FIRMWARE_NAME!r}; flash firmware/ (make -C firmware flash PORT={self.url or '<port>'})"
            )
        if identity.proto != P.PROTOCOL_VERSION:
            raise WrongFirmwareError(
                f"the firmware on {self.url or 'the port'} ({identity.firmware} {identity.version}) speaks "
                f"protocol {identity.proto}, this program speaks {P.PROTOCOL_VERSION}: flash the firmware from "
                f"this checkout (make -C firmware flash PORT={self.url or '<port>'})"
            )

    def _handshake_failure(self, foreign, ours) -> LinkError:
        where = self.url or "the port"
        waited = f"{self.settings.handshake_timeout_s:.1f} s"
        sample = bytes(self._reader.sample)
        printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in sample)
        if ours:
            return HandshakeError(
                f"the cube-robot firmware on {where} answers, but the identity exchange did not complete "
                f"within {waited}: the link is losing bytes (check the USB cable; try again)"
            )
        if sample and (foreign or printable >= 0.9 * len(sample)):
            text = "; ".join(repr(t[:40]) for t in foreign[:3]) or repr(sample[:40].decode("ascii", "replace"))
            return WrongFirmwareError(
                f"wrong firmware on {where}: it answers with text that is not the cube-robot protocol "
                f"({text}); flash firmware/ or choose another port (cube-robot doctor)"
            )
        if sample:
            return WrongBaudError(
                f"wrong baud on {where}: {self._reader.bytes_received} unreadable bytes in {waited} "
                f"(e.g. {sample[:12].hex(' ')}); the firmware uses {P.BAUD} baud, link.baud is {self.settings.baud}"
            )
        return NoAnswerError(
            f"no answer on {where} within {waited} (wrong port, board unpowered, or wrong baud)"
        )

    # -- immediate commands ------------------------------------------------

    def request(self, command: str, timeout_s: float | None = None) -> list:
        """Send an immediate command; return the reply lines before its `ok`.  Raises on `err`."""
        seq = self._submit(command)
        replies = []
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            message = self._wait_step(deadline)
            match message:
                case None:
                    if deadline is not None and time.monotonic() >= deadline:
                        raise SilentBoardError(f"no answer to {command!r} within {timeout_s:.1f} s")
                case P.Err(s, code) if s == seq:
                    if code == P.ErrorCode.ALARM_ACTIVE:
                        raise AlarmError(self._alarm_code(), detail=f"{command.split()[0]} refused: " + CLEAR_ALARM_HINT)
                    raise CommandRejectedError(command, code)
                case P.Identity() if command == "HELLO":
                    replies.append(message)
                case P.Identity():
                    self._on_banner(message)
                case P.Status():
                    replies.append(message)  # (button and alarm events go to self.events only)
            if seq not in self._pending:  # acknowledged (by `ok`, or covered by a later `status acc`)
                return replies

    def status(self) -> P.Status:
        """Ask with the real-time `?` (works even when the queue is full)."""
        for _ in range(self.settings.max_resends + 1):
            self._ask_status()
            asked = time.monotonic()
            deadline = asked + self.settings.silence_timeout_s
            heard = False
            while time.monotonic() < deadline:
                message = self._wait_step(deadline)
                if isinstance(message, P.Status):
                    return message
                if isinstance(message, Garbled):
                    heard = True
                    break  # perhaps our status line, damaged: ask again
                heard = heard or message is not None
            if not heard:
                raise SilentBoardError(
                    f"the board is silent: no answer to '?' within {self.settings.silence_timeout_s:.1f} s "
                    "(board hung, unpowered, or the USB cable was pulled)"
                )
        raise TooManyResendsError(f"no readable status line after {self.settings.max_resends + 1} requests; "
                                  "the link is too noisy (check the USB cable)")

    def _alarm_code(self) -> P.AlarmCode:
        try:
            return self.status().alarm
        except LinkError:
            return P.AlarmCode.NONE

    def configure(self) -> None:
        """Send the motion settings (MOTION, SERVO); the queue must be empty, so wait for it."""
        if self.motion is None:
            return
        self.wait_idle()
        self.request(P.motion_command(self.motion))
        self.request(P.servo_command(self.motion))

    def wait_idle(self, limit_s: float = 120.0) -> P.Status:
        """Wait until the firmware's queue has drained (bounded: silence is detected, and `limit_s`)."""
        deadline = time.monotonic() + limit_s
        while True:
            status = self.status()
            if status.state == P.State.ALARM:
                raise AlarmError(status.alarm, detail=CLEAR_ALARM_HINT)
            if status.state == P.State.IDLE:
                return status
            if time.monotonic() > deadline:
                raise LinkError(f"the board is still busy after {limit_s:.0f} s (status {status})")
            self._wait_step(time.monotonic() + self.settings.silence_timeout_s / 2)

    def clear_alarm(self) -> None:
        """RESET: clear a latched alarm (after the user has checked the robot)."""
        self.request("RESET")

    def estop(self) -> None:
        self._write(P.RT_ESTOP)

    def wait_button(self, timeout_s: float | None = None) -> bool:
        """Wait for the start button (a press already queued counts); an alarm during the wait raises."""
        called = time.monotonic()
        deadline = None if timeout_s is None else called + timeout_s
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            try:
                event = self.events.get(timeout=remaining)
            except queue.Empty:
                return False
            if isinstance(event.message, P.Button) and event.message.name == "start":
                return True
            if isinstance(event.message, P.Alarm) and event.at >= called:  # older alarms were reported already
                raise AlarmError(event.message.code, event.message.stop_us, detail=CLEAR_ALARM_HINT)

    # -- streaming ---------------------------------------------------------

    def run(self, plan, progress: Callable[[StreamProgress], None] | None = None) -> StreamResult:
        """Stream a Plan (or a list of Grip/Turn actions or command strings) and wait for every `done`.

        The first Grip is sent too: it makes the robot take the cube with that pair.
        Returns each action's measured duration.  Raises a LinkError with `.progress` on failure;
        after a DisconnectedError, `resume()` continues once the port is back.
        """
        actions = plan.actions if hasattr(plan, "actions") else list(plan)
        commands = [a if isinstance(a, str) else P.action_command(a) for a in actions]
        if self.identity is None:
            raise LinkError("handshake() first")
        self._stream = _Stream(commands, _regrip_lookup(commands))
        self._stream.stale_cut = self.identity.cut
        self._stream_progress_cb = progress
        return self._run_stream()

    def resume(self, port=None) -> StreamResult:
        """After a DisconnectedError (or SilentBoardError): reconnect and continue the interrupted stream.

        `port` is a new pyserial-like port object or URL (default: reopen the URL this link was opened with).
        """
        from . import ports

        stream = self._stream
        if stream is None:
            raise LinkError("nothing to resume: no stream was interrupted")
        self._detach()
        if port is None or isinstance(port, str):
            port = ports.open_port(port or self.url, self.settings.baud)
        self.identity = None
        self._attach(port)
        identity = self.handshake()
        self._check_cut(identity)
        status = self.wait_idle()  # let the board finish what it had queued; `done` lines complete entries
        self._check_memory(max(status.done, identity.last))
        stream.mark_done_through(max(status.done, identity.last))
        stream.restart_after_reset()
        self.configure()
        return self._run_stream()

    def _run_stream(self) -> StreamResult:
        stream = self._stream
        try:
            while not stream.finished():
                self._submit_actions()
                message = self._wait_step()
                self._stream_message(message)
        except LinkError as exc:
            if exc.progress is None:
                exc.with_progress(stream.progress(interrupted=not isinstance(exc, (DisconnectedError,))))
            raise
        progress = stream.progress()
        return StreamResult(progress.durations_ms, time.monotonic() - stream.started, dict(self.stats))

    def _submit_actions(self) -> None:
        stream = self._stream
        depth = self.identity.queue_depth
        while stream.next < len(stream.entries) and stream.outstanding() < depth:
            entry = stream.entries[stream.next]
            self._submit(entry.command, entry)
            stream.by_seq[entry.seq] = entry
            stream.next += 1

    def _stream_message(self, message) -> None:
        stream = self._stream
        match message:
            case P.Status(state=P.State.ALARM) as status:
                self._stop_on_alarm(status.alarm, None)
            case P.Alarm(code, stop_us):
                self._stop_on_alarm(code, stop_us)
            case P.Identity():
                self._on_banner(message)
            case P.Err(seq, code) if seq is not None and seq in stream.by_seq:
                if code == P.ErrorCode.ALARM_ACTIVE:
                    self._stop_on_alarm(self._alarm_code(), None)
                self._stop_on_reject(stream.by_seq[seq], code)

    def _stop_on_alarm(self, code: P.AlarmCode, stop_us: int | None) -> None:
        """The firmware flushed its queue: learn exactly what completed, then raise."""
        stream = self._stream
        try:
            status = self.status()
            stream.mark_done_through(status.done)
            if code == P.AlarmCode.NONE:
                code = status.alarm
        except LinkError:
            pass  # report what the `done` lines told us
        raise AlarmError(code, stop_us, detail=CLEAR_ALARM_HINT).with_progress(stream.progress(interrupted=True))

    def _stop_on_reject(self, entry: _Entry, code: P.ErrorCode) -> None:
        """An action was refused: let the ones before it finish (so the cube state is known), then raise."""
        stream = self._stream
        entry.rejected = True
        stream.next = len(stream.entries)
        for later in stream.entries:
            if later.seq is not None and later.seq > entry.seq:
                self._pending.pop(later.seq, None)
        error = CommandRejectedError(entry.command, code)
        try:
            status = self.wait_idle()
            stream.mark_done_through(status.done)
        except LinkError:
            pass
        ran_anyway = [e.index + 1 for e in stream.entries
                      if e.done and e.seq is not None and e.seq > entry.seq and e.index is not None]
        if ran_anyway:
            error.args = (error.args[0] + f"; action(s) {ran_anyway} after it were already queued and ran",)
        raise error.with_progress(stream.progress())

    def _check_cut(self, identity: P.Identity) -> None:
        stream = self._stream
        if identity.cut and identity.cut != stream.stale_cut:
            entry = stream.by_seq.get(identity.cut)
            what = f"action {entry.index + 1} ({entry.command})" if entry and entry.index is not None else f"seq {identity.cut}"
            error = CubeStateUncertainError(
                f"the board reset while {what} was moving: the cube may be between positions. "
                "Straighten the cube by hand, scan it again and start a new solve"
            )
            if entry is not None:
                entry.done = False
            raise error.with_progress(stream.progress(interrupted=True))

    def _check_memory(self, last: int) -> None:
        stream = self._stream
        done_seqs = [e.seq for e in stream.entries if e.done and e.seq is not None]
        if done_seqs and last < max(done_seqs):
            raise CubeStateUncertainError(
                f"the board restarted without its memory (power cycle?): it reports last action seq "
                f"{last}, but seq {max(done_seqs)} had completed; scan the cube again"
            ).with_progress(stream.progress(interrupted=True))

    def _on_banner(self, identity: P.Identity) -> None:
        """The board reset (its start-up banner): resume after `last`, or stop if an arm was moving."""
        self.stats["resets"] += 1
        self._check_identity(identity)
        self.identity = identity
        stream = self._stream
        self._pending.clear()
        self._inflight.clear()
        self._next_seq = max(self._next_seq, identity.last + 1)
        if stream is None:
            return
        self._check_cut(identity)
        self._check_memory(identity.last)
        stream.mark_done_through(identity.last)
        stream.restart_after_reset()
        self.configure()


CLEAR_ALARM_HINT = "Check the robot, then clear the alarm with `cube-robot link reset-alarm`."


_OURS = re.compile(rb"\*[0-9A-F]{2}")


def _looks_ours(raw: bytes) -> bool:
    """A damaged line of our own protocol (has a *CC checksum) rather than another device's text."""
    return P.FIRMWARE_NAME.encode() in raw or bool(_OURS.search(raw))


def _regrip_lookup(commands: list[str]) -> Callable[[int], str | None]:
    """For a resume at action i: the GRIP that was holding before i (if the next action is a turn)."""

    def regrip(i: int) -> str | None:
        if commands[i].startswith("GRIP"):
            return None
        for command in reversed(commands[:i]):
            if command.startswith("GRIP"):
                return command
        return None

    return regrip
