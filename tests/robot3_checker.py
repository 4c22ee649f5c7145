"""An independent checker of four-arm 3x3x3 robot plans (tests and bench/solver3_robot.py use it).

It replays a plan's primitive ops on a sticker model: the 54 facelet colours
(cube3's facelet layout and geometry, robot frame) and four arms, each open or
closed with a gripper angle mod 180.  It shares nothing with the converter but
the durations in the profile: it rejects any illegal op, then checks that the
cube ends solved (in any orientation), every arm closed, and that the summed
durations equal the plan's claimed cost.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from robot.cube import FACE_FRAMES, _rotation_matrix
from robot.solver3 import cube3


class IllegalPlan(AssertionError):
    """A plan the robot cannot execute, or whose claims are false."""


_INDEX = {g: i for i, g in enumerate(cube3.GEOMETRY)}


@lru_cache(maxsize=None)
def _source(face: str, angle: int, whole_cube: bool) -> np.ndarray:
    """source[i] = the sticker that moves to position i when the layer on `face` (or the whole cube) turns."""
    n = FACE_FRAMES[face][0]
    rot = _rotation_matrix(n, (angle // 90) % 4)
    out = np.arange(len(cube3.GEOMETRY))
    for i, (p, normal) in enumerate(cube3.GEOMETRY):
        if whole_cube or np.dot(p, n) > 0:
            out[_INDEX[(tuple(int(v) for v in rot @ p), tuple(int(v) for v in rot @ normal))]] = i
    return out


def _turn_stickers(colours, face, angle, whole_cube):
    """Stickers after the layer (or, whole_cube, everything) on `face` turns by `angle` (clockwise from outside)."""
    return colours[_source(face, angle, whole_cube)]


class RobotReplay:
    """The robot and its cube, stepped one op at a time."""

    def __init__(self, facelets: str, profile):
        self.pairs = {name: tuple(faces) for name, faces in profile.pairs}
        self.durations = {"quarter": profile.quarter_turn_ms, "half": profile.half_turn_ms,
                          "open": profile.open_ms, "close": profile.close_ms}
        # Grippers with their own widths (motion.arms): an OPEN / CLOSE waits for the slowest named.
        self.own = {arm: {"open": o, "close": c} for arm, o, c in profile.grippers}
        centres = [facelets[9 * f + 4] for f in range(6)]
        self.colours = np.array([centres.index(c) for c in facelets])
        self.closed = {arm: True for faces in self.pairs.values() for arm in faces}
        self.angle = {arm: 0 for arm in self.closed}  # mod 180
        self.elapsed = 0

    def _pair(self, arms, i):
        pairs = {name for name, faces in self.pairs.items() for arm in arms if arm in faces}
        if not arms or any(arm not in self.closed for arm in arms):
            raise IllegalPlan(f"op {i}: unknown or no arms {list(arms)}")
        if len(pairs) != 1:
            raise IllegalPlan(f"op {i}: arms {list(arms)} are not of one pair")
        return pairs.pop()

    def _other(self, pair):
        return next(faces for name, faces in self.pairs.items() if name != pair)

    def _move_ms(self, angles):
        for a in angles:
            if a not in (90, -90, 180, -180):
                raise IllegalPlan(f"arm angle {a} is not a quarter or half turn")
        return max(self.durations["half" if abs(a) == 180 else "quarter"] for a in angles)

    def step(self, i, op):
        kind, arms = op.get("op"), op.get("arms")
        if kind in ("open", "close"):
            self._pair(arms, i) if len(arms) > 1 else None
            for arm in arms:
                if arm not in self.closed or self.closed[arm] != (kind == "open"):
                    raise IllegalPlan(f"op {i}: {kind} arm {arm} that is not {'closed' if kind == 'open' else 'open'}")
                self.closed[arm] = kind == "close"
            if all(not all(self.closed[a] for a in faces) for faces in self.pairs.values()):
                raise IllegalPlan(f"op {i}: no pair is fully closed: the cube would fall")
            self.elapsed += max((self.own.get(arm, self.durations)[kind] for arm in arms), default=self.durations[kind])
        elif kind == "turn":
            pair = self._pair(list(arms), i)
            for arm, angle in arms.items():
                if self.closed[arm]:
                    holders = self._other(pair)
                    if not all(self.closed[h] for h in holders):
                        raise IllegalPlan(f"op {i}: arm {arm} turns its layer while the holding pair is open")
                    if any(self.angle[h] for h in holders):
                        raise IllegalPlan(f"op {i}: arm {arm} turns its layer while a gripper of the other "
                                          "pair at 90 blocks it")
                    self.colours = _turn_stickers(self.colours, arm, angle, whole_cube=False)
            self.elapsed += self._move_ms(arms.values())
            for arm, angle in arms.items():
                self.angle[arm] = (self.angle[arm] + angle) % 180
        elif kind == "tilt":
            pair = self._pair(list(arms), i)
            first, second = self.pairs[pair]
            if set(arms) != {first, second} or arms[first] != -arms[second]:
                raise IllegalPlan(f"op {i}: a tilt turns both arms of a pair the same way, got {arms}")
            if not (self.closed[first] and self.closed[second]):
                raise IllegalPlan(f"op {i}: tilt by pair {pair} while it does not grip the cube")
            if any(self.closed[a] for a in self._other(pair)):
                raise IllegalPlan(f"op {i}: tilt while the other pair is closed")
            self.colours = _turn_stickers(self.colours, first, arms[first], whole_cube=True)
            self.elapsed += self._move_ms(arms.values())
            for arm, angle in arms.items():
                self.angle[arm] = (self.angle[arm] + angle) % 180
        else:
            raise IllegalPlan(f"op {i}: unknown op {op!r}")

    def solved(self) -> bool:
        return all(len(set(self.colours[9 * f:9 * f + 9])) == 1 for f in range(6))


def check_plan(facelets: str, ops, claimed_cost_ms: int, profile) -> int:
    """Replay `ops`; raise IllegalPlan unless legal, solved, all arms closed, cost as claimed."""
    robot = RobotReplay(facelets, profile)
    for i, op in enumerate(ops):
        robot.step(i, op)
    if not robot.solved():
        raise IllegalPlan("the plan does not solve the cube")
    if not all(robot.closed.values()):
        raise IllegalPlan(f"arms left open: {[a for a, c in robot.closed.items() if not c]}")
    if robot.elapsed != claimed_cost_ms:
        raise IllegalPlan(f"the plan claims {claimed_cost_ms} ms but its ops take {robot.elapsed} ms")
    return robot.elapsed
