"""The link's line numbering after a reset whose start-up line was lost (docs/protocol.md, renumbering).

A board that reset unseen takes any seq above its `last` until its first line.  When the first line
after the reset arrives damaged and the host resends it before the board's `rs <last+1>` comes back,
the board takes the resent copy under its old number, and a host that still holds the identity from
before the reset renumbers its waiting lines down to last+1: the board then answers them `ok dup`
without running them.  An answer naming a seq above the host's numbering proves it: the stream stops
with the cube state not known, claiming only what is true."""

import re

from robot import cube
from robot.link import ports
from robot.link import protocol as P
from robot.link.driver import Link
from robot.link.errors import LineNumberingError, LinkError
from robot.plan import apply_action
from robot.sim.fault_proxy import TO_DEVICE, TO_HOST, FaultProxy, LineFault
from robot.sim.mock_firmware import DEFAULT_MOTION, MockFirmware
from tests.test_link_driver import COMMANDS, FAST, PLAN, SCALE


def _cube_after(commands) -> str:
    action_of = dict(zip(COMMANDS, PLAN))
    state = cube.CubieCube()
    for command in commands:
        state = apply_action(state, action_of[command])
    return state.to_facelets()


def reset_unseen_between_two_taken_lines(mock, proxy, from_seq: int, faults: list, lost: list):
    """A reply filter for the mock (it runs on the board's thread, before the reply goes out) that forces
    the sequence: at the first `done` from `from_seq` on whose next action the board has already taken
    (its queue is 2 deep, so the host sends exactly one line after that `done`: the one after next),
    the board resets right after it and its banner is lost; that one line arrives damaged and the
    board's `rs` is held until the host has sent it again."""
    def drop(reply) -> bool:
        if isinstance(reply, P.Identity) and faults and not lost:
            lost.append(reply)
            return True
        if (isinstance(reply, P.Done) and not faults and reply.seq >= from_seq and mock._queue
                and mock._queue[0][0] == reply.seq + 1):
            faults.extend([LineFault(TO_DEVICE, proxy.connections, rb"^N%d " % (reply.seq + 2), "corrupt"),
                           LineFault(TO_HOST, proxy.connections, rb"^rs ", "hold", release_after=1)])
            proxy.line_faults += faults
            mock.reset_after_seq = reply.seq  # right after this `done` goes out
        return False
    return drop


def test_a_line_taken_under_its_old_number_after_an_unseen_reset_stops_the_stream_state_not_known():
    faults: list = []
    lost: list = []
    never = LineFault(TO_DEVICE, 0, rb"^$", "corrupt")  # the proxy follows whole lines from the start
    with MockFirmware("tcp", time_scale=SCALE, queue_depth=2) as mock:
        with FaultProxy(mock.url, rate=0.0, line_faults=[never]) as proxy:
            link = Link(ports.open_port(proxy.url, 115200), FAST, motion=DEFAULT_MOTION, url=proxy.url)
            try:
                link.handshake()
                link.configure()
                first = link.connection.lines.next_seq  # the seq of the plan's first action
                mock.drop_reply = reset_unseen_between_two_taken_lines(mock, proxy, first + 4, faults, lost)
                try:
                    link.run(PLAN)
                except LinkError as exc:
                    stop = exc
                else:
                    stop = None
            finally:
                link.close()
    assert lost and faults and all(fault.fired for fault in faults), (lost, faults)  # it really happened
    assert link.stats["renumbered"] == 1, (stop, dict(link.stats))
    assert stop is not None, f"the run went on after the board took a renumbered line: {dict(link.stats)}"
    executed = [command.strip() for _, command in mock.executed]
    progress = stop.progress
    # Every claim is true against what the robot did: the actions counted done ran, in order, and the
    # cube is in the state they give (after the reset only a GRIP can run: the drivers are off).
    assert executed[:progress.completed] == COMMANDS[:progress.completed]
    assert progress.completed >= 5 and not progress.ran_after
    assert _cube_after(executed) == _cube_after(COMMANDS[:progress.completed])
    assert all(command.startswith("GRIP") for command in executed[progress.completed:]), executed
    assert isinstance(stop, LineNumberingError), stop
    assert "not known" in str(stop)


def test_a_run_that_meets_it_stops_state_not_known_and_claims_only_what_the_virtual_cube_shows(monkeypatch):
    """The same sequence in a whole simulated run (the mock behind the fault proxy, its queue 2 deep),
    from plan action 4 on: the stop claims only the state that the virtual cube shows."""
    from robot import config as config_module
    from robot.run.options import RunOptions
    from robot.run.pipeline import CUBE_STATE_NOT_KNOWN
    from robot.run.simulated import run_simulated
    from robot.sim import fault_proxy, mock_firmware
    from robot.sim.robot_sim import SimulatedRobot

    proxies: list = []
    faults: list = []
    lost: list = []
    proxy_class, mock_class = fault_proxy.FaultProxy, mock_firmware.MockFirmware
    never = LineFault(TO_DEVICE, 0, rb"^$", "corrupt")  # the proxy follows whole lines from the start
    monkeypatch.setattr(fault_proxy, "FaultProxy", lambda *args, **kwargs: proxies.append(
        proxy_class(*args, line_faults=[never], **kwargs)) or proxies[-1])
    monkeypatch.setattr(mock_firmware, "MockFirmware", lambda *args, **kwargs: mock_class(*args, queue_depth=2, **kwargs))
    action_done = SimulatedRobot.action_done

    def action_done_arming_at_3(robot, completed):
        if completed == 3 and robot.mock.drop_reply is None:  # plan action 4 runs: arm from its seq on
            fourth = robot.link.connection.lines.next_seq - 1  # the last line the host has sent
            robot.mock.drop_reply = reset_unseen_between_two_taken_lines(robot.mock, robot.proxy, fourth, faults, lost)
        action_done(robot, completed)

    monkeypatch.setattr(SimulatedRobot, "action_done", action_done_arming_at_3)
    report = run_simulated(config_module.defaults(), RunOptions(sim=True, seed=3, firmware="mock", fault_rate=1e-12),
                           tell_maker=lambda *a, **k: None)
    assert lost and faults and all(fault.fired for fault in faults), (lost, faults)  # it really happened
    assert report.link_stats["renumbered"] == 1
    assert not report.solved
    claimed = report.cube_state_after_stop
    facelets = re.search(r"\b[A-Z]{24}\b", claimed).group()  # the state the stop names as the last known
    assert _same_colouring(facelets, report.virtual_cube), (claimed, report.virtual_cube)
    assert claimed.startswith(f"{CUBE_STATE_NOT_KNOWN}: "), claimed
    assert report.link_stats["taken_under_old_number"] == 1
    assert any("not known" in error for error in report.errors), report.errors


def _same_colouring(claimed: str, truth: str) -> bool:
    """Equal up to the naming of the colours (the scan names them, the virtual cube by face)."""
    pairs = set(zip(claimed, truth))
    return len(claimed) == len(truth) == 24 and len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})
