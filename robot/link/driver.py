"""The host side of the serial link: commands, and exactly-once streaming of plans.

    link = Link.open(config)                    # finds the port, handshakes, sends MOTION + SERVO + JAWS
    result = link.run(plan, progress=callback)  # streams Grip/Turn actions; durations from `done`
    link.close()

A Link holds its parts (attributes, not base classes):
  connection    handshake.py Connection: port + reader + acknowledged line window, the handshake
                (ports.probe uses one on its own); reader.py is its reader thread
  _stream       stream.py Stream: pure bookkeeping of the plan being streamed (no I/O, no threads)
  noise         noise_stops.py NoiseStops: the rule for a stop byte `!` made by line noise
and offers, in pyserial's manner: open, close, handshake, request, status, where, wait_idle,
wait_button, configure, clear_alarm, estop, stop_and_learn, run, resume.

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

from ..config_types import MotionConfig
from . import ports
from . import protocol as P
from .errors import (AlarmError, CommandRejectedError, DisconnectedError, LinkError,
                     NoAnswerError, RefusedMidStreamError, SilentBoardError, TooManyResendsError)
from .handshake import Connection, LinkSettings
from .noise_stops import CLEAR_ALARM_HINT, NoiseStops
from .reader import Garbled, LinkEvent
from .stream import Stream, StreamEntry, StreamProgress, StreamResult, first_sends, regrip_lookup, running, sends_allowed
from . import unseen_reset

__all__ = ["Link", "LinkSettings", "LinkEvent", "StreamProgress", "StreamResult", "CLEAR_ALARM_HINT"]

REOPEN_POLL_S = 0.25  # how often a port that is gone is tried again
TIME_ASKS = 8  # TIME queries per action whose `done` line was lost (the `time` reply can be lost too)


class Link:
    """The cube-robot firmware over any pyserial-like port object: commands, and plans streamed exactly once."""

    def __init__(self, port, settings: LinkSettings = LinkSettings(), motion: MotionConfig | None = None, url=None,
                 puzzle: str = "2x2x2"):
        self.settings = settings
        self.motion = motion
        self.puzzle = P.known_puzzle(puzzle)  # the board's rules: PUZZLE at every configure()
        self.work_time_scale = 1.0  # how fast the board's actions run (a simulation may run faster)
        self.motors = True  # configure() switches the drivers on (bring-up commands open with motors=False)
        self._stream: Stream | None = None
        self._stream_progress_cb: Callable[[StreamProgress], None] | None = None
        self.connection = Connection(port, settings, url=url, on_message=self._on_message,
                                     work_outstanding=self._stream_running)
        self.noise = NoiseStops(self.connection.stats)

    # -- what the parts know, read through the link ----------------------------

    @property
    def url(self) -> str | None:
        return self.connection.url  # names the port in messages; resume() reopens it

    @property
    def identity(self) -> P.Identity | None:
        return self.connection.identity

    @property
    def stats(self):
        return self.connection.stats

    @property
    def events(self) -> queue.Queue:
        return self.connection.events  # LinkEvent(at, Button | Alarm) for the application

    @property
    def boots(self) -> int | None:
        return self.connection.boots

    @property
    def handshake_attempts(self) -> int:
        return self.connection.handshake_attempts

    @property
    def reconnect_log(self):
        return self.connection.reconnect_log  # live messages: a reconnect, a line resent on a noisy link

    @reconnect_log.setter
    def reconnect_log(self, say) -> None:
        self.connection.reconnect_log = say

    @property
    def estop_sent(self) -> bool:
        return self.noise.host_sent_stop

    @property
    def noise_stops(self) -> list[str]:
        return self.noise.cleared  # stop bytes made by line noise that the link cleared (for the report)

    @property
    def numbering_error(self):
        return self.connection.numbering_error

    def handshake(self) -> P.Identity:
        return self.connection.handshake()

    def close(self) -> None:
        self.connection.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- opening -----------------------------------------------------------

    @classmethod
    def open(cls, config=None, port: str | None = None, configure: bool = True, motors: bool = True,
             probed: "Link | None" = None, puzzle: str = "2x2x2") -> "Link":
        """Open the configured port (or auto-detect), handshake, send the motion settings (MOTION, SERVO, the
        per-arm and per-gripper settings) and, unless motors=False, switch the stepper drivers on.  The port
        is opened once (each open resets an Uno): `probed` or an auto-detected robot's probe is kept."""
        from .. import config as config_module

        config = config if config is not None else config_module.load()
        settings = LinkSettings.from_config(config)
        url = port or settings.port
        if probed is None and url is None:
            probed = ports.find_robot(settings, keep=cls).connection
        link = probed if probed is not None else cls(ports.open_port(url, settings.baud), settings, url=url)
        link.motion = config.motion
        link.motors = motors
        link.puzzle = P.known_puzzle(puzzle)
        try:
            if link.identity is None:  # a probed connection has answered the handshake already
                link.handshake()
            if configure:
                link.configure()
        except BaseException:
            link.close()
            raise
        return link

    # -- acknowledgements that concern the stream (the connection's on_message) ---

    def _on_message(self, message) -> None:
        if self._stream is None:
            return
        newly = self._stream.apply(message, self.stats)
        if newly and self._stream_progress_cb:
            self._stream_progress_cb(self._stream.progress())

    def _stream_running(self) -> bool:
        return self._stream is not None and not self._stream.finished()

    # -- immediate commands ------------------------------------------------

    def _ask_times(self) -> None:
        """Ask the board (`TIME <seq>`) for the durations of done actions whose `done` line was lost.

        Without waiting: the `time` replies fill them in as they come (Stream.apply).  The board keeps
        the last TIME_SLOTS durations across a reset, so they are asked for soon after the loss."""
        stream = running(self._stream)
        for entry in stream.entries:
            if (entry.done and entry.ms is None and entry.seq is not None and entry.time_asks < TIME_ASKS
                    and not entry.time_unknown
                    and not any(line.command == f"TIME {entry.seq}" for line in self.connection.lines.pending.values())):
                entry.time_asks += 1
                self.connection.submit(f"TIME {entry.seq}")

    def _collect_times(self) -> None:
        """At the end of a stream: ask for the durations still unknown and wait (bounded) for the answers."""
        deadline = time.monotonic() + 2 * self.settings.silence_timeout_s
        while time.monotonic() < deadline:
            self._ask_times()
            if not any(line.command.startswith("TIME ") for line in self.connection.lines.pending.values()):
                return
            try:
                self.connection.wait_step(deadline)
            except LinkError:
                return  # the durations stay unknown (and are reported so)

    def request(self, command: str, timeout_s: float | None = None) -> list:
        """Send an immediate command; return the reply lines before its `ok`.  Raises on `err`."""
        seq = self.connection.submit(command)
        replies: list[P.Identity | P.Status | P.Where] = []
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            message = self.connection.wait_step(deadline)
            match message:
                case None:
                    if deadline is not None and time.monotonic() >= deadline:
                        raise SilentBoardError(f"no answer to {command!r} within {timeout_s:.1f} s")
                case P.Err(s, code) if s == seq:
                    if code == P.ErrorCode.ALARM_ACTIVE:
                        alarm = self._alarm_code()
                        if command != "RESET" and self.noise.may_clear(alarm, self._stream):
                            self._clear_noise_stop(f"while {command.split()[0]} went out")
                            seq = self.connection.submit(command)  # it was refused, so it did nothing: send it again
                            continue
                        raise AlarmError(alarm, detail=f"{command.split()[0]} refused: " + self.noise.hint(alarm, self._stream))
                    raise CommandRejectedError(command, code)
                case P.Identity() if command == "HELLO":
                    self.connection.count_resets(message)
                    replies.append(message)
                case P.Identity():
                    self._on_banner(message)
                case P.Status() | P.Where():
                    replies.append(message)  # (button and alarm events go to self.events only)
            if seq not in self.connection.lines.pending:  # acknowledged (by `ok`, or covered by a later `status acc`)
                return replies

    def status(self) -> P.Status:
        """Ask with the real-time `?` (works even when the queue is full)."""
        # A `status` line (about 56 bytes) arrives whole about 1 time in 3 at 2% byte faults; a damaged
        # one proves the board is there, so `?` is asked as often as a line is sent while the board answers.
        asks = sends_allowed(self.settings.max_resends, board_answers=True)
        for _ in range(asks):
            before = time.monotonic()
            self.connection.ask_status()
            deadline = time.monotonic() + self.settings.silence_timeout_s
            heard = False
            while time.monotonic() < deadline:
                message = self.connection.wait_step(deadline)
                # A status line that came before this `?` answers an earlier one (a repeated `?` on a slow
                # host, or one nobody read): it may predate a stop byte sent since, so it is not the answer.
                if isinstance(message, P.Status) and self.connection.last_heard >= before:
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
        raise TooManyResendsError(f"no readable status line after {asks} requests; "
                                  "the link is too noisy (check the USB cable)")

    def _alarm_code(self) -> P.AlarmCode:
        try:
            return self.status().alarm
        except LinkError:
            return P.AlarmCode.NONE

    def configure(self) -> None:
        """Send the motion settings (MOTION, SERVO, JAWS, then per arm and gripper), the puzzle mode when it is
        not the board's 2x2x2 default (PUZZLE 3) and, if self.motors, MOTORS ON.

        The queue must be empty, so wait for it."""
        if self.motion is None:
            return
        self.wait_idle()
        self.request(P.motion_command(self.motion))
        self.request(P.servo_command(self.motion))
        self.request(P.jaws_command(self.motion))
        for command in P.bringup_setting_commands(self.motion):
            self.request(command)
        if self.puzzle != "2x2x2" or (self.identity is not None and self.identity.puzzle != self.puzzle):
            self.request(P.puzzle_command(self.puzzle))  # a reset makes the board 2x2x2 again
        if self.motors:
            self.request(P.motors_command(True))

    def where(self) -> P.Where:
        """The drivers, the arms' positions (None: not known) and the grippers (`WHERE`).  On a noisy
        link the `where` line can be lost while its `ok` arrives: WHERE reads only, so it is asked again."""
        return self.read_only(P.Where, "WHERE", "`where` line", "requests")

    def read_only(self, reply_type, command: str, line: str, requests: str):
        """The `reply_type` line answering a command that only reads: asked again when noise ate it
        while its `ok` arrived (asking twice moves nothing)."""
        for _ in range(self.settings.max_resends + 1):
            reply = next((r for r in self.request(command) if isinstance(r, reply_type)), None)
            if reply is not None:
                return reply
        raise TooManyResendsError(f"no readable {line} after {self.settings.max_resends + 1} {requests}; "
                                  "the link is too noisy (check the USB cable)")

    def wait_idle(self, limit_s: float = 120.0) -> P.Status:
        """Wait until the firmware's queue has drained (bounded: silence is detected, and `limit_s`)."""
        deadline = time.monotonic() + limit_s
        while True:
            status = self.status()
            if status.state == P.State.ALARM and self.noise.may_clear(status.alarm, self._stream):
                self._clear_noise_stop("while the host waited for the board to be idle")
                continue
            if status.state == P.State.ALARM:
                raise AlarmError(status.alarm, detail=self.noise.hint(status.alarm, self._stream))
            if status.state == P.State.IDLE:
                return status
            if time.monotonic() > deadline:
                raise LinkError(f"the board is still busy after {limit_s:.0f} s (status {status})")
            self.connection.wait_step(time.monotonic() + self.settings.silence_timeout_s / 2)

    def _clear_noise_stop(self, when: str) -> None:
        """RESET a stop byte made by line noise that stopped nothing (NoiseStops), and say so."""
        for attempt in range(self.settings.max_resends + 1):
            try:
                self.request("RESET")  # refused (ALARM_ACTIVE) while the e-stop input is pressed
                break
            except CommandRejectedError as exc:  # BUSY: the `alarm` line is not out yet
                if exc.code != P.ErrorCode.BUSY or attempt == self.settings.max_resends:
                    raise
                self.connection.wait_step(time.monotonic() + self.settings.ack_timeout_s)
        self.noise.was_cleared(when)

    def clear_alarm(self) -> None:
        """RESET: clear a latched alarm (after the user has checked the robot)."""
        self.request("RESET")
        self.noise.host_sent_stop = False  # that stop is dealt with: a later `!` this host did not send is noise

    def estop(self) -> None:
        self.noise.host_sent_stop = True
        self.connection.write(P.RT_ESTOP)

    def stop_and_learn(self) -> StreamProgress | None:
        """Ctrl-C: the stop byte, then one `?` (within link.silence_timeout_ms): actions done while their
        `done` lines were on the way count too.  The last stream's progress (None: no stream was run)."""
        self.estop()
        self._stream_progress_cb = self.connection.on_first_send = None  # that run is over: it drives nothing more
        deadline = time.monotonic() + self.settings.silence_timeout_s
        try:
            self.connection.ask_status()
            while time.monotonic() < deadline and not isinstance(self.connection.wait_step(deadline), P.Status):
                pass  # a status line, once applied, marks every action through its `done` as done
        except LinkError:
            pass  # the board is gone: what the `done` lines told us is all that is known
        return self._stream.progress(interrupted=True) if self._stream is not None else None

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
                if self.noise.may_clear(event.message.code, self._stream):
                    self._clear_noise_stop("while the host waited for the start button")
                    continue
                raise AlarmError(event.message.code, event.message.stop_us,
                                 detail=self.noise.hint(event.message.code, self._stream))

    # -- streaming ---------------------------------------------------------

    def run(self, plan, progress: Callable[[StreamProgress], None] | None = None,
            sent: Callable[[int], None] | None = None) -> StreamResult:
        """Stream a Plan (or a list of Grip/Turn actions or command strings) and wait for every `done`.

        The first Grip is sent too: it makes the robot take the cube with that pair.
        sent(n): plan action n (from 1) went to the board for the first time (stream.py first_sends).
        Returns each action's measured duration.  Raises a LinkError with `.progress` on failure;
        after a DisconnectedError, `resume()` continues once the port is back.
        """
        actions = plan.actions if hasattr(plan, "actions") else list(plan)
        commands = [a if isinstance(a, str) else P.action_command(a) for a in actions]
        if self.identity is None:
            raise LinkError("handshake() first")
        self._stream = Stream(commands, regrip_lookup(commands))
        self._stream.stale_cut = self.identity.cut
        self._stream_progress_cb, self.connection.on_first_send = progress, first_sends(sent)
        return self._run_stream()

    def resume(self, port=None) -> StreamResult:
        """After a DisconnectedError (or SilentBoardError): reconnect and continue the interrupted stream.

        `port` is a new pyserial-like port object or URL (default: reopen the URL this link was opened with).
        """
        stream = self._stream
        if stream is None:
            raise LinkError("nothing to resume: no stream was interrupted")
        try:
            return self._resume(stream, port)
        except LinkError as exc:
            if exc.progress is None:  # what is known: the actions reported done; the next may be cut
                exc.with_progress(stream.progress(interrupted=True))
            raise

    def _resume(self, stream: Stream, port) -> StreamResult:
        self.connection.detach()
        reopen = port is None or isinstance(port, str)
        if reopen:
            # A real Uno resets when its port is opened: open it only once the actions already
            # queued on the board have ended, so the reset lands between moves, not in one.
            wait_s = stream.queued_work_end(self.motion, self.work_time_scale) - time.monotonic()
            if wait_s > 0:
                if self.reconnect_log:
                    self.reconnect_log(f"waiting {wait_s:.1f} s for the queued actions to finish before reopening "
                                       "the port (opening an Uno's port resets it)")
                self.stats["reopen_wait_ms"] += round(wait_s * 1000)
                time.sleep(wait_s)  # the board is working on its own; nothing to acknowledge
            port = self._reopen(port or self.url)
        identity = self._handshake_after_reconnect(port, reopen)
        # What the board remembers comes first: every action up to `last` completed (their `done`
        # lines may have been lost with the cable), then a cut action stops the run.
        stream.check_memory(identity.last)
        stream.mark_done_through(identity.last)
        stream.check_cut(identity)
        status = self.wait_idle()  # let the board finish what it had queued; `done` lines complete entries
        stream.check_memory(max(status.done, identity.last))
        stream.mark_done_through(max(status.done, identity.last))
        # The board is idle: ask now for the times of the actions whose `done` was lost with the
        # cable, before new actions push them out of its memory (the last TIME_SLOTS only).
        self._collect_times()
        stream.restart_after_reset()
        self.configure()
        return self._run_stream()

    def _handshake_after_reconnect(self, port, reopen: bool) -> P.Identity:
        """Handshake on the port that came back.  A board that does not answer at all (a port that
        came back half-ready) is opened again, within link reconnect window, saying so: reopening resets
        it, which is safe because the actions it had queued have ended (nothing moves until we send)."""
        deadline = time.monotonic() + self.settings.reconnect_window_s
        while True:
            self.connection.identity = None
            self.connection.attach(port)
            try:
                return self.handshake()
            except NoAnswerError:
                if not reopen or time.monotonic() + self.settings.handshake_timeout_s > deadline:
                    raise
            self.connection.detach()
            self.stats["handshake_reopens"] += 1
            if self.reconnect_log:
                self.reconnect_log(f"the board did not answer on {self.url} after the port came back: opening it "
                                   f"again (up to {deadline - time.monotonic():.0f} s more)")
            port = self._reopen(self.url)

    def _reopen(self, url: str | None):
        """Open the port again, waiting up to link reconnect window for it to come back."""
        deadline = time.monotonic() + self.settings.reconnect_window_s
        told = False
        while True:
            try:
                return ports.open_port(url, self.settings.baud)
            except ports.PortError as exc:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ports.PortError(
                        f"{exc}; it did not come back within {self.settings.reconnect_window_s:.0f} s") from None
                if not told and self.reconnect_log:
                    self.reconnect_log(f"waiting up to {left:.0f} s for {url} to come back (reconnect the USB cable)")
                    told = True
                time.sleep(min(REOPEN_POLL_S, left))  # polling for a device node to reappear

    def _run_stream(self) -> StreamResult:
        stream = running(self._stream)
        try:
            while not stream.finished():
                self._submit_actions()
                message = self.connection.wait_step()
                self._stream_message(message)
                self._ask_times()
                unseen_reset.check_never_ran(self)
            elapsed = time.monotonic() - stream.started
            self._collect_times()
            unseen_reset.check_never_ran(self)
            unseen_reset.check_finished(self)
            if self.numbering_error is not None:  # found while the durations were collected (and swallowed)
                raise self.numbering_error
        except LinkError as exc:
            if isinstance(exc, TooManyResendsError) and self.numbering_error is None:
                exc = self._gave_up_on_a_line(exc)
            broken = self.numbering_error  # it stops the run whatever a later wait raised (or swallowed)
            if broken is not None:
                if broken.progress is None:
                    broken.with_progress(stream.progress(interrupted=True))
                raise broken from (None if exc is broken else exc)
            if isinstance(exc, TooManyResendsError):
                raise exc from None  # its progress is set: what the board's status told
            if exc.progress is None:
                exc.with_progress(stream.progress(interrupted=not isinstance(exc, (DisconnectedError,))))
            raise
        progress = stream.progress()
        return StreamResult(progress.durations_ms, elapsed, dict(self.stats))

    def _gave_up_on_a_line(self, exc: TooManyResendsError) -> TooManyResendsError:
        """A line (or `?`) went out as often as allowed mid-stream.  The board may still run what it
        accepted: send nothing more, wait for it to be idle (bounded) and read from its status which
        actions ran, so the stop names the cube state.  Without a readable status it is not known."""
        stream = running(self._stream)
        self.connection.lines.clear()  # nothing more goes out (the pending lines would only fail again)
        try:
            status = self.wait_idle(limit_s=10 * self.settings.silence_timeout_s)
        except LinkError:
            sent = [e.index + 1 for e in stream.entries if e.seq is not None and not e.done and e.index is not None]
            if len(sent) > 1:
                exc.args = (exc.args[0] + f"; actions {sent[0]}-{sent[-1]} were sent and may have run "
                                          "(no readable status line to tell)",)
            return exc.with_progress(stream.progress(interrupted=True))
        # Idle: every action it accepted has ended (`done` = the last), and none after it will run.
        stream.mark_done_through(status.done)
        return exc.with_progress(stream.progress())

    def _submit_actions(self) -> None:
        stream = running(self._stream)
        depth = self.connection.known_identity().queue_depth
        while stream.next < len(stream.entries) and stream.outstanding() < depth:
            entry = stream.entries[stream.next]
            stream.by_seq[self.connection.submit(entry.command, entry)] = entry  # submit numbers the entry
            stream.next += 1

    def _stream_message(self, message) -> None:
        stream = running(self._stream)
        match message:
            case P.Status(state=P.State.ALARM) as status:
                self._stop_on_alarm(status.alarm, None)
            case P.Alarm(code, stop_us):
                self._stop_on_alarm(code, stop_us)
            case P.Identity():
                self._on_banner(message)
            case P.Status(accepted=acc) if acc < self.connection.acknowledged:
                # It forgot lines it had acknowledged: it reset, and the noise ate its banner.
                # Ask who it is now (HELLO), then carry on as after a banner, counting from now on only
                # what the board confirms one by one (it may have taken a later line since the reset).
                self.stats["banners_lost"] += 1
                stream.reset_unseen = True
                self._on_banner(unseen_reset.hello(self))
            case P.Err(seq, code) if seq is not None and seq in stream.by_seq and stream.by_seq[seq].seq == seq:
                if code == P.ErrorCode.ALARM_ACTIVE:
                    self._stop_on_alarm(self._alarm_code(), None)
                    return  # a stop byte made by line noise before this action: cleared, it is sent again
                if code == P.ErrorCode.MOTORS_OFF and self.motors:
                    unseen_reset.check_refused_with_drivers_off(self, stream.by_seq[seq])
                self._stop_on_reject(stream.by_seq[seq], code)

    def _stop_on_alarm(self, code: P.AlarmCode, stop_us: int | None) -> None:
        """The firmware flushed its queue: learn exactly what completed, then raise.  Unless the alarm
        is a stop byte made by line noise while no action was queued: then clear it and go on."""
        stream = running(self._stream)
        if code == P.AlarmCode.ESTOP_BYTE and not self.noise.host_sent_stop:
            # Wait (bounded) for the answer to every line sent: then each action is known accepted or refused.
            deadline = time.monotonic() + 2 * self.settings.silence_timeout_s
            while self.connection.lines.pending and time.monotonic() < deadline:
                self.connection.wait_step(deadline)
            if not self.connection.lines.pending and self.noise.may_clear(code, self._stream):
                self._clear_noise_stop(f"during a stream of {len(stream.commands)} action(s), between actions")
                stream.resend_refused()
                return
        try:
            status = self.status()
            stream.mark_done_through(status.done)
            if code == P.AlarmCode.NONE:
                code = status.alarm
        except LinkError:
            pass  # report what the `done` lines told us
        if not self.connection.lines.pending and self.noise.stopped_nothing(code, self._stream):  # noise past the cap: nothing was queued
            raise AlarmError(code, stop_us, detail=self.noise.hint(code, self._stream)).with_progress(stream.progress())
        raise AlarmError(code, stop_us, detail=CLEAR_ALARM_HINT).with_progress(stream.progress(interrupted=True))

    def _stop_on_reject(self, entry: StreamEntry, code: P.ErrorCode | None) -> None:
        """An action was refused: let the ones before it finish (so the cube state is known), then raise."""
        stream, refused_seq = running(self._stream), entry.seq or 0  # a refused action was sent: it has a number
        entry.rejected = True
        entry.done = False  # refused: it never ran (a later `done` marks it done when its `err` was lost)
        stream.next = len(stream.entries)
        for later in stream.entries:
            if later.seq is not None and later.seq > refused_seq:
                self.connection.lines.pending.pop(later.seq, None)
        try:
            status = self.wait_idle()
            stream.mark_done_through(status.done)
        except LinkError:
            pass
        ran_anyway = [e.index + 1 for e in stream.entries
                      if stream.counts_done(e) and e.seq is not None and e.seq > refused_seq and e.index is not None]
        if ran_anyway or code is None:  # no prefix of the plan describes the cube
            number = entry.index + 1 if entry.index is not None else None
            raise RefusedMidStreamError(entry.command, code, ran_anyway, number).with_progress(stream.progress())
        raise CommandRejectedError(entry.command, code).with_progress(stream.progress())

    def _on_banner(self, identity: P.Identity) -> None:
        """The board reset (its start-up banner): resume after `last`, or stop if an arm was moving."""
        self.connection.count_resets(identity)
        self.connection.check_identity(identity)
        self.connection.identity = identity
        stream = self._stream
        self.connection.lines.clear()
        self.connection.lines.next_seq = max(self.connection.lines.next_seq, identity.last + 1)
        if stream is None:
            return
        stream.check_memory(identity.last)
        stream.mark_done_through(identity.last)
        stream.check_cut(identity)
        stream.restart_after_reset()
        self.configure()
