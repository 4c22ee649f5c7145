"""The link's pure bookkeeping (robot/link/stream.py), without ports or threads."""

import pytest

from robot.link import protocol as P
from robot.link.errors import TooManyResendsError
from robot.link.stream import LineWindow, Stream, regrip_lookup, sends_allowed


def _send_all(window: LineWindow, rx: int, max_resends: int = 10) -> list[int]:
    sent = []
    while (line := window.next_to_send(rx, max_resends)) is not None:
        window.mark_sent(line)
        sent.append(line.seq)
    return sent


def test_lines_are_sent_in_order_within_the_receive_window():
    window = LineWindow()
    seqs = [window.submit("DWELL 1000") for _ in range(5)]
    assert seqs == [1, 2, 3, 4, 5]
    size = len(P.command_line(1, "DWELL 1000"))
    rx = 3 * size  # room for exactly three lines
    assert _send_all(window, rx) == [1, 2, 3]
    assert sum(n for _, n in window.inflight) == 3 * size <= rx
    window.answered(1)  # `ok 1`: its bytes were read, one more fits
    window.acknowledge_through(1)
    assert _send_all(window, rx) == [4]
    assert list(window.pending) == [2, 3, 4, 5]


def test_an_answer_retires_every_earlier_transmission():
    window = LineWindow()
    for _ in range(3):
        window.submit("STATUS")
    _send_all(window, 1000)
    window.answered(2)  # bytes are read in order: 1 was read before 2
    assert [s for s, _ in window.inflight] == [3]
    window.answered(None)  # an answer without a seq (`err - CODE`) retires the oldest
    assert not window.inflight


def test_rewind_resends_with_the_same_seq_and_gives_up_after_max_resends():
    window = LineWindow()
    window.submit("GRIP RL")
    window.submit("TURN R90")
    assert _send_all(window, 1000) == [1, 2]
    window.acknowledge_through(1)
    window.inflight.clear()
    window.rewind()
    assert _send_all(window, 1000) == [2], "only the unacknowledged line, with its seq"
    assert window.pending[2].data == P.command_line(2, "TURN R90") and window.pending[2].sends == 2
    for _ in range(2):
        window.inflight.clear()
        window.rewind(2)
        _send_all(window, 1000, max_resends=3)
    window.rewind()
    with pytest.raises(TooManyResendsError, match="N2 'TURN R90' was sent 4 times"):
        window.next_to_send(1000, max_resends=3)


def test_a_line_is_sent_more_often_while_the_board_answers_but_never_without_bound():
    window = LineWindow()
    window.submit("MOTION S400 V3000 A30000")
    silent_bound = sends_allowed(3, board_answers=False)
    for _ in range(silent_bound):
        window.inflight.clear()
        window.rewind()
        _send_all(window, 1000, max_resends=3)
        window.board_heard()  # a damaged line came back: the board is alive
    assert window.pending[1].sends == silent_bound
    while window.pending[1].sends < sends_allowed(3, board_answers=True):
        window.inflight.clear()
        window.rewind()
        assert _send_all(window, 1000, max_resends=3) == [1]
    assert window.pending[1].sends > silent_bound
    window.rewind()
    with pytest.raises(TooManyResendsError, match=r"N1 'MOTION .*' was sent 12 times without an answer \(the board "
                                                   r"answered \d+ other or damaged lines"):
        window.next_to_send(1000, max_resends=3)


def test_done_completes_every_earlier_action_and_progress_names_the_state():
    commands = ["GRIP RL", "TURN R90", "GRIP FB", "TURN F180"]
    stream = Stream(commands, regrip_lookup(commands))
    window = LineWindow()
    for entry in stream.entries[:3]:
        window.submit(entry.command, entry)
    stream.next = 3
    assert stream.outstanding() == 3
    newly = stream.mark_done_through(2, ms_of_last=80)  # `done 2`: `done 1` was lost
    assert [e.command for e in newly] == ["GRIP RL", "TURN R90"]
    assert [e.ms for e in newly] == [None, 80]
    progress = stream.progress(interrupted=True)
    assert (progress.completed, progress.interrupted) == (2, 2)
    assert progress.describe().startswith("Actions 1-2 of 4 completed (last: TURN R90); action 3 (GRIP FB)")
    assert not stream.finished()


def test_restart_after_reset_renumbers_and_retakes_the_cube():
    commands = ["GRIP RL", "TURN R90", "TURN L-90", "GRIP FB", "TURN F90"]
    stream = Stream(commands, regrip_lookup(commands))
    for i, entry in enumerate(stream.entries):
        entry.seq = i + 1
    stream.next = len(commands)
    stream.mark_done_through(2)
    stream.restart_after_reset()  # the board reset with actions 3.. not done
    assert [e.command for e in stream.entries] == ["GRIP RL", "TURN R90", "GRIP RL", "TURN L-90", "GRIP FB",
                                                    "TURN F90"]
    assert [e.seq for e in stream.entries[2:]] == [None] * 4 and stream.next == 2
    assert stream.entries[2].index is None, "the inserted re-grip is not a plan action"
    assert regrip_lookup(commands)(3) is None, "a GRIP needs no re-grip before it"


def test_renumber_from_gives_the_pending_lines_the_seqs_the_board_expects():
    from robot.link import protocol as P
    from robot.link.stream import LineWindow, StreamEntry

    window = LineWindow()
    window.next_seq = 34
    entry = StreamEntry("TURN R90", 5)
    window.submit("MOTION S400 V2000 A66667")
    window.submit("TURN R90", entry)
    window.mark_sent(window.pending[34])
    window.renumber_from(22)  # the board took seq 21 after its reset and wants 22
    assert list(window.pending) == [22, 23] and window.next_seq == 24
    assert window.pending[22].data == P.command_line(22, "MOTION S400 V2000 A66667")
    assert entry.seq == 23 and window.pending[23].entry is entry
    assert all(line.needs_send and line.sends == 0 for line in window.pending.values())
    assert not window.inflight
