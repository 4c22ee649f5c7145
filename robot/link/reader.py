"""The reader thread: bytes from the port -> parsed lines, without ever blocking the driver.

Protocol traffic goes to the driver's inbox as (arrival time, message); user-facing
events (start button, alarm) also go to `events` for the application.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass

from . import protocol as P

READ_CHUNK_TIMEOUT_S = 0.02  # how often the reader thread checks its stop flag


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
        message: P.Reply | Garbled | Foreign
        try:
            message = P.parse_reply(P.unframe(line)) if len(line) < P.MAX_REPLY else Garbled(line)
        except P.FrameError:
            message = Garbled(line)
        except P.UnknownReply:
            message = Foreign(line.decode("ascii", "replace"))
        if isinstance(message, (P.Button, P.Alarm)):
            self.events.put(LinkEvent(now, message))
        self.inbox.put((now, message))
