"""Whole simulated runs with a pulled cable: the board resets on reconnect (as a real Uno does)."""

import pytest

from robot import config as config_module
from robot.run.options import RunOptions
from robot.run.simulated import run_simulated
from robot.sim import emulator


def _run(**options):
    config = config_module.defaults()
    return run_simulated(config, RunOptions(sim=True, seed=3, **options), say=lambda *a, **k: None)


def test_pulled_cable_resets_the_mock_board_and_the_run_resumes_without_losing_a_move():
    report = _run(firmware="mock", disconnect_at=5)
    assert report.link_stats["board_resets"] == 1  # the banner after reconnecting was seen
    assert report.solved and report.virtual_cube == report.final_state
    assert any(e.startswith("recovered") for e in report.errors)


def test_keep_power_does_not_reset_the_board():
    report = _run(firmware="mock", disconnect_at=5, keep_power=True)
    assert report.solved
    assert report.link_stats.get("board_resets", 0) == 0


@pytest.mark.firmware
@pytest.mark.skipif(not emulator.available()[0], reason="the firmware emulator is not available")
def test_pulled_cable_resets_the_emulated_board_between_moves():
    report = _run(firmware="emulator", disconnect_at=5)
    assert report.link_stats["board_resets"] == 1
    assert report.link_stats["reopen_wait_ms"] > 0  # reopened only once the queued actions had ended
    assert report.solved and report.virtual_cube == report.final_state
