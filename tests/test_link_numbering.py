"""The link's line numbering after a reset whose start-up line was lost (docs/protocol.md, renumbering).

A board that reset unseen takes any seq above its `last` until its first line.  When the first line
after the reset arrives damaged and the host resends it before the board's `rs <last+1>` comes back,
the board takes the resent copy under its old number, and a host that still holds the identity from
before the reset renumbers its waiting lines down to last+1: the board then answers them `ok dup`
without running them.  An answer naming a seq above the host's numbering proves it: the stream stops
with the cube state not known, claiming only what is true."""

from robot import cube
from robot.link import ports
from robot.link import protocol as P
from robot.link.driver import Link
from robot.link.errors import LineNumberingError, LinkError
from robot.plan import apply_action
from robot.sim.fault_proxy import TO_DEVICE, TO_HOST, FaultProxy, LineFault
from robot.sim.mock_firmware import DEFAULT_MOTION, MockFirmware
from tests.test_link_driver import COMMANDS, FAST, PLAN, drop_first_banner


def _cube_after(commands) -> str:
    action_of = dict(zip(COMMANDS, PLAN))
    state = cube.CubieCube()
    for command in commands:
        state = apply_action(state, action_of[command])
    return state.to_facelets()


def test_a_line_taken_under_its_old_number_after_an_unseen_reset_stops_the_stream_state_not_known():
    # Queue depth 2: after the `done` that precedes the reset the host sends exactly one action line,
    # the seventh (a GRIP, which runs on a board that reset: it turns no layer).  At real speed the line
    # before it is taken long before the fifth action ends (a reset would flush it from the ring).
    with MockFirmware("tcp", queue_depth=2) as mock:
        with FaultProxy(mock.url, rate=0.0) as proxy:
            link = Link(ports.open_port(proxy.url, 115200), FAST, motion=DEFAULT_MOTION, url=proxy.url)
            try:
                link.handshake()
                link.configure()
                first = link.connection.lines.next_seq  # the seq of the plan's first action
                assert PLAN[6] == PLAN[0] and COMMANDS[6].startswith("GRIP")
                faults = [LineFault(TO_DEVICE, 1, rb"^N%d " % (first + 6), "corrupt"),  # damaged on its way
                           LineFault(TO_HOST, 1, rb"^rs ", "hold", release_after=1)]  # `rs` comes after the resend
                proxy.line_faults += faults  # from here on: the link is idle, no line is half through
                lost: list = []
                mock.drop_reply = drop_first_banner(lost)  # the banner of the reset is lost
                mock.reset_after_seq = first + 4  # between actions 5 and 6: action 6 is flushed
                try:
                    link.run(PLAN)
                except LinkError as exc:
                    stop = exc
                else:
                    stop = None
            finally:
                link.close()
    assert lost and all(fault.fired for fault in faults), (lost, faults)  # the sequence really happened
    assert link.stats["renumbered"] == 1, (stop, dict(link.stats))
    assert stop is not None, f"the run went on after the board took a renumbered line: {dict(link.stats)}"
    executed = [command.strip() for _, command in mock.executed]
    progress = stop.progress
    # Every claim is true against what the robot did: the actions counted done ran, in order, and the
    # cube is in the state they give (the re-sent GRIP that ran after the reset turns no layer).
    assert executed[:progress.completed] == COMMANDS[:progress.completed]
    assert progress.completed == 5 and not progress.ran_after
    assert _cube_after(executed) == _cube_after(COMMANDS[:progress.completed])
    assert all(command.startswith("GRIP") for command in executed[progress.completed:]), executed
    assert isinstance(stop, LineNumberingError), stop
    assert "not known" in str(stop) and f"seq {first + 6}" in str(stop)
