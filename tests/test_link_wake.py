"""Connection.wake: a thread waiting for the board's next line is woken (the panel's Stop acts at once)."""

import threading
import time

from robot.link import ports
from robot.link.driver import Link, LinkSettings
from robot.sim.mock_firmware import DEFAULT_MOTION, MockFirmware

# Long enough that only the wake can end the wait: the board is idle and says nothing unasked.
QUIET = LinkSettings(ack_timeout_s=0.2, silence_timeout_s=600.0, handshake_timeout_s=3.0)


def test_wake_ends_a_wait_for_the_boards_next_line_without_a_message():
    with MockFirmware("pty", time_scale=0.02) as mock:
        link = Link(ports.open_port(mock.url, QUIET.baud), QUIET, motion=DEFAULT_MOTION, url=mock.url)
        try:
            link.handshake()
            returned: list = []
            waiting = threading.Thread(target=lambda: returned.append(
                link.connection.wait_step(deadline=time.monotonic() + 600)))
            waiting.start()
            link.connection.wake()
            waiting.join(timeout=60)  # a safety net: without the wake it would wait 600 s
            assert not waiting.is_alive(), "the wait did not end on wake()"
            assert returned == [None]  # a timeout step: no message was made up
            assert link.status().state is not None  # the link goes on as before
        finally:
            link.close()
