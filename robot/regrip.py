"""The regrip's overlap: when the taking jaws may start closing and the next turn may start.

One source of truth for the schedule the firmware runs (firmware/cube_robot: the same
arithmetic in C), the mock firmware times, the solver charges and the simulation checks.

A gripper's servo moves its pulse width at `speed_us_per_ms` between `closed_us` and
`open_us`.  Along that travel the jaw's gap to the cube is 0 while it touches and grows
linearly to `open_gap_mm` at the open width:
  - opening from closed, it stops touching at `clear` (a fraction of the travel);
  - closing from open, it first touches at `contact` (a fraction of the closing travel).
A turning layer's corners sweep out beyond its faces: at angle a the layer reaches
half * (|cos a| + |sin a|) from its axis, half the cube's edge at rest, about 10 mm more
at 45 degrees for a 50 mm cube (`envelope_mm`).  A jaw of the other pair must stay
outside that at every moment of the turn.

A new pulse width reaches a servo with its next frame (every 20 ms), and the servo learns
it at the falling edge of that first pulse, so the firmware cannot know when, within a
frame and a pulse, a jaw starts moving.  The schedule takes the side that is safe for each
question: a jaw that must not arrive too soon (closing towards a turning layer) is taken
to start at the command; a jaw that must have got somewhere (contact, clear of the next
turn, surely there) is taken to start a frame and the new pulse width later
(`latest_start_ms`: closing, the closed width; opening, the open width).  Times are whole
milliseconds, rounded the safe way.

The turn's motion is the firmware's trapezoid (robot/motion.py): step m of the longest
arm fires when the ideal position passes m - 0.5; shorter arms are spread over it
(Bresenham), so arm i stands at m * steps_i / steps after master step m.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SERVO_FRAME_MS = 20  # firmware SERVO_FRAME_US: a new width reaches the servo within one frame


def latest_start_ms(width_us: int) -> float:
    """From a command to the latest moment the servo starts towards `width_us`: the next frame's
    pulse of that width may begin a whole frame later, and the servo knows it only when it ends."""
    return SERVO_FRAME_MS + width_us / 1000


@dataclass(frozen=True)
class Jaws:
    """One gripper's travel and its jaw's gap along it (the firmware's settings or a simulated truth)."""

    open_us: int
    closed_us: int
    speed_us_per_ms: float
    clear: float  # fraction of the opening travel at which the jaws stop touching the cube
    contact: float  # fraction of the closing travel at which the jaws first touch it
    open_gap_mm: float  # jaw to cube when fully open

    @property
    def travel_ms(self) -> float:
        return abs(self.open_us - self.closed_us) / self.speed_us_per_ms

    def gap_opening(self, t_ms: float) -> float:
        """Gap (mm) t ms after the servo began opening from closed."""
        f = min(max(t_ms / self.travel_ms, 0.0), 1.0)
        return self.open_gap_mm * max(0.0, (f - self.clear) / (1.0 - self.clear))

    def gap_closing(self, t_ms: float) -> float:
        """Gap (mm) t ms after the servo began closing from open."""
        f = min(max(t_ms / self.travel_ms, 0.0), 1.0)
        return self.open_gap_mm * max(0.0, 1.0 - f / self.contact)

    def opening_ms_to(self, gap_mm: float) -> float:
        """ms after the servo began opening until the gap exceeds `gap_mm` (inf: never)."""
        if gap_mm >= self.open_gap_mm:
            return math.inf
        return self.travel_ms * (self.clear + (1.0 - self.clear) * max(gap_mm, 0.0) / self.open_gap_mm)

    def closing_ms_above(self, gap_mm: float) -> float:
        """ms after the servo began closing during which the gap stays at least `gap_mm`."""
        if gap_mm > self.open_gap_mm:
            return -math.inf
        return self.travel_ms * self.contact * (1.0 - max(gap_mm, 0.0) / self.open_gap_mm)


def envelope_mm(angle_deg: float, cube_mm: float) -> float:
    """How far a layer turned by `angle_deg` reaches beyond its faces at rest (mm)."""
    a = math.radians(angle_deg)
    return cube_mm / 2 * (abs(math.cos(a)) + abs(math.sin(a)) - 1.0)


def _position_ms(x: float, max_speed: float, accel: float, steps: int) -> float:
    """Time (ms) at which the ideal trapezoid of `steps` steps reaches position x (0 <= x <= steps)."""
    ramp = max_speed * max_speed / (2 * accel)  # steps to reach full speed
    if 2 * ramp > steps:  # a triangle: half the steps up, half down
        ramp = steps / 2
        peak = math.sqrt(2 * accel * ramp)
    else:
        peak = max_speed
    t_up = peak / accel
    if x <= ramp:
        t = math.sqrt(2 * x / accel)
    elif x <= steps - ramp:
        t = t_up + (x - ramp) / peak
    else:
        total = 2 * t_up + (steps - 2 * ramp) / peak
        t = total - math.sqrt(2 * max(steps - x, 0.0) / accel)
    return 1000 * t


@dataclass(frozen=True)
class TurnReach:
    """A turn's moments and how far its layers reach in between (what the other pair's jaws must clear)."""

    times_ms: tuple  # start of each interval: 0, then each master step; the last entry is the end
    reach_mm: tuple  # the layers' greatest reach beyond the faces during each interval

    @property
    def duration_ms(self) -> float:
        return self.times_ms[-1]


def turn_reach(arm_steps, steps_per_rev: int, max_speed: float, accel: float, cube_mm: float) -> TurnReach:
    """The reach of a TURN whose arms move by `arm_steps` (absolute step counts)."""
    arm_steps = [abs(s) for s in arm_steps if s]
    n = max(arm_steps)
    deg_per_step = 360.0 / steps_per_rev

    def reach_after(m: int) -> float:
        return max(envelope_mm(m * s / n * deg_per_step, cube_mm) for s in arm_steps)

    times = [0.0] + [_position_ms(m - 0.5, max_speed, accel, n) for m in range(1, n + 1)]
    times.append(_position_ms(n, max_speed, accel, n))
    # Between master steps m and m+1 the layers move between those positions (the rotor
    # travels continuously): the greater reach of the two ends bounds the interval.
    reach = [max(reach_after(m), reach_after(min(m + 1, n))) for m in range(n + 1)]
    return TurnReach(tuple(times), tuple(reach))


def close_lead_ms(prev: TurnReach, jaws: Jaws) -> int:
    """How long before the previous turn ends the taking jaws are told to close (whole ms).

    Aimed so that, starting at the latest, they touch the cube as the turn ends; limited so
    that, starting at once, they never enter the turning layers' reach; never before the
    turn began.
    """
    end = prev.duration_ms
    lead = latest_start_ms(jaws.closed_us) + jaws.travel_ms * jaws.contact  # touch at the end, at the latest
    for i, reach in enumerate(prev.reach_mm):
        t_next = prev.times_ms[i + 1]
        # The closing gap shrinks: it must still be outside the reach at the interval's end.
        lead = min(lead, end - t_next + jaws.closing_ms_above(reach))
    return max(0, min(math.floor(lead), math.floor(end)))


def opening_wait_ms(nxt: TurnReach, jaws: Jaws) -> int:
    """From the command that opens the releasing jaws to the earliest start of the next turn (whole ms).

    The jaws start a frame and the open width late at worst and must be outside the turn's
    reach at every moment; the opening gap grows, so each interval binds at its start.
    """
    start = latest_start_ms(jaws.open_us)
    wait = 0.0
    for i, reach in enumerate(nxt.reach_mm):
        need = jaws.opening_ms_to(reach)
        if math.isinf(need):
            raise ValueError(
                f"the open jaws ({jaws.open_gap_mm:g} mm off the cube) are inside a turning layer's reach "
                f"({reach:.1f} mm): open them further or the turns will hit them")
        wait = max(wait, start + need - nxt.times_ms[i])
    return math.ceil(wait)


def _surely_there_ms(jaws: Jaws, width_us: int) -> int:
    """A command towards `width_us` to surely there: its latest start and the whole travel.

    In whole numbers when the speed is in tenths (as the firmware is told it): a float division
    made 161 us at 0.7 us/ms 230.00000000000003 ms, rounded up a ms past the firmware's."""
    tenths = jaws.speed_us_per_ms * 10
    if abs(tenths - round(tenths)) < 1e-9:
        # ms = (frame_us + width_us) / 1000 + travel_us * 10 / tenths, over 1000 * tenths
        num = (SERVO_FRAME_MS * 1000 + width_us) * round(tenths) + abs(jaws.open_us - jaws.closed_us) * 10_000
        return -(-num // (1000 * round(tenths)))
    return math.ceil(latest_start_ms(width_us) + jaws.travel_ms)


def closing_ms(jaws: Jaws) -> int:
    """A closing with nothing to overlap: command to surely closed (firmware regrip_closing_ms)."""
    return _surely_there_ms(jaws, jaws.closed_us)


def opening_ms(jaws: Jaws) -> int:
    """An opening with nothing to overlap: command to surely open (firmware regrip_opening_ms)."""
    return _surely_there_ms(jaws, jaws.open_us)


def open_frames(jaws: Jaws) -> int:
    """Whole servo frames from an open command after which a close command finds the jaws fully open.

    Every frame begun since the open command sends the open width; the servo heads for open from
    the end of the first such pulse until the end of the first closed pulse, a frame per open
    pulse later plus the closed width less the open width.  That must cover the travel
    (firmware motion.cpp early_close_at: the same integers)."""
    tenths = round(jaws.speed_us_per_ms * 10)
    if abs(jaws.speed_us_per_ms * 10 - tenths) < 1e-9:
        # frames * frame_us >= travel_us * 1000 / speed - (closed_us - open_us), in us * tenths
        need = abs(jaws.open_us - jaws.closed_us) * 10_000 - (jaws.closed_us - jaws.open_us) * tenths
        step = SERVO_FRAME_MS * 1000 * tenths
        return max(0, -(-need // step))
    need_ms = jaws.travel_ms - (jaws.closed_us - jaws.open_us) / 1000
    return max(0, math.ceil(need_ms / SERVO_FRAME_MS))


def regrip_ms(prev: TurnReach | None, nxt: TurnReach | None, taking, releasing) -> int:
    """From the end of the previous turn (or the GRIP's start) to the start of the next turn
    (or the releasing jaws fully open): the regrip's cost with the overlap.

    `taking` / `releasing`: the Jaws of each pair's two grippers (per-arm widths may differ:
    the faster jaw decides how early a closing may start, the slower when it is done).
    """
    lead = min(close_lead_ms(prev, j) for j in taking) if prev is not None else 0
    closed_at = max(closing_ms(j) for j in taking) - lead  # relative to the previous turn's end
    open_at = max(0, closed_at)  # the releasing pair opens once the taking pair surely holds
    if nxt is None:
        return open_at + max(opening_ms(j) for j in releasing)  # surely fully open
    return open_at + max(opening_wait_ms(nxt, j) for j in releasing)


def regrip_ms_without_overlap(taking, releasing) -> int:
    """The same hand-over done one step after another: close fully, then open fully."""
    return max(closing_ms(j) for j in taking) + max(opening_ms(j) for j in releasing)
