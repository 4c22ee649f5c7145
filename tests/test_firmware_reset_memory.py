"""What the firmware remembers across a reset, checked against the pin log (the real firmware in simavr).

A reset mid-move leaves `cut` = the action and `part` = its steps done of its total: the steps the
pins show.  The host's stop names the actions completed and where the cut layer stands.
"""

import time

import pytest

from robot import config as config_module
from robot.link.driver import Link
from robot.link.errors import CubeStateUncertainError
from robot.sim import emulator, pinlog

pytestmark = [pytest.mark.firmware,
              pytest.mark.skipif(not emulator.available()[0], reason="the firmware emulator is not available")]

STEPS_PER_REV = 6400  # slow enough that a reset surely lands mid-move (a half turn: 3200 steps)


def wait_for_steps(emu, after_cycle: int, count: int, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        steps = pinlog.step_events(emu.pin_events(), start_cycle=after_cycle)
        if len(steps["R"]) >= count:
            return
        time.sleep(0.001)
    raise AssertionError(f"arm R made no {count} steps within {timeout_s} s")


def test_a_reset_mid_turn_names_the_completed_actions_and_the_steps_the_pins_show():
    config = config_module.with_settings(config_module.defaults(), {"motion.steps_per_rev": STEPS_PER_REV})
    plan = ["GRIP RL", "TURN R90", "TURN R180 L-90", "GRIP FB", "TURN F90"]
    with emulator.Emulator() as emu:
        link = Link.open(config, port=emu.port)
        marks = {}

        def progress(p):
            if p.completed == 2 and "reset" not in marks:  # action 3 (TURN R180 L-90) is starting
                marks["turn"] = emu.cycle()
                wait_for_steps(emu, marks["turn"], 300)
                marks["reset"] = emu.reset()

        try:
            with pytest.raises(CubeStateUncertainError) as info:
                link.run(plan, progress=progress)
        finally:
            link.close()
        events = emu.pin_events()
    # R's last move in the pin log is the cut turn (it may have begun before the host heard of
    # action 2's end; none moved after the reset: checked below).
    cut_move = pinlog.arm_motions(events)["R"][-1]
    assert cut_move.start_cycle < marks["reset"] and cut_move.steps > 0
    stepped = cut_move.steps
    progress = info.value.progress
    assert progress.completed == 2 and progress.interrupted == 2
    done, total = progress.interrupted_part
    assert total == STEPS_PER_REV // 2  # the longest arm's steps (R180)
    # The step interrupt writes the count 2 us after each step's rising edge: a reset in between
    # leaves it one short.
    assert stepped - 1 <= done <= stepped and 300 <= stepped < total
    text = str(info.value)
    assert "Actions 1-2 of 5 completed" in text and f"{done} of {total} steps done" in text
    assert "between positions" in text
    # Nothing moved after the reset: the cut latched RESET_DURING_MOTION.
    resets = [e.cycle for e in events if e.pin == pinlog.RESET]
    assert resets and pinlog.step_events(events, start_cycle=resets[-1]) == {arm: [] for arm in "RLFB"}
