"""A serial device served from a background thread: on a pty, or on a TCP port of 127.0.0.1.

The mock firmware (robot/sim/mock_firmware.py) and ForeignDevice (something that is not our
firmware, for handshake tests) each hold one, and give it the functions that handle bytes and
timers on the device thread; test hooks run there too (`call`), so they never race the protocol.
"""

from __future__ import annotations

import os
import queue
import random
import select
import socket
import threading
import tty
from typing import Callable


class Endpoint:
    """The device side of a pty or of a TCP port on 127.0.0.1 (one client at a time)."""

    def __init__(self, transport: str):
        self.transport = transport
        self.conn: socket.socket | None = None
        self.on_connect: Callable[[], None] = lambda: None  # SerialDevice sets its holder's
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
            conn = self.conn = self.listener.accept()[0]
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.on_connect()
            return b""
        try:
            data = self.conn.recv(4096)
        except OSError:
            data = b""
        if not data:
            self.drop()
        return data

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


class SerialDevice:
    """A background thread serving an endpoint; its holder's functions handle bytes and timers there.

    receive(data): bytes from the host; tick(): after every wake-up; timeout(): seconds until the
    holder next needs a tick; on_connect(): a TCP client connected (an Uno resets when its port opens)."""

    def __init__(self, transport: str, receive: Callable[[bytes], None], tick: Callable[[], None] = lambda: None,
                 timeout: Callable[[], float] = lambda: 0.05, on_connect: Callable[[], None] = lambda: None,
                 name: str = "SerialDevice"):
        self._receive, self._tick, self._timeout = receive, tick, timeout
        self.endpoint = Endpoint(transport)
        self.endpoint.on_connect = on_connect
        self.url = self.endpoint.url
        self._calls: queue.Queue = queue.Queue()  # functions to run on the device thread
        self._wake_r, self._wake_w = os.pipe()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=2)
        self.endpoint.close()
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
        self.call(self.endpoint.drop)

    def _loop(self):
        while not self._stop.is_set():
            timeout = self._timeout()
            ready, _, _ = select.select(self.endpoint.wait_fds() + [self._wake_r], [], [], timeout)
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
                    data = self.endpoint.read(fd)
                    if data:
                        self._receive(data)
            self._tick()

    def send(self, data: bytes) -> None:
        self.endpoint.write(data)


class ForeignDevice:
    """Something that is not our firmware, for handshake tests.

    kind "grbl": readable text of another firmware; "garbage": what a baud mismatch looks like
    (unreadable bytes); "silent": nothing at all.
    """

    def __init__(self, kind: str, transport: str = "tcp", seed: int = 1):
        self.device = SerialDevice(transport, self._receive, name="ForeignDevice")
        self.url = self.device.url
        self.kind = kind
        self._rng = random.Random(seed)
        self.bytes_received = 0

    def start(self) -> "ForeignDevice":
        self.device.start()
        return self

    def stop(self) -> None:
        self.device.stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _receive(self, data: bytes) -> None:
        self.bytes_received += len(data)
        if self.kind == "grbl":
            if b"?" in data:
                self.device.send(b"<Idle|MPos:0.000,0.000,0.000|FS:0,0>\r\n")
            if b"\n" in data:
                self.device.send(b"\r\nGrbl 1.1h ['$' for help]\r\nerror:20\r\n")
        elif self.kind == "garbage":
            # At the wrong baud every byte decodes as noise, with an occasional newline.
            self.device.send(bytes(self._rng.choice([0x80, 0xF8, 0x00, 0xFE, 0x1C, 0xE0, 0x0A, 0x9F])
                                   for _ in range(3 * len(data))))
