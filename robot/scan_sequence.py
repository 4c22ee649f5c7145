"""The scan sequence: which robot actions present each camera view, and which
facelets each view shows (config.yaml `scan.views`).

Pure data and cube arithmetic (robot.cube, robot.plan), no camera and no
vision: robot/config.py checks a configured sequence with `sequence_problem`
at load, and robot/vision/scan.py reads the views it describes.  A view's
facelets are named in the robot frame *at that moment*; the scan result is in
the robot frame at the END of the sequence (after `scan.finish` too).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import cube
from .config_types import Config, to_plain
from .plan import Grip, Turn, action_from_json


class ScanConfigError(ValueError):
    """A scan sequence that cannot work (names the view and the facelets)."""


# ---------------------------------------------------------------------------
# The sequence.


@dataclass(frozen=True)
class ScanView:
    name: str
    actions: tuple  # Grip / Turn done before this view's frame is taken
    facelets: tuple  # facelet names (robot frame at this moment), one per region
    camera: str = "main"  # which camera takes it (scan.second_camera: "second")

    @property
    def moves(self) -> list[str]:
        return [m for a in self.actions if isinstance(a, Turn) for m in a.moves()]


@dataclass(frozen=True)
class ScanSequence:
    views: tuple
    finish: tuple = ()  # actions after the last view (e.g. to hand the cube to a pair)

    @classmethod
    def from_config(cls, config: Config) -> "ScanSequence":
        sequence = cls.from_data(to_plain(config.scan.views), to_plain(config.scan.finish))
        sequence.check_robot(config)
        return sequence

    @classmethod
    def from_data(cls, views, finish=()) -> "ScanSequence":
        """Build and validate from plain data (a list of {name, actions, facelets})."""
        built = []
        for number, view in enumerate(views, start=1):
            name = str(view.get("name") or f"view{number}")
            try:
                actions = tuple(action_from_json(a) for a in view.get("actions", []))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise ScanConfigError(f"scan view {name!r}: bad action ({exc}); use {{op: grip, pair: RL}} "
                                      "or {op: turn, arms: {R: 90, L: -90}}") from None
            facelets = tuple(str(f) for f in view.get("facelets", []))
            bad = [f for f in facelets if not _is_facelet_name(f)]
            if bad:
                raise ScanConfigError(f"scan view {name!r}: {', '.join(bad)} not facelet names (use U1..B4)")
            built.append(ScanView(name, actions, facelets, str(view.get("camera") or "main")))
        try:
            finish_actions = tuple(action_from_json(a) for a in finish)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ScanConfigError(f"scan.finish: bad action ({exc})") from None
        names = [v.name for v in built]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ScanConfigError(f"scan views must have distinct names; repeated: {', '.join(dupes)}")
        sequence = cls(tuple(built), finish_actions)
        missing = sequence.unseen_facelets()
        if missing:
            raise ScanConfigError(
                f"the scan sequence never sees {len(missing)} facelet(s) (named in the robot frame at the end "
                f"of the scan): {' '.join(missing)}; add a view that shows them"
            )
        return sequence

    def check_robot(self, config: Config) -> None:
        """Every action is legal for the configured robot (arm pairs, angles)."""
        from .plan import RobotProfile, replay

        profile = RobotProfile.from_config(config)
        actions = list(self.all_actions())
        try:
            replay(cube.SOLVED, actions, profile)
        except ValueError as exc:
            # replay names the action index; say which view it belongs to.
            index = int(str(exc).split(":")[0].split()[-1]) if str(exc).startswith("action ") else None
            where = self.view_of_action(index) if index is not None else "?"
            raise ScanConfigError(f"scan sequence, {where}: {exc}") from None

    @property
    def cameras(self) -> set:
        return {view.camera for view in self.views}

    def moments(self) -> list[list[int]]:
        """View indices grouped by the moment they are taken: a view without actions, by another camera
        than the views already in the moment, is taken at the same moment as the view before it."""
        groups: list[list[int]] = []
        for k, view in enumerate(self.views):
            if groups and not view.actions and view.camera not in {self.views[i].camera for i in groups[-1]}:
                groups[-1].append(k)
            else:
                groups.append([k])
        return groups

    def prefix(self, count: int) -> "ScanSequence":
        """The first `count` views alone (an adaptive scan that stopped early; no finish): facelets
        are named in the frame after them, and some may be unseen (`unseen_facelets`)."""
        return ScanSequence(self.views[:count], () if count < len(self.views) else self.finish)

    def with_view(self, view: ScanView) -> "ScanSequence":
        """This sequence with `view` taken after its last view (a second look; no finish)."""
        return ScanSequence(self.views + (view,), ())

    def region_view(self, view: ScanView) -> ScanView | None:
        """The sequence's first view that shows the same places to the same camera as `view` (its
        sticker regions are `view`'s: a second look is sampled with them), or None."""
        return next((v for v in self.views if v.facelets == view.facelets and v.camera == view.camera), None)

    def all_actions(self):
        for view in self.views:
            yield from view.actions
        yield from self.finish

    def view_of_action(self, index: int) -> str:
        for view in self.views:
            if index < len(view.actions):
                return f"view {view.name!r}"
            index -= len(view.actions)
        return "scan.finish"

    @property
    def final_grip(self) -> str | None:
        """The pair holding the cube when the scan ends (None if no grip is given)."""
        grips = [a.pair for a in self.all_actions() if isinstance(a, Grip)]
        return grips[-1] if grips else None

    def moves_after(self, view_index: int) -> list[str]:
        """Face moves done after view `view_index`'s frame, up to the end of the scan."""
        moves = []
        for view in self.views[view_index + 1:]:
            moves += view.moves
        moves += [m for a in self.finish if isinstance(a, Turn) for m in a.moves()]
        return moves

    def moves_before(self, view_index: int) -> list[str]:
        """Face moves done from the start up to view `view_index`'s frame."""
        return [m for view in self.views[:view_index + 1] for m in view.moves]

    @property
    def moves(self) -> list[str]:
        return self.moves_before(len(self.views) - 1) + self.moves_after(len(self.views) - 1)

    def final_positions(self, view_index: int) -> list[int]:
        """Where each facelet seen in a view ends up (facelet index in the final frame)."""
        tags = "".join(chr(0x100 + i) for i in range(cube.FACELET_COUNT))  # 24 distinct symbols
        moved = cube.apply_moves(tags, self.moves_after(view_index))
        where = {symbol: position for position, symbol in enumerate(moved)}
        return [where[tags[cube.facelet_index(name)]] for name in self.views[view_index].facelets]

    def mapping(self) -> list[tuple[int, int, int]]:
        """(view index, region index, final facelet index) for every region of every view."""
        return [
            (v, r, final)
            for v in range(len(self.views))
            for r, final in enumerate(self.final_positions(v))
        ]

    def unseen_facelets(self) -> list[str]:
        seen = {final for _, _, final in self.mapping()}
        return [cube.facelet_name(i) for i in range(cube.FACELET_COUNT) if i not in seen]

    def states_at_views(self, start_facelets: str) -> list[str]:
        """The facelet string in the robot frame at each view (for the renderer)."""
        return [cube.apply_moves(start_facelets, self.moves_before(v)) for v in range(len(self.views))]

    def final_state(self, start_facelets: str) -> str:
        return cube.apply_moves(start_facelets, self.moves)


# A scan for a robot with a second camera below and behind the cube (`scan.second_camera`): U+F from
# above and D+B from below at once, then L and R (after one turn of the FB pair) at once.  Put these
# views in config.yaml's `scan.views` to use them; bench/e2e.py measures them in the simulation.
TWO_CAMERA_VIEWS = [
    {"name": "top-front", "camera": "main", "actions": [{"op": "grip", "pair": "RL"}],
     "facelets": ["U1", "U2", "U3", "U4", "F1", "F2", "F3", "F4"]},
    {"name": "bottom-back", "camera": "second", "actions": [],
     "facelets": ["D1", "D2", "D3", "D4", "B1", "B2", "B3", "B4"]},
    {"name": "left", "camera": "main", "actions": [{"op": "grip", "pair": "FB"}, {"op": "turn", "arms": {"F": 90, "B": -90}}],
     "facelets": ["U1", "U2", "U3", "U4"]},
    {"name": "right", "camera": "second", "actions": [], "facelets": ["D1", "D2", "D3", "D4"]},
]


# Second looks (scan.second_look, robot/vision/adaptive.py): views that may follow the sequence's
# last view when stickers were washed out.  A view's places are named in the robot frame, which is
# the camera's: with RL holding the camera sees U and F, with FB holding only U (F is gripped).  A
# lamp fixed in the camera frame washes the same places in every view, so `choose_second_look`
# picks one that shows the doubtful stickers on the other face.
_U = ["U1", "U2", "U3", "U4"]
_UF = _U + ["F1", "F2", "F3", "F4"]
_Z = {"z": {"F": 90, "B": -90}, "z'": {"F": -90, "B": 90}, "z2": {"F": 180, "B": 180}}  # the cube about z (FB holds)
_X = {"x": {"R": 90, "L": -90}, "x'": {"R": -90, "L": 90}, "x2": {"R": 180, "L": 180}}  # about x (RL holds)


def _second_look_data() -> list[dict]:
    """At most one turn of each pair: FB turns it (U seen), or FB turns it and RL takes it and turns it (U and F)."""
    def turn(pair, arms):
        return [{"op": "grip", "pair": pair}, {"op": "turn", "arms": dict(arms)}]

    views = [{"name": f"second-look-{z}", "actions": turn("FB", arms), "facelets": _U} for z, arms in _Z.items()]
    for z in [None, *_Z]:
        for x in [None, *_X]:
            actions = (turn("FB", _Z[z]) if z else []) + (turn("RL", _X[x]) if x else [{"op": "grip", "pair": "RL"}])
            name = "+".join(part for part in (z, x or "RL") if part) if z or x else "top-front"
            views.append({"name": f"second-look-{name}", "actions": actions, "facelets": _UF})
    return views


SECOND_LOOK_VIEWS = _second_look_data()


def second_look_views(data=None) -> list[ScanView]:
    """The possible second-look views (SECOND_LOOK_VIEWS, or `data` in the same form)."""
    return [ScanView(str(v["name"]), tuple(action_from_json(a) for a in v.get("actions", [])),
                     tuple(str(f) for f in v["facelets"]), str(v.get("camera") or "main"))
            for v in (SECOND_LOOK_VIEWS if data is None else data)]


def second_look_places(sequence: ScanSequence, view: ScanView) -> dict[int, str]:
    """Facelet index in `sequence`'s final frame -> the place (camera frame) where `view`, taken after
    the sequence, shows it."""
    tags = "".join(chr(0x100 + i) for i in range(cube.FACELET_COUNT))
    moved = cube.apply_moves(tags, view.moves)  # position -> which facelet of the final frame is there
    shown = set(view.facelets)
    return {ord(moved[p]) - 0x100: cube.facelet_name(p) for p in range(cube.FACELET_COUNT)
            if cube.facelet_name(p) in shown}


def choose_second_look(sequence: ScanSequence, doubtful: dict[int, str], candidates=None,
                       cost=None) -> ScanView | None:
    """The view to take after `sequence` for a second look at the doubtful stickers.

    doubtful: facelet index (the sequence's final frame) -> the place (e.g. "U3": robot frame at its
    view) where it was seen washed out.  The chosen view shows the most of them on another face of
    the camera frame than where they were washed (a face turned differently to the lamp); among
    those, the cheapest (`cost(view)`, e.g. the robot's arm time; default: its actions and moves).
    None when no candidate shows any of them on another face.
    """
    candidates = second_look_views() if candidates is None else candidates
    cost = cost or (lambda view: len(view.actions) + len(view.moves))
    best, best_key = None, None
    for view in candidates:
        places = second_look_places(sequence, view)
        turned = sum(1 for i, place in doubtful.items() if i in places and places[i][0] != place[0])
        key = (-turned, cost(view))
        if turned and (best_key is None or key < best_key):
            best, best_key = view, key
    return best


def choose_second_looks(sequence: ScanSequence, doubtful: dict[int, str], most: int = 2, candidates=None,
                        cost=None) -> list[ScanView]:
    """Up to `most` views, one after the other, that between them show the doubtful stickers on another
    face than where they were washed (choose_second_look, then again for those still not shown so).
    Each is named apart from the views before it (a second look's name ends in "#2", ...)."""
    chosen: list[ScanView] = []
    names = {v.name for v in sequence.views}
    while doubtful and len(chosen) < most:
        view = choose_second_look(sequence, doubtful, candidates, cost)
        if view is None:
            break
        if view.name in names:
            view = ScanView(f"{view.name}#{len(chosen) + 1}", view.actions, view.facelets, view.camera)
        names.add(view.name)
        places = second_look_places(sequence, view)
        moved = _moved_to(view.moves)
        doubtful = {moved[i]: place for i, place in doubtful.items() if not (i in places and places[i][0] != place[0])}
        sequence = sequence.with_view(view)
        chosen.append(view)
    return chosen


def _moved_to(moves) -> list[int]:
    """Where each facelet index goes under `moves`."""
    tags = "".join(chr(0x100 + i) for i in range(cube.FACELET_COUNT))
    moved = cube.apply_moves(tags, moves)
    where = {ord(symbol) - 0x100: position for position, symbol in enumerate(moved)}
    return [where[i] for i in range(cube.FACELET_COUNT)]


def _is_facelet_name(name: str) -> bool:
    return len(name) == 2 and name[0] in cube.FACES and name[1] in "1234"


def sequence_problem(views, finish=()) -> str | None:
    """The config check: None if the sequence is usable, else the problem text."""
    try:
        ScanSequence.from_data(views, finish)
    except ScanConfigError as exc:
        return str(exc)
    return None
