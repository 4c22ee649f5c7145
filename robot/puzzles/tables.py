"""Move tables and distance tables over a coordinate Space.

A move table says, for each value of one component and each move, the value
after the move (int32, one column per move): components change independently,
so the product index of a neighbour is assembled from one lookup per component.

`distance_table` fills a uint8 array over the whole space, by breadth-first
search (every move costs 1) or by bucketed Dijkstra (integer move costs, e.g.
a half turn costing 2): bucket d holds the states at distance d, and since
every cost is at least 1, a bucket is final when it is reached.  The work is
done in chunks of states with numpy; once the frontier outgrows the unknown
states, a unit-cost search switches to pulling (each unknown state looks for a
neighbour in the last layer), which is cheaper at the deep end.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from ..progress import ProgressBar
from .coords import Space

UNKNOWN = 255
CHUNK = 1 << 21
SHOW_PROGRESS_AFTER = 1.0  # seconds: short builds draw no bar


class MoveTables:
    """One move table per component of `space`, for the moves `moves` (puzzle Move objects).

    reuse: another MoveTables over the same moves whose tables serve the components they share.
    """

    def __init__(self, space: Space, moves, reuse: "MoveTables | None" = None):
        self.space, self.moves = space, list(moves)
        known = {}
        if reuse is not None and [m.name for m in reuse.moves] == [m.name for m in self.moves]:
            known = {c.name: t for c, t in zip(reuse.space.components, reuse.tables)}
        self.tables: list[np.ndarray] = [known[c.name] if c.name in known else self._component_table(c)
                       for c in space.components]

    def _component_table(self, component) -> np.ndarray:
        if hasattr(component, "move_table"):  # a faster way of its own
            return component.move_table(self.moves)
        return table_from_states(self.space.puzzle, component, self.moves)

    def neighbours(self, coords, column: int) -> np.ndarray:
        """Product index of each state (given as its component coords) after move `column`."""
        index = np.zeros(len(coords[0]), dtype=np.int64)
        for size, table, coord in zip(self.space.sizes, self.tables, coords):
            index = index * size + table[coord, column]
        return index

    def child_coords(self, coords: tuple, column: int) -> tuple:
        """Component coords (Python ints) of one state after move `column`."""
        return tuple(int(table[c, column]) for table, c in zip(self.tables, coords))

    def all_children(self, coords: tuple) -> np.ndarray:
        """(moves, components) array: the coords of every child of one state."""
        return np.stack([table[c] for table, c in zip(self.tables, coords)], axis=1)


def table_from_states(puzzle, component, moves) -> np.ndarray:
    """A component's move table the plain way: write each value into a state, move it, rank it."""
    table = np.empty((component.size, len(moves)), dtype=np.int32)
    for start in range(0, component.size, CHUNK):
        values = np.arange(start, min(start + CHUNK, component.size))
        states = np.tile(puzzle.solved, (len(values), 1))
        component.write(states, values)
        for column, move in enumerate(moves):
            table[values, column] = component.rank(puzzle.apply_move(states, move))
    return table


class _Progress:
    """A ProgressBar that appears only once the work has taken SHOW_PROGRESS_AFTER seconds."""

    def __init__(self, total: int, label: str, enabled: bool | None):
        self.total, self.label, self.enabled = total, label, enabled
        self.started = time.monotonic()
        self.bar: ProgressBar | None = None

    def update(self, done: int, note: str) -> None:
        if self.enabled is False:
            return
        if self.bar is None and time.monotonic() - self.started >= SHOW_PROGRESS_AFTER:
            self.bar = ProgressBar(self.total, self.label, stream=sys.stderr, enabled=self.enabled)
        if self.bar is not None:
            self.bar.update(done, note)

    def finish(self, note: str) -> None:
        if self.bar is not None:
            self.bar.finish(note)


def distance_table(tables: MoveTables, start_states=None, costs=None, progress: bool | None = None,
                   label: str = "distance table") -> np.ndarray:
    """Distance of every index of the space from the start states (default: solved).

    costs: one integer >= 1 per move (default all 1: plain BFS); distances must stay below 255.
    progress: None draws a bar on a terminal for long builds, True always, False never.
    """
    space = tables.space
    costs = [1] * len(tables.moves) if costs is None else [int(c) for c in costs]
    if min(costs) < 1:
        raise ValueError("every move must cost at least 1")
    unit = all(c == 1 for c in costs)
    inverse_column = _inverse_columns(tables) if unit else None
    distance = np.full(space.size, UNKNOWN, dtype=np.uint8)
    start = space.puzzle.solved if start_states is None else start_states
    distance[space.index(np.atleast_2d(start))] = 0
    bar = _Progress(space.size, f"  {space.puzzle.name} {label}", progress)
    depth = 0
    while True:
        counts = _histogram(distance)
        found = space.size - int(counts[UNKNOWN])
        at_depth = int(counts[depth])
        if not counts[depth:UNKNOWN].any():
            break
        if depth + max(costs) >= UNKNOWN:
            raise ValueError(f"distances reach {depth + max(costs)}: too deep for a uint8 table")
        if unit and at_depth > space.size - found:
            _pull_layer(tables, distance, depth, inverse_column)
        else:
            _push_layer(tables, distance, depth, costs)
        bar.update(found + at_depth, f"depth {depth}: {found:,} states")
        depth += 1
    bar.finish(f"{found:,} states, deepest {depth - 1}")
    return distance


def _histogram(distance: np.ndarray) -> np.ndarray:
    """How many entries hold each value 0..255 (in chunks: bincount would copy the array as int64)."""
    counts = np.zeros(256, dtype=np.int64)
    for start in range(0, len(distance), CHUNK * 4):
        counts += np.bincount(distance[start:start + CHUNK * 4], minlength=256)
    return counts


def _push_layer(tables: MoveTables, distance: np.ndarray, depth: int, costs) -> None:
    """Every state at `depth` relaxes its neighbours (forward search)."""
    for start in range(0, len(distance), CHUNK * 4):
        window = distance[start:start + CHUNK * 4]
        frontier = np.flatnonzero(window == depth) + start
        for part in range(0, len(frontier), CHUNK):
            coords = tables.space.split(frontier[part:part + CHUNK])
            for column, cost in enumerate(costs):
                reached = tables.neighbours(coords, column)
                better = reached[distance[reached] > depth + cost]
                distance[better] = depth + cost


def _pull_layer(tables: MoveTables, distance: np.ndarray, depth: int, inverse_column) -> None:
    """Every unknown state with a neighbour at `depth` gets depth + 1 (backward search, unit costs)."""
    for start in range(0, len(distance), CHUNK * 4):
        window = distance[start:start + CHUNK * 4]
        unknown = np.flatnonzero(window == UNKNOWN) + start
        for part in range(0, len(unknown), CHUNK):
            candidates = unknown[part:part + CHUNK]
            for column in range(len(tables.moves)):
                if len(candidates) == 0:
                    break
                coords = tables.space.split(candidates)
                hit = distance[tables.neighbours(coords, inverse_column[column])] == depth
                distance[candidates[hit]] = depth + 1
                candidates = candidates[~hit]


def _inverse_columns(tables: MoveTables) -> list[int]:
    """For each move, the column of its inverse (pulling needs the move set closed under inverses)."""
    puzzle = tables.space.puzzle
    names = [m.name for m in tables.moves]
    columns = []
    for move in tables.moves:
        inverse = puzzle.inverse(move).name
        if inverse not in names:
            raise ValueError(f"the move set has {move.name} but not its inverse {inverse}")
        columns.append(names.index(inverse))
    return columns


def depth_counts(distance: np.ndarray) -> list[int]:
    """How many states at each distance 0, 1, ... (unknown entries are not counted)."""
    counts = _histogram(distance)[:UNKNOWN]
    deepest = int(np.flatnonzero(counts)[-1]) if counts.any() else -1
    return [int(c) for c in counts[:deepest + 1]]
