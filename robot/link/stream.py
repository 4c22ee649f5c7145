"""Pure bookkeeping of the link, no I/O and no threads (unit-tested directly).

  LineWindow   command lines awaiting their answer: which to (re)send next within the
               firmware's receive window (`rx` bytes), what an answer retires, resends
               with the same seq
  Stream       the actions of a plan being streamed: which are submitted, done, rejected;
               renumbering after a board reset; the progress attached to errors
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from typing import Callable

from .. import motion as motion_model
from .. import regrip
from ..config_types import MotionConfig
from . import protocol as P
from .errors import CubeStateUncertainError, LinkError, TooManyResendsError

# A line the board does not answer readably is sent link.max_resends + 1 times.  While the board
# demonstrably answers (any line from it since the line was first sent, even a damaged one: it is
# alive, the noise eats the answers) this many times as often: at 2% byte faults a settings line and
# its `ok` get through about 1 time in 3, so 11 sends failed in about 1 of 80 lines.  Still a bound.
SENDS_FACTOR_WHILE_ANSWERING = 3


REOPEN_MARGIN_S = 0.2  # reopen this long after the queued actions' predicted end...
REOPEN_MARGIN_FRACTION = 0.1  # ...plus this fraction of their predicted duration


def sends_allowed(max_resends: int, board_answers: bool) -> int:
    """How many times one line (or one `?`) is sent before the link is called too noisy."""
    return (max_resends + 1) * (SENDS_FACTOR_WHILE_ANSWERING if board_answers else 1)


@dataclass
class PendingLine:
    seq: int
    command: str
    data: bytes
    entry: "StreamEntry | None" = None
    sends: int = 0
    needs_send: bool = True
    replies_heard: int = 0  # lines from the board (damaged ones too) since this line was first sent


class LineWindow:
    """Command lines awaiting their answer, and which of their bytes the firmware may not have read.

    Flow control (docs/protocol.md): the bytes of lines sent but not yet answered never exceed
    the firmware's receive window.  Every line stays pending until an answer covers its seq; a
    line to resend keeps its seq, so the firmware's `ok <seq> dup` makes a repeat harmless.
    """

    def __init__(self):
        self.next_seq = 1
        self.pending: dict[int, PendingLine] = {}  # unacknowledged lines by seq (in seq order)
        self.inflight: collections.deque = collections.deque()  # (seq, nbytes) sent, answer not yet seen
        self.renumbered_from: int | None = None  # renumber_from lowered the numbering to here (until a clear)

    def submit(self, command: str, entry: "StreamEntry | None" = None) -> int:
        seq = self.next_seq
        self.next_seq += 1
        self.pending[seq] = PendingLine(seq, command, P.command_line(seq, command), entry)
        if entry is not None:
            entry.seq = seq
        return seq

    def clear(self) -> None:
        self.pending.clear()
        self.inflight.clear()
        self.renumbered_from = None

    def next_to_send(self, window: int, max_resends: int) -> "PendingLine | None":
        """The oldest line waiting to be (re)sent if it fits the window, else None."""
        in_flight = sum(n for _, n in self.inflight)
        for line in self.pending.values():
            if not line.needs_send:
                continue
            if in_flight + len(line.data) > window:
                return None
            if line.sends >= sends_allowed(max_resends, board_answers=line.replies_heard > 0):
                heard = (f" (the board answered {line.replies_heard} other or damaged lines meanwhile: it is alive, "
                         "line noise ate the answers)" if line.replies_heard else "")
                raise TooManyResendsError(
                    f"command N{line.seq} {line.command!r} was sent {line.sends} times without an answer{heard}; "
                    "the link is too noisy (check the USB cable and link.baud)"
                )
            return line
        return None

    def board_heard(self) -> None:
        """A line (whole or damaged) came from the board: it is alive for every line already sent."""
        for line in self.pending.values():
            if line.sends:
                line.replies_heard += 1

    def mark_sent(self, line: PendingLine) -> None:
        line.sends += 1
        line.needs_send = False
        self.inflight.append((line.seq, len(line.data)))

    def in_flight(self, seq: int | None) -> bool:
        return any(s == seq for s, _ in self.inflight)

    def rewind(self, from_seq: int | None = None) -> None:
        """Resend every pending line from `from_seq` (default: the oldest) with the same seq."""
        for line in self.pending.values():
            if from_seq is None or line.seq >= from_seq:
                line.needs_send = True

    def renumber_from(self, seq: int) -> None:
        """The board wants `seq` next, below every pending line: it reset and took a line in flight
        (any seq above `last` is taken after a reset) that we had since dropped.  None of the pending
        lines reached it (it accepted only up to seq - 1), so they are renumbered from `seq` on."""
        lines = list(self.pending.values())
        self.pending.clear()
        self.inflight.clear()
        for new, line in enumerate(lines, start=seq):
            line.seq, line.data, line.sends, line.needs_send = new, P.command_line(new, line.command), 0, True
            line.replies_heard = 0
            if line.entry is not None:
                line.entry.seq = new
            self.pending[new] = line
        self.next_seq = seq + len(lines)
        self.renumbered_from = seq

    def beyond_numbering(self, seq: int) -> bool:
        """Whether an answer naming `seq` proves the board took a line under a number it no longer has:
        after renumber_from no line carries a seq of next_seq or above, so a board that accepted one
        took a waiting line under its old number (and will answer the renumbered ones `ok dup`)."""
        return self.renumbered_from is not None and seq >= self.next_seq

    def answered(self, seq: int | None) -> None:
        """One answer arrived: retire the transmission it answers and every earlier one (bytes are in order)."""
        if seq is not None and self.in_flight(seq):
            while self.inflight:
                s, _ = self.inflight.popleft()
                if s == seq:
                    break
        elif self.inflight:
            self.inflight.popleft()

    def acknowledge_through(self, seq: int) -> None:
        for s in [s for s in self.pending if s <= seq]:
            del self.pending[s]


@dataclass
class StreamEntry:
    """One queued action of a stream (a plan action, or a re-grip inserted after a reset)."""

    command: str
    index: int | None  # plan action index; None for an inserted re-grip
    seq: int | None = None
    done: bool = False
    ms: int | None = None  # measured duration from `done` (None if its `done` line was lost)
    rejected: bool = False  # answered `err`: it never runs
    refused_by_alarm: bool = False  # answered `err ALARM_ACTIVE`: an alarm had latched before it came; it never ran
    time_asks: int = 0  # TIME queries sent for it (its `done` line was lost)
    time_unknown: bool = False  # TIME answered `?`: the board has no duration for it (asking again changes nothing)
    time_judged: bool = False  # that `?` was weighed against the board's `last` (unseen_reset.check_never_ran)
    never_ran: bool = False  # counted done by a later `done`, but TIME says it never completed: a lost `err`
    # The board named this seq as completed (its own `done`, `time <seq> <ms>`, or `last`), not only a later one.
    confirmed: bool = False


@dataclass
class StreamProgress:
    """Which actions of a stream have completed; attached to errors raised mid-stream."""

    commands: list  # command text per plan action
    durations_ms: list  # per plan action: ms, or None (not done, or its `done` was lost)
    completed: int  # actions 0..completed-1 are done (execution is in order)
    interrupted: int | None = None  # index of an action that may have been stopped part-way
    # A reset cut it: (parts done or None when unknown, of how many) from the board's memory.
    interrupted_part: tuple | None = None
    ran_after: tuple = ()  # plan action numbers (1-based) done after the first not done (it was refused)
    # The board reset unseen: only actions confirmed one by one count, and whether the first of the others
    # (and any later one not in ran_after) ran is not known.
    unknown_after: bool = False

    @property
    def total(self) -> int:
        return len(self.commands)

    def describe(self) -> str:
        if self.completed == 0:
            text = f"No action of the {self.total} was completed"
        else:
            text = (f"Actions 1-{self.completed} of {self.total} completed "
                    f"(last: {self.commands[self.completed - 1]})")
        if self.unknown_after and self.completed < self.total:
            text += (f"; whether action {self.completed + 1} ({self.commands[self.completed]}) and later ones ran "
                     "is not known: the board reset unseen")
            if self.ran_after:
                text += f" (action(s) {list(self.ran_after)} did run: the board reported each done)"
        elif self.interrupted is not None and self.interrupted_part is not None:
            text += (f"; action {self.interrupted + 1} ({self.commands[self.interrupted]}) was cut by a board "
                     f"reset: {describe_part(self.commands[self.interrupted], *self.interrupted_part)}")
        elif self.interrupted is not None:
            text += (f"; action {self.interrupted + 1} ({self.commands[self.interrupted]}) may have stopped "
                     "part-way: the cube may be between positions")
        elif self.ran_after:
            text += (f"; action {self.completed + 1} ({self.commands[self.completed]}) did not run, but action(s) "
                     f"{list(self.ran_after)} after it did")
        elif self.completed < self.total:
            text += f"; action {self.completed + 1} ({self.commands[self.completed]}) and later did not start"
        return text + "."


def describe_part(command: str, done: int | None, total: int) -> str:
    """Where a cut action stands, from the board's memory (docs/protocol.md `part`)."""
    words = command.split()
    if words[0] == "GRIP":
        if done == 0:
            return (f"the {words[1]} grippers were closing and the others still held: no layer turned, the cube "
                    "sits square")
        if done == 1:
            return f"the {words[1]} grippers held and the others were opening: no layer turned, the cube sits square"
    if words[0] == "TURN" and total:
        if done is None:
            return f"the layer turned an unknown part of {total} steps: it may be between positions"
        angle = max(abs(int(w[1:])) for w in words[1:])
        where = ("the full turn: the layer sits square" if done == total else
                 "not yet moved: the layer sits square" if done == 0 else
                 f"about {round(angle * done / total)} of {angle} degrees: the layer is between positions")
        return f"{done} of {total} steps done ({where})"
    return "how far it got is not known: the cube may be between positions"


@dataclass
class StreamResult:
    durations_ms: list  # measured duration of each action (None where its `done` line was lost)
    elapsed_s: float
    stats: dict = field(default_factory=dict)

    @property
    def durations_complete(self) -> bool:
        """False when some action's time is unknown (its `done` was lost): a sum would understate."""
        return all(d is not None for d in self.durations_ms)


class Stream:
    def __init__(self, commands: list[str], regrip_before: Callable[[int], str | None]):
        self.commands = commands
        self.regrip_before = regrip_before  # index -> GRIP command to re-take the cube after a reset
        self.entries: list[StreamEntry] = [StreamEntry(c, i) for i, c in enumerate(commands)]
        self.next = 0  # next entry to submit
        self.by_seq: dict[int, StreamEntry] = {}
        self.started = time.monotonic()
        self.last_done_at = self.started  # when the last `done` arrived (queued work is timed from it)
        self.stale_cut = 0
        # The board reset and its start-up line was lost: a `done` from it may follow flushed actions, so
        # from now on only actions it confirmed one by one count as done (counts_done, unproven).
        self.reset_unseen = False

    def apply(self, message, stats: collections.Counter) -> list[StreamEntry]:
        """What a message tells about the stream's actions, once the line window has taken it; returns
        the entries it completed.  `stats`: the link's counters (done_lost, times_recovered)."""
        if isinstance(message, P.Resend):  # the lines may have been renumbered (LineWindow.renumber_from)
            self.by_seq.update({e.seq: e for e in self.entries if e.seq is not None})
        match message:
            case P.Done(seq, ms):
                newly = self.mark_done_through(seq, ms)
                self.last_done_at = time.monotonic()
                stats["done_lost"] += sum(1 for e in newly if e.seq != seq)
                return newly
            case P.Status(done=done) if done:
                newly = self.mark_done_through(done)
                stats["done_lost"] += len(newly)
                return newly
            case P.Err(seq, P.ErrorCode.ALARM_ACTIVE) if seq in self.by_seq:
                if self.by_seq[seq].seq == seq:
                    self.by_seq[seq].refused_by_alarm = True
            case P.Time(seq, ms) if ms is not None:
                entry = self.by_seq.get(seq)
                if entry is not None and entry.seq == seq and entry.done:
                    entry.confirmed = True
                    if entry.ms is None:
                        entry.ms = ms  # the board's own measurement of an action whose `done` was lost
                        stats["times_recovered"] += 1
            case P.Time(seq, None):  # not among the board's last TIME_SLOTS completed (never_ran_if_last)
                entry = self.by_seq.get(seq)
                if entry is not None and entry.seq == seq and entry.done and entry.ms is None:
                    entry.time_unknown = True
        return []

    def never_ran_if_last(self, entry: StreamEntry, last: int) -> bool:
        """Whether TIME's `?` for `entry` proves it never completed, given the board's `last` (a status asked
        after that answer): only if the board cannot have completed TIME_SLOTS actions after it.  Each
        completion has its own seq (below `last` before a reset, above it after), and every action of this
        stream went out under a seq in by_seq, so those between entry.seq and `last` bound them.  (The
        `done` lines the host saw do not: the latest ones may have been lost.)"""
        seq = entry.seq or 0
        return sum(1 for s in self.by_seq if seq < s <= last) < P.TIME_SLOTS

    def outstanding(self) -> int:
        return sum(1 for e in self.entries[: self.next] if not e.done)

    def finished(self) -> bool:
        return self.next == len(self.entries) and all(e.done for e in self.entries)

    def nothing_queued_at_alarm(self) -> bool:
        """Whether no sent action was queued on the board when its alarm latched: every sent action is
        done (a `done` means it ran to its end), or the first one not done was refused because of the
        alarm (the board takes lines in order, so the alarm came before it and before all after it)."""
        waiting = [e for e in self.entries[: self.next] if not e.done]
        return not waiting or waiting[0].refused_by_alarm

    def resend_refused(self) -> None:
        """After an alarm that stopped nothing was cleared: send the refused actions again (new seqs)."""
        first = next((i for i, e in enumerate(self.entries[: self.next]) if not e.done), self.next)
        for entry in self.entries[first:]:
            entry.seq, entry.refused_by_alarm = None, False
        self.next = first

    def counts_done(self, entry: StreamEntry) -> bool:
        """Whether an action counts as done: after an unseen reset, only if the board confirmed it."""
        return entry.done and (entry.confirmed or not self.reset_unseen)

    def unproven(self) -> list[StreamEntry]:
        """Plan actions counted done only because a later one was (not confirmed one by one)."""
        return [e for e in self.entries if e.index is not None and e.done and not self.counts_done(e)]

    def progress(self, interrupted: bool = False, part: tuple | None = None) -> StreamProgress:
        plan_entries = {e.index: e for e in self.entries if e.index is not None}
        done = [self.counts_done(plan_entries[i]) for i in range(len(self.commands))]
        completed = 0
        while completed < len(self.commands) and done[completed]:
            completed += 1
        running = None
        if (interrupted and not self.reset_unseen and completed < len(self.commands)
                and plan_entries[completed].seq is not None):
            running = completed  # (after an unseen reset the next action's fate is not known at all)
        return StreamProgress(
            commands=list(self.commands),
            durations_ms=[plan_entries[i].ms if done[i] else None for i in range(len(self.commands))],
            completed=completed, interrupted=running, interrupted_part=part if running is not None else None,
            ran_after=tuple(i + 1 for i in range(completed + 1, len(self.commands)) if done[i]),
            unknown_after=self.reset_unseen and completed < len(self.commands),
        )

    def mark_done_through(self, seq: int, ms_of_last: int | None = None) -> list[StreamEntry]:
        """Execution is in order: `done seq` completes every earlier submitted action too (the board
        names `seq` itself: its `done`, `status done`, `last`, so that one is confirmed)."""
        newly = []
        for entry in self.entries[: self.next]:
            if entry.seq is not None and entry.seq <= seq and not entry.done and not entry.rejected:
                entry.done = True
                if entry.seq == seq:
                    entry.ms = ms_of_last
                newly.append(entry)
            if entry.seq == seq and entry.done:
                entry.confirmed = True
        return newly

    def check_memory(self, last: int) -> None:
        """The board's `last` (banner, HELLO, status) is below an action that completed: it lost its memory."""
        done_seqs = [e.seq for e in self.entries if e.done and e.seq is not None]
        if done_seqs and last < max(done_seqs):
            raise CubeStateUncertainError(
                f"the board restarted without its memory (power cycle?): it reports last action seq "
                f"{last}, but seq {max(done_seqs)} had completed; scan the cube again"
            ).with_progress(self.progress(interrupted=True))

    def check_cut(self, identity: P.Identity) -> None:
        """A reset cut an action of this stream (`cut` in the id line): stop, naming how far it got."""
        if identity.cut and identity.cut != self.stale_cut:
            entry = self.by_seq.get(identity.cut)
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
            raise error.with_progress(self.progress(interrupted=True, part=part))

    def queued_work_end(self, motion: MotionConfig | None, work_time_scale: float) -> float:
        """When the actions sent but not reported done will have ended at the latest (monotonic time).

        Each is timed from the last `done` (or the stream's start) at its predicted duration (the
        motion settings, as the firmware runs them) plus a margin for the firmware's own timing.
        """
        queued = [e for e in self.entries if e.seq is not None and not e.done and not e.rejected]
        if not queued or motion is None:
            return time.monotonic()
        predicted_ms = sum(predicted_action_ms(e.command, motion) for e in queued)
        margin_s = REOPEN_MARGIN_S + REOPEN_MARGIN_FRACTION * predicted_ms / 1000
        return self.last_done_at + (predicted_ms / 1000) * work_time_scale + margin_s

    def restart_after_reset(self) -> None:
        """Actions not done were flushed by the reset: renumber them, re-take the cube first."""
        first = next((i for i, e in enumerate(self.entries) if not e.done), len(self.entries))
        rest = [e for e in self.entries[first:] if e.index is not None]
        for e in rest:
            e.seq = None
        first_index = rest[0].index if rest else None
        regrip = self.regrip_before(first_index) if first_index is not None else None
        if regrip:
            rest.insert(0, StreamEntry(regrip, None))
        self.entries = self.entries[:first] + rest
        self.next = first


def predicted_action_ms(command: str, motion: MotionConfig) -> float:
    """How long the firmware takes for one queued action (robot/motion.py, the same model)."""
    words = command.split()
    jaws = {arm: regrip.Jaws(*P.gripper_widths(motion, arm), motion.servo_speed_us_per_ms, motion.jaw_clear_pct / 100,
                             motion.jaw_contact_pct / 100, motion.jaw_open_gap_mm) for arm in P.ARMS}
    if words[0] == "GRIP":  # at the latest: close fully, then open fully (the overlap only shortens it)
        return float(regrip.regrip_ms_without_overlap(list(jaws.values()), list(jaws.values())))
    if words[0] in ("TURN", "TILT"):
        return motion_model.turn_ms([int(w[1:]) for w in words[1:]], motion)
    if words[0] in ("OPEN", "CLOSE"):  # a servo frame and the slowest of those grippers' travel
        return float(max(regrip.closing_ms(jaws[arm]) for arm in words[1]))
    if words[0] == "DWELL":
        return float(words[1])
    return 0.0


def running(stream: Stream | None) -> Stream:
    """The stream a link is running: its streaming steps are called only while it has one."""
    if stream is None:
        raise LinkError("no plan is being streamed")
    return stream


def regrip_lookup(commands: list[str]) -> Callable[[int], str | None]:
    """For a resume at action i: the GRIP that was holding before i (if the next action is a turn)."""

    def regrip(i: int) -> str | None:
        if commands[i].startswith("GRIP"):
            return None
        for command in reversed(commands[:i]):
            if command.startswith("GRIP"):
                return command
        return None

    return regrip


def first_sends(say: Callable[[int], None] | None) -> Callable[[PendingLine], None] | None:
    """A Connection's on_first_send that calls say(n) once per plan action n (from 1), when its line first
    goes to the board: a line renumbered after a reset, or an action sent again after a noise stop, is new
    to the connection but not to `say`."""
    if say is None:
        return None
    said: set[int] = set()

    def first_send(line: PendingLine) -> None:
        index = line.entry.index if line.entry is not None else None
        if index is not None and index not in said:
            said.add(index)
            say(index + 1)

    return first_send
