"""The connection below the driver: the port, its reader, the acknowledged line window, the handshake.

`Connection.handshake()` gets the firmware's identity (a banner, or `?` then HELLO) and
classifies a failure (no answer / wrong firmware / wrong baud).  ports.probe() uses it
on its own; robot.link.driver.Link holds one and builds the commands and plan streaming on it.

Link-level rules of docs/protocol.md kept here:
  * every command line stays "pending" until an `ok`/`err`/`done`/`status acc` covers its
    seq; on `rs`, an answer timeout or a garbled reply the pending lines are resent with
    the SAME seq (the firmware answers `ok <seq> dup` for ones it already has);
  * the bytes of lines whose answer has not arrived never exceed the firmware's `rx`;
  * silence while work is outstanding is answered with `?` and, failing that, a
    SilentBoardError: nothing is waited on forever.
"""

from __future__ import annotations

import collections
import queue
import re
import time
from dataclasses import dataclass
from typing import Any, Callable

from ..paths import make_advice
from . import protocol as P
from .errors import (
    DisconnectedError,
    HandshakeError,
    LineNumberingError,
    LinkError,
    NoAnswerError,
    SilentBoardError,
    TooManyResendsError,
    WrongBaudError,
    WrongFirmwareError,
)
from .reader import Disconnected, Foreign, Garbled, Reader
from .stream import LineWindow, PendingLine, sends_allowed

MIN_STATUS_POLL_S = 0.25  # longest wait between handshake retries (`?` or HELLO)
FIRST_RETRY_S = 0.03  # first handshake retry wait; doubles up to the poll interval (a real Uno
                      # answers HELLO in about 12 ms at 115200 baud)
MIN_WAIT_S = 0.001  # shortest wait for the next message
HOST_LATE_MAX = 4  # silence timeouts in a row excused because the board's bytes sat unread (a loaded host)
CHECK_CABLE = "check the USB cable and the robot's power"  # what a lost port asks of the person at the robot


WAKE = object()  # put in the inbox by wake(): no message, only an end to the wait


@dataclass(frozen=True)
class LinkSettings:
    port: str | None = None
    baud: int = P.BAUD
    ack_timeout_s: float = 0.2
    silence_timeout_s: float = 0.5
    handshake_timeout_s: float = 3.0
    max_resends: int = 10
    reconnect_window_s: float = 10.0  # after a disconnect, wait this long for the port to come back

    @classmethod
    def from_config(cls, config) -> "LinkSettings":
        link = config.link
        return cls(
            port=link.port, baud=link.baud,
            ack_timeout_s=link.ack_timeout_ms / 1000, silence_timeout_s=link.silence_timeout_ms / 1000,
            handshake_timeout_s=link.handshake_timeout_ms / 1000, max_resends=link.max_resends,
            reconnect_window_s=link.reconnect_window_ms / 1000,
        )


class Connection:
    """A port with its reader thread and acknowledged line window (no streams, no commands beyond HELLO).

    A Link holds one: `on_message` sees every message after the window has taken it (the stream's
    bookkeeping), `work_outstanding` says whether silence means trouble beyond the lines waiting,
    `on_first_send` sees each line as it is first written to the port (not its resends under that number)."""

    def __init__(self, port, settings: LinkSettings = LinkSettings(), url=None,
                 on_message: Callable[[object], None] | None = None,
                 work_outstanding: Callable[[], bool] | None = None):
        self.settings = settings
        self.on_message = on_message
        self.on_first_send: Callable[[PendingLine], None] | None = None  # a Link's run() sets it
        self.work_outstanding = work_outstanding
        self.url = url  # to name the port in messages (and reopen it in Link.resume)
        self.identity: P.Identity | None = None
        self.events: queue.Queue = queue.Queue()  # LinkEvent(at, Button | Alarm) for the application
        self.stats: collections.Counter[str] = collections.Counter()
        self.reconnect_log = None  # live messages for the user: a reconnect, a line resent on a noisy link
        self.handshake_attempts = 0  # HELLOs sent by the last handshake()
        self.boots: int | None = None  # the board's reset counter when last seen (id lines carry it)
        self.acknowledged = 0  # highest seq the board answered (a `status acc` below it: it reset)
        self.lines = LineWindow()
        self._last_answer = time.monotonic()
        self._last_heard = time.monotonic()
        self._status_asked: float | None = None  # when silence made us ask `?` (None: not asking)
        self._status_sent = 0.0
        self._late_in_a_row = 0  # silence timeouts in a row excused by bytes the host had not read (_host_was_late)
        # The board took a line under a number the host had since renumbered: every later stop is this one.
        self.numbering_error: LineNumberingError | None = None
        self.port: Any = None  # a pyserial-like port object
        self.attach(port)

    def attach(self, port) -> None:
        self.port = port
        self._inbox: queue.Queue = queue.Queue()
        self._reader = Reader(port, self._inbox, self.events)
        self._reader.start()
        self.lines.clear()

    def close(self) -> None:
        self.detach()

    def detach(self) -> None:
        """Stop the reader and close the port (best effort: it may already be gone)."""
        self._reader.stop_flag.set()
        try:
            self.port.close()
        except Exception:
            pass
        self._reader.join(timeout=1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- low level ---------------------------------------------------------

    def write(self, data: bytes) -> None:
        try:
            self.port.write(data)
        except Exception as exc:
            raise DisconnectedError(
                f"the serial port went away while writing ({type(exc).__name__}: {exc}); {CHECK_CABLE}"
            ) from exc

    def submit(self, command: str, entry=None) -> int:
        return self.lines.submit(command, entry)

    def _pump(self) -> None:
        """Send pending lines in seq order while the firmware's receive buffer has room."""
        window = self.identity.rx_bytes if self.identity else P.MAX_LINE
        while (line := self.lines.next_to_send(window, self.settings.max_resends)) is not None:
            if not self.lines.inflight:
                self._last_answer = time.monotonic()  # the answer clock starts with the first line in flight
            if line.sends == sends_allowed(self.settings.max_resends, board_answers=False):
                self._say_still_resending(line)
            self.write(line.data)
            first = not line.sends
            self.stats["lines_sent" if first else "resends"] += 1
            self.lines.mark_sent(line)
            if first and self.on_first_send is not None:
                self.on_first_send(line)

    def _say_still_resending(self, line) -> None:
        """A line past link.max_resends goes out again only because the board answers: say so, live."""
        self.stats["lines_resent_past_max"] += 1
        if self.reconnect_log:
            allowed = sends_allowed(self.settings.max_resends, board_answers=True)
            self.reconnect_log(
                f"the board answers, but line noise damaged every answer to {line.command.split()[0]} (N{line.seq}, "
                f"sent {line.sends} times): sending it again, up to {allowed} times (check the USB cable)")

    def _answered(self, seq: int | None) -> None:
        self._last_answer = time.monotonic()
        self.lines.answered(seq)

    def wake(self) -> None:
        """Wake a thread waiting for the board's next message (it then checks its deadlines and goes on):
        a stop asked from another thread (the panel's Stop) is acted on now, not at the board's next line."""
        self._inbox.put((time.monotonic(), WAKE))

    @property
    def last_heard(self) -> float:
        """When the last message returned by wait_step arrived (time.monotonic())."""
        return self._last_heard

    def _next_message(self, timeout: float):
        try:
            arrived, message = self._inbox.get(timeout=max(timeout, 0))
        except queue.Empty:
            return None
        if message is WAKE:
            return None
        self._last_heard = arrived
        self._status_asked = None
        self._late_in_a_row = 0
        return message

    def wait_step(self, deadline: float | None = None):
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
        if self.lines.pending:
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
            if self._host_was_late():  # the board answered; this host (a loaded machine) had not read it yet
                self.stats["host_late"] += 1
                self._status_asked = now
                return
            raise SilentBoardError(
                f"the board stopped answering: nothing for {now - self._last_heard:.1f} s, not even to '?' "
                "(board hung, unpowered, or the USB cable was pulled)"
            )
        if self._status_asked is not None and now - self._status_sent >= self.settings.ack_timeout_s:
            self.write(P.RT_STATUS)  # the `?` byte itself may have been lost: repeat it within the bound
            self._status_sent = now
        if self.lines.pending and now - self._last_answer >= self.settings.ack_timeout_s:
            self.stats["timeouts"] += 1
            self.lines.inflight.clear()  # after this long the firmware has read everything we sent
            self.lines.rewind()
            self._last_answer = now
        if now - self._last_heard >= self.settings.silence_timeout_s and self._status_asked is None:
            if self._work_outstanding():
                self.ask_status()
            else:
                self._last_heard = now

    def _host_was_late(self) -> bool:
        """Whether bytes came after the `?` that no parsed line has brought yet: unread in the port, or
        read without their newline.  Then the silence is the host's, not the board's.  At most
        HOST_LATE_MAX times in a row (a reader that died would otherwise keep the host waiting)."""
        if self._late_in_a_row >= HOST_LATE_MAX:
            return False
        try:
            waiting = int(getattr(self.port, "in_waiting", 0) or 0)
        except (OSError, ValueError, TypeError):  # a vanished port: that is no answer either
            waiting = 0
        late = waiting > 0 or self._reader.last_byte_time > (self._status_asked or 0.0)
        self._late_in_a_row = self._late_in_a_row + 1 if late else 0
        return late

    def _work_outstanding(self) -> bool:
        """Whether silence now means trouble: lines wait for their answer, or the holder has work out."""
        return bool(self.lines.pending) or (self.work_outstanding is not None and self.work_outstanding())

    def ask_status(self) -> None:
        self.write(P.RT_STATUS)
        self.stats["status_asked"] += 1
        self._status_asked = self._status_sent = time.monotonic()

    def _apply(self, message) -> None:
        """Acknowledgement bookkeeping common to every phase."""
        if not isinstance(message, Disconnected):
            self.lines.board_heard()  # (before an answer retires its line: only lines still waiting count it)
        self._check_numbering(message)
        match message:
            case P.Ok(seq, dup):
                self._answered(seq)
                self.acknowledged = max(self.acknowledged, seq)
                self.lines.acknowledge_through(seq)
                self.stats["dup_acks"] += dup
            case P.Err(seq, _):
                self._answered(seq)
                if seq is not None:  # the seq is consumed (nothing moved); earlier ones were accepted
                    self.lines.acknowledge_through(seq)
                else:  # garbage reached the firmware: resend unless a fresh copy is on its way
                    self.stats["err_no_seq"] += 1
                    oldest = next(iter(self.lines.pending), None)
                    if oldest is not None and not self.lines.in_flight(oldest):
                        self.lines.rewind()
            case P.Resend(seq):
                self._answered(None)
                self.stats["resend_requests"] += 1
                self.lines.acknowledge_through(seq - 1)
                if self.lines.pending and seq < min(self.lines.pending) and not self._board_unsynced(seq):
                    self.stats["renumbered"] += 1
                    self.lines.renumber_from(seq)  # after a reset: lines we dropped are not coming
                elif not self.lines.in_flight(seq):  # else the resent copy is already on its way
                    self.lines.rewind(seq)
            case P.Done(seq, _):
                self.lines.acknowledge_through(seq)
            case P.Status(accepted=acc):
                self.lines.acknowledge_through(acc)
            case Garbled():
                self.stats["garbled_lines"] += 1
                self.lines.rewind()
            case Disconnected(reason):
                raise DisconnectedError(f"the serial port went away ({reason}); {CHECK_CABLE}")
        if self.on_message is not None:
            self.on_message(message)

    def _check_numbering(self, message) -> None:
        """Stop when the board names a seq above the host's numbering after a renumbering: the host's
        picture of which lines it took is wrong (lines answered `ok dup` never ran, a `done` would count
        the wrong actions), so nothing after the last action known done can be trusted."""
        match message:
            case P.Ok(seq, _) | P.Err(int(seq), _) | P.Done(seq, _) | P.Status(accepted=seq):
                taken = seq
            case P.Resend(seq):
                taken = seq - 1  # it accepted every line below the one it asks for
            case _:
                return
        if self.numbering_error is not None:
            raise self.numbering_error  # once broken, no later answer is read as if it were not
        if self.lines.beyond_numbering(taken):
            self.stats["taken_under_old_number"] += 1
            self.numbering_error = LineNumberingError(
                f"the board answered {type(message).__name__.lower()} naming seq {taken}, a number this host no "
                f"longer gives any line (it renumbered its waiting lines from {self.lines.renumbered_from}): "
                "the board reset unseen (its start-up line was lost in line noise) and took a line under its old "
                "number, so lines it answered as already taken may not have run. Which actions ran after the last "
                "one reported done is not known. Nothing moves on its own: check the cube sits straight, then "
                "scan it again")
            raise self.numbering_error

    def _board_unsynced(self, wanted: int) -> bool:
        """Whether `rs <wanted>` comes from a board that has taken no line since its reset (it wants
        `last` + 1, the `last` of its id line): it still takes any seq above `last`, so the pending
        lines need no new numbers.  Renumbering them down there is harmful: a copy of a pending line
        already on its way (resent before this `rs` arrived) is taken under its old number, and every
        renumbered line is then answered `ok dup` without running."""
        return self.identity is not None and wanted - 1 <= self.identity.last

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
        self.write(b"\n" + P.RT_STATUS)  # end any partial line, then ask for a status
        # Noise costs attempts, not the handshake: the long `id` line is the likeliest to be hit
        # (about 1 in 5 arrive whole at 2% byte faults), so every attempt that fails is followed at
        # once by another when the board answered something, and after a backoff (doubling from
        # FIRST_RETRY_S to poll_interval) when nothing came back, until the handshake timeout.
        retry_wait = FIRST_RETRY_S
        next_poll = time.monotonic() + retry_wait
        foreign: list[str] = []
        ours = 0  # lines of our protocol seen (even damaged ones)
        garbled_before = self.stats["handshake_garbled"]  # the stat adds up over the link's handshakes
        hello_seq = None
        self.handshake_attempts = 0
        while True:
            hello_pending = hello_seq is not None and hello_seq in self.lines.pending
            if self.identity is not None and not hello_pending:
                break
            now = time.monotonic()
            if now >= deadline:
                break
            if hello_seq is not None and not hello_pending and self.identity is None:
                hello_seq = self.submit("HELLO")  # HELLO answered but its `id` line was lost: ask again
                self.handshake_attempts += 1
                hello_pending = True
            if hello_pending:
                try:
                    self._pump()
                except TooManyResendsError:  # this HELLO is lost in noise: start over from `?`
                    self.lines.clear()
                    hello_seq, hello_pending = None, False
                    self.write(P.RT_STATUS)
            try:
                arrived, message = self._inbox.get(timeout=max(0.0, min(deadline, next_poll) - now))
                if message is WAKE:
                    continue
            except queue.Empty:
                if time.monotonic() >= next_poll:
                    if hello_pending:
                        self.lines.inflight.clear()
                        self.lines.rewind()  # HELLO unanswered: resend it (same seq)
                    else:
                        self.write(P.RT_STATUS)
                    retry_wait = min(2 * retry_wait, poll_interval)
                    next_poll = time.monotonic() + retry_wait
                continue
            self._last_heard = arrived
            ours_before = ours
            match message:
                case P.Identity():
                    ours += 1
                    self.check_identity(message)
                    if not hello_pending:  # a banner: the board just reset; it accepts any seq > last
                        self.lines.next_seq = max(self.lines.next_seq, message.last + 1)
                    self.count_resets(message)
                    self.identity = message
                case P.Status():
                    ours += 1
                    if self.identity is None and not hello_pending:
                        # It speaks our protocol.  Without a reset it expects exactly acc + 1; after a
                        # reset anything above `last` (= done): max(acc, done) + 1 suits both.
                        self.lines.clear()
                        self.lines.next_seq = max(message.accepted, message.done) + 1
                        hello_seq = self.submit("HELLO")
                        self.handshake_attempts += 1
                case Foreign(text):
                    foreign.append(text)
                case Garbled(raw) if looks_ours(raw):
                    ours += 1
                    self.stats["handshake_garbled"] += 1
                    if hello_seq is None:
                        self.write(P.RT_STATUS)  # the status was hit: ask again at once
                    else:
                        self._apply(message)
                case Garbled(raw) if message.readable:
                    foreign.append(raw.decode("ascii"))
                case Disconnected(reason):
                    raise DisconnectedError(f"the serial port went away during the handshake ({reason}); {CHECK_CABLE}")
                case Garbled():
                    pass
                case _:
                    ours += 1
                    self._apply(message)
            if ours > ours_before:  # the board is there: the next retry comes soon again
                retry_wait = FIRST_RETRY_S
                next_poll = time.monotonic() + retry_wait
        if self.identity is None:
            raise self._handshake_failure(foreign, ours, self.stats["handshake_garbled"] - garbled_before)
        self._last_answer = self._last_heard = time.monotonic()
        return self.identity

    def count_resets(self, identity: P.Identity) -> None:
        """link_stats board_resets: the board's own reset counter (`boots`), so a reset whose banner
        was lost or damaged is counted too; a power cycle (the counter starts again) counts one."""
        if self.boots is not None and identity.boots != self.boots:
            self.stats["board_resets"] += identity.boots - self.boots if identity.boots > self.boots else 1
        self.boots = identity.boots
        self.acknowledged = identity.last  # what it remembers; later `ok`s raise it again

    def known_identity(self) -> P.Identity:
        """Who the board said it is (the last handshake or start-up banner)."""
        if self.identity is None:
            raise LinkError("handshake() first")
        return self.identity

    def check_identity(self, identity: P.Identity) -> None:
        if identity.firmware != P.FIRMWARE_NAME:
            raise WrongFirmwareError(
                f"wrong firmware on {self.url or 'the port'}: it calls itself {identity.firmware!r}, "
                f"not {P.FIRMWARE_NAME!r}; flash the firmware ({make_advice('flash', 'PORT=' + (self.url or '<port>'))})"
            )
        if identity.proto != P.PROTOCOL_VERSION:
            raise WrongFirmwareError(
                f"the firmware on {self.url or 'the port'} ({identity.firmware} {identity.version}) speaks "
                f"protocol {identity.proto}, this program speaks {P.PROTOCOL_VERSION}: flash the firmware from "
                f"this copy of the program ({make_advice('flash', 'PORT=' + (self.url or '<port>'))})"
            )

    def _handshake_failure(self, foreign, ours, damaged: int) -> LinkError:
        where = self.url or "the port"
        waited = f"{self.settings.handshake_timeout_s:.1f} s"
        sample = bytes(self._reader.sample)
        printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in sample)
        if ours:
            return HandshakeError(
                f"the cube-robot firmware on {where} answers, but the identity exchange did not complete "
                f"within {waited} ({self.handshake_attempts} attempts): the link is losing bytes, "
                f"{damaged} of {ours} lines from the board arrived damaged (link quality too poor: check the "
                "USB cable, keep it away from the motor wires, try a shorter one)"
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

_OURS = re.compile(rb"\*[0-9A-F]{%d}" % P.CRC_HEX_DIGITS)


def looks_ours(raw: bytes) -> bool:
    """A damaged line of our own protocol (has a *CCCCCCCC checksum) rather than another device's text."""
    return P.FIRMWARE_NAME.encode() in raw or bool(_OURS.search(raw))
