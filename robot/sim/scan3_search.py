"""How the default 3x3x3 scan sequence (config scan3.views) was chosen: the least arm time found that
shows every one of the 54 stickers at least once in spite of the grippers (SIMULATED geometry).

What the camera sees depends only on the gripper angles (the arms stand still in the robot frame;
robot/sim/render3.py's geometry, config simulated_robot.gripper3 and camera.pose): `visible_places`
renders, for each of the 16 angle sets (every gripper closed), which places of U and F the arms leave
mostly visible (render3.SEEN_SHARE of the sampled region).  A gripped face's centre is always under
its crossbar, so every face must come up to U once: at least five tilts.

`search` is an A* over (cube orientation, gripper angles, stickers seen): from a rest state (every
gripper closed) the robot may TILT (robot3.tilt_angles; the open pair may turn back to 0 while it is
open, an extra quarter turn instead of a RESTORE) or REGRIP one arm or one pair (open, quarter turn,
close: a RESTORE, or its opposite to show what the jaws at 0 hid); a view is taken at every rest
state that shows something new (views cost frames, not arm time: fewer views break ties); the goal
is every sticker seen and every gripper back at 0 (a plan starts so).  Cost: robot3.timing.
Bound: the farthest unseen sticker's nearest showing state, and robot3's tilt time for every face
whose centre has not been seen yet (admissible and consistent).

`choose` runs the exact search within a limit of states; past it (the default geometry needs more
than this machine's memory allows) it keeps the exact search's proven lower bound and takes the
cheapest of weighted searches (each within `weight` times the optimum).  bench/scan3.py prints both.
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


def visible_places(pose: Pose, geometry: ArmGeometry, profile: Robot3Profile,
                   seen_share: float = render3.SEEN_SHARE) -> dict[tuple, tuple]:
    """{gripper angles (profile.arms order, 0/90): the places (facelet indices, robot frame) seen}."""
    names = [cube3.facelet_name(i) for i in UF_PLACES]
    out = {}
    for angles in itertools.product((0, 90), repeat=len(profile.arms)):
        arms = render3.arms_at(geometry, dict(zip(profile.arms, angles)))
        share = render3.seen_share(pose, arms, names)
        out[angles] = tuple(p for p, s in zip(UF_PLACES, share) if s >= seen_share)
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
    """The robot's rest states (cube orientation x gripper angles, every gripper closed), numbered,
    with their moves, what each shows, and the cheapest arm time between any two."""

    def __init__(self, profile: Robot3Profile, visible: dict[tuple, tuple]):
        from ..scan_sequence3 import _source

        self.visible = visible
        start = (tuple(range(cube3.FACELET_COUNT)), (0,) * len(profile.arms))
        self.keys, self.number = [start], {start: 0}
        self.moves: list[list] = []  # per state: [(cost, next state, ops)]
        k = 0
        while k < len(self.keys):
            source, angles = self.keys[k]
            out = []
            for ops, new_angles in _moves(profile, angles):
                new_source = source
                for op in ops:
                    if op["op"] == "tilt":
                        first = next(iter(op["arms"]))
                        new_source = tuple(new_source[i] for i in _source(first, op["arms"][first], True))
                key = (new_source, new_angles)
                if key not in self.number:
                    self.number[key] = len(self.keys)
                    self.keys.append(key)
                out.append((profile.plan_cost(ops), self.number[key], tuple(ops)))
            self.moves.append(out)
            k += 1
        self.shows = [sum(1 << source[p] for p in visible[angles]) for source, angles in self.keys]
        self.finish = [_finish(profile, angles) for _, angles in self.keys]
        self.finish_ms = [profile.plan_cost(ops) for ops in self.finish]
        self.distance = self._all_distances()

    def _all_distances(self) -> list:
        """The cheapest arm time from each rest state to each (Floyd-Warshall over the moves)."""
        n = len(self.keys)
        d = np.full((n, n), np.inf)
        np.fill_diagonal(d, 0.0)
        for k, moves in enumerate(self.moves):
            for cost, nxt, _ in moves:
                d[k, nxt] = min(d[k, nxt], cost)
        for k in range(n):
            np.minimum(d, d[:, k:k + 1] + d[k:k + 1, :], out=d)
        return d.astype(int).tolist()


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
    "expanded"}.  A* with an admissible bound (the farthest unseen sticker's nearest showing state)."""
    rest = _RestStates(profile, visible)
    n = len(rest.keys)
    full = (1 << cube3.FACELET_COUNT) - 1
    # per sticker: the cheapest arm time from each state to a state that shows it
    reach = []
    for sticker in range(cube3.FACELET_COUNT):
        showing = [k for k in range(n) if rest.shows[k] >> sticker & 1]
        reach.append([min(rest.distance[k][t] for t in showing) for k in range(n)])
    centres = [9 * f + 4 for f in range(6)]
    tilt_ms = min(profile.tilt_ms(a) for a in profile.tilt_angles)

    def bound(k, seen):
        """A gripped face's centre shows only at U: every face whose centre is unseen needs a tilt of its own."""
        far = max((reach[s][k] for s in range(cube3.FACELET_COUNT) if not seen >> s & 1), default=None)
        if far is None:
            return rest.finish_ms[k]
        return max(far, tilt_ms * sum(1 for c in centres if not seen >> c & 1))

    counter = itertools.count()
    parents: list = [None]  # node -> (parent node, ops, took a view)
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
        for cost, nxt, ops in rest.moves[k]:
            new_seen = seen | rest.shows[nxt]
            if best.get((nxt, new_seen), (1 << 62, 0)) <= (g + cost, views):
                continue
            took = new_seen != seen
            parents.append((node, ops, took))
            heapq.heappush(heap, (g + cost + weight * bound(nxt, new_seen), views + took, next(counter), g + cost, nxt,
                                  new_seen, len(parents) - 1))
    raise RuntimeError("no scan sequence sees every sticker (the grippers hide some in every position)")


def _result(profile: Robot3Profile, rest: _RestStates, parents, node, last, g, views, expanded) -> dict:
    steps = []
    while parents[node] is not None:
        node, ops, took = parents[node]
        steps.append((ops, took))
    steps.reverse()
    current = (0,) * len(profile.arms)
    out_views: list[dict] = [{"name": "view1", "ops": [], "facelets": _names(rest.visible[current])}]
    pending: list = []
    for ops, took in steps:
        pending += list(ops)
        current = _angles_after(profile, current, ops)
        if took:
            out_views.append({"name": f"view{len(out_views) + 1}", "ops": pending,
                              "facelets": _names(rest.visible[current])})
            pending = []
    return {"views": out_views, "finish": pending + rest.finish[last], "arm_ms": g, "views_count": views,
            "expanded": expanded}


def _names(places) -> list[str]:
    return [cube3.facelet_name(p) for p in places]


def _angles_after(profile: Robot3Profile, angles: tuple, ops) -> tuple:
    new = list(angles)
    for op in ops:
        if op["op"] in ("turn", "tilt"):
            for arm, angle in op["arms"].items():
                k = profile.arms.index(arm)
                new[k] = (new[k] + angle) % 180
    return tuple(new)
