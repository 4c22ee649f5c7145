"""A line whose answers line noise keeps damaging: the board demonstrably answers (a damaged
line is the board talking), so the host sends the line again past link.max_resends, saying so live, up
to a bound (stream.sends_allowed); at the bound the run stops with the cube state of the actions done.

The mock firmware damages its own reply lines (one flipped bit: the line check rejects it) for the fast
cases; the real firmware in simavr gets its replies damaged by the fault proxy.
"""

import dataclasses

import pytest

from robot.link import ports
from robot.link import protocol as P
from robot.link.driver import Link
from robot.link.errors import TooManyResendsError
from robot.link.stream import sends_allowed
from robot.sim import emulator
from robot.sim.fault_proxy import TO_HOST, FaultProxy
from robot.sim.mock_firmware import DEFAULT_MOTION, MockFirmware

from test_link_driver import COMMANDS, FAST, PLAN, SCALE, executed_commands

SETTINGS = dataclasses.replace(FAST, max_resends=5)  # 6 sends while nothing answers, 18 while damaged lines do


def open_link(url) -> tuple[Link, list[str]]:
    link = Link(ports.open_port(url, SETTINGS.baud), SETTINGS, motion=DEFAULT_MOTION, url=url)
    said = []
    link.reconnect_log = said.append
    link.handshake()
    link.configure()
    return link, said


def damage_replies(mock: MockFirmware, wanted) -> list[bytes]:
    """The mock sends each reply line for which wanted(reply) is true with one bit flipped."""
    damaged = []

    def damage(reply):
        if not wanted(reply):
            return False
        line = bytearray(P.frame(P.format_reply(reply)))
        line[1] ^= 0x20
        damaged.append(bytes(line))
        mock.device.send(bytes(line))
        return True

    mock.drop_reply = damage
    return damaged


def test_a_command_whose_answers_arrive_damaged_goes_out_again_while_the_board_answers():
    """Twice link.max_resends + 1 answers damaged: the old rule stopped the run here."""
    limit = 2 * sends_allowed(SETTINGS.max_resends, board_answers=False)
    assert limit < sends_allowed(SETTINGS.max_resends, board_answers=True)
    with MockFirmware("pty", time_scale=SCALE) as mock:
        link, said = open_link(mock.url)
        with link:
            damaged = damage_replies(mock, lambda reply: isinstance(reply, P.Ok) and len(damaged) < limit)
            link.request(P.servo_command(DEFAULT_MOTION))  # a setting: only its `ok` answers it
            assert link.stats["lines_resent_past_max"] == 1
            assert link.status().state == P.State.IDLE
    assert len(damaged) == limit
    assert len(said) == 1 and "the board answers, but line noise damaged every answer to SERVO" in said[0]


def test_a_stream_whose_answers_stay_damaged_stops_at_the_bound_naming_the_actions_done():
    with MockFirmware("pty", time_scale=SCALE) as mock:
        link, said = open_link(mock.url)
        with link:
            link.run(PLAN[:3])
            damage_replies(mock, lambda reply: True)  # from now on every line from the board is damaged
            with pytest.raises(TooManyResendsError, match=r"sent 18 times without an answer \(the board answered"
                               ) as info:
                link.run(PLAN[3:6])
    progress = info.value.progress
    assert progress.completed == 0 and progress.interrupted == 0  # its `done` lines were damaged: not known
    assert "actions 1-3 were sent and may have run (no readable status line to tell)" in str(info.value)
    ran = executed_commands(mock)[3:]
    assert ran and ran == COMMANDS[3:3 + len(ran)]  # some did run: "may have run" is the honest claim
    assert any("sending it again, up to 18 times" in s for s in said)


def test_at_the_bound_a_readable_status_names_exactly_the_actions_that_ran():
    """Every acknowledgement and `done` damaged, but a `status` line gets through: the stop waits for
    the board to be idle and names every action it ran, none as cut."""
    with MockFirmware("pty", time_scale=SCALE) as mock:
        link, said = open_link(mock.url)
        with link:
            link.run(PLAN[:3])
            damage_replies(mock, lambda reply: not isinstance(reply, P.Status))
            with pytest.raises(TooManyResendsError, match="the board answered") as info:
                link.run(PLAN[3:6])
    ran = executed_commands(mock)[3:]
    assert ran and ran == COMMANDS[3:3 + len(ran)]
    assert info.value.progress.completed == len(ran) and info.value.progress.interrupted is None
    assert f"Actions 1-{len(ran)} of 3 completed" in str(info.value)


available, why = emulator.available()


@pytest.mark.firmware
@pytest.mark.skipif(not available, reason=f"AVR toolchain / simavr not installed: {why}")
def test_firmware_stream_whose_answers_stay_damaged_stops_at_the_bound():
    with emulator.Emulator(realtime=False) as emu, FaultProxy(emu.port, rate=0.0, kinds=("corrupt",),
                                                               directions=(TO_HOST,)) as proxy:
        link, said = open_link(proxy.url)
        with link:
            link.run(PLAN[:3])
            proxy.rate = 0.5  # every reply line is hit (about 1 in 2**20 arrives whole)
            with pytest.raises(TooManyResendsError, match=r"sent 18 times without an answer \(the board answered"
                               ) as info:
                link.run(PLAN[3:6])
            assert link.stats["lines_resent_past_max"] >= 1
    assert info.value.progress is not None and info.value.progress.completed <= 3
    assert any("the board answers, but line noise damaged every answer" in s for s in said)


def test_a_run_says_live_that_the_board_answers_but_the_noise_eats_its_answers(monkeypatch):
    """The run's output carries the link's live message (set before the start press, not only while the
    plan runs), and the run solves."""
    from robot import config as config_module
    from robot.run.options import RunOptions
    from robot.run.simulated import run_simulated
    from robot.sim.robot_sim import SimulatedRobot

    wait_start = SimulatedRobot.wait_start
    allowed = sends_allowed(config_module.defaults().link.max_resends, board_answers=False)

    def noisy_before_the_press(robot, timeout_s):
        damaged = damage_replies(robot.mock, lambda reply: isinstance(reply, P.Ok) and len(damaged) <= allowed)
        robot.link.request(P.servo_command(robot.link.motion))  # its `ok` is damaged more often than allowed
        robot.mock.drop_reply = None
        return wait_start(robot, timeout_s)

    monkeypatch.setattr(SimulatedRobot, "wait_start", noisy_before_the_press)
    said = []
    report = run_simulated(config_module.defaults(), RunOptions(sim=True, seed=3, firmware="mock"),
                           tell_maker=lambda *args, **kwargs: said.append(" ".join(map(str, args))))
    assert report.solved, report.errors
    assert report.link_stats["lines_resent_past_max"] == 1
    assert any("the board answers, but line noise damaged every answer to SERVO" in s for s in said), said
