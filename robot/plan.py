"""The robot model (arm layout and timings, from config) and its plans.

A plan is a list of actions:
  Grip(pair)            the named pair takes the cube (the first grip is free:
                        it says which pair holds at the start, the pair the
                        scan ends with, and the firmware finishes a GRIP to the
                        pair that already holds at once; every later grip is
                        a regrip, whose cost depends on the turns on either
                        side of it: RobotProfile.regrip_cost, robot/regrip.py)
  Turn({face: angle})   each arm of the holding pair turns its layer by the
                        angle (0 arms omitted), all at once; clockwise-positive
                        seen from outside that arm's face, so {"R": 90} is the
                        move R and {"L": 90} is the move L.  Lasts as long as
                        its slowest arm.
  Turn(arms, air=True)  with robot.square_released_arms, right after a Grip:
                        the arms of the pair just released that stand a quarter
                        round turn back a quarter in the air (the cube does not
                        move; the "restore", docs/solver.md), so two
                        perpendicular arms never both stand a quarter round.

This module is the one source of truth for what an action costs and what it
does to the cube; the solver, the link and the simulator all use it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from . import cube
from .config_types import Config
from .motion import regrip_between, robot_timing

QUARTER, HALF = 90, 180


@dataclass(frozen=True)
class RobotProfile:
    """Arm layout and timings.  Built from config.yaml's `robot` section.

    The order of the pairs and of the arms in a pair in config.yaml means nothing (robot.pairs is a
    YAML mapping, and a tool may sort it); the profile puts them in one canonical order, arms by
    face in U R F D L B order and pairs by their arms, so that the cost table's rows, the plans
    (ties are broken in this order) and the tables' fingerprint do not depend on the file's order.
    """

    pairs: tuple  # ((name, (face, ...)), ...) in canonical order (see canonical_pairs)
    turn_angles: tuple  # e.g. (90, 180, -90)
    quarter_turn_ms: int
    half_turn_ms: int
    regrip_ms: int  # a regrip between two quarter turns; the one cost of every regrip when `regrips` is empty
    # Each regrip's own cost: ((taking pair, releasing pair, kind of the turn before, kind of the turn
    # after), ms), kinds as turn_kind gives them, None where no turn is next to the GRIP.  Empty: every
    # regrip costs regrip_ms (robot.timing.regrip_ms given: a measured number).
    regrips: tuple = ()
    # robot.square_released_arms: a released pair's arms are turned back square before the other
    # pair turns (plans carry that restore; the solver charges it).
    square_released: bool = False

    def __post_init__(self):
        object.__setattr__(self, "pairs", canonical_pairs(self.pairs))
        object.__setattr__(self, "regrips", tuple(sorted(self.regrips, key=_regrip_order)))
        object.__setattr__(self, "_regrip_table", dict(self.regrips))

    @classmethod
    def from_config(cls, config: Config) -> "RobotProfile":
        robot = config.robot
        timing = robot_timing(config)  # null values derived from `motion`
        angles = sorted({normalise_angle(a) for a in robot.turn_angles}, key=_angle_order)
        pairs = tuple((name, tuple(faces)) for name, faces in robot.pairs.items())
        regrips: tuple = ()
        if robot.timing.regrip_ms is None:  # derived: each regrip as the firmware schedules it
            kinds = sorted({turn_kind(a) for a in itertools.product((0,) + tuple(angles), repeat=2) if any(a)})
            regrips = tuple(
                ((taking, releasing, before, after),
                 regrip_between(config.motion, robot.pairs[taking], robot.pairs[releasing], before, after))
                for taking in robot.pairs for releasing in robot.pairs if taking != releasing
                for before in [None, *kinds] for after in [*kinds, None])
        return cls(
            pairs=pairs,
            turn_angles=tuple(angles),
            quarter_turn_ms=timing["quarter_turn_ms"],
            half_turn_ms=timing["half_turn_ms"],
            regrip_ms=timing["regrip_ms"],
            regrips=regrips,
            square_released=robot.square_released_arms,
        )

    def regrip_cost(self, taking: str, releasing: str, before: "Turn | None", after: "Turn | None") -> int:
        """The GRIP's duration: `taking` takes the cube from `releasing` between the turn `before`
        and the turn `after` (None: the action next to it is no turn, so nothing overlaps there)."""
        return self.regrip_kind_cost(taking, releasing, None if before is None else turn_kind(before.arms.values()),
                                     None if after is None else turn_kind(after.arms.values()))

    def regrip_kind_cost(self, taking: str, releasing: str, before: tuple | None, after: tuple | None) -> int:
        """regrip_cost by the kinds (turn_kind) of the turns around the GRIP."""
        if not self.regrips:
            return self.regrip_ms
        return self._regrip_table[(taking, releasing, before, after)]  # type: ignore[attr-defined]

    @property
    def pair_names(self) -> tuple:
        return tuple(name for name, _ in self.pairs)

    def faces_of(self, pair: str) -> tuple:
        return dict(self.pairs)[pair]

    def turn_ms(self, angle: int) -> int:
        return self.half_turn_ms if abs(normalise_angle(angle)) == HALF else self.quarter_turn_ms

    def turns_of(self, pair: str) -> list["Turn"]:
        """Every turn the pair can make: one angle (or 0) per arm, not all 0."""
        faces = self.faces_of(pair)
        options = (0,) + self.turn_angles
        turns = []
        for angles in itertools.product(options, repeat=len(faces)):
            if any(angles):
                turns.append(Turn({f: a for f, a in zip(faces, angles) if a}))
        return turns

    def cost(self, action: "Action") -> int:
        """A turn's duration; a Grip's without its neighbours: regrip_ms (action_costs knows them)."""
        if isinstance(action, Grip):
            return self.regrip_ms
        return max(self.turn_ms(a) for a in action.arms.values())

    def action_costs(self, actions, holding: str | None = None) -> list[int]:
        """Each action's duration in its place.  `holding`: the pair that holds before the first
        action (None: the first Grip only says which pair holds, and is free).  A Grip to the pair
        that already holds takes 0 ms (the firmware skips it)."""
        costs = []
        for i, action in enumerate(actions):
            if isinstance(action, Turn):
                costs.append(self.cost(action))
                continue
            if holding is None or action.pair == holding:
                costs.append(0)
            else:
                before = actions[i - 1] if i > 0 and isinstance(actions[i - 1], Turn) else None
                after = actions[i + 1] if i + 1 < len(actions) and isinstance(actions[i + 1], Turn) else None
                costs.append(self.regrip_cost(action.pair, holding, before, after))
            holding = action.pair
        return costs

    def plan_cost(self, actions) -> int:
        """Sum of durations, each regrip its own; the first Grip (choosing the starting pair) is free."""
        return sum(self.action_costs(actions))

    def describe(self) -> dict:
        """JSON-able identity of this profile (stored in table manifests).  The pairs are a list in
        the cost table's row order: a mapping would compare equal whatever its order."""
        return {
            "pairs": [[name, list(faces)] for name, faces in self.pairs],
            "turn_angles": list(self.turn_angles),
            "quarter_turn_ms": self.quarter_turn_ms,
            "half_turn_ms": self.half_turn_ms,
            "regrip_ms": self.regrip_ms,
            # Per hand-over "taking<releasing": "turn before>turn after:ms" ('-': no turn), e.g. "90>180:128".
            "regrips": {f"{taking}<{releasing}": " ".join(f"{_kind_text(b)}>{_kind_text(a)}:{ms}"
                                                          for (t, r, b, a), ms in self.regrips if (t, r) == (taking, releasing))
                        for (taking, releasing, _, _), _ in self.regrips},
            # Only when on: the tables built before the setting existed keep their fingerprint.
            **({"square_released_arms": True} if self.square_released else {}),
        }

    @property
    def time_unit_ms(self) -> int:
        """Greatest common divisor of all durations (cost tables count in these units)."""
        return math.gcd(self.quarter_turn_ms, self.half_turn_ms, self.regrip_ms, *(ms for _, ms in self.regrips))


def turn_kind(angles) -> tuple:
    """What a turn's regrip neighbours see of it: its arms' distinct angles, unsigned ((90,), (180,)
    or (90, 180)): the layers' reach and the turn's length follow from these alone."""
    return tuple(sorted({abs(normalise_angle(a)) for a in angles if a}))


def _kind_text(kind) -> str:
    return "-" if kind is None else "+".join(map(str, kind))


def _regrip_order(entry):
    (taking, releasing, before, after), _ = entry
    return (taking, releasing, before or (), after or (1000,))  # None before any kind, None after every kind


def canonical_pairs(pairs) -> tuple:
    """((name, faces), ...) with each pair's faces in U R F D L B order and the pairs ordered by
    their faces (the default layout RL: [R, L], FB: [F, B] is already in this order)."""
    faces_first = tuple((name, tuple(sorted(faces, key=cube.FACES.index))) for name, faces in pairs)
    return tuple(sorted(faces_first, key=lambda pair: ([cube.FACES.index(f) for f in pair[1]], pair[0])))


def charged_from(actions) -> int:
    """Index of the first action that costs time: the first grip is free (it only says which
    pair holds when the clock starts, and the firmware's GRIP to the pair that already holds takes
    0 ms), so 1 when the plan starts with a Grip, else 0."""
    return 1 if len(actions) and isinstance(actions[0], Grip) else 0


def normalise_angle(angle: int) -> int:
    """Map any multiple of 90 to one of 0, 90, 180, -90 (the one place angles are normalised)."""
    if angle % 90:
        raise ValueError(f"angle {angle} is not a multiple of 90")
    return {0: 0, 90: 90, 180: 180, 270: -90}[angle % 360]


def _angle_order(a):
    return {90: 0, 180: 1, -90: 2}[a]


def move_name(face: str, angle: int) -> str:
    return face + {90: "", 180: "2", -90: "'"}[normalise_angle(angle)]


@dataclass(frozen=True)
class Grip:
    pair: str

    def to_json(self) -> dict:
        return {"op": "grip", "pair": self.pair}


@dataclass(frozen=True)
class Turn:
    arms: dict = field(hash=False)
    # The arms turn in the air, their pair open (the restore of a released pair's arms): the cube
    # does not move.  Sent as the same TURN; the pair that holds decides what it does.
    air: bool = False

    def __hash__(self):
        return hash((tuple(sorted(self.arms.items())), self.air))

    def moves(self) -> list[str]:
        """The face moves this turn makes, e.g. ['R', "L'"] (none in the air)."""
        return [] if self.air else [move_name(f, a) for f, a in self.arms.items()]

    def notation(self) -> str:
        if self.air:
            return "+".join(f"{f}{a:+d}" for f, a in self.arms.items()) + " in the air"
        return "+".join(self.moves())

    def to_json(self) -> dict:
        return {"op": "turn", "arms": dict(self.arms), **({"air": True} if self.air else {})}


Action = Grip | Turn


def action_from_json(obj: dict) -> Action:
    if obj.get("op") == "grip":
        return Grip(str(obj["pair"]))
    if obj.get("op") == "turn":
        return Turn({str(f): int(a) for f, a in obj["arms"].items()}, air=bool(obj.get("air", False)))
    raise ValueError(f"unknown plan op {obj!r}")


@dataclass
class Plan:
    """A solution: what the robot does, what it costs, and how long the search took."""

    facelets: str
    actions: list  # of Grip / Turn; actions[0] is the starting Grip
    cost_ms: int | None  # None for an htm/qtm plan (no robot timing)
    solve_ms: float = 0.0
    metric: str = "robot"  # or "htm" / "qtm": then metric_moves holds U/R/F turns, actions is empty
    metric_moves: list = field(default_factory=list)

    @property
    def start_pair(self) -> str:
        return self.actions[0].pair

    @property
    def moves(self) -> str:
        """Standard notation of the robot frame; simultaneous arm turns joined by '+'."""
        if self.metric != "robot":
            return " ".join(self.metric_moves)
        return " ".join(a.notation() for a in self.actions if isinstance(a, Turn) and not a.air)

    @property
    def length(self) -> int:
        """Number of turns in the plan's metric (robot: arm turn actions)."""
        return len(self.metric_moves) if self.metric != "robot" else self.turn_count

    @property
    def turn_count(self) -> int:
        """Turns of the cube's layers (the restores in the air not counted: restore_count)."""
        return sum(isinstance(a, Turn) and not a.air for a in self.actions)

    @property
    def restore_count(self) -> int:
        """Released arms turned back square in the air (robot.square_released_arms)."""
        return sum(isinstance(a, Turn) and a.air for a in self.actions)

    @property
    def regrip_count(self) -> int:
        return sum(isinstance(a, Grip) for a in self.actions[charged_from(self.actions):])

    def to_json(self) -> dict:
        if self.metric != "robot":
            return {"facelets": self.facelets, "ok": True, "moves": self.moves,
                    "length": self.length, "solve_ms": round(self.solve_ms, 3)}
        return {
            "facelets": self.facelets,
            "ok": True,
            "cost_ms": self.cost_ms,
            "plan": [a.to_json() for a in self.actions],
            "moves": self.moves,
            "solve_ms": round(self.solve_ms, 3),
        }


def apply_action(state: cube.CubieCube, action: Action) -> cube.CubieCube:
    """The cube after an action (a Grip does not move it)."""
    if isinstance(action, Turn):
        for move in action.moves():
            state = state * cube.MOVES[move]
    return state


def replay(state: cube.CubieCube, actions, profile: RobotProfile, start_angles=None) -> tuple[cube.CubieCube, int]:
    """Execute actions on the model, checking each is legal; returns (final state, cost).
    A Turn in the air (`air`) is a restore: only with profile.square_released, right after the GRIP
    that released its arms, each a quarter round turning back a quarter.  With square_released it
    also checks the rule the restores keep: a pair turns only while every arm of the other pairs
    stands square (0 mod 180).  start_angles: where the arms stand first (face -> degrees; 0)."""
    holding = released = None
    quarter = {face: (start_angles or {}).get(face, 0) % HALF for _, faces in profile.pairs for face in faces}
    for i, action in enumerate(actions):
        if isinstance(action, Grip):
            if action.pair not in profile.pair_names:
                raise ValueError(f"action {i}: no pair named {action.pair!r}")
            released = holding if holding != action.pair else None
            holding = action.pair
            continue
        if holding is None:
            raise ValueError(f"action {i}: a turn before any pair holds the cube")
        if action.air:
            if not profile.square_released or released is None or not isinstance(actions[i - 1], Grip) \
                    or not set(action.arms) <= set(profile.faces_of(released)):
                raise ValueError(f"action {i}: a turn in the air is only the restore of the arms the GRIP "
                                 "just before it released (robot.square_released_arms)")
            for face, angle in action.arms.items():
                if abs(normalise_angle(angle)) != QUARTER or not quarter[face]:
                    raise ValueError(f"action {i}: released arm {face} turns {angle} in the air: only an arm a "
                                     "quarter round turns back, by a quarter")
                quarter[face] = 0
            continue
        faces = profile.faces_of(holding)
        for face, angle in action.arms.items():
            if face not in faces:
                raise ValueError(f"action {i}: arm {face} does not belong to holding pair {holding}")
            if normalise_angle(angle) not in profile.turn_angles:
                raise ValueError(f"action {i}: angle {angle} is not allowed")
        off = [face for face in quarter if face not in faces and quarter[face]]
        if profile.square_released and off:
            raise ValueError(f"action {i}: {holding} turns while arm {', '.join(off)} of another pair stands a "
                             "quarter round (they would meet at the cube's edges)")
        for face, angle in action.arms.items():
            quarter[face] = (quarter[face] + abs(normalise_angle(angle))) % HALF
        state = apply_action(state, action)
    return state, profile.plan_cost(actions)
