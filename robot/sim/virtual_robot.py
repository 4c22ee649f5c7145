"""The mechanics of a simulated robot and the cube it holds.

The virtual cube is moved only by what the arms physically do: a gripper
closes or opens; an arm turns by some number of steps.  Those events come
either from the real firmware's pin log (step pulses and servo pulses decoded
by robot/sim/pinlog.py) or, with the Python mock firmware, from the actions it
reports executing.  Physical mistakes are errors, not silently "fixed":
turning an arm while the other pair also grips jams the cube, and an arm that
stops between quarter positions leaves the cube unusable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import cube
from ..plan import Grip, RobotProfile, Turn, move_name


class MechanicalError(RuntimeError):
    """The simulated mechanics did something a real robot could not survive."""


@dataclass
class VirtualRobot:
    profile: RobotProfile
    state: cube.CubieCube  # the cube in the robot frame
    steps_per_rev: int = 400
    closed: dict = field(default_factory=dict)  # face -> gripper closed?
    turned_quarters: int = 0
    history: list = field(default_factory=list)  # face moves applied, in order
    off_quarter: dict = field(default_factory=dict)  # face -> steps past its last quarter position (in the air)
    arm_steps: dict = field(default_factory=dict)  # face -> steps turned since the start (where it stands: render_arms)

    def __post_init__(self):
        for _, faces in self.profile.pairs:
            for face in faces:
                self.closed.setdefault(face, False)
                self.off_quarter.setdefault(face, 0)

    def pair_of(self, face: str) -> str:
        return next(name for name, faces in self.profile.pairs if face in faces)

    def set_gripper(self, face: str, closed: bool) -> None:
        if closed and not self.closed[face] and self.off_quarter[face]:
            raise MechanicalError(f"gripper {face} closed on the cube with its arm {self.off_quarter[face]} steps past "
                                  "a quarter position: the cube is left between positions")
        self.closed[face] = closed

    def holding_pair(self) -> str | None:
        """The pair whose grippers are all closed (None while handing over or open)."""
        holding = [name for name, faces in self.profile.pairs if all(self.closed[f] for f in faces)]
        return holding[0] if len(holding) == 1 else None

    def turn_arm(self, face: str, steps: int) -> None:
        """An arm turned by `steps` (signed: positive = clockwise seen from outside its face).  In the air
        (gripper open) it may stop anywhere, as homing does; holding the cube, only whole quarter turns."""
        quarter = self.steps_per_rev // 4
        self.arm_steps[face] = self.arm_steps.get(face, 0) + steps
        if not self.closed[face]:  # an open gripper turns freely without touching the cube
            self.off_quarter[face] = (self.off_quarter[face] + steps) % quarter
            return
        if steps % quarter or self.off_quarter[face]:
            raise MechanicalError(
                f"arm {face} turned {steps} steps, not a whole number of quarter turns "
                f"({quarter} steps): the cube is left between positions"
            )
        pair = self.pair_of(face)
        others = [f for name, faces in self.profile.pairs if name != pair for f in faces if self.closed[f]]
        if others:
            raise MechanicalError(
                f"arm {face} turned while gripper(s) {', '.join(others)} of another pair also held the cube: jammed"
            )
        quarters = steps // (self.steps_per_rev // 4)
        if quarters % 4:
            name = move_name(face, quarters * 90)
            self.state = self.state * cube.MOVES[name]
            self.history.append(name)
        self.turned_quarters += abs(quarters)  # the physical quarter turns the layer made

    def apply_action(self, action) -> None:
        """Carry out a plan action as the firmware would (used with the mock firmware)."""
        if isinstance(action, Grip):
            faces = self.profile.faces_of(action.pair)
            for face in faces:
                self.set_gripper(face, True)
            for face in self.closed:
                if face not in faces:
                    self.set_gripper(face, False)
        elif isinstance(action, Turn):
            for face, angle in action.arms.items():
                self.turn_arm(face, angle * self.steps_per_rev // 360)
        else:
            raise TypeError(f"not an action: {action!r}")

    def is_solved(self) -> bool:
        return self.state.is_solved()

    def facelets(self, colours: str = cube.FACES) -> str:
        return self.state.to_facelets(colours)
