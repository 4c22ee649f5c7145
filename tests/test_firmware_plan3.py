"""A whole 3x3x3 robot plan run by the real firmware in simavr (3x3x3 mode), read back from its pin log.

robot.solver3's plan for a scrambled cube becomes command lines (robot/link/protocol.py plan3_command),
streamed by the host's link (`Link(..., puzzle="3x3x3")`: PUZZLE 3 at configure), the firmware checks
and runs them, and the virtual 3x3x3 (robot/sim/virtual_robot3.py) is moved only by
the servo pulses and step pulses it made, as robot/sim/robot_sim.py moves the 2x2x2: it must end solved
with no jam, every gripper closed.  SIMULATED: the board is emulated, the cube is a rigid model."""

from __future__ import annotations

import numpy as np
import pytest

from robot import config as config_module
from robot.link import ports
from robot.link import protocol as P
from robot.link.driver import Link, LinkSettings
from robot.plan3 import Robot3Profile
from robot.sim import emulator, pins3
from robot.sim.virtual_robot3 import VirtualRobot3
from robot.solver3 import cube3

pytestmark = [pytest.mark.firmware,
              pytest.mark.skipif(not emulator.available()[0], reason="the firmware emulator is not available")]

CONFIG = config_module.defaults()
MOTION = CONFIG.motion


def test_a_solver3_plan_run_by_the_firmware_solves_the_virtual_cube_from_its_pins(session_tables3):
    from robot.solver3 import robot_search

    facelets = cube3.to_facelets(cube3.random_state(np.random.default_rng(2026)))
    plan = robot_search.solve_robot(facelets, CONFIG, time_limit=0.3)
    assert any(op["op"] == "tilt" for op in plan.ops) and any(op["op"] == "turn" for op in plan.ops)
    commands = [P.plan3_command(op) for op in plan.ops]
    settings = LinkSettings()
    with emulator.Emulator() as emu:
        link = Link(ports.open_port(emu.port, settings.baud), settings, motion=MOTION, url=emu.port, puzzle="3x3x3")
        try:
            link.handshake()
            link.configure()  # the settings, PUZZLE 3, MOTORS ON
            assert next(r for r in link.request("HELLO") if isinstance(r, P.Identity)).puzzle == "3x3x3"
            link.request("ZERO RLFB")
            link.run(["CLOSE RLFB"])  # the model's start: every arm closed at 0
            start = emu.cycle()
            result = link.run(commands)  # a refused line stops the stream with the board's error
            events = emu.pin_events()
        finally:
            link.close()
    assert len(result.durations_ms) == len(commands)
    robot = VirtualRobot3(Robot3Profile.from_config(CONFIG), facelets, steps_per_rev=MOTION.steps_per_rev)
    timeline = pins3.pin_timeline(events, MOTION, start)
    assert sum(kind == "turn" for _, _, kind, _, _ in timeline) >= len([c for c in commands if c[0] == "T"])
    assert pins3.replay(robot, events, MOTION, start) == len(timeline)
    assert not robot.jams
    assert robot.is_solved(), f"the cube after the firmware's moves: {robot.facelets()} (plan {plan.moves})"
    assert all(robot.closed.values())
