"""The link reports each plan action the first time its line goes to the board (Link.run's `sent`):
once per action, in order, before its `done`, however often a lost answer makes it resend the line."""

from robot.link import protocol as P
from robot.sim.mock_firmware import MockFirmware

from test_link_driver import PLAN, SCALE, connect, drop_first_ok


def test_each_action_is_said_sent_once_and_before_it_is_done():
    said = []
    with MockFirmware("pty", time_scale=SCALE) as mock, connect(mock.url) as link:
        link.run(PLAN, progress=lambda p: said.append(("done", p.completed)),
                 sent=lambda n: said.append(("sent", n)))
    sent = [n for what, n in said if what == "sent"]
    assert sent == list(range(1, len(PLAN) + 1))
    for k, (what, n) in enumerate(said):
        if what == "done":  # every action it counts done was said sent before it
            assert set(range(1, n + 1)) <= {m for w, m in said[:k] if w == "sent"}


def test_a_resent_line_is_said_sent_once():
    lost, sent = [], []
    with MockFirmware("pty", time_scale=1.0) as mock, connect(mock.url) as link:
        mock.drop_reply = drop_first_ok(lost)
        link.run(["DWELL 400"], sent=sent.append)  # its `ok` is lost: the line goes out again
        assert link.stats["resends"] >= 1
    assert lost and sent == [1]
