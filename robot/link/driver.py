"""The host side of the serial link: commands, and exactly-once streaming of plans.

    link = Link.open(config)                    # finds the port, handshakes, sends MOTION + SERVO
    result = link.run(plan, progress=callback)  # streams Grip/Turn actions; durations from `done`
    link.close()

The link is split by responsibility:
  reader.py     the reader thread (bytes -> parsed lines; events for the application)
  stream.py     pure bookkeeping: the acknowledged line window, the stream's actions and progress
  handshake.py  Connection: port + reader + window timing, and the handshake (ports.probe uses it)
  driver.py     Link: immediate commands, and run/resume of plans over the acknowledged window
  noise_stops.py  the rule for a stop byte `!` made by line noise (part of Link)

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

from .. import motion as motion_model
from ..config_types import MotionConfig
from . import ports
from . import protocol as P
from .errors import (AlarmError, CommandRejectedError, CubeStateUncertainError, DisconnectedError, LinkError,
                     NoAnswerError, RefusedMidStreamError, SilentBoardError, TooManyResendsError)
from .handshake import Connection, LinkSettings
from .noise_stops import CLEAR_ALARM_HINT, NoiseStops
from .reader import Garbled, LinkEvent
from .stream import Stream, StreamEntry, StreamProgress, StreamResult, describe_part, regrip_lookup, sends_allowed

__all__ = ["Link", "LinkSettings", "LinkEvent", "StreamProgress", "StreamResult", "CLEAR_ALARM_HINT"]

REOPEN_MARGIN_S = 0.2  # reopen this long after the queued actions' predicted end...
REOPEN_MARGIN_FRACTION = 0.1  # ...plus this fraction of their predicted duration
REOPEN_POLL_S = 0.25  # how often a port that is gone is tried again
TIME_ASKS = 8  # TIME queries per action whose `done` line was lost (the `time` reply can be lost too)


def predicted_action_ms(command: str, motion: MotionConfig) -> float:
    """How long the firmware takes for one queued action (robot/motion.py, the same model)."""
    words = command.split()
    if words[0] == "GRIP":
        return motion_model.grip_ms(motion)
    if words[0] == "TURN":
        return motion_model.turn_ms([int(w[1:]) for w in words[1:]], motion)
    if words[0] == "DWELL":
        return float(words[1])
    return 0.0


class Link(NoiseStops, Connection):
    """A connection to the cube-robot firmware over any pyserial-like port object."""

    def __init__(self, port, settings: LinkSettings = LinkSettings(), motion: MotionConfig | None = None, url=None):
        self.motion = motion
        self.work_time_scale = 1.0  # how fast the board's actions run (a simulation may run faster)
        self.motors = True  # configure() switches the drivers on (bring-up commands open with motors=False)
        self.estop_sent = False  # this host sent the stop byte (estop()); only a host sends `!`
        self.noise_stops: list[str] = []  # stop bytes made by line noise that the link cleared (for the report)
        self._stream: Stream | None = None
        self._stream_progress_cb = None
        super().__init__(port, settings, url=url)

    # -- opening -----------------------------------------------------------

    @classmethod
    def open(cls, config=None, port: str | None = None, configure: bool = True, motors: bool = True,
             probed: "Link | None" = None) -> "Link":
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
        try:
            if link.identity is None:  # a probed connection has answered the handshake already
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
        if isinstance(message, P.Resend):  # the lines may have been renumbered (LineWindow.renumber_from)
            self._stream.by_seq.update({e.seq: e for e in self._stream.entries if e.seq is not None})
        match message:
            case P.Done(seq, ms):
                newly = self._stream.mark_done_through(seq, ms)
                self._stream.last_done_at = time.monotonic()
                self.stats["done_lost"] += sum(1 for e in newly if e.seq != seq)
                self._report_progress(newly)
            case P.Status(done=done) if done:
                newly = self._stream.mark_done_through(done)
                self.stats["done_lost"] += len(newly)
                self._report_progress(newly)
            case P.Err(seq, P.ErrorCode.ALARM_ACTIVE) if seq in self._stream.by_seq:
                if self._stream.by_seq[seq].seq == seq:
                    self._stream.by_seq[seq].refused_by_alarm = True
            case P.Time(seq, ms) if ms is not None:
                entry = self._stream.by_seq.get(seq)
                if entry is not None and entry.seq == seq and entry.done and entry.ms is None:
                    entry.ms = ms  # the board's own measurement of an action whose `done` was lost
                    self.stats["times_recovered"] += 1
            case P.Time(seq, None):  # not among the board's last TIME_SLOTS completed: if that recent, never ran
                entry = self._stream.by_seq.get(seq)
                if entry is not None and entry.seq == seq and entry.done and entry.ms is None:
                    entry.never_ran = sum(e.done and (e.seq or 0) > seq for e in self._stream.entries) < P.TIME_SLOTS

    def _work_outstanding(self) -> bool:
        return super()._work_outstanding() or (self._stream is not None and not self._stream.finished())

    def _report_progress(self, newly) -> None:
        if newly and self._stream_progress_cb:
            self._stream_progress_cb(self._stream.progress())

    # -- immediate commands ------------------------------------------------

    def _ask_times(self) -> None:
        """Ask the board (`TIME <seq>`) for the durations of done actions whose `done` line was lost.

        Without waiting: the `time` replies fill them in as they come (Link._apply).  The board keeps
        the last TIME_SLOTS durations across a reset, so they are asked for soon after the loss."""
        stream = self._stream
        for entry in stream.entries:
            if (entry.done and entry.ms is None and entry.seq is not None and entry.time_asks < TIME_ASKS
                    and not any(line.command == f"TIME {entry.seq}" for line in self._lines.pending.values())):
                entry.time_asks += 1
                self._submit(f"TIME {entry.seq}")

    def _collect_times(self) -> None:
        """At the end of a stream: ask for the durations still unknown and wait (bounded) for the answers."""
        deadline = time.monotonic() + 2 * self.settings.silence_timeout_s
        while time.monotonic() < deadline:
            self._ask_times()
            if not any(line.command.startswith("TIME ") for line in self._lines.pending.values()):
                return
            try:
                self._wait_step(deadline)
            except LinkError:
                return  # the durations stay unknown (and are reported so)

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
                        alarm = self._alarm_code()
                        if command != "RESET" and self._may_clear_noise_stop(alarm):
                            self._clear_noise_stop(f"while {command.split()[0]} went out")
                            seq = self._submit(command)  # it was refused, so it did nothing: send it again
                            continue
                        raise AlarmError(alarm, detail=f"{command.split()[0]} refused: " + self._alarm_hint(alarm))
                    raise CommandRejectedError(command, code)
                case P.Identity() if command == "HELLO":
                    self._count_resets(message)
                    replies.append(message)
                case P.Identity():
                    self._on_banner(message)
                case P.Status() | P.Where():
                    replies.append(message)  # (button and alarm events go to self.events only)
            if seq not in self._lines.pending:  # acknowledged (by `ok`, or covered by a later `status acc`)
                return replies

    def status(self) -> P.Status:
        """Ask with the real-time `?` (works even when the queue is full)."""
        # A `status` line (about 56 bytes) arrives whole about 1 time in 3 at 2% byte faults; a damaged
        # one proves the board is there, so `?` is asked as often as a line is sent while the board answers.
        asks = sends_allowed(self.settings.max_resends, board_answers=True)
        for _ in range(asks):
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
        raise TooManyResendsError(f"no readable status line after {asks} requests; "
                                  "the link is too noisy (check the USB cable)")

    def _alarm_code(self) -> P.AlarmCode:
        try:
            return self.status().alarm
        except LinkError:
            return P.AlarmCode.NONE

    def configure(self) -> None:
        """Send the motion settings (MOTION, SERVO, then per arm and gripper) and, if self.motors, MOTORS ON.

        The queue must be empty, so wait for it."""
        if self.motion is None:
            return
        self.wait_idle()
        self.request(P.motion_command(self.motion))
        self.request(P.servo_command(self.motion))
        for command in P.bringup_setting_commands(self.motion):
            self.request(command)
        if self.motors:
            self.request(P.motors_command(True))

    def where(self) -> P.Where:
        """The drivers, the arms' positions (None: not known) and the grippers (`WHERE`).  On a noisy
        link the `where` line can be lost while its `ok` arrives: WHERE reads only, so it is asked again."""
        for _ in range(self.settings.max_resends + 1):
            report = next((r for r in self.request("WHERE") if isinstance(r, P.Where)), None)
            if report is not None:
                return report
        raise TooManyResendsError(f"no readable `where` line after {self.settings.max_resends + 1} requests; "
                                  "the link is too noisy (check the USB cable)")

    def wait_idle(self, limit_s: float = 120.0) -> P.Status:
        """Wait until the firmware's queue has drained (bounded: silence is detected, and `limit_s`)."""
        deadline = time.monotonic() + limit_s
        while True:
            status = self.status()
            if status.state == P.State.ALARM and self._may_clear_noise_stop(status.alarm):
                self._clear_noise_stop("while the host waited for the board to be idle")
                continue
            if status.state == P.State.ALARM:
                raise AlarmError(status.alarm, detail=self._alarm_hint(status.alarm))
            if status.state == P.State.IDLE:
                return status
            if time.monotonic() > deadline:
                raise LinkError(f"the board is still busy after {limit_s:.0f} s (status {status})")
            self._wait_step(time.monotonic() + self.settings.silence_timeout_s / 2)

    def clear_alarm(self) -> None:
        """RESET: clear a latched alarm (after the user has checked the robot)."""
        self.request("RESET")

    def estop(self) -> None:
        self.estop_sent = True
        self._write(P.RT_ESTOP)

    def stop_and_learn(self) -> StreamProgress | None:
        """Ctrl-C: the stop byte, then one `?` (within link.silence_timeout_ms): actions done while their
        `done` lines were on the way count too.  The last stream's progress (None: no stream was run)."""
        self.estop()
        self._stream_progress_cb = None  # that run is over: its progress drives nothing more
        deadline = time.monotonic() + self.settings.silence_timeout_s
        try:
            self._ask_status()
            while time.monotonic() < deadline and not isinstance(self._wait_step(deadline), P.Status):
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
                if self._may_clear_noise_stop(event.message.code):
                    self._clear_noise_stop("while the host waited for the start button")
                    continue
                raise AlarmError(event.message.code, event.message.stop_us,
                                 detail=self._alarm_hint(event.message.code))

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
        try:
            return self._resume(stream, port)
        except LinkError as exc:
            if exc.progress is None:  # what is known: the actions reported done; the next may be cut
                exc.with_progress(stream.progress(interrupted=True))
            raise

    def _resume(self, stream: Stream, port) -> StreamResult:
        self._detach()
        reopen = port is None or isinstance(port, str)
        if reopen:
            # A real Uno resets when its port is opened: open it only once the actions already
            # queued on the board have ended, so the reset lands between moves, not in one.
            wait_s = self._queued_work_end() - time.monotonic()
            if wait_s > 0:
                if self.reconnect_log:
                    self.reconnect_log(f"waiting {wait_s:.1f} s for the queued actions to finish before reopening "
                                       "the port (opening resets the board)")
                self.stats["reopen_wait_ms"] += round(wait_s * 1000)
                time.sleep(wait_s)  # the board is working on its own; nothing to acknowledge
            port = self._reopen(port or self.url)
        identity = self._handshake_after_reconnect(port, reopen)
        # What the board remembers comes first: every action up to `last` completed (their `done`
        # lines may have been lost with the cable), then a cut action stops the run.
        self._check_memory(identity.last)
        stream.mark_done_through(identity.last)
        self._check_cut(identity)
        status = self.wait_idle()  # let the board finish what it had queued; `done` lines complete entries
        self._check_memory(max(status.done, identity.last))
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
            self.identity = None
            self._attach(port)
            try:
                return self.handshake()
            except NoAnswerError:
                if not reopen or time.monotonic() + self.settings.handshake_timeout_s > deadline:
                    raise
            self._detach()
            self.stats["handshake_reopens"] += 1
            if self.reconnect_log:
                self.reconnect_log(f"the board did not answer on {self.url} after the port came back: opening it "
                                   f"again (up to {deadline - time.monotonic():.0f} s more)")
            port = self._reopen(self.url)

    def _reopen(self, url: str):
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

    def _queued_work_end(self) -> float:
        """When the actions sent but not reported done will have ended at the latest (monotonic time).

        Each is timed from the last `done` (or the stream's start) at its predicted duration (the
        motion settings, as the firmware runs them) plus a margin for the firmware's own timing.
        """
        stream = self._stream
        queued = [e for e in stream.entries if e.seq is not None and not e.done and not e.rejected]
        if not queued or self.motion is None:
            return time.monotonic()
        predicted_ms = sum(predicted_action_ms(e.command, self.motion) for e in queued)
        margin_s = REOPEN_MARGIN_S + REOPEN_MARGIN_FRACTION * predicted_ms / 1000
        return stream.last_done_at + (predicted_ms / 1000) * self.work_time_scale + margin_s

    def _run_stream(self) -> StreamResult:
        stream = self._stream
        try:
            while not stream.finished():
                self._submit_actions()
                message = self._wait_step()
                self._stream_message(message)
                self._ask_times()
                self._check_never_ran()
        except TooManyResendsError as exc:
            raise self._gave_up_on_a_line(exc) from None
        except LinkError as exc:
            if exc.progress is None:
                exc.with_progress(stream.progress(interrupted=not isinstance(exc, (DisconnectedError,))))
            raise
        elapsed = time.monotonic() - stream.started
        self._collect_times()
        self._check_never_ran()
        progress = stream.progress()
        return StreamResult(progress.durations_ms, elapsed, dict(self.stats))

    def _gave_up_on_a_line(self, exc: TooManyResendsError) -> TooManyResendsError:
        """A line (or `?`) went out as often as allowed mid-stream.  The board may still run what it
        accepted: send nothing more, wait for it to be idle (bounded) and read from its status which
        actions ran, so the stop names the cube state.  Without a readable status it is not known."""
        stream = self._stream
        self._lines.clear()  # nothing more goes out (the pending lines would only fail again)
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
            case P.Status(accepted=acc) if acc < self._acknowledged:
                # It forgot lines it had acknowledged: it reset, and the noise ate its banner.
                # Ask who it is now (HELLO), then carry on as after a banner.
                self.stats["banners_lost"] += 1
                self._on_banner(next(r for r in self.request("HELLO") if isinstance(r, P.Identity)))
            case P.Err(seq, code) if seq is not None and seq in stream.by_seq and stream.by_seq[seq].seq == seq:
                if code == P.ErrorCode.ALARM_ACTIVE:
                    self._stop_on_alarm(self._alarm_code(), None)
                    return  # a stop byte made by line noise before this action: cleared, it is sent again
                if code == P.ErrorCode.MOTORS_OFF and self.motors:
                    self._check_unseen_reset(stream.by_seq[seq])
                self._stop_on_reject(stream.by_seq[seq], code)

    def _stop_on_alarm(self, code: P.AlarmCode, stop_us: int | None) -> None:
        """The firmware flushed its queue: learn exactly what completed, then raise.  Unless the alarm
        is a stop byte made by line noise while no action was queued: then clear it and go on."""
        stream = self._stream
        if code == P.AlarmCode.ESTOP_BYTE and not self.estop_sent:
            # Wait (bounded) for the answer to every line sent: then each action is known accepted or refused.
            deadline = time.monotonic() + 2 * self.settings.silence_timeout_s
            while self._lines.pending and time.monotonic() < deadline:
                self._wait_step(deadline)
            if not self._lines.pending and self._may_clear_noise_stop(code):
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
        if not self._lines.pending and self._noise_stop(code):  # noise past the cap: nothing was queued
            raise AlarmError(code, stop_us, detail=self._alarm_hint(code)).with_progress(stream.progress())
        raise AlarmError(code, stop_us, detail=CLEAR_ALARM_HINT).with_progress(stream.progress(interrupted=True))

    def _check_never_ran(self) -> None:
        """Counted done by a later `done`, but TIME says it never completed: a refusal whose `err` was lost."""
        for hidden in (e for e in self._stream.entries if e.never_ran):
            self.stats["refusals_found_by_time"] += 1
            self._stop_on_reject(hidden, None)

    def _stop_on_reject(self, entry: StreamEntry, code: P.ErrorCode | None) -> None:
        """An action was refused: let the ones before it finish (so the cube state is known), then raise."""
        stream = self._stream
        entry.rejected = True
        entry.done = False  # refused: it never ran (a later `done` marks it done when its `err` was lost)
        stream.next = len(stream.entries)
        for later in stream.entries:
            if later.seq is not None and later.seq > entry.seq:
                self._lines.pending.pop(later.seq, None)
        try:
            status = self.wait_idle()
            stream.mark_done_through(status.done)
        except LinkError:
            pass
        ran_anyway = [e.index + 1 for e in stream.entries
                      if e.done and e.seq is not None and e.seq > entry.seq and e.index is not None]
        if ran_anyway or code is None:  # no prefix of the plan describes the cube
            number = entry.index + 1 if entry.index is not None else None
            raise RefusedMidStreamError(entry.command, code, ran_anyway, number).with_progress(stream.progress())
        raise CommandRejectedError(entry.command, code).with_progress(stream.progress())

    def _check_unseen_reset(self, entry: StreamEntry) -> None:
        """Drivers we switched on are off: the board reset and its banner was lost.  Then it may have
        accepted a later action (any seq above `last` is taken after a reset) while the ones the reset
        flushed never ran: which ran is not known for sure, so the run stops with an uncertain state."""
        boots = self.boots
        self.request("HELLO")  # counts the reset (boots)
        if self.boots == boots:
            return
        self.stats["banners_lost"] += 1
        raise CubeStateUncertainError(
            f"the board reset unseen (its start-up line was lost in line noise) and refused {entry.command!r} "
            "with its drivers off: actions sent around the reset may have been skipped. Nothing moves on its "
            "own: check the cube sits straight, then scan it again"
        ).with_progress(self._stream.progress(interrupted=True))

    def _check_cut(self, identity: P.Identity) -> None:
        stream = self._stream
        if identity.cut and identity.cut != stream.stale_cut:
            entry = stream.by_seq.get(identity.cut)
            what = f"action {entry.index + 1} ({entry.command})" if entry and entry.index is not None else f"seq {identity.cut}"
            part = (identity.cut_done, identity.cut_total)
            detail = describe_part(entry.command, *part) if entry is not None else "how far it got is not known"
            error = CubeStateUncertainError(
                f"the board reset while {what} was running ({detail}). Nothing moves on its own: check the "
                "cube (a layer between positions is turned by hand to the nearest quarter), then scan it again"
            )
            error.cut_part = part
            if entry is not None:
                entry.done = False
            raise error.with_progress(stream.progress(interrupted=True, part=part))

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
        self._count_resets(identity)
        self._check_identity(identity)
        self.identity = identity
        stream = self._stream
        self._lines.clear()
        self._lines.next_seq = max(self._lines.next_seq, identity.last + 1)
        if stream is None:
            return
        self._check_memory(identity.last)
        stream.mark_done_through(identity.last)
        self._check_cut(identity)
        stream.restart_after_reset()
        self.configure()
