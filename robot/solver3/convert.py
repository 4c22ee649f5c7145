"""Exact converter: the cheapest arm schedule of the four-arm 3x3x3 robot for a face-move sequence.

The robot's state is the cube's orientation in the robot (24) and the four
gripper angles mod 180 (16): 384 states.  Between two face turns the robot only
repositions (TILT, RESTORE), so the cheapest repositioning between any two
states is computed once (all-pairs shortest paths, matrix `reposition`).  A
face sequence is then a chain of min-plus products over 384-vectors:

    cost <- min over s of (cost[s] + reposition[s, s'])     then the next turn

Moves on one axis commute, so the sequence is first reduced to axial groups
(R L' R -> R2 L'); a group of two faces is turned together (both arms of a
pair) or one face at a time with repositioning between (the cube may be
tilted between them).  That is every schedule the model allows for the
sequence, so the result is exact: no plan may cost more than converting its
own face sequence.  Durations are whole milliseconds (float64 holds them
exactly).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..cube import FACES
from ..plan3 import Robot3Profile, normal, normalise_angle, rotation
from .cube3 import MOVE_NAMES

INF = float("inf")
N_GRIPS = 16
QUARTERS_OF_SUFFIX = (1, 2, 3)  # move index % 3 -> clockwise quarter turns
ANGLE_OF_QUARTERS = {1: 90, 2: 180, 3: -90}


def axial_groups(moves) -> list:
    """Face moves (cube3 move indices) -> [{face index: quarters}, ...], same-axis runs merged."""
    groups: list[dict[int, int]] = []
    for m in moves:
        face, quarters = m // 3, QUARTERS_OF_SUFFIX[m % 3]
        if groups and next(iter(groups[-1])) % 3 == face % 3:
            group = groups[-1]
            group[face] = (group.get(face, 0) + quarters) % 4
            if not group[face]:
                del group[face]
            if not group:
                groups.pop()
        else:
            groups.append({face: quarters})
    return groups


def group_moves(groups) -> list:
    """The face moves (indices) of axial groups, faces of a group in URFDLB order."""
    return [3 * face + q - 1 for group in groups for face, q in sorted(group.items())]


@dataclass(frozen=True)
class Edge:
    """A repositioning action between two robot states."""

    kind: str  # "tilt" or "restore"
    cost: int
    pair: str = ""
    angle: int = 0
    arms: tuple = ()

    def ops(self, profile: Robot3Profile) -> list:
        if self.kind == "tilt":
            return profile.tilt_ops(self.pair, self.angle)
        return profile.restore_ops(self.arms)


class RobotModel3:
    """States, repositioning costs and turn transitions of one Robot3Profile."""

    def __init__(self, profile: Robot3Profile):
        self.profile = profile
        self.arms = profile.arms
        self._orientations()
        self._edges()
        self._all_pairs()
        self._turns: dict = {}

    @property
    def n_states(self) -> int:
        return len(self.orients) * N_GRIPS

    def _orientations(self):
        """Every orientation (cube frame -> robot frame) reachable by tilts; index 0 = as put in."""
        self.orients = [np.eye(3, dtype=int)]
        index = {np.eye(3, dtype=int).tobytes(): 0}
        self.tilt_rot = {(pair, a): rotation(self.profile.faces_of(pair)[0], a)
                         for pair in self.profile.pair_names for a in self.profile.tilt_angles}
        frontier = [0]
        while frontier:
            nxt = []
            for o in frontier:
                for rot in self.tilt_rot.values():
                    q = rot @ self.orients[o]
                    if q.tobytes() not in index:
                        index[q.tobytes()] = len(self.orients)
                        self.orients.append(q)
                        nxt.append(len(self.orients) - 1)
            frontier = nxt
        self.orient_index = index
        # arm_of_face[o][cube face] = arm number (0..3) whose position holds that face, or -1 (U/D side).
        normals = {tuple(normal(f)): k for k, f in enumerate(self.arms)}
        self.arm_of_face = np.array([[normals.get(tuple(q @ normal(f)), -1) for f in FACES]
                                     for q in self.orients])

    def _arm_bits(self, pair):
        return sum(1 << k for k, arm in enumerate(self.arms) if arm in self.profile.faces_of(pair))

    def _edges(self):
        """Tilts and restores from every state: self.edges[s] = [(target, Edge), ...]."""
        p = self.profile
        self.edges: list[list[tuple[int, Edge]]] = [[] for _ in range(self.n_states)]
        for o, q in enumerate(self.orients):
            for g in range(N_GRIPS):
                s = o * N_GRIPS + g
                for (pair, angle), rot in self.tilt_rot.items():
                    target = self.orient_index[(rot @ q).tobytes()]
                    flip = self._arm_bits(pair) if abs(angle) == 90 else 0
                    self.edges[s].append((target * N_GRIPS + (g ^ flip),
                                          Edge("tilt", p.tilt_ms(angle, pair), pair=pair, angle=angle)))
                for pair in p.pair_names:
                    for subset in ((0,), (1,), (0, 1)):
                        arms = tuple(p.faces_of(pair)[i] for i in subset)
                        bits = sum(1 << self.arms.index(a) for a in arms)
                        if g & bits == bits:
                            self.edges[s].append((o * N_GRIPS + (g & ~bits),
                                                  Edge("restore", p.restore_ms(arms), arms=arms)))

    def _all_pairs(self):
        n = self.n_states
        d = np.full((n, n), INF)
        np.fill_diagonal(d, 0.0)
        for s, out in enumerate(self.edges):
            for t, edge in out:
                d[s, t] = min(d[s, t], edge.cost)
        for k in range(n):  # Floyd-Warshall, one row/column at a time
            np.minimum(d, d[:, k:k + 1] + d[k:k + 1, :], out=d)
        self.reposition = d

    def turn(self, group: tuple):
        """(source, cost) arrays of turning `group` ((face, quarters), ...) into each state.

        source[t] is the state the turn starts from to end in t (-1: no such
        turn), cost[t] its duration.  A turn maps states one to one (it only
        flips the turning arms' gripper angles), so pulling is exact.
        """
        if group in self._turns:
            return self._turns[group]
        p = self.profile
        n = self.n_states
        source = np.full(n, -1, dtype=np.int64)
        cost = np.full(n, INF)
        for o in range(len(self.orients)):
            arms = [int(self.arm_of_face[o][face]) for face, _ in group]
            if min(arms) < 0 or len({p.pair_of(self.arms[a]) for a in arms}) != 1:
                continue  # a face on the U/D side, or faces of two pairs
            other = self._arm_bits(p.other_pair(p.pair_of(self.arms[arms[0]])))
            flip = sum(1 << a for a, (_, q) in zip(arms, group) if q % 2)
            duration = max(p.turn_ms(ANGLE_OF_QUARTERS[q]) for _, q in group)
            for g in range(N_GRIPS):
                if g & other:
                    continue  # the other pair has a gripper at 90: it blocks this layer
                target = o * N_GRIPS + (g ^ flip)
                source[target] = o * N_GRIPS + g
                cost[target] = duration
        self._turns[group] = (source, cost)
        return source, cost

    def turn_arms(self, state: int, group: tuple) -> dict:
        o = state // N_GRIPS
        return {self.arms[int(self.arm_of_face[o][face])]: ANGLE_OF_QUARTERS[q] for face, q in group}

    # -- dynamic programming ---------------------------------------------------------------

    def _steps(self, group: dict) -> list:
        """Ways to do one axial group: each a tuple of turns (sub-groups) with repositioning before each."""
        items = tuple(sorted(group.items()))
        if len(items) == 1:
            return [(items,)]
        return [(items,), ((items[0],), (items[1],)), ((items[1],), (items[0],))]

    def _apply_turn(self, v, turn):
        source, cost = self.turn(turn)
        out = np.where(source >= 0, v[..., np.maximum(source, 0)] + cost, INF)
        return out

    def _reposition(self, v):
        # Only states reachable so far can be left (after a turn about a sixth of them): the
        # min-plus product over those columns is the same, several times faster.
        live = np.flatnonzero(np.isfinite(v.reshape(-1, self.n_states)).any(axis=0))
        return (v[..., live, None] + self.reposition[live]).min(axis=-2)

    def _group(self, v, group):
        best = None
        for way in self._steps(group):
            w = v
            for turn in way:
                w = self._apply_turn(self._reposition(w), turn)
            best = w if best is None else np.minimum(best, w)
        return best

    def start(self, batch: int | None = None):
        shape = (self.n_states,) if batch is None else (batch, self.n_states)
        v = np.full(shape, INF)
        v[..., 0] = 0.0  # as put in, every gripper at 0
        return v

    def cost(self, moves) -> int:
        """Machine time (ms) of the cheapest schedule for a face-move sequence."""
        v = self.start()
        for group in axial_groups(moves):
            v = self._group(v, group)
        return int(v.min())

    def costs(self, sequences) -> np.ndarray:
        """cost() of many sequences at once (padded with no-op groups), one numpy pass per group."""
        grouped = [axial_groups(moves) for moves in sequences]
        v = self.start(len(sequences))
        for k in range(max((len(g) for g in grouped), default=0)):
            rows: dict[tuple, list[int]] = {}
            for i, groups in enumerate(grouped):
                if k < len(groups):
                    rows.setdefault(tuple(sorted(groups[k].items())), []).append(i)
            for items, idx in rows.items():
                v[idx] = self._group(v[idx], dict(items))
        return v.min(axis=-1).astype(np.int64)

    def schedule(self, moves) -> tuple[int, list]:
        """(cost, ops) of the cheapest schedule, ops as in robot/plan3.py."""
        groups = axial_groups(moves)
        layers = [self.start()]  # the cost vector before each group
        for group in groups:
            layers.append(self._group(layers[-1], group))
        state = int(np.argmin(layers[-1]))
        total = int(layers[-1][state])
        ops: list = []
        for k in range(len(groups) - 1, -1, -1):
            state, group_ops = self._back_group(layers[k], groups[k], state, layers[k + 1][state])
            ops[:0] = group_ops
        assert state == 0 and self.profile.plan_cost(ops) == total
        return total, ops

    def _back_group(self, v, group, end, value):
        """Walk one group backwards: (state before it, its ops) for a schedule ending in `end`."""
        for way in self._steps(group):
            vectors = [v]  # before each turn's repositioning
            for turn in way:
                vectors.append(self._apply_turn(self._reposition(vectors[-1]), turn))
            if vectors[-1][end] != value:
                continue
            ops: list = []
            state = end
            for j in range(len(way) - 1, -1, -1):
                source, cost = self.turn(way[j])
                before = int(source[state])
                ops[:0] = self.profile.turn_ops(self.turn_arms(before, way[j]))
                start = int(np.argmin(vectors[j] + self.reposition[:, before]))
                ops[:0] = self.path_ops(start, before)
                state = start
            return state, ops
        raise AssertionError("no way reproduces the group's cost")

    def path_ops(self, start: int, end: int) -> list:
        """Ops of a cheapest repositioning from `start` to `end`."""
        ops = []
        while start != end:
            left = self.reposition[start, end]
            target, edge = next((t, e) for t, e in self.edges[start]
                                if t != start and e.cost + self.reposition[t, end] == left)
            ops += edge.ops(self.profile)
            start = target
        return ops


@lru_cache(maxsize=4)
def model(profile: Robot3Profile) -> RobotModel3:
    return RobotModel3(profile)


def convert(moves, profile: Robot3Profile) -> tuple[int, list]:
    """(cost_ms, ops) of the cheapest schedule for face moves (indices or a string)."""
    if isinstance(moves, str):
        from .cube3 import parse_moves

        moves = parse_moves(moves)
    return model(profile).schedule(list(moves))


def move_text(moves) -> str:
    return " ".join(MOVE_NAMES[m] for m in moves)


__all__ = ["RobotModel3", "axial_groups", "group_moves", "convert", "model", "normalise_angle"]
