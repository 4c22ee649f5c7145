"""The virtual robot's true jaws: each gripper's servo moves at its true speed, and the cube must survive it.

SIMULATED only.  The firmware is told motion.jaw_* and motion.servo_speed_us_per_ms; the virtual robot
has its own truth (config simulated_robot.gripper), so settings more aggressive than the true robot
show up here as a mis-calibrated robot would show them: as a jam.

    tracker = JawTracker.from_config(config)
    tracker.command("F", t_ms, width_us)        # a new pulse width seen on the servo's pin at t_ms
    tracker.turn("R", step_times_ms)            # an arm's move: the board time of each step
    tracker.check(until_ms)                     # raises JawJam (a MechanicalError) with the evidence

Each servo moves its pulse width at the true speed from the moment its new width is seen on the pin
(the end of the first pulse of that width: the firmware can only know "within a frame"; the truth is
exact).  Along the arm's travel (its configured open and closed widths) the jaw's gap follows
robot/regrip.py's Jaws with the true clear, contact and open gap: opening, it stops touching at
`clear`; closing, it first touches at `contact`.
Two ways to lose the cube are caught, moment by moment:
  - a turning layer reaches regrip.envelope_mm(angle) past its faces; any jaw of the other pair closer
    to the cube than that is hit (a jam);
  - in a hand-over, the releasing pair stops touching before the taking pair touches: dropped.
A turn by an arm whose jaw was told to close but does not touch yet is a jam too (it would turn in the
air and close on a layer between positions).  Checks wait until every command up to the moment checked
is known (`check(until_ms)`), since the taking pair starts closing during the turn before.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from ..config_types import Config
from ..errors import DeviceError
from ..regrip import Jaws, envelope_mm
from .virtual_robot import MechanicalError

PAIRS = {"RL": "RL", "FB": "FB"}
ARMS = "RLFB"


class JawJam(MechanicalError, DeviceError):
    """The true jaws lost the cube: a jam, as a mis-calibrated robot would jam.  A DeviceError, so the run
    (which imports nothing from sim/) reports it with this advice; `jam` tells it that the cube's state is
    not known (a layer may have stopped between positions) and that the run did not solve it."""

    jam = True
    advice = ("the firmware's jaw settings (config motion.jaw_clear_pct, motion.jaw_contact_pct, "
              "motion.jaw_open_gap_mm, motion.servo_speed_us_per_ms) ask more than the jaws can do (SIMULATED: "
              "the true jaws are config simulated_robot.gripper): measure the clear and contact points with "
              "'cube-robot calibrate overlap', check the cube sits straight in the grippers (turn a layer stopped "
              "part-way to the nearest quarter), then run again (the cube is rescanned)")


def pair_of(arm: str) -> str:
    return next(name for name, arms in PAIRS.items() if arm in arms)


def true_jaws(config: Config, arm: str) -> Jaws:
    """The virtual robot's true jaw on `arm`: its travel is the arm's configured widths (what its pulses
    span), its speed, clear, contact and open gap those of config simulated_robot.gripper."""
    from ..link.protocol import gripper_widths

    truth = config.simulated_robot.gripper
    open_us, closed_us = gripper_widths(config.motion, arm)
    return Jaws(open_us, closed_us, truth.servo_speed_us_per_ms, truth.clear_pct / 100, truth.contact_pct / 100,
                truth.open_gap_mm)


def gap_at(jaws: Jaws, us: float, opening: bool) -> float:
    """The jaw's gap (mm) with its servo at `us`, having last moved towards open (`opening`) or closed."""
    f = (us - jaws.closed_us) / (jaws.open_us - jaws.closed_us)  # 0 closed .. 1 open (beyond: wider)
    if opening:
        return jaws.open_gap_mm * max(0.0, (f - jaws.clear) / (1.0 - jaws.clear))
    return jaws.open_gap_mm * max(0.0, 1.0 - (1.0 - f) / jaws.contact)


@dataclass
class _Command:
    t_ms: float  # when the new width was first seen on the pin
    from_us: float  # where the servo stood then
    to_us: float
    opening: bool  # moving towards the open width


@dataclass
class Servo:
    """One gripper's servo over time: the commands it got and where it stood at each."""

    arm: str
    jaws: Jaws
    commands: list = field(default_factory=list)
    times: list = field(default_factory=list)  # each command's t_ms (for bisect)

    def command(self, t_ms: float, width_us: float) -> None:
        if self.commands and t_ms < self.commands[-1].t_ms:
            raise ValueError(f"gripper {self.arm}: command at {t_ms} ms before the one at {self.commands[-1].t_ms} ms")
        if not self.commands:  # never pulsed: a servo goes straight to its first width
            self.commands.append(_Command(t_ms, width_us, width_us, self._towards_open(width_us, width_us)))
            self.times.append(t_ms)
            return
        here = self.us_at(t_ms)
        opening = self._towards_open(here, width_us) if width_us != here else self.commands[-1].opening
        self.commands.append(_Command(t_ms, here, width_us, opening))
        self.times.append(t_ms)

    def _towards_open(self, here: float, to: float) -> bool:
        span = self.jaws.open_us - self.jaws.closed_us
        if to == here:  # standing: it last came from whichever end it is nearer the other of
            return abs(to - self.jaws.open_us) < abs(to - self.jaws.closed_us)
        return (to - here) * span > 0

    def _last(self, t_ms: float) -> _Command | None:
        i = bisect.bisect_right(self.times, t_ms) - 1
        return self.commands[i] if i >= 0 else None

    def us_at(self, t_ms: float) -> float:
        c = self._last(t_ms)
        if c is None:
            raise ValueError(f"gripper {self.arm} was never commanded before {t_ms:.1f} ms")
        step = self.jaws.speed_us_per_ms * (t_ms - c.t_ms)
        return c.to_us if abs(c.to_us - c.from_us) <= step else c.from_us + step * (1 if c.to_us > c.from_us else -1)

    def gap(self, t_ms: float) -> float:
        c = self._last(t_ms)
        if c is None:
            return self.jaws.open_gap_mm  # never pulsed: taken as open (nothing is known to touch)
        return gap_at(self.jaws, self.us_at(t_ms), c.opening)

    def gaps_over(self, start_ms: float, end_ms: float) -> list[tuple[float, float]]:
        """(time, gap) at the interval's ends and at each command inside it: the gap is monotone
        between commands (a servo moving at constant speed, then standing), so its least is among these."""
        points = [(start_ms, self.gap(start_ms)), (end_ms, self.gap(end_ms))]
        first, last = bisect.bisect_right(self.times, start_ms), bisect.bisect_left(self.times, end_ms)
        for c in self.commands[first:last]:
            if start_ms < c.t_ms < end_ms:
                before = self._last(c.t_ms - 1e-6)
                if before is not None:
                    points.append((c.t_ms, gap_at(self.jaws, c.from_us, before.opening)))
                points.append((c.t_ms, gap_at(self.jaws, c.from_us, c.opening)))
        return points

    def commanded_closed(self, t_ms: float) -> bool:
        c = self._last(t_ms)
        return c is not None and abs(c.to_us - self.jaws.closed_us) < abs(c.to_us - self.jaws.open_us)

    def stops_touching_after(self, c: _Command) -> float | None:
        """When an opening command makes a touching jaw stop touching (None: it does not)."""
        if not c.opening or gap_at(self.jaws, c.from_us, True) > 0:
            return None
        clear_us = self.jaws.closed_us + self.jaws.clear * (self.jaws.open_us - self.jaws.closed_us)
        if abs(c.to_us - self.jaws.closed_us) <= abs(clear_us - self.jaws.closed_us):
            return None  # it stops before the clear point
        return c.t_ms + abs(clear_us - c.from_us) / self.jaws.speed_us_per_ms


@dataclass
class _Turn:
    arm: str
    step_ms: list  # the board time of each step
    direction: int  # +1 / -1


class JawTracker:
    """The true jaws of all four grippers and the checks of turns and hand-overs against them."""

    def __init__(self, jaws: dict, cube_mm: float, steps_per_rev: int):
        self.servos = {arm: Servo(arm, jaws[arm]) for arm in ARMS}
        self.cube_mm, self.steps_per_rev = cube_mm, steps_per_rev
        self._turns: list[_Turn] = []  # not checked yet
        self.layer_steps = {arm: 0 for arm in ARMS}  # each arm's layer, steps past square (a jog stops anywhere)
        self._releases: list[tuple[float, str, _Command]] = []  # (when it stops touching, arm, the command)
        self.checked_until = float("-inf")
        self.turns_checked = 0  # layers turned and checked against the other pair's jaws

    @classmethod
    def from_config(cls, config: Config) -> "JawTracker":
        return cls({arm: true_jaws(config, arm) for arm in ARMS}, config.camera.pose.cube_mm,
                   config.motion.steps_per_rev)

    def describe_truth(self) -> str:
        j = self.servos["R"].jaws
        return (f"SIMULATED true jaws (config simulated_robot.gripper): servo {j.speed_us_per_ms:g} us/ms, "
                f"clear {j.clear * 100:g} %, contact {j.contact * 100:g} %, open gap {j.open_gap_mm:g} mm, "
                f"cube {self.cube_mm:g} mm")

    # -- what the firmware did ----------------------------------------------------

    def command(self, arm: str, t_ms: float, width_us: float) -> None:
        servo = self.servos[arm]
        servo.command(t_ms, width_us)
        release = servo.stops_touching_after(servo.commands[-1])
        if release is not None:
            self._releases.append((release, arm, servo.commands[-1]))

    def turn(self, arm: str, step_ms, direction: int = 1) -> None:
        """An arm's move, with the board time of each of its steps (in the air or turning a layer)."""
        if step_ms:
            self._turns.append(_Turn(arm, sorted(step_ms), 1 if direction >= 0 else -1))

    # -- the checks ------------------------------------------------------------------

    def check(self, until_ms: float = float("inf")) -> None:
        """Check the turns that ended and the releases that happened by `until_ms` (every command
        seen on the pins up to then must have been given); raise JawJam on the first problem."""
        turns = [t for t in self._turns if t.step_ms[-1] <= until_ms]
        releases = [r for r in self._releases if r[0] <= until_ms]
        due: list[tuple[float, int, int]] = sorted([(t.step_ms[-1], 0, i) for i, t in enumerate(turns)]
                                                   + [(r[0], 1, i) for i, r in enumerate(releases)])
        for _, kind, i in due:  # in time order: the first problem is the one said
            if kind == 0:
                self._turns.remove(turns[i])
                self._check_turn(turns[i])
            else:
                self._releases.remove(releases[i])
                self._check_release(*releases[i])
        self.checked_until = max(self.checked_until, until_ms)

    def _check_turn(self, turn: _Turn) -> None:
        arm, steps = turn.arm, turn.step_ms
        own = self.servos[arm]
        if not own.commanded_closed(steps[0]):
            return  # in the air: its open jaw turns around the face and no layer moves
        gap = own.gap(steps[0])
        if gap > 0:
            raise JawJam(
                f"arm {arm} began turning at {steps[0]:.1f} ms (board time) while its own jaw was still "
                f"{gap:.2f} mm off the cube (told to close, not touching yet): the layer is left between positions "
                f"[{self.describe_truth()}]")
        others = [a for a in ARMS if pair_of(a) != pair_of(arm)]
        deg_per_step = 360.0 / self.steps_per_rev
        start = self.layer_steps[arm]
        self.turns_checked += 1
        self.layer_steps[arm] = (start + turn.direction * len(steps)) % (self.steps_per_rev // 4)
        for i in range(1, len(steps)):  # between step i and step i+1 the layer stands i steps round
            angle = (start + turn.direction * i) * deg_per_step
            reach = envelope_mm(angle, self.cube_mm)
            for other in others:
                for t, gap in self.servos[other].gaps_over(steps[i - 1], steps[i]):
                    if gap < reach:
                        raise JawJam(
                            f"jammed at {t:.1f} ms (board time): arm {arm}'s layer, turned {angle % 90:.1f} deg "
                            f"past square, reaches {reach:.2f} mm past its faces, but gripper {other}'s jaw was "
                            f"{gap:.2f} mm off the cube ({self._commanded(other, t)}) [{self.describe_truth()}]")

    def _check_release(self, t_ms: float, arm: str, command: _Command) -> None:
        pair = pair_of(arm)
        taking = [a for a in ARMS if pair_of(a) != pair]
        if not all(self.servos[a].commanded_closed(t_ms) for a in taking):
            return  # not a hand-over: the cube is being let go on purpose (release, bring-up)
        if all(self.servos[a].gap(t_ms) == 0 for a in taking):
            return  # the other pair holds it
        if any(self.servos[a].gap(t_ms) > 0 for a in pair if a != arm):
            return  # its partner had already let go: the cube was dropped then (said for that one)
        late = next(a for a in taking if self.servos[a].gap(t_ms) > 0)
        raise JawJam(
            f"cube dropped at {t_ms:.1f} ms (board time): gripper {arm} of pair {pair} stopped touching it "
            f"(told to open at {command.t_ms:.1f} ms) while gripper {late} of the taking pair was still "
            f"{self.servos[late].gap(t_ms):.2f} mm off it ({self._commanded(late, t_ms)}) [{self.describe_truth()}]")

    def _commanded(self, arm: str, t_ms: float) -> str:
        c = self.servos[arm]._last(t_ms)
        if c is None:
            return "never commanded"
        return f"told {c.to_us:.0f} us at {c.t_ms:.1f} ms, at {self.servos[arm].us_at(t_ms):.0f} us then"


def feed_pins(tracker: JawTracker, events, changes: dict, moves: dict, pin_map) -> None:
    """Give the tracker what a sync of the emulator's pin log decoded: `changes` {arm: [Pulse]} (the
    first pulse of each new width), `moves` {arm: [Move]} (whose steps are read from `events`), then
    check everything up to a few ms before the log's end (a pulse still being written is read next time)."""
    from . import pinlog

    for arm, pulses in changes.items():
        for pulse in pulses:
            # A servo knows a pulse's width at its falling edge: it starts moving then.
            tracker.command(arm, pinlog.cycles_to_ms(pulse.start_cycle) + pulse.width_us / 1000, pulse.width_us)
    def cycle(event) -> int:
        return event.cycle

    for arm, arm_moves in moves.items():
        label = pin_map[f"STEP_{arm}"].label
        for move in arm_moves:
            window = events[bisect.bisect_left(events, move.start_cycle, key=cycle):
                            bisect.bisect_right(events, move.end_cycle, key=cycle)]
            tracker.turn(arm, [pinlog.cycles_to_ms(ev.cycle) for ev in window if ev.pin == label and ev.level == 1],
                         move.steps)
    if events:
        tracker.check(pinlog.cycles_to_ms(events[-1].cycle) - 3.0)  # a servo pulse lasts at most 2.5 ms
