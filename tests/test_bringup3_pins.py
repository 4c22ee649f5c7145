"""The 3x3x3 bring-up commands at the firmware's pins (the simavr harness's pin log): what the board in
its 3x3x3 mode really did with the servos and steppers.  The same commands' answers on the mock and
the firmware alike: tests/test_bringup3.py.
"""

from __future__ import annotations

import pytest

from robot import config as config_module
from robot.arms.actions import BringupError
from robot.bringup import puzzle3
from robot.bringup.connection import ConnectedRobot
from robot.link import protocol as P
from robot.sim import emulator, pinlog

from test_bringup3 import quiet, sensors_config

OK, REASON = emulator.available()
pytestmark = [pytest.mark.firmware, pytest.mark.skipif(not OK, reason=f"firmware emulator unavailable: {REASON}")]

JITTER_US = 10  # a pulse edge can be late by another interrupt (test_bringup_pins.py)


def widths(config, which: int) -> dict:
    return {arm: P.gripper_widths(config.motion, arm)[which] for arm in P.ARMS}


def pulses_after(emu, cycle: int) -> dict:
    return {arm: [p for p in ps if p.start_cycle > cycle] for arm, ps in pinlog.servo_pulses(emu.pin_events()).items()}


def near(width: float, target: int) -> bool:
    return abs(width - target) <= JITTER_US


@pytest.fixture
def robot3():
    with ConnectedRobot(config_module.load(), sim=True, firmware="emulator", puzzle="3x3x3") as robot:
        yield robot


def test_load_opens_all_four_and_closes_them_only_after_the_start_press(robot3):
    config, emu = robot3.config, robot3.emulator
    closed, opened = widths(config, 1), widths(config, 0)
    start = emu.cycle()
    pressed = []

    def wait():
        pressed.append(emu.cycle())
        robot3.press_start()

    puzzle3.load(robot3.link, config, wait, quiet, arms_straight=True)
    before, after = pulses_after(emu, start), pulses_after(emu, pressed[0])
    for arm in P.ARMS:
        early = [p.width_us for p in before[arm] if p.start_cycle < pressed[0]]
        assert early and near(early[-1], opened[arm]), (arm, early[-3:])  # open while the cube goes in
        assert not any(near(w, closed[arm]) for w in early), arm  # no gripper closed before the press
        assert near(after[arm][-1].width_us, closed[arm]), (arm, after[arm][-1])
    assert not any(pinlog.step_events(emu.pin_events(), start_cycle=start).values()), "ZERO turns no arm"


def test_a_layer_turn_steps_only_that_arm_after_its_gripper_and_the_other_pair_closed(robot3):
    config, emu = robot3.config, robot3.emulator
    closed = widths(config, 1)
    start = emu.cycle()
    puzzle3.jog(robot3.link, "R", 100, quiet, with_cube=True, arms_straight=True)
    steps = pinlog.step_events(emu.pin_events(), start_cycle=start)
    assert [len(steps[a]) for a in "RLFB"] == [100, 0, 0, 0]
    first_step = steps["R"][0][0]
    for arm in "RFB":  # each holding gripper had reached its closed width before the layer moved
        assert any(near(p.width_us, closed[arm]) for p in pulses_after(emu, start)[arm] if p.start_cycle < first_step), arm


def test_a_refused_jog_moves_no_arm_and_no_gripper(robot3):
    emu = robot3.emulator
    puzzle3.grip(robot3.link, "RLFB", True, quiet, arms_straight=True)
    start = emu.cycle()
    with pytest.raises(BringupError, match="ARM_BLOCKED"):
        puzzle3.jog(robot3.link, "R", 100, quiet)
    robot3.link.request("MOTORS OFF")  # the board forgets the arms' positions
    robot3.link.request("MOTORS ON")
    with pytest.raises(BringupError) as refused:
        puzzle3.jog(robot3.link, "F", 100, quiet, with_cube=True)
    assert "the board refused `TURN F90`: POSITION_UNKNOWN" in str(refused.value)
    assert not any(pinlog.step_events(emu.pin_events(), start_cycle=start).values())
    closed = widths(robot3.config, 1)
    assert all(near(p.width_us, closed[arm]) for arm, ps in pulses_after(emu, start).items() for p in ps)


def test_homing_goes_pair_by_pair_so_a_pair_always_holds_the_cube(tmp_path):
    config = config_module.load(sensors_config(tmp_path))
    with ConnectedRobot(config, sim=True, firmware="emulator", puzzle="3x3x3") as robot:
        emu, closed = robot.emulator, widths(config, 1)
        puzzle3.grip(robot.link, "RLFB", True, quiet, arms_straight=True)
        start = emu.cycle()
        puzzle3.home(robot.link, "RLFB", quiet)
        timeline = sorted((p.start_cycle, arm, p.width_us) for arm, ps in pulses_after(emu, start).items() for p in ps)
        now, pairs_opened = dict(closed), set()
        for _, arm, width in timeline:
            now[arm] = width
            holding = [pair for pair in ("RL", "FB") if all(near(now[a], closed[a]) for a in pair)]
            assert holding, f"no pair held the cube at {now}"
            pairs_opened |= {pair for pair in ("RL", "FB") if pair not in holding}
        assert pairs_opened == {"RL", "FB"}  # each pair did open for its homing
        assert all(near(now[a], closed[a]) for a in P.ARMS)  # and all four hold again
        homed = pinlog.step_events(emu.pin_events(), start_cycle=start)
        assert all(homed[a] for a in P.ARMS)
