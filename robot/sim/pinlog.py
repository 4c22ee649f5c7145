"""Decode the emulator's pin log into arm moves, gripper pulses and stop timing.

The simavr harness (firmware/harness/harness.c) writes one line per pin change:

    <cycle> <port><bit> <level>      e.g.  "1234567 D4 1"
    <cycle> reset                    the CPU was reset (RAM kept)

Cycles count at 16 MHz from the start of the harness and never go back.
Which pin is what comes from firmware/cube_robot/pins.h, parsed here (the one
source of truth for the pin map; the firmware and the harness include it).

The API a virtual robot needs:

    events = read_log(path)                      # or Emulator.pin_events()
    arm_motions(events)   -> {"R": [Move(start_cycle, end_cycle, steps), ...], ...}
    net_steps(events)     -> {"R": +100, ...}    # signed; positive = DIR high
    (step_events/arm_motions/net_steps take start_cycle/end_cycle to look at a
    window of the log; the DIR levels before the window still count.)
    MotionDecoder().motions(events, start_cycle)  # arm_motions of a growing log, reading only what is new
    servo_pulses(events)  -> {"R": [Pulse(start_cycle, width_us), ...], ...}
    servo_changes(events) -> {"R": [Pulse(...)], ...}  # only where the width changes
    step_events(events)   -> {"R": [(cycle, +1 or -1), ...], ...}
    stop_timing(events, trigger_cycle) -> StopTiming
    action_spans(events)  -> [Span("turn"/"grip", start_cycle, end_cycle, detail), ...]

A positive step count is the DIR pin high, which the firmware uses for a
positive (clockwise seen from outside the face) angle.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ..firmware_header import FIRMWARE_SRC, cpu_hz

PINS_H = FIRMWARE_SRC / "pins.h"
CYCLES_PER_SECOND = cpu_hz()  # defaults.h CPU_HZ
ARMS = ("R", "L", "F", "B")
RESET = "reset"

# Steps further apart than this start a new move.  The firmware's slowest
# step interval is ~32 ms (Timer1's 16 bits at 2 MHz), so 40 ms separates moves.
MOVE_GAP_CYCLES = 40 * CYCLES_PER_SECOND // 1000

_DEFINE = re.compile(r"^\s*#define\s+PIN_(\w+)\s+([A-Z])\s*,\s*(\d+)")


class PinLogError(ValueError):
    """A pin log or pins.h line that cannot be read."""


@dataclass(frozen=True)
class Pin:
    name: str  # e.g. "STEP_R"
    port: str  # "D"
    bit: int  # 4

    @property
    def label(self) -> str:  # as written in the log: "D4"
        return f"{self.port}{self.bit}"


class PinEvent(NamedTuple):
    cycle: int
    pin: str  # "D4", or RESET
    level: int  # 0/1 (-1 for RESET)


class Move(NamedTuple):
    start_cycle: int  # first step's rising edge
    end_cycle: int  # last step's rising edge
    steps: int  # signed


class Pulse(NamedTuple):
    start_cycle: int
    width_us: float


class StopTiming(NamedTuple):
    steps_after: int  # step pulses after the trigger (of the arm with the most)
    last_step_cycle: int | None  # None: no step after the trigger
    stop_us: float  # trigger -> last step (0 when none)


class Span(NamedTuple):
    kind: str  # "turn" or "grip"
    start_cycle: int
    end_cycle: int
    detail: dict  # turn: {arm: steps}; grip: {arm: width_us}

    @property
    def ms(self) -> float:
        return cycles_to_ms(self.end_cycle - self.start_cycle)


def cycles_to_ms(cycles: int) -> float:
    return cycles * 1000.0 / CYCLES_PER_SECOND


def load_pin_map(path: Path = PINS_H) -> dict[str, Pin]:
    """{name: Pin} from the `#define PIN_<NAME> <letter>, <bit>` lines of pins.h."""
    pins = {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        m = _DEFINE.match(line)
        if not m:
            continue
        name, port, bit = m.group(1), m.group(2), int(m.group(3))
        if not 0 <= bit <= 7:
            raise PinLogError(f"{path}:{number}: PIN_{name} has bit {bit}, not 0..7")
        pins[name] = Pin(name, port, bit)
    if not pins:
        raise PinLogError(f"{path}: no `#define PIN_<NAME> <letter>, <bit>` lines")
    return pins


def read_log(path) -> list[PinEvent]:
    """Parse a pin log file; comment lines (#) are skipped."""
    events: list[PinEvent] = []
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        _parse_line(line, events, path, number)
    return events


def _parse_line(line: str, events: list, path, number: int) -> None:
    if not line or line.startswith("#"):
        return
    parts = line.split()
    try:
        if len(parts) == 2 and parts[1] == RESET:
            events.append(PinEvent(int(parts[0]), RESET, -1))
        elif len(parts) == 3:
            events.append(PinEvent(int(parts[0]), parts[1], int(parts[2])))
        else:
            raise ValueError
    except ValueError:
        raise PinLogError(f"{path}:{number}: cannot read pin log line {line!r}") from None


class LogReader:
    """A growing pin log read as it grows: each call parses only the complete lines added since the
    last (a simulation syncs several times per scan view; re-reading the whole log each time cost
    up to ~10 ms a sync, growing with the run)."""

    def __init__(self, path):
        self.path = Path(path)
        self._start_over()

    def _start_over(self) -> None:
        self._events: list[PinEvent] = []
        self._offset = 0  # bytes parsed (whole lines only)
        self._lines = 0

    def events(self) -> list[PinEvent]:
        """Every event so far, up to the last complete line (a copy: the caller may keep it)."""
        with open(self.path, "rb") as log:
            log.seek(0, 2)
            if log.tell() < self._offset:  # a new log (the harness restarted): read it from the start
                self._start_over()
            log.seek(self._offset)
            data = log.read()
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        for line in data[:end].decode().splitlines():
            self._lines += 1
            _parse_line(line, self._events, self.path, self._lines)
        self._offset += end
        return list(self._events)


def _labels(pin_map, prefix: str) -> dict[str, str]:
    """{pin label: arm} for PIN_<prefix>_<arm>."""
    return {pin_map[f"{prefix}_{arm}"].label: arm for arm in ARMS}


def _steps_and_levels(events, pin_map, start_cycle: int, end_cycle: int | None, directions: dict | None):
    """(steps per arm in [start_cycle, end_cycle) with their signs, DIR levels after the events read)."""
    pin_map = pin_map or load_pin_map()
    step_pins = _labels(pin_map, "STEP")
    dir_pins = _labels(pin_map, "DIR")
    direction = dict(directions) if directions else {arm: 0 for arm in ARMS}
    steps: dict[str, list[tuple[int, int]]] = {arm: [] for arm in ARMS}
    for ev in events:
        if end_cycle is not None and ev.cycle >= end_cycle:
            break
        if ev.pin in dir_pins:
            direction[dir_pins[ev.pin]] = ev.level
        elif ev.pin in step_pins and ev.level == 1:
            if ev.cycle >= start_cycle:
                arm = step_pins[ev.pin]
                steps[arm].append((ev.cycle, 1 if direction[arm] else -1))
        elif ev.pin == RESET:
            direction = {arm: 0 for arm in ARMS}
    return steps, direction


def step_events(events, pin_map=None, start_cycle: int = 0, end_cycle: int | None = None,
                directions: dict | None = None) -> dict[str, list[tuple[int, int]]]:
    """Every step (rising edge of a STEP pin) per arm, with its direction (+1/-1), in
    [start_cycle, end_cycle).  Every event given is read, so a DIR level set before the window counts;
    directions: the DIR levels {arm: 0/1} before the first event (default all low, as a log starts)."""
    return _steps_and_levels(events, pin_map, start_cycle, end_cycle, directions)[0]


def dir_levels(events, pin_map=None, directions: dict | None = None) -> dict[str, int]:
    """The DIR level of each arm after the events (starting from `directions`, default all low)."""
    return _steps_and_levels(events, pin_map, 1 << 62, None, directions)[1]


def arm_motions(events, pin_map=None, start_cycle: int = 0, end_cycle: int | None = None,
                gap_cycles: int = MOVE_GAP_CYCLES, directions: dict | None = None) -> dict[str, list[Move]]:
    """Steps grouped into moves per arm (window and directions as in step_events).

    A new move starts at a reset, a change of direction, a pause longer than
    `gap_cycles`, or a pause more than twice the interval before it: within
    one of the firmware's moves an interval grows by at most 1.45x (the end
    of the ramp), while between two moves the arm waits half a step at the
    end of one and half a step at the start of the next (about 2.7x)."""
    resets = [ev.cycle for ev in events if ev.pin == RESET]
    moves: dict[str, list[Move]] = {arm: [] for arm in ARMS}
    for arm, steps in step_events(events, pin_map, start_cycle, end_cycle, directions).items():
        current: list[int] | None = None  # [start, end, signed steps] of the move being read
        last_interval: int | None = None
        for cycle, sign in steps:
            if current is not None:
                gap = cycle - current[1]
                new = (
                    gap > gap_cycles
                    or (last_interval is not None and gap > 2 * last_interval)
                    or (sign > 0) != (current[2] > 0)
                    or any(current[1] < r <= cycle for r in resets)
                )
                if not new:
                    current[1] = cycle
                    current[2] += sign
                    last_interval = gap
                    continue
                moves[arm].append(Move(*current))
            current = [cycle, cycle, sign]
            last_interval = None
        if current:
            moves[arm].append(Move(*current))
    return moves


class MotionDecoder:
    """arm_motions of a growing log (the simulated robot's syncs), reading only the events from
    start_cycle on: the DIR levels of the events before them are carried from the calls before.

    motions(events, start_cycle) equals arm_motions(events, start_cycle=start_cycle) while `events`
    only grows and start_cycle never goes back (else it starts over): the steps before start_cycle
    are not returned either way, a DIR change or reset before it only sets the levels carried, and
    a move is split only at a reset after its last step, which is after start_cycle
    (tests/test_sim_mechanics.py compares the two on a recorded log).  The whole log's decode cost
    grew with the run (~1 ms per 8000 events, every sync)."""

    def __init__(self, pin_map=None):
        self.pin_map = pin_map or load_pin_map()
        self._start_over()

    def _start_over(self) -> None:
        self._levels = {arm: 0 for arm in ARMS}  # the DIR levels after events[:_read]
        self._read = 0
        self._start = 0
        self.cursor = 0  # new_moves: the last step of the moves returned so far
        self._seen = 0  # new_moves: the cycle of the last event of the log as last read

    def motions(self, events, start_cycle: int = 0, gap_cycles: int = MOVE_GAP_CYCLES) -> dict[str, list[Move]]:
        if start_cycle < self._start or len(events) < self._read:
            self._start_over()  # not the same growing log
        self._start = start_cycle
        first = bisect.bisect_left(events, start_cycle, lo=self._read, key=lambda event: event.cycle)
        self._levels = dir_levels(events[self._read:first], self.pin_map, self._levels)
        self._read = first
        return arm_motions(events[first:], self.pin_map, start_cycle, gap_cycles=gap_cycles, directions=self._levels)

    def new_moves(self, events) -> dict[str, list[Move]]:
        """The moves after those returned by the last call: arm_motions(events, start_cycle=cursor + 1).
        It starts reading at the end of the log as last read (no step lies between the last move and
        it, or it would have been a move), so a log that grows without steps is not read again."""
        moves = self.motions(events, max(self.cursor + 1, self._seen))  # events at _seen may be new
        self.cursor = max([self.cursor] + [m.end_cycle for arm_moves in moves.values() for m in arm_moves])
        if events:
            self._seen = events[-1].cycle
        return moves


def net_steps(events, pin_map=None, start_cycle: int = 0, end_cycle: int | None = None) -> dict[str, int]:
    """Signed steps per arm (window as in step_events)."""
    return {arm: sum(s for _, s in steps)
            for arm, steps in step_events(events, pin_map, start_cycle, end_cycle).items()}


def servo_pulses(events, pin_map=None) -> dict[str, list[Pulse]]:
    """Every complete high pulse on each gripper's servo pin."""
    pin_map = pin_map or load_pin_map()
    servo_pins = _labels(pin_map, "SERVO")
    rise: dict[str, int] = {}
    pulses: dict[str, list[Pulse]] = {arm: [] for arm in ARMS}
    for ev in events:
        if ev.pin == RESET:
            rise.clear()
        elif ev.pin in servo_pins:
            arm = servo_pins[ev.pin]
            if ev.level == 1:
                rise[arm] = ev.cycle
            elif arm in rise:
                start = rise.pop(arm)
                pulses[arm].append(Pulse(start, (ev.cycle - start) * 1e6 / CYCLES_PER_SECOND))
    return pulses


def servo_changes(events, pin_map=None, tolerance_us: float = 10.0) -> dict[str, list[Pulse]]:
    """The first pulse of each new width per gripper (the commanded positions over time)."""
    return width_changes(servo_pulses(events, pin_map), tolerance_us)


def width_changes(pulses: dict, tolerance_us: float = 10.0) -> dict[str, list[Pulse]]:
    """Of each gripper's pulses (servo_pulses), the first of each new width (the first pulse counts as one)."""
    changes: dict[str, list[Pulse]] = {}
    for arm, arm_pulses in pulses.items():
        out: list[Pulse] = []
        for p in arm_pulses:
            if not out or abs(p.width_us - out[-1].width_us) > tolerance_us:
                out.append(p)
        changes[arm] = out
    return changes


def stop_timing(events, trigger_cycle: int, pin_map=None) -> StopTiming:
    """Steps and time from an e-stop trigger (a harness `press` cycle, or when
    `!` was sent) to the last step pulse after it.  `steps_after` counts the
    steps of the arm that made the most."""
    per_arm = [[c for c, _ in steps] for steps in step_events(events, pin_map, start_cycle=trigger_cycle).values()]
    after = [c for cycles in per_arm for c in cycles]
    if not after:
        return StopTiming(0, None, 0.0)
    last = max(after)
    return StopTiming(max(len(c) for c in per_arm), last, (last - trigger_cycle) * 1e6 / CYCLES_PER_SECOND)


def action_spans(events, pin_map=None, gap_cycles: int = MOVE_GAP_CYCLES) -> list[Span]:
    """What the pins show of each action, in time order (for the bench):
    a turn spans its first to last step (moves of several arms that overlap
    are one turn); a grip spans from the first pulse of a new width to the
    first pulse of the next new width on the other pair (its second phase), or
    to its own first pulse when only one pair changed.  The settle time after
    the last change and the half step before the first and after the last
    step are not visible on the pins."""
    moves = sorted(
        (m.start_cycle, m.end_cycle, arm, m.steps)
        for arm, ms in arm_motions(events, pin_map, gap_cycles=gap_cycles).items() for m in ms
    )
    spans: list[Span] = []
    for start, end, arm, steps in moves:
        if spans and spans[-1].kind == "turn" and start <= spans[-1].end_cycle:
            last = spans[-1]
            spans[-1] = Span("turn", last.start_cycle, max(last.end_cycle, end), {**last.detail, arm: steps})
        else:
            spans.append(Span("turn", start, end, {arm: steps}))
    changes = sorted(
        (p.start_cycle, arm, p.width_us) for arm, ps in servo_changes(events, pin_map).items() for p in ps
    )
    # Changes within one servo frame (20 ms) belong together; a grip is two
    # such groups (close one pair, then open the other) when they follow each other.
    frame = 20 * CYCLES_PER_SECOND // 1000
    groups: list[tuple[int, dict[str, float]]] = []  # (first cycle, {arm: new width})
    for cycle, arm, width in changes:
        if groups and cycle - groups[-1][0] < frame:
            groups[-1][1][arm] = width
        else:
            groups.append((cycle, {arm: width}))
    pairs = ({"R", "L"}, {"F", "B"})
    i = 0
    while i < len(groups):
        cycle, widths = groups[i]
        nxt = groups[i + 1] if i + 1 < len(groups) else None
        if nxt and any(set(widths) <= p for p in pairs) and any(set(nxt[1]) <= p for p in pairs) \
                and set(widths).isdisjoint(nxt[1]):
            spans.append(Span("grip", cycle, nxt[0], {**widths, **nxt[1]}))
            i += 2
        else:
            spans.append(Span("grip", cycle, cycle, dict(widths)))
            i += 1
    return sorted(spans, key=lambda s: s.start_cycle)
