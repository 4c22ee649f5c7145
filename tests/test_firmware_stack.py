"""The firmware's stack in simavr: its high-water mark (the harness's lowest stack pointer) through the
traffic that nests deepest, 2x2x2 and 3x3x3 alike: commands parsed while arms step and servos pulse
(the step ISR, the servo compare, the UART and millis() interrupting the main loop and each other), the
longest reply (`id`), real-time `?` bytes, refused lines, the regrip's table worked out after the settings.  At least 300 bytes are never touched
between the static RAM's end and the deepest stack seen."""

from __future__ import annotations

import pytest

from robot import config as config_module
from robot.link import protocol as P
from robot.sim import emulator

from conftest import Board

pytestmark = [pytest.mark.firmware,
              pytest.mark.skipif(not emulator.available()[0], reason="the firmware emulator is not available")]

RAM_START = 0x100  # ATmega328P: the first SRAM address
STACK_FLOOR = 300  # bytes never used, at the least


def test_the_deepest_stack_leaves_the_floor_untouched():
    with emulator.Emulator() as emu:
        board = Board(emu.port)
        try:
            motion = config_module.defaults().motion
            for command in (P.motion_command(motion), P.servo_command(motion), P.jaws_command(motion)):
                board.ok(command)  # the regrip's table is worked out again (floats) in the main loop
            board.ok("MOTORS ON")
            board.ok("ZERO RLFB")
            board.done(board.ok("DWELL 500"))  # ... while this waits
            for _ in range(2):  # 2x2x2: regrips overlapping the turns queued around them, HELLO and `?` meanwhile
                seqs = [board.ok(c) for c in ("GRIP RL", "TURN R90 L-90", "GRIP FB", "TURN F180", "GRIP RL")]
                board.send("HELLO")
                board.send_raw(P.RT_STATUS)
                assert board.error("TURN F90") == P.ErrorCode.NOT_HOLDING
                board.done(seqs[-1])
            board.done(board.ok("CLOSE RLFB"))
            board.ok("PUZZLE 3")  # 3x3x3: turns, tilts, restores and refusals, the same while stepping
            seqs = [board.ok(c) for c in ("TURN R90 L-90", "OPEN RL", "TURN R-90 L90", "CLOSE RL", "OPEN FB",
                                          "TILT R90 L-90", "CLOSE FB", "OPEN RL", "TURN R-90 L90", "CLOSE RL")]
            board.send("HELLO")
            board.send_raw(P.RT_STATUS)
            assert board.error("TILT F90 B-90") == P.ErrorCode.OTHER_PAIR_CLOSED
            board.done(seqs[-1])
            lowest = emu.stack_lowest()
        finally:
            board.close()
    static = emulator.size()["ram"]
    untouched = lowest - (RAM_START + static)
    deepest = 0x8FF - lowest  # RAMEND
    assert untouched >= STACK_FLOOR, f"the stack reached {deepest} bytes: {untouched} left above {static} of static RAM"
    assert 100 < deepest < 2048 - static, deepest  # it was measured at all
