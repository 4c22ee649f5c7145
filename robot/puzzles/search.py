"""Searching a puzzle: IDA* with pluggable heuristics, and a bidirectional BFS oracle.

IDA* walks the coordinates of a Space through its MoveTables.  A heuristic is
any callable taking an (n, components) array of coords and returning n lower
bounds on the distance to solved; `PatternDatabase` makes one from a distance
table over some of the components, and several are combined by their maximum.
Consecutive moves of one axis are pruned: no two turns of the same base move in
a row, and of two commuting moves (opposite faces) only one order.

`bidirectional_search` needs no tables: it grows breadth-first layers of full
states from the scramble and from solved until they meet, so it is an
independent check of optimal lengths for short scrambles.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .coords import Space
from .tables import UNKNOWN, MoveTables


class SearchLimitError(RuntimeError):
    """No solution within the depth (or node) limit."""


class PatternDatabase:
    """A heuristic from a distance table over some components of the search space."""

    def __init__(self, search_space: Space, pattern_space: Space, distance: np.ndarray):
        names = search_space.names
        missing = [n for n in pattern_space.names if n not in names]
        if missing:
            raise ValueError(f"the search space has no component {', '.join(missing)}")
        self.columns = [names.index(n) for n in pattern_space.names]
        self.sizes = pattern_space.sizes
        self.distance = distance

    def __call__(self, coords: np.ndarray) -> np.ndarray:
        index = np.zeros(len(coords), dtype=np.int64)
        for column, size in zip(self.columns, self.sizes):
            index = index * size + coords[:, column]
        bound = self.distance[index].astype(np.int64)
        bound[bound == UNKNOWN] = 0  # not in the table: no information
        return bound


def _commuting_bases(puzzle, moves) -> dict:
    """For each base move, the bases it commutes with (tested on scrambled states)."""
    probes = puzzle.random_states(2, np.random.default_rng(1), moves=30)
    bases: dict[str, Any] = {}
    for move in moves:
        bases.setdefault(move.base, move)
    result: dict[str, set[str]] = {base: set() for base in bases}
    for a, move_a in bases.items():
        for b, move_b in bases.items():
            if a != b:
                ab = puzzle.apply_move(puzzle.apply_move(probes, move_a), move_b)
                ba = puzzle.apply_move(puzzle.apply_move(probes, move_b), move_a)
                if np.array_equal(ab, ba):
                    result[a].add(b)
    return result


class IDAStar:
    """Optimal (for admissible heuristics) search over `tables`' space and moves."""

    def __init__(self, tables: MoveTables, heuristics):
        self.tables, self.heuristics = tables, list(heuristics)
        self.moves = tables.moves
        puzzle = tables.space.puzzle
        commuting = _commuting_bases(puzzle, self.moves)
        base_order = list(dict.fromkeys(m.base for m in self.moves))
        # allowed[last][column]: may move `column` follow a move with index `last`?
        self.allowed = []
        for last in self.moves:
            self.allowed.append([
                m.base != last.base and not (m.base in commuting[last.base]
                                             and base_order.index(m.base) < base_order.index(last.base))
                for m in self.moves])
        self.goal = tuple(int(c[0]) for c in tables.space.coords(puzzle.solved))
        self.nodes = 0

    def bound(self, coords: np.ndarray) -> np.ndarray:
        if not self.heuristics:
            return np.zeros(len(coords), dtype=np.int64)
        return np.max([h(coords) for h in self.heuristics], axis=0)

    def solve(self, state: np.ndarray, max_depth: int = 20, node_limit: int | None = None) -> list[str]:
        """Move names taking `state` (canonical for puzzles with a fixed piece) to solved."""
        start = tuple(int(c[0]) for c in self.tables.space.coords(state))
        self.nodes = 0
        limit = int(self.bound(np.array([start]))[0])
        path: list[int] = []
        while limit <= max_depth:
            result = self._search(start, 0, limit, None, path, node_limit)
            if result is True:
                return [self.moves[i].name for i in path]
            if result == np.inf:
                break
            limit = result
        raise SearchLimitError(f"no solution within {max_depth} moves ({self.nodes:,} nodes searched)")

    def _search(self, coords, depth, limit, last, path, node_limit):
        if coords == self.goal:
            return True
        self.nodes += 1
        if node_limit is not None and self.nodes > node_limit:
            raise SearchLimitError(f"node limit {node_limit:,} reached at depth bound {limit}")
        children = self.tables.all_children(coords)
        bounds = self.bound(children)
        smallest = np.inf
        allowed = self.allowed[last] if last is not None else None
        for column in np.argsort(bounds, kind="stable"):
            if allowed is not None and not allowed[column]:
                continue
            total = depth + 1 + int(bounds[column])
            if total > limit:
                smallest = min(smallest, total)
                continue
            path.append(int(column))
            result = self._search(tuple(int(c) for c in children[column]), depth + 1, limit, int(column),
                                  path, node_limit)
            if result is True:
                return True
            path.pop()
            smallest = min(smallest, result)
        return smallest


def bidirectional_search(puzzle, state: np.ndarray, moves, max_depth: int = 12) -> list[str]:
    """An optimal move sequence (from `moves`) taking `state` to solved, by meeting BFS layers."""
    start = puzzle.canonical(state)
    goal = puzzle.solved
    if np.array_equal(start, goal):
        return []
    inverse = {m.name: puzzle.inverse(m) for m in moves}
    # key -> (depth, neighbour key towards the side's root, move name)
    sides = [{start.tobytes(): (0, None, None)}, {goal.tobytes(): (0, None, None)}]
    frontiers = [start[None, :], goal[None, :]]
    depths = [0, 0]
    while depths[0] + depths[1] < max_depth:
        side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
        seen, other = sides[side], sides[1 - side]
        new_rows, meetings = [], []
        for move in moves:
            # Forward side: child = parent * move.  Backward side: parent = child * inverse(move).
            step = move if side == 0 else inverse[move.name]
            children = puzzle.apply_move(frontiers[side], step)
            for parent, child in zip(frontiers[side], children):
                key = child.tobytes()
                if key in seen:
                    continue
                seen[key] = (depths[side] + 1, parent.tobytes(), move.name)
                new_rows.append(child)
                if key in other:
                    meetings.append(key)
        depths[side] += 1
        if meetings:
            best = min(meetings, key=lambda k: other[k][0])
            return _join(sides, best)
        if not new_rows:
            break
        frontiers[side] = np.array(new_rows)
    raise SearchLimitError(f"no solution within {max_depth} moves")


def _join(sides, meeting: bytes) -> list[str]:
    forward, backward = sides
    first, key = [], meeting
    while forward[key][1] is not None:
        _, key, name = forward[key]
        first.append(name)
    second, key = [], meeting
    while backward[key][1] is not None:
        _, key, name = backward[key]
        second.append(name)
    # forward records the move that reached the key; backward the move that leads from it to the goal
    return first[::-1] + second
