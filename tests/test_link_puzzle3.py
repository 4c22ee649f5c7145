"""The host's side of the puzzle mode: PUZZLE at every configure() when the link drives a 3x3x3, and
robot/plan3.py ops as command lines (robot/link/protocol.py plan3_command)."""

from __future__ import annotations

import pytest

from robot.link import ports
from robot.link import protocol as P
from robot.link.driver import Link, LinkSettings
from robot.sim.mock_firmware import DEFAULT_MOTION, MockFirmware

FAST = LinkSettings(ack_timeout_s=0.05, silence_timeout_s=0.3, handshake_timeout_s=3.0, max_resends=20)


def test_plan3_ops_become_the_boards_commands():
    assert P.plan3_command({"op": "open", "arms": ["R", "L"]}) == "OPEN RL"
    assert P.plan3_command({"op": "close", "arms": ["F"]}) == "CLOSE F"
    assert P.plan3_command({"op": "turn", "arms": {"R": 90, "L": -90}}) == "TURN R90 L-90"
    assert P.plan3_command({"op": "turn", "arms": {"B": 270}}) == "TURN B-90"
    assert P.plan3_command({"op": "tilt", "arms": {"F": 90, "B": -90}}) == "TILT F90 B-90"
    assert P.plan3_command({"op": "tilt", "arms": {"L": -90, "R": 90}}) == "TILT L-90 R90"
    # A half-turn tilt: the board wants opposite angles (180 and -180), not the same place twice.
    assert P.plan3_command({"op": "tilt", "arms": {"R": 180, "L": 180}}) == "TILT R180 L-180"
    for op in ({"op": "tilt", "arms": {"R": 90, "L": 90}}, {"op": "tilt", "arms": {"R": 90, "F": -90}},
               {"op": "tilt", "arms": {"R": 90}}, {"op": "spin", "arms": {"R": 90}}):
        with pytest.raises(ValueError):
            P.plan3_command(op)


def test_every_op_of_a_tilt_and_a_restore_is_one_line_the_board_parses():
    from robot import config as config_module
    from robot.plan3 import Robot3Profile

    profile = Robot3Profile.from_config(config_module.defaults())
    ops = profile.tilt_ops("RL", 90) + profile.restore_ops(["R", "L"]) + profile.tilt_ops("FB", -90)
    lines = [P.command_line(7, P.plan3_command(op)) for op in ops]
    assert [P.parse_command(P.unframe(line.rstrip(b"\n")))[1] for line in lines] == [
        "OPEN", "TILT", "CLOSE", "OPEN", "TURN", "CLOSE", "OPEN", "TILT", "CLOSE"]
    assert max(len(line) for line in lines) <= P.MAX_LINE


def test_a_3x3x3_link_sets_the_boards_puzzle_mode_at_every_configure():
    with MockFirmware("pty", time_scale=0.02) as mock:
        link = Link(ports.open_port(mock.url, FAST.baud), FAST, motion=DEFAULT_MOTION, url=mock.url, puzzle="3x3x3")
        try:
            link.handshake()
            assert link.identity.puzzle == "2x2x2"
            link.configure()
            ident = next(r for r in link.request("HELLO") if isinstance(r, P.Identity))
            assert ident.puzzle == "3x3x3" and mock.puzzle3.on
            mock.call(mock.puzzle3.power_on)  # as after a reset: the board is 2x2x2 again
            link.configure()
            assert mock.puzzle3.on
        finally:
            link.close()
    assert sum(line.split(b" ")[1:2] == [b"PUZZLE"] for line in mock.received_lines) == 2


def test_a_2x2x2_link_sends_no_puzzle_command_and_an_unknown_puzzle_is_named():
    with MockFirmware("pty", time_scale=0.02) as mock:
        link = Link(ports.open_port(mock.url, FAST.baud), FAST, motion=DEFAULT_MOTION, url=mock.url)
        try:
            link.handshake()
            link.configure()
        finally:
            link.close()
    assert not any(b"PUZZLE" in line for line in mock.received_lines)
    with pytest.raises(ValueError, match="4x4x4"):
        Link(None, FAST, puzzle="4x4x4")


def test_a_stream_of_3x3x3_lines_predicts_each_actions_time():
    """A reconnect waits for the queued actions' predicted end (stream.py): TILT and OPEN/CLOSE count."""
    from robot import motion, regrip
    from robot.link.stream import predicted_action_ms

    jaws = regrip.Jaws(*P.gripper_widths(DEFAULT_MOTION, "R"), DEFAULT_MOTION.servo_speed_us_per_ms,
                       DEFAULT_MOTION.jaw_clear_pct / 100, DEFAULT_MOTION.jaw_contact_pct / 100,
                       DEFAULT_MOTION.jaw_open_gap_mm)
    assert predicted_action_ms("TILT F90 B-90", DEFAULT_MOTION) == motion.turn_ms([90, -90], DEFAULT_MOTION) > 0
    assert predicted_action_ms("OPEN RL", DEFAULT_MOTION) == regrip.closing_ms(jaws) > 0
    assert predicted_action_ms("CLOSE F", DEFAULT_MOTION) == regrip.closing_ms(jaws)
