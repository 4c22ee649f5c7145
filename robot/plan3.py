"""The four-arm 3x3x3 robot: its model (from config.yaml's `robot3` section) and its plans.

A 3x3x3's middle layers are not gripped, so the 2x2x2 rule "one pair holds,
the other is open" does not carry over.  Here (docs/robot3.md has a figure):

  * every arm is closed on its face by default; each gripper has an angle mod
    180 (0 or 90); a closed gripper at 90 blocks turns of the other pair's
    layers (its jaws stand across them);
  * TURN     one arm, or both arms of one pair, turn their layers while the
             other pair is closed and both its grippers are at 0;
  * TILT     the other pair opens, both arms of this pair turn 90 the same way
             (the whole cube rotates: this is how U and D reach an arm), the
             other pair closes;
  * RESTORE  an arm (or both arms of one pair) opens, turns back to 0, closes.

A plan is a list of primitive ops, the same JSON form as the 2x2x2 plans:
  {"op": "open",  "arms": ["R", "L"]}          those grippers open
  {"op": "close", "arms": ["R", "L"]}          those grippers close
  {"op": "turn",  "arms": {"R": 90, "L": -90}} arms of one pair turn (a closed arm
                                               turns its layer, an open arm turns freely)
  {"op": "tilt",  "arms": {"F": 90, "B": -90}} both arms of one pair turn the same
                                               way in space, turning the whole cube
Angles are clockwise-positive seen from outside the arm's face ({"R": 90} is
the move R in the robot frame).  Durations are the firmware's, from the settings
it is sent (the same four arms and motion profile as the 2x2x2 robot): a turn or
tilt as long as its slowest arm (robot.timing, null = derived from `motion`:
robot/motion.py robot_timing, as the 2x2x2's turns); an open or close as long as
the firmware's OPEN / CLOSE wait in 3x3x3 mode: a servo frame, the new width's
pulse and the slowest named jaw's travel (robot/regrip.py opening_ms /
closing_ms, each arm's own widths).  Nothing overlaps.  The clock starts with
every arm closed at 0 and stops when the cube is solved.

This module is the one source of truth for the arm layout, the op costs and
what a macro action (TURN / TILT / RESTORE) expands to.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import regrip
from .config_types import Config
from .cube import FACE_FRAMES, _rotation_matrix
from .motion import arm_jaws, robot_timing

QUARTER, HALF = 90, 180


def normalise_angle(angle: int) -> int:
    """Any multiple of 90 -> one of 0, 90, 180, -90."""
    if angle % 90:
        raise ValueError(f"angle {angle} is not a multiple of 90")
    return {0: 0, 90: 90, 180: 180, 270: -90}[angle % 360]


def normal(face: str) -> np.ndarray:
    return FACE_FRAMES[face][0]


def rotation(face: str, angle: int) -> np.ndarray:
    """The rotation of the whole cube when the arm on `face` turns by `angle` (with its partner)."""
    return _rotation_matrix(normal(face), (normalise_angle(angle) // 90) % 4)


@dataclass(frozen=True)
class Robot3Profile:
    """Arm layout (config.yaml: robot3) and durations (the firmware's, from robot.timing and `motion`)."""

    pairs: tuple  # ((name, (face, opposite face)), (name, (face, opposite face)))
    tilt_angles: tuple  # angles the first arm of a pair may tilt the cube by, e.g. (90, -90)
    quarter_turn_ms: int
    half_turn_ms: int
    open_ms: int  # a gripper with the common widths (motion.servo_open_us / servo_closed_us) opens
    close_ms: int  # ... closes
    # ((arm, open ms, close ms), ...): a gripper whose own widths (motion.arms.<arm>) make other times.
    grippers: tuple = ()

    @classmethod
    def from_config(cls, config: Config) -> "Robot3Profile":
        section = config.robot3
        timing = robot_timing(config)  # the 2x2x2's turn times: the same arms, the same firmware ramp
        common = arm_jaws(config.motion, None)
        open_ms, close_ms = regrip.opening_ms(common), regrip.closing_ms(common)
        own = []
        for faces in section.pairs.values():
            for arm in faces:
                jaws = arm_jaws(config.motion, arm)
                times = (regrip.opening_ms(jaws), regrip.closing_ms(jaws))
                if times != (open_ms, close_ms):
                    own.append((arm, *times))
        return cls(
            pairs=tuple((name, tuple(faces)) for name, faces in section.pairs.items()),
            tilt_angles=tuple(sorted({normalise_angle(a) for a in section.tilt_angles})),
            quarter_turn_ms=timing["quarter_turn_ms"],
            half_turn_ms=timing["half_turn_ms"],
            open_ms=open_ms,
            close_ms=close_ms,
            grippers=tuple(sorted(own)),
        )

    @property
    def arms(self) -> tuple:
        """The four arm faces: both arms of the first pair, then of the second."""
        return tuple(face for _, faces in self.pairs for face in faces)

    @property
    def pair_names(self) -> tuple:
        return tuple(name for name, _ in self.pairs)

    def faces_of(self, pair: str) -> tuple:
        return dict(self.pairs)[pair]

    def pair_of(self, arm: str) -> str:
        return next(name for name, faces in self.pairs if arm in faces)

    def other_pair(self, pair: str) -> str:
        return next(name for name in self.pair_names if name != pair)

    def turn_ms(self, angle: int) -> int:
        return self.half_turn_ms if abs(normalise_angle(angle)) == HALF else self.quarter_turn_ms

    def open_ms_of(self, arms) -> int:
        """OPEN of these grippers: the firmware waits for the slowest."""
        own = {arm: ms for arm, ms, _ in self.grippers}
        return max(own.get(arm, self.open_ms) for arm in arms)

    def close_ms_of(self, arms) -> int:
        own = {arm: ms for arm, _, ms in self.grippers}
        return max(own.get(arm, self.close_ms) for arm in arms)

    def op_cost(self, op: dict) -> int:
        kind = op["op"]
        if kind == "open":
            return self.open_ms_of(op["arms"])
        if kind == "close":
            return self.close_ms_of(op["arms"])
        if kind in ("turn", "tilt"):
            return max(self.turn_ms(a) for a in op["arms"].values())
        raise ValueError(f"unknown plan op {op!r}")

    def plan_cost(self, ops) -> int:
        return sum(self.op_cost(op) for op in ops)

    def describe(self) -> dict:
        return {
            "pairs": {name: list(faces) for name, faces in self.pairs},
            "tilt_angles": list(self.tilt_angles),
            "quarter_turn_ms": self.quarter_turn_ms, "half_turn_ms": self.half_turn_ms,
            "open_ms": self.open_ms, "close_ms": self.close_ms,
            "grippers": {arm: {"open_ms": o, "close_ms": c} for arm, o, c in self.grippers},
        }

    # Macro actions -> primitive ops (the one place they are defined).

    def turn_ops(self, arms: dict) -> list:
        return [{"op": "turn", "arms": dict(arms)}]

    def tilt_ops(self, pair: str, angle: int) -> list:
        """TILT: the other pair opens, this pair turns the cube (first arm by `angle`), the other closes."""
        first, second = self.faces_of(pair)
        other = list(self.faces_of(self.other_pair(pair)))
        angle = normalise_angle(angle)
        return [{"op": "open", "arms": other},
                {"op": "tilt", "arms": {first: angle, second: normalise_angle(-angle)}},
                {"op": "close", "arms": list(other)}]

    def restore_ops(self, arms) -> list:
        """RESTORE: the arms (one, or both of one pair) open, turn back 90 to 0, close."""
        arms = list(arms)
        return [{"op": "open", "arms": arms},
                {"op": "turn", "arms": {arm: -QUARTER for arm in arms}},
                {"op": "close", "arms": list(arms)}]

    def tilt_ms(self, angle: int, pair: str | None = None) -> int:
        """A TILT by `pair` (None: with grippers of the common widths): the other pair opens and closes."""
        other = self.faces_of(self.other_pair(pair)) if pair is not None else ()
        return ((self.open_ms_of(other) if other else self.open_ms) + self.turn_ms(angle)
                + (self.close_ms_of(other) if other else self.close_ms))

    def restore_ms(self, arms=()) -> int:
        """A RESTORE of `arms` (none named: grippers of the common widths)."""
        return ((self.open_ms_of(arms) if arms else self.open_ms) + self.quarter_turn_ms
                + (self.close_ms_of(arms) if arms else self.close_ms))


@dataclass
class Plan3:
    """A 3x3x3 robot plan: the face moves (cube frame), the ops, their cost, the search time."""

    facelets: str
    moves: str  # face moves in the cube's own frame (centre colours), standard notation
    ops: list  # primitive ops (dicts, see the module docstring)
    cost_ms: int
    solve_ms: float = 0.0

    @property
    def length(self) -> int:
        return len(self.moves.split())

    def to_json(self) -> dict:
        return {"facelets": self.facelets, "ok": True, "puzzle": "3x3x3", "metric": "robot", "cost_ms": self.cost_ms,
                "plan": self.ops, "moves": self.moves, "length": self.length,
                "solve_ms": round(self.solve_ms, 3)}



def describe(plan: Plan3, profile: Robot3Profile) -> str:
    """Human-readable listing of a 3x3x3 robot plan with a running clock (for `solve` without --json)."""
    lines = [f"cube   {plan.facelets}",
             f"plan   {plan.cost_ms} ms machine time (SIMULATED model), {len(plan.ops)} ops, "
             f"{plan.length} face moves (found in {plan.solve_ms:.0f} ms)"]
    clock = 0
    for op in plan.ops:
        clock += profile.op_cost(op)
        arms = op["arms"]
        what = (f"{op['op']:5} " + " ".join(arms) if op["op"] in ("open", "close")
                else f"{op['op']:5} " + " + ".join(f"{arm} {angle:+d}\u00b0" for arm, angle in arms.items()))
        lines.append(f"  {clock:5d}  {what}")
    lines.append(f"moves  {plan.moves or '(already solved)'}")
    return "\n".join(lines) + "\n"
