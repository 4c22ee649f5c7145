"""robot/regrip.py's schedule against a brute-force simulation written here.

The simulation shares no formula with robot/regrip.py: it integrates the stepper's trapezoid
in small time steps (a step fires when the position passes m - 0.5), turns the layers' corner
points to find how far they reach towards the other pair's jaws, moves each servo's pulse
width at its speed from the moment it knows the new width: the end of the first pulse of
that width, which begins anywhere from 0 to a whole 20 ms frame after the command (a servo
knows a width at its pulse's falling edge), and reads a jaw's gap off its pulse width.  It then checks the
schedule regrip.py gives (when the taking jaws are told to close, when the releasing jaws
are told to open, when the next turn starts): never a jaw inside a turning layer, the cube
held before it is let go, and no more than the rounding's millisecond wasted.
"""

import math

import numpy as np
import pytest

from robot import config as config_module
from robot import motion, regrip
from robot.plan import RobotProfile

DT = 0.01  # ms per simulation step
FRAME = 20.0  # the servo frame (ms): a new width is picked up within one
PHASES = np.linspace(0.0, FRAME, 21)  # when, after the command, the first pulse of the new width begins
TOLERANCE_MM = 0.005  # the simulation's own time step (0.01 ms) moves a jaw by about 0.002 mm


class Stepper:
    """An arm's trapezoid, integrated: the master arm's fired step count at each time."""

    def __init__(self, steps, max_speed, accel):
        self.steps = steps
        t, x, v, fired, times = 0.0, 0.0, 0.0, 0, []
        dt = DT / 1000
        slowing = 0.0  # once braking: the deceleration that stops the arm on its last step
        while v > 0 or x == 0:
            if not slowing and v * v / (2 * accel) >= steps - x:
                slowing = v * v / (2 * (steps - x))
            if slowing:
                step_dt = min(dt, v / slowing)  # stops within this step
                x, v = x + v * step_dt - slowing * step_dt * step_dt / 2, v - slowing * step_dt
            else:
                step_dt = dt
                v_new = min(v + accel * dt, max_speed)
                x, v = x + (v + v_new) / 2 * dt, v_new
            t += step_dt
            while fired < steps and x >= fired + 0.5:
                fired += 1
                times.append(t * 1000)
        self.step_times = np.array(times)
        self.end_ms = t * 1000

    def fired(self, t_ms):
        return np.searchsorted(self.step_times, t_ms, side="right")


def layer_reach(angle_deg, half):
    """How far the turned layer's corners stand past the face, along the other pair's jaw axis."""
    a = np.radians(angle_deg)
    corners = [(half, half), (half, -half), (-half, half), (-half, -half)]
    along = np.max([np.abs(x * np.sin(a) + y * np.cos(a)) for x, y in corners], axis=0)
    return along - half


def turn_reach_at(stepper, arm_steps, steps_per_rev, cube_mm, t_ms):
    """The greatest reach at each time: each arm anywhere between its last fired step and the next."""
    m = stepper.fired(t_ms)
    reach = np.zeros(len(t_ms))
    for s in arm_steps:
        for k in np.linspace(0.0, 1.0, 5):
            position = np.minimum(m + k, stepper.steps) * s / stepper.steps
            reach = np.maximum(reach, layer_reach(position * 360 / steps_per_rev, cube_mm / 2))
    return reach


def knows_ms(jaws, closing):
    """From the start of the first pulse of the new width to the servo knowing it: that pulse's width."""
    return (jaws.closed_us if closing else jaws.open_us) / 1000


def width_at(jaws, start_ms, t_ms, closing):
    """The servo's pulse width at each time; it starts moving at start_ms."""
    frm, to = (jaws.open_us, jaws.closed_us) if closing else (jaws.closed_us, jaws.open_us)
    moved = np.clip((t_ms - start_ms) * jaws.speed_us_per_ms, 0, abs(to - frm))
    return frm + np.sign(to - frm) * moved


def gap_of(jaws, width, closing):
    """Jaw to cube (mm) at a pulse width: 0 from the closed width to the contact (closing) or clear
    (opening) point, then growing evenly to the open gap at the open width."""
    span = abs(jaws.open_us - jaws.closed_us)
    from_closed = np.abs(width - jaws.closed_us)
    touching = span * (1 - jaws.contact) if closing else span * jaws.clear  # widths from closed still touching
    return jaws.open_gap_mm * np.clip((from_closed - touching) / (span - touching), 0, 1)


def jaws_of(open_us=1300, closed_us=1700, speed=4.7, clear=0.5, contact=0.7, gap=12):
    return regrip.Jaws(open_us, closed_us, speed, clear, contact, gap)


def closing_hits(prev_stepper, arm_steps, rev, cube_mm, jaws, lead):
    """Deepest entry (mm) of closing jaws, told `lead` ms before the turn's end, into the turning layer.
    A jaw that touches a face before the turn has ended (its last half step) presses on a moving
    layer: that counts as an entry too (of one step's travel, 1 mm: past any tolerance)."""
    t = np.arange(0.0, prev_stepper.end_ms - 2 * DT, DT)
    reach = turn_reach_at(prev_stepper, arm_steps, rev, cube_mm, t)
    deepest = -math.inf
    for phase in PHASES:
        start = prev_stepper.end_ms - lead + phase + knows_ms(jaws, closing=True)
        gap = gap_of(jaws, width_at(jaws, start, t, closing=True), closing=True)
        deepest = max(deepest, float(np.max(reach - gap)), 1.0 if np.any(gap <= 0) else -math.inf)
    return deepest


def opening_hits(next_stepper, arm_steps, rev, cube_mm, jaws, wait):
    """Deepest entry (mm) of opening jaws, told `wait` ms before the next turn starts, into its layers."""
    t = np.arange(0.0, next_stepper.end_ms, DT)  # from the next turn's start
    reach = turn_reach_at(next_stepper, arm_steps, rev, cube_mm, t)
    deepest = -math.inf
    for phase in PHASES:
        gap = gap_of(jaws, width_at(jaws, -wait + phase + knows_ms(jaws, closing=False), t, closing=False),
                     closing=False)
        deepest = max(deepest, float(np.max(reach - gap)))
    return deepest


CASES = {  # name: (jaws of one pair, jaws of the other, steps per rev, max speed, accel, cube)
    "defaults": ([jaws_of()] * 2, [jaws_of()] * 2, 400, 2000, 66667, 50),
    "fast servo": ([jaws_of(speed=8)] * 2, [jaws_of(speed=8)] * 2, 400, 2000, 66667, 50),
    "early clear, late contact": ([jaws_of(clear=0.3, contact=0.9)] * 2, [jaws_of(clear=0.3, contact=0.9)] * 2,
                                  400, 2000, 66667, 50),
    "per-arm widths, reversed": ([jaws_of(1800, 1400), jaws_of(1250, 1700)], [jaws_of(1320, 1680), jaws_of()],
                                 400, 2000, 66667, 50),
    "big cube, slow arms": ([jaws_of(gap=16, clear=0.4)] * 2, [jaws_of(gap=16, contact=0.6)] * 2, 800, 3000, 40000, 57),
}
KINDS = {"quarter": [100], "half": [200], "quarter+half": [100, 200]}


def _case(name, kind):
    taking, releasing, rev, speed, accel, cube_mm = CASES[name]
    arm_steps = [s * rev // 400 for s in KINDS[kind]]
    stepper = Stepper(max(arm_steps), speed, accel)
    reach = regrip.turn_reach(arm_steps, rev, speed, accel, cube_mm)
    return taking, releasing, rev, cube_mm, arm_steps, stepper, reach


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", CASES)
def test_the_schedule_keeps_every_jaw_out_of_the_turning_layers(name, kind):
    taking, releasing, rev, cube_mm, arm_steps, stepper, reach = _case(name, kind)
    assert abs(reach.duration_ms - stepper.end_ms) < 0.05  # the same trapezoid, integrated here
    for jaws in taking:  # each told to close at the pair's lead (the fastest jaw's)
        lead = min(regrip.close_lead_ms(reach, j) for j in taking)
        assert closing_hits(stepper, arm_steps, rev, cube_mm, jaws, lead) <= TOLERANCE_MM, (jaws, lead)
    wait = max(regrip.opening_wait_ms(reach, j) for j in releasing)
    for jaws in releasing:
        assert opening_hits(stepper, arm_steps, rev, cube_mm, jaws, wait) <= TOLERANCE_MM, (jaws, wait)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", CASES)
def test_the_schedule_wastes_no_more_than_its_rounding(name, kind):
    """The brute force's own limits, found by bisection: the close lead is at most 1 ms short of the
    latest safe one (floor) and the closed width's pulse (regrip.py takes a closing to start at the
    command, the servo cannot start before that pulse has ended), the opening wait at most 1 ms
    longer than the shortest safe one (ceil)."""
    taking, releasing, rev, cube_mm, arm_steps, stepper, reach = _case(name, kind)
    for jaws in taking:
        # at its latest start, it touches the cube as the turn ends
        aim = FRAME + knows_ms(jaws, closing=True) + jaws.travel_ms * jaws.contact
        low, high = 0.0, min(aim, stepper.end_ms)
        if closing_hits(stepper, arm_steps, rev, cube_mm, jaws, high) <= 0:
            low = high  # the aim (or the whole turn) is safe: the lead is that
        while high - low > 0.02:
            middle = (low + high) / 2
            low, high = (middle, high) if closing_hits(stepper, arm_steps, rev, cube_mm, jaws, middle) <= 0 \
                else (low, middle)
        lead = regrip.close_lead_ms(reach, jaws)
        assert low - 1 - knows_ms(jaws, closing=True) - 0.05 <= lead <= high + 0.05, (jaws, lead, low, high)
    for jaws in releasing:
        low, high = 0.0, 400.0
        while high - low > 0.02:
            middle = (low + high) / 2
            low, high = (low, middle) if opening_hits(stepper, arm_steps, rev, cube_mm, jaws, middle) <= 0 \
                else (middle, high)
        wait = regrip.opening_wait_ms(reach, jaws)
        assert high - 0.05 <= wait <= high + 1 + 0.05, (jaws, wait, high)


def test_the_taking_pair_holds_before_the_releasing_pair_lets_go():
    """Taking jaws told to close `lead` before the turn's end, starting at their latest, are fully closed
    when the releasing jaws are told to open (regrip_ms's open_at), for every case and kind."""
    for name in CASES:
        for kind in KINDS:
            taking, releasing, rev, cube_mm, arm_steps, stepper, reach = _case(name, kind)
            lead = min(regrip.close_lead_ms(reach, j) for j in taking)
            total = regrip.regrip_ms(reach, reach, taking, releasing)
            open_at = total - max(regrip.opening_wait_ms(reach, j) for j in releasing)
            for jaws in taking:
                t = np.array([stepper.end_ms + open_at])
                start = stepper.end_ms - lead + FRAME + knows_ms(jaws, closing=True)
                assert width_at(jaws, start, t, closing=True)[0] == jaws.closed_us


def test_the_defaults_give_the_documented_numbers():
    jaws = jaws_of()
    quarter = regrip.turn_reach([100], 400, 2000, 66667, 50)
    half = regrip.turn_reach([200], 400, 2000, 66667, 50)
    # a frame, the new width's pulse (1.7 ms closing, 1.3 opening) and the travel, rounded up
    assert round(jaws.travel_ms, 1) == 85.1 and regrip.closing_ms(jaws) == regrip.opening_ms(jaws) == 107
    assert round(regrip.envelope_mm(45, 50), 2) == 10.36
    assert (regrip.close_lead_ms(quarter, jaws), regrip.opening_wait_ms(quarter, jaws)) == (45, 66)
    for before in (quarter, half):
        for after in (quarter, half):
            assert regrip.regrip_ms(before, after, [jaws] * 2, [jaws] * 2) == 128
    assert regrip.regrip_ms_without_overlap([jaws] * 2, [jaws] * 2) == 214


def test_an_open_gap_inside_the_reach_is_refused_naming_the_settings():
    quarter = regrip.turn_reach([100], 400, 2000, 66667, 50)
    with pytest.raises(ValueError, match="inside a turning layer's reach"):
        regrip.opening_wait_ms(quarter, jaws_of(gap=10))
    config = config_module.with_settings(config_module.defaults(), {"motion.jaw_open_gap_mm": 10})
    with pytest.raises(motion.JawSettingsError, match=r"motion.jaw_open_gap_mm 10 is inside .* 10.4 mm .*"
                                                      r"motion.cube_mm 50"):
        RobotProfile.from_config(config)
    ok = config_module.with_settings(config_module.defaults(), {"motion.jaw_open_gap_mm": 11})
    assert RobotProfile.from_config(ok).regrips  # just outside: accepted


def test_the_profile_charges_each_regrip_by_its_neighbours():
    """With a fast servo the close lead differs after a quarter and after a half turn: the profile
    (and so the solver) charges each regrip its own cost, as robot/regrip.py works it out."""
    from robot.plan import Grip, Turn

    config = config_module.with_settings(config_module.defaults(), {
        "motion.servo_open_us": 1300, "motion.servo_closed_us": 1700, "motion.servo_speed_us_per_ms": 8.0})
    profile = RobotProfile.from_config(config)
    m = config.motion
    after_quarter = profile.regrip_cost("FB", "RL", Turn({"R": 90}), Turn({"F": 180}))
    after_half = profile.regrip_cost("FB", "RL", Turn({"R": 180, "L": -90}), Turn({"F": 180}))
    assert after_quarter == motion.regrip_between(m, ["F", "B"], ["R", "L"], [90], [180])
    assert after_half == motion.regrip_between(m, ["F", "B"], ["R", "L"], [180, 90], [180])
    assert after_quarter != after_half
    plan = [Grip("RL"), Turn({"R": 90}), Grip("FB"), Turn({"F": 180}), Grip("RL"), Turn({"L": 180})]
    assert profile.action_costs(plan) == [0, 80, after_quarter, 130,
                                          profile.regrip_cost("RL", "FB", Turn({"F": 180}), Turn({"L": 180})), 130]
    # A grip to the pair that holds takes nothing; a regrip with no turn after it waits for the jaws to open.
    assert profile.action_costs([Grip("RL"), Grip("RL")]) == [0, 0]
    assert profile.action_costs([Grip("RL"), Grip("FB")]) == [0, motion.regrip_between(m, ["F", "B"], ["R", "L"])]
