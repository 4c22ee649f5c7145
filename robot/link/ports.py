"""Serial ports: open one (any pyserial URL), list them, ask each what answers.

A real Uno resets when its port is opened (about 2 s of bootloader), so probing a port takes up to
link.handshake_timeout_ms; `find_robot` probes every port and keeps the one where the cube-robot
firmware answers.  A probe asked to keep its connection (`keep=`) hands it on open: the robot's
port is opened once, never probed and then opened again.
"""

from __future__ import annotations

import errno
import socket
from dataclasses import dataclass
from typing import Any

import serial
import serial.tools.list_ports

from .errors import HandshakeError, LinkError, NoAnswerError, PortError, WrongBaudError, WrongFirmwareError
from .handshake import Connection
from .protocol import Identity


def open_port(url: str | None, baud: int):
    """serial_for_url with errors that name the port (paths, COM names, socket://, loop://)."""
    if url is None:  # pyserial's own refusal says only "Port must be configured before it can be used"
        raise PortError("no serial port to open: set link.port in config.yaml or give --port")
    try:
        # exclusive: a second program on the port (another cube-robot, a doctor during a run) would
        # read half of the replies and fail as a "noisy link"; locked, it is refused as busy.
        port = serial.serial_for_url(url, baudrate=baud, timeout=0.02, write_timeout=2, exclusive=True)
    except (serial.SerialException, OSError, ValueError) as exc:
        raise PortError(f"cannot open serial port {url!r}: {why_not_open(exc)}") from exc
    sock = getattr(port, "_socket", None)
    if sock is not None:
        # socket:// (mock firmware, fault proxy): send each byte at once like a UART does.  With
        # Nagle's algorithm a lone `?` can wait for a delayed ACK and look like a silent board.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return port


def why_not_open(exc: Exception) -> str:
    """Why a port did not open, in words, with the fix (pyserial's own text repeats the path twice)."""
    present = ", ".join(p.device for p in serial.tools.list_ports.comports()) or "none"
    code, text = getattr(exc, "errno", None), str(exc)
    if code == errno.ENOENT or "No such file or directory" in text:
        return (f"no such port (serial ports present: {present}); check the USB cable, "
                "then name the robot's port with --port or link.port in config.yaml")
    if code in (errno.EACCES, errno.EPERM) or "Permission denied" in text:
        return ("permission denied: add yourself to the dialout group (sudo usermod -aG dialout $USER), "
                "then log out and in again")
    if code == errno.EBUSY or "exclusively lock" in text:
        return ("the port is busy: close the program that holds it (the Arduino IDE's Serial Monitor, "
                "another cube-robot command, or a `cube-robot panel` that holds the robot while it runs)")
    return f"{text} (serial ports present: {present})"


@dataclass(frozen=True)
class ProbeResult:
    port: str
    description: str  # what the OS says the device is
    ok: bool  # our firmware answered
    answer: str  # what answered, in words
    identity: Identity | None = None  # when ok
    kind: str = ""  # "ok", "no answer", "wrong firmware", "wrong baud", "cannot open", "error"
    connection: Any = None  # probe(keep=...) and ok: the open, handshaken `keep` object (the caller closes it)

    def said(self) -> str:
        """'kind: answer' in words, the kind left out when the answer already says it ("no answer on ...")."""
        return self.answer if self.answer.startswith(self.kind) else f"{self.kind}: {self.answer}"


def list_ports() -> list[tuple[str, str]]:
    """(device, description) of every serial port the OS lists (ptys are not listed: pass their path)."""
    return [(p.device, p.description or "") for p in sorted(serial.tools.list_ports.comports(), key=lambda p: p.device)]


def probe(url: str, settings, description: str = "", keep=None) -> ProbeResult:
    """Open `url`, handshake (without configuring), and say what answered.

    keep: a class built as Connection is, from (port, settings, url=), with handshake() and close()
    (driver.Link, which holds a Connection) to build the connection with; when our firmware
    answers it is left open in the result's `connection` (the caller closes it), so the port is not
    opened a second time (each open resets a real Uno).  Without keep the port is always closed."""
    try:
        port = open_port(url, settings.baud)
    except PortError as exc:
        return ProbeResult(url, description, False, str(exc), kind="cannot open")
    link = (keep or Connection)(port, settings, url=url)
    kept = None
    try:
        identity = link.handshake()
        answer = (f"{identity.firmware} {identity.version}, protocol {identity.proto}, board {identity.board}, "
                  f"queue {identity.queue_depth}, rx {identity.rx_bytes} bytes")
        kept = link if keep is not None else None
        return ProbeResult(url, description, True, answer, identity, kind="ok", connection=kept)
    except NoAnswerError as exc:
        return ProbeResult(url, description, False, str(exc), kind="no answer")
    except WrongFirmwareError as exc:
        return ProbeResult(url, description, False, str(exc), kind="wrong firmware")
    except WrongBaudError as exc:
        return ProbeResult(url, description, False, str(exc), kind="wrong baud")
    except (HandshakeError, LinkError) as exc:
        return ProbeResult(url, description, False, str(exc), kind="error")
    finally:
        if link is not kept:
            link.close()


def close_kept(results) -> None:
    """Close the connections that probe(keep=...) left open in `results`."""
    for result in results:
        if result.connection is not None:
            result.connection.close()


def find_robot(settings, keep=None) -> ProbeResult:
    """The one port where the cube-robot firmware answers (link.port: null); with keep (see probe) its
    connection is left open in the result."""
    ports = list_ports()
    if not ports:
        raise PortError("no serial ports found: is the robot's USB cable plugged in? "
                        "(or set link.port in config.yaml)")
    results = [probe(device, settings, description, keep) for device, description in ports]
    found = [r for r in results if r.ok]
    if len(found) == 1:
        return found[0]
    close_kept(found)
    if len(found) > 1:
        raise PortError("the cube-robot firmware answers on several ports ("
                        + ", ".join(r.port for r in found) + "): set link.port in config.yaml")
    lines = "\n".join(f"  {r.port}: {r.said()}" for r in results)
    raise PortError(f"no port answered as the cube-robot firmware:\n{lines}")
