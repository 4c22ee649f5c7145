"""The virtual 3x3x3 on the four arms (SIMULATED): moved only by what the arms physically do.

The same events drive it as drive the 2x2x2's robot/sim/virtual_robot.py: a gripper closes or
opens (`set_gripper`, from a servo pulse's width), an arm turns by some steps (`turn_arm`, from the
step pulses); the emulator's pin log (robot/sim/robot_sim.py decodes it) or a mock's executed ops
(`apply_op`, the plan ops of robot/plan3.py) feed it.  Its mechanics are docs/robot3.md's model:

  * a closed gripper's arm that turns turns the outer layer of its face; the middle slice is held
    by the other pair, which must be closed with both grippers at 0 (a gripper at 90 stands across
    the turning layer; an open one leaves the middle slice unsupported): otherwise the cube jams;
  * both arms of a pair turning the same way in space at once, the other pair open, turn the whole
    cube (a tilt); a tilt while a gripper of the other pair is closed jams (that gripper holds the
    cube's face still).  From the pulses alone a tilt sent with the other pair fully closed at 0
    cannot be told from two layer turns, and is carried out as those (a plan's `tilt` op through
    `apply_op` knows what was meant, and jams);
  * a gripper closing on an arm that stands between quarter positions jams; so does opening the
    last gripper that held the cube (it falls).

Every jam is a `Jam3` carrying its evidence (the rule, the arm, its angle and gripper state, every
other gripper's, the time), as the 2x2x2's jams name the arms involved.

Not modelled (a rigid simulation cannot show it): a loose cube's middle slice slipping during a
tilt (it is carried along exactly), a layer turned short of a quarter by a slipping jaw, and the
cube's own friction.  `NOT_MODELLED` says so for a run's report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..cube import FACE_FRAMES
from ..plan3 import Robot3Profile, rotation
from ..solver3 import cube3
from .virtual_robot import MechanicalError

NOT_MODELLED = ("SIMULATED 3x3x3 mechanics are rigid: a loose cube's middle slice slipping during a tilt, "
                "a jaw slipping on a layer and the cube's friction are not modelled")
TILT_WINDOW_MS = 20.0  # both arms of a tilting pair start within this (the firmware starts them in one ISR)


class Jam3(MechanicalError):
    """A jam of the virtual 3x3x3, with its evidence."""

    def __init__(self, rule: str, message: str, evidence: dict):
        super().__init__(f"{message} [{describe_evidence(evidence)}]")
        self.rule = rule  # "blocked", "unsupported", "tilt-closed", "between-positions", "dropped"
        self.evidence = evidence


def describe_evidence(evidence: dict) -> str:
    arms = ", ".join(f"{arm} {state}" for arm, state in evidence["grippers"].items())
    when = "time unknown" if evidence.get("at_ms") is None else f"at {evidence['at_ms']:.1f} ms"
    return f"arm {evidence['arm']} {evidence['what']}, {when}; grippers: {arms}"


@lru_cache(maxsize=None)
def sticker_source(face: str, angle: int, whole_cube: bool) -> np.ndarray:
    """source[i] = the sticker that moves to place i when the layer on `face` (or the whole cube)
    turns by `angle` (clockwise seen from outside the face)."""
    normal = FACE_FRAMES[face][0]
    return cube3._facelet_map(rotation(face, angle), lambda p: whole_cube or int(p @ normal) > 0)


@dataclass
class _Pending:
    """A closed arm's turn with the other pair open: a tilt if its partner turns the same way now."""

    arm: str
    steps: int
    at_ms: float | None
    evidence: dict


@dataclass
class VirtualRobot3:
    profile: Robot3Profile
    facelets_now: str  # the 54 facelets in the robot frame (cube3 layout)
    steps_per_rev: int = 400
    closed: dict = field(default_factory=dict)  # arm -> gripper closed?  (every arm closed: the model's start)
    arm_steps: dict = field(default_factory=dict)  # arm -> steps turned since the start (render_arms reads it)
    history: list = field(default_factory=list)  # ("R", 90) layer turns and ("tilt", "R", 90) tilts, in order
    jams: list = field(default_factory=list)  # every Jam3 raised (the first one leaves the cube jammed)
    _pending: _Pending | None = None

    def __post_init__(self):
        for arm in self.profile.arms:
            self.closed.setdefault(arm, True)
            self.arm_steps.setdefault(arm, 0)

    @property
    def quarter(self) -> int:
        return self.steps_per_rev // 4

    def off_quarter(self, arm: str) -> int:
        return self.arm_steps[arm] % self.quarter

    def gripper_angle(self, arm: str) -> int:
        """0 or 90 (mod 180) for an arm on a quarter position; -1 between positions."""
        if self.off_quarter(arm):
            return -1
        return 90 * ((self.arm_steps[arm] // self.quarter) % 2)

    def other_arms(self, arm: str) -> tuple:
        return self.profile.faces_of(self.profile.other_pair(self.profile.pair_of(arm)))

    def partner(self, arm: str) -> str:
        return next(a for a in self.profile.faces_of(self.profile.pair_of(arm)) if a != arm)

    # -- evidence -------------------------------------------------------------

    def _state(self, arm: str) -> str:
        angle = self.gripper_angle(arm)
        where = f"{self.off_quarter(arm)} steps past a quarter" if angle < 0 else f"at {angle}"
        return f"{'closed' if self.closed[arm] else 'open'} {where}"

    def _evidence(self, arm: str, what: str, at_ms: float | None) -> dict:
        return {"arm": arm, "what": what, "at_ms": at_ms,
                "angle_deg": self.arm_steps[arm] * 360.0 / self.steps_per_rev,
                "grippers": {a: self._state(a) for a in self.profile.arms}}

    def _jam(self, rule: str, message: str, evidence: dict) -> Jam3:
        jam = Jam3(rule, message, evidence)
        self.jams.append(jam)
        return jam

    # -- the events -----------------------------------------------------------

    def set_gripper(self, arm: str, closed: bool, at_ms: float | None = None) -> None:
        self._flush()
        if closed == self.closed[arm]:
            return
        if closed and self.off_quarter(arm):
            raise self._jam("between-positions", f"gripper {arm} closed with its arm {self.off_quarter(arm)} steps "
                            "past a quarter position: the cube is left between positions",
                            self._evidence(arm, "closing", at_ms))
        if not closed and not self._pair_closed_without(arm):
            raise self._jam("dropped", f"gripper {arm} opened while no other pair held the cube: it falls",
                            self._evidence(arm, "opening", at_ms))
        self.closed[arm] = closed

    def _pair_closed_without(self, arm: str) -> bool:
        """Some pair stays fully closed when `arm` opens."""
        return any(all(self.closed[a] for a in faces) for _, faces in self.profile.pairs if arm not in faces)

    def turn_arm(self, arm: str, steps: int, at_ms: float | None = None) -> None:
        """An arm turned by `steps` (signed: positive = clockwise seen from outside its face)."""
        pending = self._pending
        if pending is not None and arm == self.partner(pending.arm) and steps == -pending.steps and (
                pending.at_ms is None or at_ms is None or abs(at_ms - pending.at_ms) <= TILT_WINDOW_MS):
            self._pending = None
            self._tilt(pending, arm, at_ms)
            return
        self._flush()
        if not self.closed[arm]:  # an open gripper turns freely, anywhere
            self.arm_steps[arm] += steps
            return
        if steps % self.quarter or self.off_quarter(arm):
            raise self._jam("between-positions", f"arm {arm} turned {steps} steps holding its layer, not a whole "
                            f"number of quarter turns ({self.quarter} steps): the cube is left between positions",
                            self._evidence(arm, f"turning {steps} steps", at_ms))
        others = self.other_arms(arm)
        evidence = self._evidence(arm, f"turning {steps * 360 // self.steps_per_rev:+d} degrees", at_ms)
        if all(self.closed[a] for a in others):
            blocking = [a for a in others if self.gripper_angle(a) != 0]
            if blocking:
                raise self._jam("blocked", f"arm {arm} turned its layer while gripper {', '.join(blocking)} of the "
                                "other pair stood at 90 across it: jammed", evidence)
            self._turn_layer(arm, steps)
            return
        # The other pair is (partly) open: a tilt if the partner turns the same way at once, else a jam.
        self._pending = _Pending(arm, steps, at_ms, evidence)
        self.arm_steps[arm] += steps

    def _turn_layer(self, arm: str, steps: int) -> None:
        self.arm_steps[arm] += steps
        quarters = steps // self.quarter
        if quarters % 4:
            angle = {1: 90, 2: 180, 3: -90}[quarters % 4]
            self.facelets_now = _permute(self.facelets_now, sticker_source(arm, angle, False))
            self.history.append((arm, angle))

    def _tilt(self, first: _Pending, second: str, at_ms: float | None) -> None:
        holding = [a for a in self.other_arms(first.arm) if self.closed[a]]
        self.arm_steps[second] -= first.steps
        if not self.closed[second]:  # the partner turned in the air: the first arm turned its layer alone
            raise self._jam("unsupported", f"arm {first.arm} turned its layer while its partner {second} and the "
                            "other pair were open: nothing held the rest of the cube", first.evidence)
        if holding:
            raise self._jam("tilt-closed", f"pair {first.arm}{second} tilted the cube while gripper "
                            f"{', '.join(holding)} of the other pair was closed on it: jammed",
                            self._evidence(first.arm, f"tilting with {second}", first.at_ms))
        quarters = (first.steps // self.quarter) % 4
        if quarters:
            angle = {1: 90, 2: 180, 3: -90}[quarters]
            self.facelets_now = _permute(self.facelets_now, sticker_source(first.arm, angle, True))
            self.history.append(("tilt", first.arm, angle))

    def _flush(self) -> None:
        """A turn with the other pair open whose partner did not follow: the layer turned unsupported."""
        pending, self._pending = self._pending, None
        if pending is not None:
            open_ = [a for a in self.other_arms(pending.arm) if not self.closed[a]]
            raise self._jam("unsupported", f"arm {pending.arm} turned its layer while gripper {', '.join(open_)} of "
                            "the other pair was open: the middle slice is unsupported", pending.evidence)

    def finish(self) -> None:
        """The events so far are all there are (a sync's end): a lone pending turn jams now."""
        self._flush()

    # -- plan ops (the mock firmware's executed ops; tests) ---------------------

    def apply_op(self, op: dict, at_ms: float | None = None) -> None:
        """Carry out one robot/plan3.py op as the arms would."""
        kind, arms = op["op"], op["arms"]
        if kind in ("open", "close"):
            for arm in arms:
                self.set_gripper(arm, kind == "close", at_ms)
        elif kind in ("turn", "tilt"):
            if kind == "tilt":
                first = next(iter(arms))
                holding = [a for a in self.other_arms(first) if self.closed[a]]
                if holding:
                    raise self._jam("tilt-closed", f"a tilt by {'+'.join(arms)} while gripper {', '.join(holding)} "
                                    "of the other pair was closed", self._evidence(first, "tilting", at_ms))
            for arm, angle in arms.items():
                self.turn_arm(arm, angle * self.steps_per_rev // 360, at_ms)
            self.finish()
        else:
            raise ValueError(f"unknown plan op {op!r}")

    def is_solved(self) -> bool:
        return all(len(set(self.facelets_now[9 * f:9 * f + 9])) == 1 for f in range(6))

    def facelets(self) -> str:
        return self.facelets_now


def _permute(facelets: str, source: np.ndarray) -> str:
    return "".join(facelets[i] for i in source)


def op_events(ops, profile: Robot3Profile, steps_per_rev: int = 400, start_ms: float = 0.0) -> list:
    """The arm events a firmware makes for plan ops, in time order: (t_ms, kind, arm, value), kind "grip"
    (value: closed?) or "turn" (value: steps), each at its op's start and lasting its op's time."""
    events, t = [], start_ms
    for op in ops:
        if op["op"] in ("open", "close"):
            events += [(t, "grip", arm, op["op"] == "close") for arm in op["arms"]]
        else:
            events += [(t, "turn", arm, angle * steps_per_rev // 360) for arm, angle in op["arms"].items()]
        t += profile.op_cost(op)
    return events


def apply_events(robot: VirtualRobot3, events) -> None:
    """Feed (t_ms, kind, arm, value) events, as robot/sim/robot_sim.py feeds the decoded pin log."""
    for at_ms, kind, arm, value in events:
        if kind == "grip":
            robot.set_gripper(arm, bool(value), at_ms)
        else:
            robot.turn_arm(arm, int(value), at_ms)
    robot.finish()
