"""The host side of the serial link: commands, and exactly-once streaming of plans.

    link = Link.open(config)                    # finds the port, handshakes, sends MOTION + SERVO
    result = link.run(plan, progress=callback)  # streams Grip/Turn actions; durations from `done`
    link.close()

The link is split by responsibility:
  reader.py     the reader thread (bytes -> parsed lines; events for the application)
  stream.py     pure bookkeeping: the acknowledged line window, the stream's actions and progress
  handshake.py  Connection: port + reader + window timing, and the handshake (ports.probe uses it)
  driver.py     Link: immediate commands, and run/resume of plans over the acknowledged window

How the rules of docs/protocol.md are kept here:
  * sent-but-not-done actions never exceed the firmware's `q`;
  * a banner in the middle of a stream means the board reset: resume after
    `last`, or stop if `cut` says an arm was moving;
  * an alarm or a rejected action stops the stream with its progress: which
    actions completed, so the caller knows the cube's state.
"""

from __future__ import annotations

import queue
import time
from typing import Callable

from . import ports
from . import protocol as P
from .errors import (
    AlarmError,
    CommandRejectedError,
    CubeStateUncertainError,
    DisconnectedError,
    LinkError,
    SilentBoardError,
    TooManyResendsError,
)
from .handshake import Connection, LinkSettings
from .reader import Garbled, LinkEvent
from .stream import Stream, StreamEntry, StreamProgress, StreamResult, regrip_lookup

__all__ = ["Link", "LinkSettings", "LinkEvent", "StreamProgress", "StreamResult", "CLEAR_ALARM_HINT"]

CLEAR_ALARM_HINT = "Check the robot, then clear the alarm with `cube-robot link reset-alarm`."


class Link(Connection):
    """A connection to the cube-robot firmware over any pyserial-like port object."""

    def __init__(self, port, settings: LinkSettings = LinkSettings(), motion: dict | None = None, url=None):
        self.motion = motion
        self._stream: Stream | None = None
        self._stream_progress_cb = None
        super().__init__(port, settings, url=url)

    # -- opening -----------------------------------------------------------

    @classmethod
    def open(cls, config=None, port: str | None = None, configure: bool = True) -> "Link":
        """Open the configured port (or auto-detect), handshake, and send MOTION + SERVO."""
        from .. import config as config_module

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

    # -- acknowledgements that concern the stream ---------------------------

    def _apply(self, message) -> None:
        super()._apply(message)
        if self._stream is None:
            return
        match message:
            case P.Done(seq, ms):
                newly = self._stream.mark_done_through(seq, ms)
                self.stats["done_lost"] += sum(1 for e in newly if e.seq != seq)
                self._report_progress(newly)
            case P.Status(done=done) if done:
                newly = self._stream.mark_done_through(done)
                self.stats["done_lost"] += len(newly)
                self._report_progress(newly)

    def _work_outstanding(self) -> bool:
        return super()._work_outstanding() or (self._stream is not None and not self._stream.finished())

    def _report_progress(self, newly) -> None:
        if newly and self._stream_progress_cb:
            self._stream_progress_cb(self._stream.progress())

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
            if seq not in self._lines.pending:  # acknowledged (by `ok`, or covered by a later `status acc`)
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
        self._stream = Stream(commands, regrip_lookup(commands))
        self._stream.stale_cut = self.identity.cut
        self._stream_progress_cb = progress
        return self._run_stream()

    def resume(self, port=None) -> StreamResult:
        """After a DisconnectedError (or SilentBoardError): reconnect and continue the interrupted stream.

        `port` is a new pyserial-like port object or URL (default: reopen the URL this link was opened with).
        """
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

    def _stop_on_reject(self, entry: StreamEntry, code: P.ErrorCode) -> None:
        """An action was refused: let the ones before it finish (so the cube state is known), then raise."""
        stream = self._stream
        entry.rejected = True
        stream.next = len(stream.entries)
        for later in stream.entries:
            if later.seq is not None and later.seq > entry.seq:
                self._lines.pending.pop(later.seq, None)
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
        self._lines.clear()
        self._lines.next_seq = max(self._lines.next_seq, identity.last + 1)
        if stream is None:
            return
        self._check_cut(identity)
        self._check_memory(identity.last)
        stream.mark_done_through(identity.last)
        stream.restart_after_reset()
        self.configure()
