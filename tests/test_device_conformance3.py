"""The conformance suite's 3x3x3 cases (docs/protocol.md, The puzzle mode; docs/robot3.md): the same
`device` fixture as tests/test_device_conformance.py, so they run against the mock firmware and the
real firmware in simavr alike (and a real robot with --robot-port).  Wherever the two differ, the
firmware is right."""

from __future__ import annotations

from robot import config as config_module
from robot.link import protocol as P

MOTION = config_module.defaults().motion
QUARTER = MOTION.steps_per_rev // 4
E = P.ErrorCode


def hello(board) -> P.Identity:
    seq = board.send("HELLO")
    ident = board.read_reply()
    assert board.read_reply() == P.Ok(seq)
    return ident


def where(board) -> P.Where:
    seq = board.send("WHERE")
    reply = board.read_reply()
    assert board.read_reply() == P.Ok(seq)
    assert isinstance(reply, P.Where)
    return reply


def board3(device):
    """A board in 3x3x3 mode, drivers on, every arm at its zero and every gripper closed (docs/robot3.md's rest)."""
    board = device.connect()
    board.ok("PUZZLE 3")
    board.ok("MOTORS ON")
    board.ok("ZERO RLFB")
    board.done(board.ok("CLOSE RLFB"))
    return board


def test_hello_reports_the_puzzle_mode_the_host_set(device):
    board = device.connect()
    assert board.identity.puzzle == "2x2x2", "the default after power-up and every reset"
    for command in ("PUZZLE", "PUZZLE 4", "PUZZLE 33", "PUZZLE 3x3x3", "PUZZLE 3 3"):
        assert board.error(command) == E.BAD_ARGUMENT, command
    board.ok("PUZZLE 3")
    assert hello(board).puzzle == "3x3x3"
    board.ok("PUZZLE 2")
    assert hello(board).puzzle == "2x2x2"
    board.ok("PUZZLE 3")
    board.close()
    again = device.connect()  # the DTR reset when the port opens: back to 2x2x2
    assert again.identity.puzzle == "2x2x2"
    assert again.error("TILT R90 L-90") == E.PUZZLE_MODE


def test_the_puzzle_mode_is_refused_while_busy_or_latched(device):
    board = device.connect()
    seq = board.ok("DWELL 300")
    assert board.error("PUZZLE 3") == E.BUSY
    board.done(seq)
    board.send_raw(P.RT_ESTOP)
    board.wait_for(P.Alarm)
    assert board.error("PUZZLE 3") == E.ALARM_ACTIVE
    board.ok("RESET")
    board.ok("PUZZLE 3")
    assert hello(board).puzzle == "3x3x3"


def test_a_layer_turn_needs_the_other_pair_closed_at_0(device):
    board = board3(device)
    mark = device.mark()
    board.done(board.ok("TURN R90"))  # FB closed at 0: R turns its layer and its gripper is at 90
    assert board.error("TURN F90") == E.GRIPPER_ACROSS, "R at 90 stands across F's layers"
    assert board.error("TURN F90 B-90") == E.GRIPPER_ACROSS
    board.done(board.ok("TURN L180"))  # R and L layers are parallel: L may turn
    # RESTORE R: open it, turn it back in the air, close it.
    board.ok("OPEN R")
    board.ok("TURN R-90")
    board.done(board.ok("CLOSE R"))
    board.done(board.ok("TURN F90 B-90"))
    assert board.error("TURN R90") == E.GRIPPER_ACROSS, "F and B at 90"
    board.ok("OPEN F")  # queued: the check is against the grippers after every queued action
    assert board.error("TURN R90") == E.OTHER_PAIR_OPEN
    assert board.error("TURN R90 L90") == E.OTHER_PAIR_OPEN
    board.ok("TURN F-90")  # F open: turns in the air (nothing else needs to be anywhere)
    board.done(board.ok("CLOSE F"))
    assert board.error("TURN R90") == E.GRIPPER_ACROSS, "B is still at 90"
    device.assert_moved_since(mark, {"R": 0, "L": 2 * QUARTER, "F": 0, "B": -QUARTER})
    state = where(board)
    assert state.grippers == {"R": "closed", "L": "closed", "F": "closed", "B": "closed"}


def test_a_tilt_needs_the_other_pair_open_and_its_own_closed(device):
    board = board3(device)
    mark = device.mark()
    assert board.error("TILT R90 L-90") == E.OTHER_PAIR_CLOSED
    board.ok("OPEN F")
    assert board.error("TILT R90 L-90") == E.OTHER_PAIR_CLOSED, "B is still closed"
    board.ok("OPEN B")
    for command, code in [("TILT R90 L90", E.BAD_ARGUMENT),  # the same way in space: opposite angles
                          ("TILT R90", E.BAD_ARGUMENT), ("TILT R90 F-90", E.NOT_HOLDING),
                          ("TILT R90 R-90", E.BAD_ARGUMENT), ("TILT R45 L-45", E.BAD_ARGUMENT),
                          ("TILT R270 L-270", E.OUT_OF_RANGE), ("TILT F90 B-90", E.OTHER_PAIR_CLOSED)]:
        assert board.error(command) == code, command
    board.done(board.ok("TILT R90 L-90"))
    board.done(board.ok("TILT L180 R-180"))
    board.ok("CLOSE FB")
    assert board.error("TURN F90") == E.GRIPPER_ACROSS, "the tilting pair ends at 90"
    board.ok("OPEN L")
    assert board.error("TILT R-90 L90") == E.NOT_HOLDING, "L open: RL does not hold the cube"
    device.assert_moved_since(mark, {"R": -QUARTER, "L": QUARTER, "F": 0, "B": 0})


def test_grippers_open_and_close_one_by_one_only_on_square_known_arms(device):
    board = device.connect()
    board.ok("PUZZLE 3")
    board.ok("MOTORS ON")
    assert board.error("CLOSE R") == E.POSITION_UNKNOWN, "the drivers were off: R may stand anywhere"
    assert board.error("GRIP RL") == E.POSITION_UNKNOWN
    board.done(board.ok("OPEN RLFB"))
    assert board.error("TURN R90") == E.POSITION_UNKNOWN
    board.ok("ZERO RLFB")
    board.done(board.ok("CLOSE F"))
    board.done(board.ok("CLOSE B"))
    board.done(board.ok("JOG R 10"))  # R open: in the air
    assert board.error("CLOSE R") == E.NOT_SQUARE
    assert board.error("CLOSE RL") == E.NOT_SQUARE
    board.done(board.ok("CLOSE L"))
    assert board.error("JOG L 10") == E.ARM_BLOCKED, "3x3x3: a closed arm jogs no layer off square"
    board.done(board.ok("JOG R -10"))
    board.done(board.ok("CLOSE R"))
    board.done(board.ok("TURN R90 L-90"))
    state = where(board)
    assert state.grippers == {"R": "closed", "L": "closed", "F": "closed", "B": "closed"}
    assert state.positions == {"R": QUARTER, "L": 3 * QUARTER, "F": 0, "B": 0}


def test_the_2x2x2_mode_is_unchanged_after_a_3x3x3_session(device):
    board = board3(device)
    board.ok("PUZZLE 2")
    board.done(board.ok("GRIP RL"))
    board.done(board.ok("TURN R90 L-90"))  # the holding pair turns, as always in the 2x2x2 mode
    assert board.error("TURN F90") == E.NOT_HOLDING
    assert board.error("TILT R90 L-90") == E.PUZZLE_MODE
