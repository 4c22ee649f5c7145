"""The 3x3x3 model's op costs (robot/plan3.py Robot3Profile) against what the real firmware in simavr takes.

A few ops of each kind (quarter and half TURN, TILT, OPEN, CLOSE, a RESTORE) are streamed in 3x3x3 mode and
each `done` duration is compared with the profile's cost of that op.  The board reports whole milliseconds
from its millis() clock, which steps by 1 or 2 (1.024 ms a tick), and starts the next action on its next main
loop pass: a `done` may read a ms or two off the time it waited, so each op is allowed a few ms; the model
charging the jaws' travel too short (or a turn the wrong length) is more than that.  SIMULATED: an emulated
board."""

from __future__ import annotations

import pytest

from robot import config as config_module
from robot.link import protocol as P
from robot.plan3 import Robot3Profile
from robot.sim import emulator

from benches import load_bench

pytestmark = [pytest.mark.firmware,
              pytest.mark.skipif(not emulator.available()[0], reason="the firmware emulator is not available")]

bench = load_bench("firmware3")
SLACK_MS = 3  # the board's millisecond clock and its main loop (see above)


def ops_of_every_kind(profile: Robot3Profile) -> list:
    """From every arm closed at 0 back to it: quarter and half turns, a restore, a tilt and its restore."""
    return (profile.turn_ops({"R": 90}) + profile.restore_ops(["R"])
            + profile.turn_ops({"F": 180}) + profile.turn_ops({"F": 90, "B": 180}) + profile.restore_ops(["F"])
            + profile.tilt_ops("FB", 90) + profile.restore_ops(["F", "B"]))


def firmware_durations(config, commands) -> list[int]:
    with emulator.Emulator() as emu:
        link = bench.ready_link3(emu, config)  # the model's start: every arm closed at 0
        try:
            result = link.run(commands)
        finally:
            link.close()
    assert len(result.durations_ms) == len(commands)
    return list(result.durations_ms)


def assert_costs_match(config) -> None:
    profile = Robot3Profile.from_config(config)
    ops = ops_of_every_kind(profile)
    commands = [P.plan3_command(op) for op in ops]
    done = firmware_durations(config, commands)
    off = [(command, ms, profile.op_cost(op)) for command, op, ms in zip(commands, ops, done)
           if abs(ms - profile.op_cost(op)) > SLACK_MS]
    assert not off, f"(line, firmware done ms, model ms) off by more than {SLACK_MS} ms: {off}"
    assert abs(sum(done) / profile.plan_cost(ops) - 1) < 0.02


def test_each_ops_cost_is_what_the_firmware_takes_with_the_defaults():
    assert_costs_match(config_module.defaults())


def test_a_gripper_with_its_own_widths_costs_what_the_firmware_takes_for_it():
    # R's jaws travel 100 us instead of 400: its OPEN and CLOSE are shorter, a pair's waits for its slower arm.
    config = config_module.with_settings(config_module.defaults(), {"motion.arms.R.servo_open_us": 1600})
    profile = Robot3Profile.from_config(config)
    assert profile.open_ms_of(["R"]) < profile.open_ms_of(["L"]) == profile.open_ms_of(["R", "L"])
    assert_costs_match(config)
