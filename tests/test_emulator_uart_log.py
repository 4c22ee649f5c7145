"""The harness's --uart-log (robot/sim/emulator.py uart_log): each byte the host sends is logged as it
goes into the firmware's UART, with the host's wall clock then, in the order sent; emulators started
one after another append to one file.  bench/panel.py reads it for the emergency stop's latency."""

from __future__ import annotations

import time

import pytest

from robot.link import protocol as P
from robot.sim import emulator

from conftest import Board  # the minimal host the device-conformance suite uses

OK, REASON = emulator.available()
pytestmark = [pytest.mark.firmware, pytest.mark.skipif(not OK, reason=f"firmware emulator unavailable: {REASON}")]


def test_each_host_byte_is_logged_at_its_arrival_with_the_wall_clock(tmp_path):
    log = tmp_path / "uart.log"
    with emulator.Emulator(uart_log=log) as emu:
        board = Board(emu.port)
        before_ns = time.time_ns()
        seq = board.ok("DWELL 1")
        board.send_raw(P.RT_ESTOP)
        assert board.wait_for(P.Alarm).code == P.AlarmCode.ESTOP_BYTE  # the firmware had the `!`
        after_ns = time.time_ns()
        board.close()
    logged, end = emulator.read_uart_log(log)
    sent = P.command_line(seq, "DWELL 1") + P.RT_ESTOP
    assert bytes(b.byte for b in logged) == sent, "every byte, in the order sent, nothing else"
    assert all(before_ns <= b.wall_ns <= after_ns for b in logged), "the host's wall clock at arrival"
    assert [b.wall_ns for b in logged] == sorted(b.wall_ns for b in logged)
    assert [b.cycle for b in logged] == sorted(b.cycle for b in logged) and logged[0].cycle > 0
    assert end == log.stat().st_size


def test_a_second_emulator_appends_and_the_environment_names_the_file(tmp_path, monkeypatch):
    log = tmp_path / "uart.log"
    monkeypatch.setenv(emulator.UART_LOG_ENV, str(log))  # as a program that starts its own emulators
    for _ in range(2):
        with emulator.Emulator() as emu:
            board = Board(emu.port)
            board.send_raw(P.RT_ESTOP)
            assert board.wait_for(P.Alarm).code == P.AlarmCode.ESTOP_BYTE
            board.close()
    first, offset = emulator.read_uart_log(log)
    assert [b.byte for b in first] == [P.RT_ESTOP[0]] * 2
    assert emulator.read_uart_log(log, offset) == ([], offset), "read from an offset: only what came after"


def test_no_log_unless_asked(tmp_path, monkeypatch):
    monkeypatch.delenv(emulator.UART_LOG_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with emulator.Emulator() as emu:
        assert emu.uart_log is None
        board = Board(emu.port)
        board.send_raw(P.RT_ESTOP)
        assert board.wait_for(P.Alarm).code == P.AlarmCode.ESTOP_BYTE
        board.close()
    assert list(tmp_path.iterdir()) == []
