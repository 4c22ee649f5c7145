"""The mock firmware's regrip schedule: the overlap firmware/cube_robot/motion.cpp runs, timed by robot/regrip.py.

A part robot/sim/mock_firmware.py MockFirmware holds (`mock.regrip`).  The same rules as the firmware:
- during a TURN (or JOG) of the releasing pair's arms, each moving a quarter or a half turn, the
  GRIP behind it tells its pair to close `close_lead_ms` before the turn ends, if that GRIP was
  queued by then (else no overlap: it closes when it starts); its jaws must be fully open by then,
  counted in whole servo frames since they were told to open (regrip.open_frames);
- the releasing pair is told to open once the taking pair is surely closed (its latest start, a
  frame and the closed width, and the travel after its command); the GRIP is done `opening_wait_ms`
  later if a TURN of the taking pair's arms (each a quarter or a half) is queued behind it at that
  moment, else once the jaws are surely open (`opening_ms`);
- any other move gets no overlap; CLOSE takes `closing_ms`, OPEN `opening_ms`.
Times are on the board's clock (ms); the mock moves nothing between these moments.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Collection

from .. import firmware_header
from .. import regrip
from ..config_types import MotionConfig

PAIR_ARMS = firmware_header.ARM_PAIRS
ARMS = "".join(arm for arms in PAIR_ARMS.values() for arm in arms)
FRAME_MS = regrip.SERVO_FRAME_MS


def other_pair(pair: str) -> str:
    return next(name for name in PAIR_ARMS if name != pair)


def move_steps(command: str, steps_per_rev: int) -> dict[str, int]:
    """|steps| per moving arm of a TURN or JOG command."""
    name, *args = command.split()
    if name == "JOG":
        return {args[0]: abs(int(args[1]))}
    if name == "TURN":
        return {a[0]: abs(int(a[1:])) * steps_per_rev // 360 for a in args}
    return {}


class MockRegrip:
    """The board's regrip schedule, from its settings (`motion`) and each gripper's widths."""

    def __init__(self, motion: Callable[[], MotionConfig], gripper_us: Callable[[str], tuple[int, int]]):
        self._motion, self._gripper_us = motion, gripper_us
        self.opened_ms: dict[str, float] = {arm: -math.inf for arm in ARMS}  # each gripper's last open command

    def jaws(self, arm: str) -> regrip.Jaws:
        m = self._motion()
        open_us, closed_us = self._gripper_us(arm)
        return regrip.Jaws(open_us, closed_us, m.servo_speed_us_per_ms, m.jaw_clear_pct / 100,
                           m.jaw_contact_pct / 100, m.jaw_open_gap_mm)

    def closing_ms(self, arms) -> int:
        """Command to surely there for all of `arms` (0: none)."""
        return max((regrip.closing_ms(self.jaws(arm)) for arm in arms), default=0)

    def opening_ms(self, arms) -> int:
        """Command to surely open for all of `arms` (0: none)."""
        return max((regrip.opening_ms(self.jaws(arm)) for arm in arms), default=0)

    def kind(self, command: str, allowed: Collection[str]) -> tuple[int, ...] | None:
        """The arms' steps of a move that overlaps (only `allowed` arms move, each a quarter or a half
        turn: regrip.cpp regrip_turn_kind), else None."""
        m = self._motion()
        steps = move_steps(command, m.steps_per_rev)
        if not steps or any(arm not in allowed for arm in steps) or \
                any(s not in (m.steps_per_rev // 4, m.steps_per_rev // 2) for s in steps.values()):
            return None
        return tuple(sorted(steps.values()))

    def reach(self, arm_steps: tuple[int, ...]) -> regrip.TurnReach:
        m = self._motion()
        return _reach(arm_steps, m.steps_per_rev, m.max_speed_steps_per_s, m.accel_steps_per_s2, m.cube_mm)

    def early_close_at(self, turn: str, turn_start_ms: float, grip_pair: str, grippers: dict) -> float | None:
        """When (board ms) the GRIP to `grip_pair` behind `turn` tells its pair to close, or None (no overlap)."""
        n = self.kind(turn, PAIR_ARMS[other_pair(grip_pair)])
        taking = PAIR_ARMS[grip_pair]
        closing = [arm for arm in taking if grippers[arm] != "closed"]
        if n is None or not closing:
            return None
        prev = self.reach(n)
        lead = min(regrip.close_lead_ms(prev, self.jaws(arm)) for arm in taking)
        at = turn_start_ms + prev.duration_ms - lead
        opened = max(self.opened_ms[arm] for arm in taking)  # the firmware keeps the pair's last open command
        for arm in closing:  # fully open first: whole frames since its open command
            at = max(at, opened + regrip.open_frames(self.jaws(arm)) * FRAME_MS)
        return at

    def opening_wait_ms(self, grip_pair: str, next_command: str | None) -> int:
        """From the command opening the releasing pair to the next action's start."""
        releasing = PAIR_ARMS[other_pair(grip_pair)]
        n = self.kind(next_command, PAIR_ARMS[grip_pair]) if next_command else None
        if n is None:
            return self.opening_ms(releasing)
        nxt = self.reach(n)
        return max(regrip.opening_wait_ms(nxt, self.jaws(arm)) for arm in releasing)


@functools.lru_cache(maxsize=32)
def _reach(arm_steps: tuple[int, ...], steps_per_rev: int, max_speed: int, accel: int,
           cube_mm: int) -> regrip.TurnReach:
    return regrip.turn_reach(list(arm_steps), steps_per_rev, max_speed, accel, cube_mm)


# The MockFirmware's GRIP as it runs (`mock`: its queue, grippers and clock).

def start_grip(mock: Any, command: str) -> float:
    """A GRIP starts: its pair closes (or began closing during the turn before it); returns the ms
    from its start to the end of that phase."""
    pair = command.split()[1]
    taking = PAIR_ARMS[pair]
    closing = [arm for arm in taking if mock.arms.grippers[arm] != "closed"]
    at = None
    if mock._turn and not mock._early_missed:
        at = mock.regrip.early_close_at(mock._turn[0], mock._turn[1], pair, mock.arms.grippers)
    for arm in closing:
        mock.arms.grippers[arm] = "closed"
    mock._grip_phase = 0
    if at is not None and mock._turn is not None:
        n = mock.regrip.kind(mock._turn[0], PAIR_ARMS[other_pair(pair)])
        turn_end = mock._turn[1] + mock.regrip.reach(n or (1,)).duration_ms
        mock._grip_ms = max(0.0, at + mock.regrip.closing_ms(taking) - turn_end)
    else:
        mock._grip_ms = float(mock.regrip.closing_ms(taking)) if closing else 0.0
    mock._turn = None
    return mock._grip_ms


def open_releasing(mock: Any, now: float) -> None:
    """The running GRIP's pair surely holds: the other pair opens; it is done when the next turn may start."""
    seq, command = mock._running[0], mock._running[1]
    pair = command.split()[1]
    opening = [arm for arm in PAIR_ARMS[other_pair(pair)] if mock.arms.grippers[arm] != "open"]
    mock._grip_phase = 1
    mock.arms.gripper_halfway(command)
    wait = 0
    if opening:
        mock.regrip.opened_ms.update({arm: mock.clock_ms() for arm in opening})
        wait = mock.regrip.opening_wait_ms(pair, mock._queue[0][1] if mock._queue else None)
    mock._grip_ms += wait
    mock._running = (seq, command, mock._grip_ms, now + wait / 1000 * mock.time_scale)


def closing_early(mock: Any, now_ms: float) -> list[str]:
    """The grippers told to close during the running turn by the GRIP behind it (by now_ms)."""
    if not (mock._running and mock._turn and mock._queue and mock._running[1] == mock._turn[0]) \
            or mock._early_missed or not mock._queue[0][1].startswith("GRIP"):
        return []
    pair = mock._queue[0][1].split()[1]
    at = mock.regrip.early_close_at(mock._turn[0], mock._turn[1], pair, mock.arms.grippers)
    return [] if at is None or now_ms < at else [a for a in PAIR_ARMS[pair] if mock.arms.grippers[a] != "closed"]
