"""What a stop claims after a reset whose start-up line was lost (docs/protocol.md, lost banner).

The reset flushes the board's queue, and until its first line it takes any seq above `last`: the next
line the host sends (a later action) is taken and, when it is a GRIP (the drivers are off, so a TURN is
refused), it runs and reports `done`.  A `done` for seq N then does not mean that the actions before N
ran.  The stop must count only actions the board confirmed one by one and call the rest not known."""

import collections
import re

import pytest

from robot.link import ports, unseen_reset
from robot.link import protocol as P
from robot.link.driver import Link
from robot.link.errors import LinkError, UnseenResetError
from robot.link.stream import LineWindow, Stream, regrip_lookup
from robot.sim.mock_firmware import DEFAULT_MOTION, MockFirmware
from tests.test_link_driver import COMMANDS, FAST, SCALE

# The plan's first 18 actions, then grips only: whichever line the host sends after the reset, the board
# runs it (a GRIP needs no drivers) and reports it done.
TAIL = ["GRIP FB", "GRIP RL"] * 4
PLAN_WITH_GRIP_TAIL = COMMANDS[:18] + TAIL


def reset_when_the_host_has_sent_all_it_may(mock, first: int, from_index: int, lost: list):
    """A reply filter for the mock (on the board's thread, before the reply goes out): at the first `done`
    of plan action `from_index` or later for which the board has already taken every line the host may
    send before that `done` (the queue is 16 deep: through seq + 15), the board resets right after it and
    its banner is lost.  The one line the host then sends (seq + 16) comes after the reset: a GRIP."""
    depth, armed = mock.queue_depth, []

    def drop(reply) -> bool:
        if isinstance(reply, P.Identity) and armed and not lost:
            lost.append(reply)
            return True
        if (isinstance(reply, P.Done) and not armed and reply.seq >= first + from_index
                and mock.accepted == reply.seq + depth - 1):
            armed.append(reply.seq)
            mock.reset_after_seq = reply.seq  # right after this `done` goes out
            mock.start_when = None  # the board after the reset takes what comes
        return False
    return drop


def start_each_action_with_a_full_queue(mock, first: int, count: int):
    """A start hook for the mock: an action starts only once the board holds every line the host may have
    sent before its `done` (through seq + 15, or the plan's last), so the reset's moment above does not
    depend on how fast a loaded host sends."""
    last = first + count - 1
    return lambda seq: mock.accepted >= min(seq + mock.queue_depth - 1, last)


def executed(mock) -> list:
    return [(seq, command.strip()) for seq, command in mock.executed]


def sent_as(link, number: int) -> tuple:
    """(seq, command) of plan action `number` (from 1) as the host last sent it (a resumed stream renumbers)."""
    entry = next(e for e in link._stream.entries if e.index == number - 1)
    return entry.seq, entry.command


def stream_through_an_unseen_reset(commands, from_index: int):
    lost: list = []
    with MockFirmware("pty", time_scale=SCALE, queue_depth=16) as mock:
        link = Link(ports.open_port(mock.url, 115200), FAST, motion=DEFAULT_MOTION, url=mock.url)
        try:
            link.handshake()
            link.configure()
            first = link.connection.lines.next_seq  # the seq of the plan's first action
            mock.drop_reply = reset_when_the_host_has_sent_all_it_may(mock, first, from_index, lost)
            mock.start_when = start_each_action_with_a_full_queue(mock, first, len(commands))
            try:
                link.run(commands)
                stop = None
            except LinkError as exc:
                stop = exc
        finally:
            link.close()
    return mock, link, first, lost, stop


def test_a_done_from_a_board_that_reset_unseen_never_makes_the_flushed_actions_count_as_run():
    mock, link, first, lost, stop = stream_through_an_unseen_reset(PLAN_WITH_GRIP_TAIL, from_index=2)
    assert lost and mock.boots == 1, (lost, mock.boots)  # the reset happened and its banner was lost
    assert link.stats["renumbered"] == 0  # the host's seqs are the plan's: seq - first is the action index
    ran = [(seq - first, command) for seq, command in executed(mock)]
    reset_at = next(i for i, (index, _) in enumerate(ran) if i != index)  # the first line run after the reset
    assert ran[:reset_at] == list(enumerate(PLAN_WITH_GRIP_TAIL[:reset_at]))
    assert all(command.startswith("GRIP") for _, command in ran[reset_at:]) and len(ran) > reset_at, ran
    assert stop is not None, f"the run ended as if every action ran; the board ran {ran}"
    progress = stop.progress
    # Every claim of the stop is true against what the board did:
    # the actions counted completed ran, in order ...
    assert ran[:progress.completed] == list(enumerate(PLAN_WITH_GRIP_TAIL[:progress.completed])), (str(stop), ran)
    # ... each action said to have run after them did run (under the seq the host last gave it) ...
    assert all(sent_as(link, n) in executed(mock) for n in progress.ran_after), (str(stop), ran)
    # ... and what is not proven is said to be not known (nothing claimed refused, nothing claimed not run).
    assert isinstance(stop, UnseenResetError), stop
    assert progress.unknown_after and progress.interrupted is None
    assert "not known" in progress.describe() and "did not run" not in progress.describe()
    assert "power cycle?" not in str(stop) and "refused" not in str(stop)
    assert progress.completed == reset_at  # all that is proven: the board confirmed each before the reset
    assert link.stats["banners_lost"] == 1 and link.stats["board_resets"] == 1


def test_with_the_plan_itself_the_stop_names_only_what_ran():
    """The same reset in the plain 20-action plan (its 19th action is a GRIP: taken after the reset when
    the reset follows action 3; later, a TURN is refused with the drivers off)."""
    mock, link, first, lost, stop = stream_through_an_unseen_reset(COMMANDS, from_index=2)
    assert lost and mock.boots == 1, (lost, mock.boots)
    assert link.stats["renumbered"] == 0
    ran = [(seq - first, command) for seq, command in executed(mock)]
    assert stop is not None, ran
    progress = stop.progress
    assert ran[:progress.completed] == list(enumerate(COMMANDS[:progress.completed])), (str(stop), ran)
    assert all(sent_as(link, n) in executed(mock) for n in progress.ran_after), (str(stop), ran)
    assert progress.unknown_after and "not known" in str(stop), stop
    assert "power cycle?" not in str(stop)


def test_a_run_that_meets_it_stops_state_not_known_naming_only_what_the_virtual_cube_shows(monkeypatch):
    """The same reset in a whole simulated run (the mock's queue 4 deep, so a short plan meets it), from plan
    action 3 on: the stop names the state the virtual cube shows, calls the rest not known, and its advice
    does not blame a power cycle (the board kept its memory)."""
    from robot import config as config_module
    from robot.run.options import RunOptions
    from robot.run.pipeline import CUBE_STATE_NOT_KNOWN
    from robot.run.simulated import run_simulated
    from robot.sim import mock_firmware
    from robot.sim.robot_sim import SimulatedRobot
    from tests.test_link_numbering import _same_colouring

    lost: list = []
    mock_class = mock_firmware.MockFirmware
    monkeypatch.setattr(mock_firmware, "MockFirmware", lambda *args, **kwargs: mock_class(*args, queue_depth=4, **kwargs))
    action_done = SimulatedRobot.action_done

    def action_done_arming_at_2(robot, completed):
        if completed == 2 and robot.mock.drop_reply is None:  # plan action 3 runs: arm from the next `done` on
            robot.mock.drop_reply = reset_when_the_host_has_sent_all_it_may(robot.mock, 0, 0, lost)
        action_done(robot, completed)

    monkeypatch.setattr(SimulatedRobot, "action_done", action_done_arming_at_2)
    report = run_simulated(config_module.defaults(), RunOptions(sim=True, seed=3, firmware="mock"),
                           tell_maker=lambda *a, **k: None)
    assert lost, "the reset did not happen"
    assert report.link_stats["banners_lost"] == 1 and report.link_stats["board_resets"] == 1
    assert not report.solved
    claimed = report.cube_state_after_stop
    assert claimed.startswith(f"{CUBE_STATE_NOT_KNOWN}: "), claimed
    facelets = re.search(r"\b[A-Z]{24}\b", claimed).group()  # the state the stop names as the last known
    assert _same_colouring(facelets, report.virtual_cube), (claimed, report.virtual_cube)
    assert "power cycle" not in report.advice and "line noise" in report.advice, report.advice



class BoardAround:
    """What unseen_reset.check_never_ran asks of the Link, answered as a test sets the board: its reset
    counter (`boots`, unchanged) and its `last` in a status asked after the TIME answer."""

    def __init__(self, stream, last: int):
        self._stream, self.last, self.boots = stream, last, 1
        self.settings = collections.namedtuple("Settings", "max_resends")(2)  # HELLO asked again if its id is lost
        self.stats: collections.Counter = collections.Counter()
        self.refused: list = []

    read_only = Link.read_only  # the link's own re-asking, over this stand-in's request()

    def request(self, command: str) -> list:
        assert command == "HELLO"
        return [P.Identity(P.FIRMWARE_NAME, "1", P.PROTOCOL_VERSION, "test", 16, 64, self.last, 0, boots=self.boots)]

    def status(self) -> P.Status:
        return P.Status(P.State.RUN, 1, self.last + 1, self.last, self.last + 1, P.AlarmCode.NONE)

    def _stop_on_reject(self, entry, code) -> None:
        self.refused.append(entry.index + 1)


def stream_where_the_board_forgot_action_1(host_saw_done_through: int):
    """20 actions sent as seqs 1-20; action 1's own `done` was lost, the host saw `done` 2 to
    `host_saw_done_through`, and the board answered `time 1 ?`."""
    stream = Stream([f"GRIP {'RL' if i % 2 else 'FB'}" for i in range(20)], regrip_lookup([]))
    lines = LineWindow()
    while stream.next < len(stream.entries):
        entry = stream.entries[stream.next]
        stream.by_seq[lines.submit(entry.command, entry)] = entry
        stream.next += 1
    stats: collections.Counter = collections.Counter()
    for seq in range(2, host_saw_done_through + 1):
        stream.apply(P.Done(seq, 100), stats)
    stream.apply(P.Time(1, None), stats)
    return stream


def test_time_unknown_is_no_refusal_when_the_board_may_have_completed_16_actions_since():
    """The host saw 14 `done` lines after action 1 (2-15) when `time 1 ?` came; the board's `last` is 17
    (the `done` lines of 16 and 17 were lost): it completed 16 since, so it may simply have forgotten
    action 1, which then is not called refused (its duration is just not known)."""
    stream = stream_where_the_board_forgot_action_1(host_saw_done_through=15)
    board = BoardAround(stream, last=17)
    unseen_reset.check_never_ran(board)
    assert board.refused == [] and not stream.entries[0].never_ran
    assert stream.progress().completed == 15 and stream.progress().durations_ms[0] is None


def test_time_unknown_soon_after_is_still_a_refusal_whose_err_was_lost():
    stream = stream_where_the_board_forgot_action_1(host_saw_done_through=3)
    board = BoardAround(stream, last=4)  # 3 completed since: it would still have action 1's time
    unseen_reset.check_never_ran(board)
    assert board.refused == [1] and stream.entries[0].never_ran
    assert board.stats["refusals_found_by_time"] == 1


class _NoisyHello:
    """A link whose HELLO answers lose the `id` line (its `ok` still arrives) `lost` times."""

    def __init__(self, lost: int, max_resends: int = 2):
        self.settings = collections.namedtuple("Settings", "max_resends")(max_resends)
        self.lost, self.asked = lost, 0
        self.identity = object.__new__(P.Identity)

    read_only = Link.read_only  # the link's own re-asking, over this stand-in's request()

    def request(self, command: str) -> list:
        assert command == "HELLO"
        self.asked += 1
        return [] if self.asked <= self.lost else [self.identity]


def test_hello_asks_again_when_noise_ate_the_id_line():
    link = _NoisyHello(lost=2)
    assert unseen_reset.hello(link) is link.identity and link.asked == 3
    with pytest.raises(LinkError, match="no readable `id` line after 3 HELLO requests"):
        unseen_reset.hello(_NoisyHello(lost=3))
