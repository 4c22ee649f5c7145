"""Link.where on a noisy link: the `where` line can be lost while the `ok` after it arrives (seen in
simulated runs at 1% serial faults); WHERE only reads, so it is asked again, within the resend limit."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from robot.link import protocol as P
from robot.link.driver import Link
from robot.link.errors import TooManyResendsError

WHERE = P.Where(True, {a: 0 for a in P.ARMS}, {a: "open" for a in P.ARMS}, False)


def link_answering(*answers):
    link = Link.__new__(Link)
    link.settings = SimpleNamespace(max_resends=2)
    asked = []

    def request(command):
        asked.append(command)
        return answers[len(asked) - 1]
    link.request = request
    return link, asked


def test_a_lost_where_line_is_asked_again():
    link, asked = link_answering([], [WHERE])  # the first `where` was lost, its `ok` arrived
    assert link.where() == WHERE and asked == ["WHERE", "WHERE"]


def test_where_gives_up_after_the_resend_limit_naming_the_cause():
    link, asked = link_answering([], [], [], [WHERE])
    with pytest.raises(TooManyResendsError, match="no readable `where` line after 3 requests"):
        link.where()
    assert len(asked) == 3
