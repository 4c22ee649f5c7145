"""A fault-injecting proxy between the host and a serial port, for link tests.

    with FaultProxy(device_url, rate=0.01, seed=3) as proxy:
        link = Link(serial_for_url(proxy.url), ...)     # proxy.url is socket://127.0.0.1:PORT

Every byte, in both directions, is independently hit with probability `rate`
by one of: corrupt (replaced by a random different byte), drop, duplicate, or
delay (the stream pauses up to `max_delay_s`; a serial line never reorders).
It is honest: a corrupted byte can become anything, including the real-time
bytes `!` and `?` or a newline, so any protocol property that survives it
survives by design, not because the proxy spared it.  `faults` records every
injected fault so a test can tell what happened (e.g. a `!` it created).

`disconnect_after(n, direction)` closes the host's connection once n bytes
have passed in that direction (a pulled USB cable); the host may connect again.

`line_faults` replay a sequence seen in a run, whatever the timing: each
LineFault hits the first whole line of one connection and direction that
matches its pattern (its checksum damaged, or it and all after it held until
lines have passed the other way).  The random faults still apply on top.

The device side is any pyserial URL or path: the mock firmware's pty or
socket, or the simavr emulator's pty.  With `reopen_device=True` the device
port is opened per host connection (an Uno resets whenever its port opens);
by default it is opened once and kept, and its output is dropped while no
host is connected (as a real port flushes input on open).
"""

from __future__ import annotations

import random
import re
import socket
import threading
import time
from dataclasses import dataclass

import serial

TO_DEVICE, TO_HOST = "to_device", "to_host"
# What a device port raises once it is gone: a pyserial port closed by another thread (a pulled cable,
# disconnect_now) raises TypeError/AttributeError from its emptied handles, not only SerialException.
DEVICE_GONE = (serial.SerialException, OSError, TypeError, AttributeError)
KINDS = ("corrupt", "drop", "duplicate", "delay")
REAL_TIME_BYTES = b"?!"  # host -> board bytes outside lines: a line fault never holds them back


@dataclass(frozen=True)
class Fault:
    direction: str
    position: int  # index of the byte in that direction's stream
    kind: str
    original: int
    replacement: int | None = None  # for corrupt


@dataclass
class LineFault:
    """A fault a test places on one whole line (to replay a sequence a run showed).

    kind "corrupt": one checksum digit of the line is changed (the board asks for a resend);
    kind "hold": the line and everything after it in its direction wait until `release_after`
    more lines have passed the other way (an answer that arrives only after the host resent)."""

    direction: str
    connection: int  # the host connection (1: the first)
    pattern: bytes  # a regular expression searched in the line
    kind: str
    release_after: int = 1
    fired: bool = False


class FaultProxy:
    def __init__(self, device_url: str, rate: float = 0.01, seed: int = 0, kinds=KINDS,
                 max_delay_s: float = 0.02, baud: int = 115200, reopen_device: bool = False,
                 directions=(TO_DEVICE, TO_HOST), on_host_connect=None, line_faults=()):
        self.device_url, self.rate, self.kinds = device_url, rate, tuple(kinds)
        self.max_delay_s, self.baud, self.reopen_device = max_delay_s, baud, reopen_device
        self._rng = {TO_DEVICE: random.Random(f"{seed}-{TO_DEVICE}"), TO_HOST: random.Random(f"{seed}-{TO_HOST}")}
        self.directions = tuple(directions)  # which directions get faults
        self.on_host_connect = on_host_connect  # called when a host connects (e.g. a mock's reset)
        self.faults: list[Fault] = []
        self.passed = {TO_DEVICE: 0, TO_HOST: 0}  # bytes taken from each side
        self.connections = 0
        self._disconnect_at: dict[str, int] = {}
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(1)
        self.url = f"socket://127.0.0.1:{self._listener.getsockname()[1]}"
        self._stop = threading.Event()
        self._host: socket.socket | None = None
        self._device = None
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self.line_faults = list(line_faults)
        self._script_lock = threading.Lock()
        self._partial = {TO_DEVICE: bytearray(), TO_HOST: bytearray()}  # a line not yet whole
        self._held: dict[str, bytearray | None] = {TO_DEVICE: None, TO_HOST: None}  # bytes held back by a "hold" line fault
        self._release_in = {TO_DEVICE: 0, TO_HOST: 0}  # lines the other way until the hold ends

    # -- control -----------------------------------------------------------

    def start(self) -> "FaultProxy":
        if not self.reopen_device:
            self._device = self._open_device()
        thread = threading.Thread(target=self._accept_loop, name="fault-proxy-accept", daemon=True)
        thread.start()
        self._threads.append(thread)
        reader = threading.Thread(target=self._device_loop, name="fault-proxy-to-host", daemon=True)
        reader.start()
        self._threads.append(reader)
        return self

    def stop(self) -> None:
        self._stop.set()
        self._close_host()
        try:
            self._listener.close()
        except OSError:
            pass
        for thread in self._threads:
            thread.join(timeout=2)
        if self._device is not None:
            self._device.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def disconnect_after(self, count: int, direction: str = TO_DEVICE) -> None:
        """Close the host connection once `count` more bytes have passed in `direction`."""
        self._disconnect_at[direction] = self.passed[direction] + count

    def disconnect_now(self) -> None:
        self._close_host()

    def faults_of(self, kind: str, direction: str | None = None) -> list[Fault]:
        return [f for f in self.faults if f.kind == kind and (direction is None or f.direction == direction)]

    def created(self, byte: bytes, direction: str = TO_DEVICE) -> bool:
        """Did a corruption turn some byte into `byte` (e.g. b'!')?"""
        return any(f.replacement == byte[0] for f in self.faults_of("corrupt", direction))

    # -- plumbing ----------------------------------------------------------

    def _open_device(self):
        from ..link.ports import open_port  # sets TCP_NODELAY on socket:// devices (no Nagle stalls)

        port = open_port(self.device_url, self.baud)
        port.timeout = 0.01
        return port

    def _close_host(self) -> None:
        with self._lock:
            host, self._host = self._host, None
        if host is not None:
            try:
                host.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            host.close()
        if self.reopen_device and self._device is not None:
            device, self._device = self._device, None
            device.close()

    def _accept_loop(self) -> None:
        self._listener.settimeout(0.05)
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except (socket.timeout, OSError):
                continue
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(0.01)
            with self._lock:
                self._host = conn  # first: the banner of the reset that opening causes must reach it
            try:
                if self.reopen_device:
                    self._device = self._open_device()
                self.connections += 1
                if self.on_host_connect is not None:
                    self.on_host_connect()
                self._host_loop(conn)
            except DEVICE_GONE:  # this connection is over; the proxy keeps accepting (a cable plugged in again)
                if self._host is conn:
                    self._close_host()

    def _host_loop(self, conn: socket.socket) -> None:
        """Host -> device, until the host goes away."""
        while not self._stop.is_set() and self._host is conn:
            try:
                data = conn.recv(256)
            except socket.timeout:
                continue
            except OSError:
                break
            if not data:
                break
            out = self._inject(TO_DEVICE, data)
            try:
                if out and self._device is not None:
                    self._device.write(out)
            except DEVICE_GONE:  # closed under us (a pulled cable): this connection is over
                break
        if self._host is conn:
            self._close_host()

    def _device_loop(self) -> None:
        """Device -> host; device output is dropped while no host is connected."""
        while not self._stop.is_set():
            device = self._device
            if device is None:
                time.sleep(0.01)
                continue
            try:
                data = device.read(device.in_waiting or 1)
            except DEVICE_GONE:
                time.sleep(0.01)
                continue
            host = self._host
            if not data or host is None:
                continue
            out = self._inject(TO_HOST, data)
            try:
                if out:
                    host.sendall(out)
            except OSError:
                pass

    def _scripted(self, direction: str, data: bytes) -> bytes:
        """Apply the line faults: lines go on whole, held ones when their release comes."""
        other = TO_HOST if direction == TO_DEVICE else TO_DEVICE
        out = bytearray()
        with self._script_lock:
            partial = self._partial[direction]
            for byte in data:
                if direction == TO_DEVICE and byte in REAL_TIME_BYTES:
                    out.append(byte)  # the board takes these wherever they are
                    continue
                partial.append(byte)
                if byte != ord("\n"):
                    continue
                line = self._line_fault(direction, bytes(partial))
                partial.clear()
                held = self._held[direction]
                (held if held is not None else out).extend(line)
                self._line_passed(other)
        return bytes(out)  # the lines before a hold (and real-time bytes) go now

    def _line_fault(self, direction: str, line: bytes) -> bytes:
        for fault in self.line_faults:
            if (fault.fired or fault.direction != direction or fault.connection != self.connections
                    or not re.search(fault.pattern, line)):
                continue
            fault.fired = True
            if fault.kind == "corrupt":
                star = line.rindex(b"*") + 1
                digit = line[star:star + 1]
                line = line[:star] + (b"0" if digit != b"0" else b"1") + line[star + 1:]
            elif fault.kind == "hold":
                self._held[direction] = bytearray()
                self._release_in[direction] = fault.release_after
            else:
                raise ValueError(f"unknown line fault kind {fault.kind!r}")
        return line

    def _line_passed(self, direction_held: str) -> None:
        """A line went the other way: a hold on `direction_held` may end (its bytes go now, in order)."""
        held = self._held[direction_held]
        if held is None:
            return
        self._release_in[direction_held] -= 1
        if self._release_in[direction_held] <= 0:
            data, self._held[direction_held] = bytes(held), None
            self._forward_now(direction_held, data)

    def _inject(self, direction: str, data: bytes) -> bytes:
        if self.line_faults:
            data = self._scripted(direction, data)
        rng = self._rng[direction]
        out = bytearray()
        for byte in data:
            position = self.passed[direction]
            self.passed[direction] += 1
            limit = self._disconnect_at.get(direction)
            if limit is not None and position >= limit:
                del self._disconnect_at[direction]
                self._close_host()
                return bytes(out)
            if rng.random() >= self.rate or direction not in self.directions:
                out.append(byte)
                continue
            kind = rng.choice(self.kinds)
            if kind == "corrupt":
                new = byte ^ rng.randrange(1, 256)
                self.faults.append(Fault(direction, position, kind, byte, new))
                out.append(new)
            elif kind == "drop":
                self.faults.append(Fault(direction, position, kind, byte))
            elif kind == "duplicate":
                self.faults.append(Fault(direction, position, kind, byte))
                out += bytes((byte, byte))
            else:  # delay: the bytes so far go now, the rest after a pause
                self.faults.append(Fault(direction, position, kind, byte))
                self._forward_now(direction, bytes(out))
                out.clear()
                time.sleep(rng.uniform(0, self.max_delay_s))
                out.append(byte)
        return bytes(out)

    def _forward_now(self, direction: str, data: bytes) -> None:
        if not data:
            return
        try:
            if direction == TO_DEVICE and self._device is not None:
                self._device.write(data)
            elif direction == TO_HOST and self._host is not None:
                self._host.sendall(data)
        except DEVICE_GONE:
            pass
