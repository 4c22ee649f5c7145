"""How the default 3x3x3 scan sequence (config scan3.views) was chosen: the least arm time that shows
every one of the 54 stickers at least once in spite of the grippers (SIMULATED geometry).

What the camera sees depends only on the gripper angles and which grippers stand open (the arms stand
still in the robot frame; robot/sim/render3.py's geometry, config simulated_robot.gripper3 and
camera.pose): `visible_places` renders, for each of the 16 angle sets with every gripper closed, one
open or one pair open, which places of U and F the arms leave mostly visible (render3.SEEN_SHARE of
the sampled region).  A gripped face's centre is always under its crossbar, so every face must come
up to U once: at least five tilts.

`search` is an A* over (cube orientation, gripper angles, stickers seen) from rest state to rest state
(every gripper closed): the robot may TILT (robot3.tilt_angles; the open pair may turn a quarter while
it is open, back to 0 or to 90) or REGRIP one arm or one pair (open, quarter turn, close).  A view may
be taken after any op of a move (the cube is held by a closed pair throughout) and is taken wherever
it shows something new; views cost frames, not arm time (fewer views break ties only).  The goal is
every sticker seen and every gripper back at 0 (a plan starts so).  Cost: the plan ops' (robot/plan3.py:
the firmware's times).  Bound
(admissible and consistent): the arm time until the farthest unseen sticker's first possible view,
and an open + tilt, then a whole tilt, for each further face whose centre has not been seen.

With the default geometry the exact search ends after about 10,000 states: its result is the optimum
of this model.  `choose` falls back on weighted searches (each within `weight` times the optimum),
keeping the exact search's proven lower bound, should a geometry need more than its limit.
bench/scan3.py prints the tables.
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np

from ..plan3 import Robot3Profile
from ..solver3 import cube3
from ..vision.camera_geometry import Pose
from . import render3
from .render_arms import ArmGeometry

UF_PLACES = tuple(range(0, 9)) + tuple(range(18, 27))  # U1..U9, F1..F9


def open_sets(profile: Robot3Profile) -> list[tuple]:
    """The grippers that may stand open at a view: none, one arm, or one pair (the other pair holds)."""
    return [()] + [(arm,) for arm in profile.arms] + [tuple(sorted(profile.faces_of(p))) for p in profile.pair_names]


def visible_places(pose: Pose, geometry: ArmGeometry, profile: Robot3Profile,
                   seen_share: float = render3.SEEN_SHARE) -> dict[tuple, tuple]:
    """{(gripper angles (profile.arms order, 0/90), open arms (sorted)): the places (facelet indices, robot
    frame) of U and F the arms leave mostly visible}.  An open gripper stands back by its open gap."""
    names = [cube3.facelet_name(i) for i in UF_PLACES]
    out = {}
    for angles in itertools.product((0, 90), repeat=len(profile.arms)):
        for opened in open_sets(profile):
            arms = render3.arms_at(geometry, dict(zip(profile.arms, angles)), {arm: False for arm in opened})
            share = render3.seen_share(pose, arms, names)
            out[(angles, opened)] = tuple(p for p, s in zip(UF_PLACES, share) if s >= seen_share)
    return out


def _tilt_moves(profile: Robot3Profile, angles: tuple):
    """(ops, new angles) of every TILT from a rest state; the open pair's arms may each turn a quarter
    while it is open (back to 0, or to 90 to show what their jaws hid), an extra quarter turn."""
    index = {arm: k for k, arm in enumerate(profile.arms)}
    for pair in profile.pair_names:
        faces = profile.faces_of(pair)
        other = profile.faces_of(profile.other_pair(pair))
        for angle in profile.tilt_angles:
            for turned in ((), (other[0],), (other[1],), other):
                new = list(angles)
                for arm in faces:
                    new[index[arm]] = (new[index[arm]] + angle) % 180
                for arm in turned:
                    new[index[arm]] = 90 - new[index[arm]]
                ops = profile.tilt_ops(pair, angle)
                if turned:
                    ops.insert(1, {"op": "turn", "arms": {arm: -90 if angles[index[arm]] else 90 for arm in turned}})
                yield ops, tuple(new)


def _moves(profile: Robot3Profile, angles: tuple):
    """(ops, new angles) of every action from a rest state: tilts, and regrips of one arm or one pair."""
    yield from _tilt_moves(profile, angles)
    index = {arm: k for k, arm in enumerate(profile.arms)}
    for pair in profile.pair_names:
        faces = profile.faces_of(pair)
        for arms_ in [(faces[0],), (faces[1],), faces]:
            new = list(angles)
            for arm in arms_:
                new[index[arm]] = 90 - new[index[arm]]
            turn = {arm: (-90 if angles[index[arm]] else 90) for arm in arms_}
            yield ([{"op": "open", "arms": list(arms_)}, {"op": "turn", "arms": turn},
                    {"op": "close", "arms": list(arms_)}], tuple(new))


def _finish(profile: Robot3Profile, angles: tuple) -> list:
    ops = []
    for pair in profile.pair_names:
        at90 = [arm for arm in profile.faces_of(pair) if angles[profile.arms.index(arm)]]
        if at90:
            ops += profile.restore_ops(at90)
    return ops


class _RestStates:
    """The robot's rest states (cube orientation x gripper angles, every gripper closed), numbered, with
    their moves, what a view after each op of a move shows, and the cheapest arm time between any two."""

    def __init__(self, profile: Robot3Profile, visible: dict[tuple, tuple]):
        from ..scan_sequence3 import _source

        self.visible = visible
        start = (tuple(range(cube3.FACELET_COUNT)), (0,) * len(profile.arms))
        self.keys, self.number = [start], {start: 0}
        # per state: [(cost, next state, ops, points)]; points: [(ops done, arm ms so far, stickers shown)]
        self.moves: list[list] = []
        index = {arm: k for k, arm in enumerate(profile.arms)}
        k = 0
        while k < len(self.keys):
            source, angles = self.keys[k]
            out = []
            for ops, new_angles in _moves(profile, angles):
                now_source, now_angles, spent, points = source, list(angles), 0, []
                opened: set[str] = set()
                for n, op in enumerate(ops, start=1):
                    spent += profile.op_cost(op)
                    _apply(op, now_angles, opened, index)
                    if op["op"] == "tilt":
                        first = next(iter(op["arms"]))
                        now_source = tuple(now_source[i] for i in _source(first, op["arms"][first], True))
                    shown = visible[(tuple(now_angles), tuple(sorted(opened)))]
                    points.append((n, spent, sum(1 << now_source[p] for p in shown)))
                key = (now_source, new_angles)
                if key not in self.number:
                    self.number[key] = len(self.keys)
                    self.keys.append(key)
                out.append((spent, self.number[key], tuple(ops), tuple(points)))
            self.moves.append(out)
            k += 1
        self.shows = [sum(1 << source[p] for p in visible[(angles, ())]) for source, angles in self.keys]
        self.finish = [_finish(profile, angles) for _, angles in self.keys]
        self.finish_ms = [profile.plan_cost(ops) for ops in self.finish]
        self.distance = self._all_distances()

    def _all_distances(self) -> np.ndarray:
        """The cheapest arm time from each rest state to each (Floyd-Warshall over the moves)."""
        n = len(self.keys)
        d = np.full((n, n), np.inf)
        np.fill_diagonal(d, 0.0)
        for k, moves in enumerate(self.moves):
            for cost, nxt, _, _ in moves:
                d[k, nxt] = min(d[k, nxt], cost)
        for k in range(n):
            np.minimum(d, d[:, k:k + 1] + d[k:k + 1, :], out=d)
        return d

    def reach(self) -> list[list[int]]:
        """reach[sticker][state]: the least arm time from the state until a view can show the sticker."""
        n = len(self.keys)
        first = np.full((cube3.FACELET_COUNT, n), np.inf)  # from state a, by one move's view point
        for a, moves in enumerate(self.moves):
            for _, _, _, points in moves:
                for _, spent, shown in points:
                    for sticker in range(cube3.FACELET_COUNT):
                        if shown >> sticker & 1 and spent < first[sticker, a]:
                            first[sticker, a] = spent
            for sticker in range(cube3.FACELET_COUNT):
                if self.shows[a] >> sticker & 1:
                    first[sticker, a] = 0
        return [np.min(self.distance + first[s][None, :], axis=1).astype(int).tolist()
                for s in range(cube3.FACELET_COUNT)]


class GaveUp(RuntimeError):
    """The search stopped at its limit; `lower_bound_ms` (exact search only): no sequence is cheaper."""

    def __init__(self, expanded: int, lower_bound_ms):
        super().__init__(f"the scan search gave up after {expanded} states")
        self.lower_bound_ms = lower_bound_ms


def choose(profile: Robot3Profile, visible: dict[tuple, tuple], max_expansions: int = 200_000) -> dict:
    """The exact search if it ends within `max_expansions`; else the cheapest of weighted searches (bounded
    suboptimal: within `weight` times the optimum), with the exact search's lower bound.  Adds "how"."""
    try:
        result = search(profile, visible, max_expansions)
        result["how"] = {"optimal": True, "lower_bound_ms": result["arm_ms"], "weight": 1.0}
        return result
    except GaveUp as exc:
        lower = exc.lower_bound_ms
    found = []
    for weight in (3.0, 2.0, 1.5):
        try:
            found.append((search(profile, visible, max_expansions, weight), weight))
        except GaveUp:
            continue
    result, weight = min(found, key=lambda rw: (rw[0]["arm_ms"], rw[0]["views_count"]))
    result["how"] = {"optimal": result["arm_ms"] <= lower, "lower_bound_ms": lower, "weight": weight}
    return result


def search(profile: Robot3Profile, visible: dict[tuple, tuple], max_expansions: int = 2_000_000,
           weight: float = 1.0) -> dict:
    """The cheapest sequence: {"views": [{name, ops, facelets}], "finish": ops, "arm_ms", "views_count",
    "expanded"}.  A view may be taken after any op of a move (a pair open during a tilt stands back and
    shows what its jaws hid); one is taken wherever it shows something new."""
    rest = _RestStates(profile, visible)
    full = (1 << cube3.FACELET_COUNT) - 1
    reach = rest.reach()
    centres = [9 * f + 4 for f in range(6)]
    # The fastest pair's grippers (each arm may have its own widths): the bound stays admissible.
    opens = min(profile.open_ms_of(profile.faces_of(p)) for p in profile.pair_names)
    closes = min(profile.close_ms_of(profile.faces_of(p)) for p in profile.pair_names)
    first_centre = opens + min(profile.turn_ms(a) for a in profile.tilt_angles)  # open, tilt: seen
    next_centre = closes + first_centre  # close, open, tilt

    def bound(k, seen):
        """The farthest unseen sticker's first view; and a gripped face's centre shows only at U: every face
        whose centre is unseen needs a tilt of its own."""
        far = max((reach[s][k] for s in range(cube3.FACELET_COUNT) if not seen >> s & 1), default=None)
        if far is None:
            return rest.finish_ms[k]
        unseen = sum(1 for c in centres if not seen >> c & 1)
        return max(far, first_centre + next_centre * (unseen - 1) if unseen else 0)

    counter = itertools.count()
    parents: list = [None]  # node -> (parent node, ops, op counts after which a view is taken)
    seen0 = rest.shows[0]
    heap = [(bound(0, seen0), 1, next(counter), 0, 0, seen0, 0)]  # (f, views, tie, g, state, seen, node)
    best: dict = {}
    expanded = 0
    while heap:
        f, views, _, g, k, seen, node = heapq.heappop(heap)
        if k < 0:  # the finish was pushed: this is the cheapest complete sequence
            return _result(profile, rest, parents, node, -k - 1, g, views, expanded)
        if best.get((k, seen), (1 << 62, 0)) <= (g, views):
            continue
        best[(k, seen)] = (g, views)
        expanded += 1
        if expanded > max_expansions:
            raise GaveUp(max_expansions, f if weight == 1.0 else None)
        if seen == full:
            heapq.heappush(heap, (g + rest.finish_ms[k], views, next(counter), g + rest.finish_ms[k], -k - 1,
                                  seen, node))
            continue
        for cost, nxt, ops, points in rest.moves[k]:
            new_seen, taken = seen, []
            for done, _, shown in points:
                if shown & ~new_seen:
                    new_seen |= shown
                    taken.append(done)
            if best.get((nxt, new_seen), (1 << 62, 0)) <= (g + cost, views + len(taken)):
                continue
            parents.append((node, ops, tuple(taken)))
            heapq.heappush(heap, (g + cost + weight * bound(nxt, new_seen), views + len(taken), next(counter),
                                  g + cost, nxt, new_seen, len(parents) - 1))
    raise RuntimeError("no scan sequence sees every sticker (the grippers hide some in every position)")


def _result(profile: Robot3Profile, rest: _RestStates, parents, node, last, g, views, expanded) -> dict:
    steps = []
    while parents[node] is not None:
        node, ops, taken = parents[node]
        steps.append((ops, taken))
    steps.reverse()
    zero = (0,) * len(profile.arms)
    out_views: list[dict] = [{"name": "view1", "ops": [], "facelets": _names(rest.visible[(zero, ())])}]
    pending: list = []
    angles, opened = list(zero), set[str]()
    index = {arm: k for k, arm in enumerate(profile.arms)}
    for ops, taken in steps:
        for n, op in enumerate(ops, start=1):
            pending.append(op)
            _apply(op, angles, opened, index)
            if n in taken:
                shown = rest.visible[(tuple(angles), tuple(sorted(opened)))]
                out_views.append({"name": f"view{len(out_views) + 1}", "ops": pending, "facelets": _names(shown)})
                pending = []
    return {"views": out_views, "finish": pending + rest.finish[last], "arm_ms": g, "views_count": views,
            "expanded": expanded}


def _apply(op: dict, angles: list, opened: set, index: dict) -> None:
    """One op on the arms, in place: `opened` (the open arms) or `angles` (per arm, index[arm]; mod 180)."""
    if op["op"] == "open":
        opened |= set(op["arms"])
    elif op["op"] == "close":
        opened -= set(op["arms"])
    else:
        for arm, angle in op["arms"].items():
            angles[index[arm]] = (angles[index[arm]] + angle) % 180


def _names(places) -> list[str]:
    return [cube3.facelet_name(p) for p in places]
