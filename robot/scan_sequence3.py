"""The 3x3x3 scan sequence on the four arms: which robot ops present each camera view and which of
the 54 facelets each view shows (config.yaml `scan3.views`).

Pure data and cube arithmetic, as robot/scan_sequence.py is for the 2x2x2.  A view's ops are
robot/plan3.py ops (open, close, turn, tilt), done before its frame; its facelets are named in the
robot frame AT THAT MOMENT (U1..B9, cube3's layout) and are the stickers the arms leave visible
there (the camera sees U and F; a gripper's jaws and crossbar hide some of them, depending on the
gripper angles: robot/sim/render3.py, and robot/sim/scan3_search.py chose the default views).  The
scan result is in the robot frame at the END of the sequence (after `finish`, which puts every
gripper back to 0, as a plan starts: docs/robot3.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .config_types import Config, to_plain
from .cube import FACE_FRAMES, FACES
from .plan3 import Robot3Profile, normalise_angle, rotation

FACELET_COUNT = 54  # robot/solver3/cube3.py's layout: each face row-major on the standard net, U R F D L B


def facelet_name(index: int) -> str:
    return f"{FACES[index // 9]}{index % 9 + 1}"


def _geometry() -> dict:
    """(cubie position, normal) -> facelet index, as cube3.GEOMETRY (the model layer cannot import solver3)."""
    out = {}
    for k, face in enumerate(FACES):
        normal, up, right = FACE_FRAMES[face]
        for row in range(3):
            for col in range(3):
                p = normal + up * (1 - row) + right * (col - 1)
                out[(tuple(int(v) for v in p), tuple(int(v) for v in normal))] = 9 * k + 3 * row + col
    return out


_GEOMETRY = _geometry()


class Scan3ConfigError(ValueError):
    """A 3x3x3 scan sequence that cannot work (names the view, the op or the facelets)."""


@lru_cache(maxsize=None)
def _source(face: str, angle: int, whole_cube: bool) -> np.ndarray:
    """source[i] = the sticker that comes to place i when the layer on `face` (or the whole cube) turns."""
    normal, matrix = FACE_FRAMES[face][0], rotation(face, angle)
    source = np.arange(FACELET_COUNT)
    for (p, n), i in _GEOMETRY.items():
        if whole_cube or int(np.dot(p, normal)) > 0:
            source[_GEOMETRY[(tuple(int(v) for v in matrix @ p), tuple(int(v) for v in matrix @ n))]] = i
    return source


def facelet_index(name: str) -> int:
    if len(name) != 2 or name[0] not in FACES or name[1] not in "123456789":
        raise Scan3ConfigError(f"{name!r} is not a 3x3x3 facelet name (use U1..B9)")
    return 9 * FACES.index(name[0]) + int(name[1]) - 1


@dataclass(frozen=True)
class ScanView3:
    name: str
    ops: tuple  # robot/plan3.py ops before this view's frame
    facelets: tuple  # facelet names (robot frame at this moment), one per region


class _Arms:
    """The four arms while a sequence is replayed: closed?, gripper angle mod 180; the sticker places."""

    def __init__(self, profile: Robot3Profile):
        self.profile = profile
        self.closed = {arm: True for arm in profile.arms}
        self.angle = {arm: 0 for arm in profile.arms}
        self.source = np.arange(FACELET_COUNT)  # place -> which start sticker is there

    def step(self, op: dict, where: str) -> None:
        kind, arms = op.get("op"), op.get("arms")
        if kind not in ("open", "close", "turn", "tilt") or not arms:
            raise Scan3ConfigError(f"{where}: {op!r} is not a robot3 op (open/close [arms], turn/tilt {{arm: angle}})")
        unknown = [a for a in arms if a not in self.closed]
        if unknown:
            raise Scan3ConfigError(f"{where}: {', '.join(unknown)} not an arm of robot3.pairs")
        if kind in ("open", "close"):
            for arm in arms:
                self.closed[arm] = kind == "close"
            if not any(all(self.closed[a] for a in faces) for _, faces in self.profile.pairs):
                raise Scan3ConfigError(f"{where}: no pair would hold the cube (it would fall)")
            return
        pairs = {self.profile.pair_of(a) for a in arms}
        if len(pairs) != 1:
            raise Scan3ConfigError(f"{where}: arms {', '.join(arms)} are not of one pair")
        others = self.profile.faces_of(self.profile.other_pair(pairs.pop()))
        try:
            angles = {arm: normalise_angle(int(a)) for arm, a in arms.items()}
        except (TypeError, ValueError) as exc:
            raise Scan3ConfigError(f"{where}: {exc}") from None
        if kind == "tilt":
            first, second = list(angles)[0], next(a for a in self.profile.faces_of(self.profile.pair_of(list(angles)[0]))
                                                   if a != list(angles)[0])
            if set(angles) != {first, second} or angles[second] != normalise_angle(-angles[first]):
                raise Scan3ConfigError(f"{where}: a tilt turns both arms of a pair the same way in space")
            if not (self.closed[first] and self.closed[second]) or any(self.closed[a] for a in others):
                raise Scan3ConfigError(f"{where}: a tilt needs its pair closed and the other pair open")
            self.source = self.source[_source(first, angles[first], True)]
        else:
            for arm, angle in angles.items():
                if not self.closed[arm]:
                    continue
                if not all(self.closed[a] for a in others) or any(self.angle[a] for a in others):
                    raise Scan3ConfigError(f"{where}: arm {arm} turns its layer while the other pair is open "
                                           "or a gripper of it stands at 90")
                self.source = self.source[_source(arm, angle, False)]
        for arm, angle in angles.items():
            self.angle[arm] = (self.angle[arm] + angle) % 180


@dataclass(frozen=True)
class ScanSequence3:
    views: tuple
    finish: tuple = ()  # ops after the last view (grippers back to 0)
    profile: Robot3Profile | None = None

    @classmethod
    def from_config(cls, config: Config) -> "ScanSequence3":
        return cls.from_data(to_plain(config.scan3.views), to_plain(config.scan3.finish),
                             Robot3Profile.from_config(config))

    @classmethod
    def from_data(cls, views, finish, profile: Robot3Profile, at_rest: bool = True) -> "ScanSequence3":
        """Build and check (legal ops, every facelet seen; at_rest: every gripper ends closed at 0)."""
        built = []
        for number, view in enumerate(views, start=1):
            name = str(view.get("name") or f"view{number}")
            facelets = tuple(str(f) for f in view.get("facelets", []))
            try:
                for f in facelets:
                    facelet_index(f)
            except Scan3ConfigError as exc:
                raise Scan3ConfigError(f"scan3 view {name!r}: {exc}") from None
            if len(set(facelets)) != len(facelets):  # one region per sticker: a repeat shifts every later region
                twice = sorted({f for f in facelets if facelets.count(f) > 1})
                raise Scan3ConfigError(f"scan3 view {name!r}: {', '.join(twice)} listed twice (one region per sticker)")
            built.append(ScanView3(name, tuple(dict(op) for op in view.get("ops", [])), facelets))
        names = [v.name for v in built]
        if len(set(names)) != len(names):
            raise Scan3ConfigError(f"scan3 views must have distinct names: {names}")
        sequence = cls(tuple(built), tuple(dict(op) for op in finish), profile)
        arms = sequence._replay()
        if at_rest and (any(arms.angle.values()) or not all(arms.closed.values())):
            raise Scan3ConfigError("scan3: the sequence must end (after scan3.finish) with every arm closed at 0, "
                                   f"as a plan starts; it ends with {arms.angle} (closed: {arms.closed})")
        missing = sequence.unseen_facelets()
        if missing:
            raise Scan3ConfigError(f"the 3x3x3 scan sequence never sees {len(missing)} facelet(s) (named in the "
                                   f"robot frame at its end): {' '.join(missing)}")
        return sequence

    def _replay(self, until_view: int | None = None, with_finish: bool = True) -> _Arms:
        assert self.profile is not None
        arms = _Arms(self.profile)
        for number, view in enumerate(self.views):
            if until_view is not None and number > until_view:
                return arms
            for k, op in enumerate(view.ops):
                arms.step(op, f"scan3 view {view.name!r}, op {k + 1}")
        if with_finish:
            for k, op in enumerate(self.finish):
                arms.step(op, f"scan3.finish, op {k + 1}")
        return arms

    def all_ops(self) -> list:
        return [op for view in self.views for op in view.ops] + list(self.finish)

    def arm_ms(self, profile: Robot3Profile | None = None) -> int:
        """The sequence's arm time (the ops' times: robot/plan3.py, the firmware's), finish included."""
        profile = profile or self.profile
        assert profile is not None
        return profile.plan_cost(self.all_ops())

    def angles_at_views(self) -> list[dict]:
        """The gripper angles (0 / 90, per arm) at each view."""
        return [dict(self._replay(v, with_finish=False).angle) for v in range(len(self.views))]

    def closed_at_views(self) -> list[dict]:
        """Which grippers are closed at each view (a pair may stand open in the middle of a tilt)."""
        return [dict(self._replay(v, with_finish=False).closed) for v in range(len(self.views))]

    def sources_at_views(self) -> list[np.ndarray]:
        """Per view: place -> which sticker of the start is there."""
        return [self._replay(v, with_finish=False).source for v in range(len(self.views))]

    def states_at_views(self, start_facelets: str) -> list[str]:
        """The 54 facelets in the robot frame at each view (for the renderer)."""
        return ["".join(start_facelets[i] for i in source) for source in self.sources_at_views()]

    def final_source(self) -> np.ndarray:
        return self._replay().source

    def final_state(self, start_facelets: str) -> str:
        return "".join(start_facelets[i] for i in self.final_source())

    def mapping(self) -> list[tuple[int, int, int]]:
        """(view index, region index, final facelet index) for every region of every view."""
        where_final = np.argsort(self.final_source())  # start sticker -> its final place
        out = []
        for v, (view, source) in enumerate(zip(self.views, self.sources_at_views())):
            for r, name in enumerate(view.facelets):
                out.append((v, r, int(where_final[source[facelet_index(name)]])))
        return out

    def unseen_facelets(self) -> list[str]:
        seen = {final for _, _, final in self.mapping()}
        return [facelet_name(i) for i in range(FACELET_COUNT) if i not in seen]


# The layout only: this check is of legality, the times (the firmware's, robot/plan3.py) play no part.
_DEFAULT_PROFILE = Robot3Profile(pairs=(("RL", ("R", "L")), ("FB", ("F", "B"))), tilt_angles=(-90, 90),
                                 quarter_turn_ms=80, half_turn_ms=130, open_ms=107, close_ms=107)


def sequence_problem3(views) -> str | None:
    """The config check of scan3.views alone (the four-arm layout docs/robot3.md draws; the finish and the
    configured robot3 are checked by ScanSequence3.from_config): None if usable, else the problem."""
    try:
        ScanSequence3.from_data(views, (), _DEFAULT_PROFILE, at_rest=False)
    except Scan3ConfigError as exc:
        return str(exc)
    return None


def finish_problem3(views, finish) -> str | None:
    """The config check of scan3.finish (after the views passed theirs): the whole sequence must end with every arm
    closed at 0, as a plan starts; None if it does."""
    try:
        ScanSequence3.from_data(views, finish, _DEFAULT_PROFILE, at_rest=True)
    except Scan3ConfigError as exc:
        return str(exc)
    return None
