"""The 3x3x3 solver's Python API (documented in robot/solver3/__init__.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import robot.solver3.coords as C
import robot.solver3.cube3 as cube3
import robot.solver3.tables as T
from .search import FACE, Search, Unsolvable

METRICS = ("htm", "qtm", "axial")
GODS_NUMBER_HTM = 20
# Whole-cube rotation U -> R -> F -> U (a third of a turn about the URF-DBL diagonal).
_THIRD_TURN = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]])


class MetricNotReady(ValueError):
    """A metric this solver does not offer (yet)."""


def htm_cost(moves) -> int:
    return len(moves)


def qtm_cost(moves) -> int:
    return sum(2 if m % 3 == 1 else 1 for m in moves)


def axial_cost(moves) -> int:
    """Moves of opposite faces in a row (U D, R2 L', ...) turn together: one move."""
    count, axis = 0, None
    for m in moves:
        if FACE[m] % 3 != axis:
            count, axis = count + 1, FACE[m] % 3
    return count


COST = {"htm": htm_cost, "qtm": qtm_cost, "axial": axial_cost}
# The most HTM moves a solution costing less than `cost` can have (HTM <= QTM; one axial
# move is at most two face moves).
HTM_BOUND = {"htm": lambda cost: cost - 1, "qtm": lambda cost: cost - 1, "axial": lambda cost: 2 * (cost - 1)}


@dataclass(frozen=True)
class Solution:
    """A solution: `moves` in standard notation, space-separated ('' when already solved)."""
    moves: str
    length: int  # in `metric`
    metric: str
    solve_ms: float  # from the call to this solution
    htm: int  # face moves
    facelets: str = field(default="", compare=False)

    @property
    def move_list(self) -> list[str]:
        return self.moves.split()

    def to_json(self) -> dict:
        return {"facelets": self.facelets, "ok": True, "puzzle": "3x3x3", "metric": self.metric,
                "moves": self.moves, "length": self.length, "htm": self.htm, "solve_ms": round(self.solve_ms, 3)}


_SEARCHES: dict = {}


def default_directory() -> Path:
    from .. import config as config_module
    return T.directory_for(config_module.load())


def load_search(directory: Path | None = None, build: bool = False, show_progress=None) -> Search:
    """The search over the tables in `directory` (default: tables.dir of config.yaml, /3x3x3),
    loaded once per process.  Raises tables.NotBuilt unless built (or build=True)."""
    directory = Path(directory) if directory is not None else default_directory()
    key = directory.resolve()
    if key not in _SEARCHES:
        loaded = T.load(directory, build=build, show_progress=show_progress)
        _SEARCHES[key] = Search(loaded)
    return _SEARCHES[key]


def views(state):
    """The cube seen along each of the 3 axes, and inverted: [(view state, map of a view's
    solution back to a solution of `state`)].  Searching all six and keeping the first
    (or best) solution cuts the slow tail: which view is easy varies from cube to cube."""
    colours = cube3.colours_from_cubies(*(np.asarray(x)[None] for x in state))
    out = []
    rotation = np.eye(3, dtype=int)
    for _ in range(3):
        seen = cube3.rotate_colours(colours, rotation)
        cp, co, _ = cube3.corners_from_colours(seen)
        ep, eo, _ = cube3.edges_from_colours(seen)
        view = (cp[0], co[0], ep[0], eo[0])
        back = [cube3.rotated_face(f, rotation.T) for f in range(6)]
        for inverted in (False, True):
            def unmap(moves, back=back, inverted=inverted):
                moves = cube3.inverse_moves(moves) if inverted else moves
                return [3 * back[m // 3] + m % 3 for m in moves]
            out.append((cube3.inverse(view) if inverted else view, unmap))
        rotation = _THIRD_TURN @ rotation
    return out


def _state_of(facelets, scramble):
    if (facelets is None) == (scramble is None):
        raise ValueError("give exactly one of facelets or scramble")
    if scramble is not None:
        state = cube3.apply(cube3.solved(), cube3.parse_moves(scramble))
        return state, cube3.to_facelets(state)
    return cube3.parse_facelets(facelets)[0], facelets


def check_metric(metric: str) -> None:
    if metric == "robot":
        raise MetricNotReady("--metric robot is not available for the 3x3x3 yet: the four-arm robot3 planner "
                             "will provide it; use htm, qtm or axial")
    if metric not in METRICS:
        raise MetricNotReady(f"unknown metric {metric!r} for the 3x3x3: use one of {', '.join(METRICS)}")


def solutions(facelets: str | None = None, *, scramble: str | None = None, metric: str = "htm",
              max_length: int | None = None, time_limit: float | None = None, tables_dir=None, search=None):
    """Yield Solutions of strictly decreasing length in `metric` (see the package docstring)."""
    check_metric(metric)
    if max_length is not None and max_length < 0:
        raise ValueError(f"max_length must be >= 0, got {max_length}")
    search = search or load_search(tables_dir)
    started = time.perf_counter()  # the time to load the tables (once) is not solving time
    state, facelets = _state_of(facelets, scramble)
    cost = COST[metric]
    max_htm = GODS_NUMBER_HTM
    if max_length is not None:
        max_htm = min(max_htm, HTM_BOUND[metric](max_length + 1))
    deadline = None if time_limit is None else started + time_limit
    seen = views(state)
    starts = [C.phase_coords(view) for view, _ in seen]
    for index, moves in search.solutions(starts, max_htm=max_htm, deadline=deadline, hard_deadline=max_length is not None,
                                         cost=cost, max_cost=max_length, htm_bound=HTM_BOUND[metric]):
        moves = seen[index][1](moves)
        yield Solution(cube3.format_moves(moves), cost(moves), metric, (time.perf_counter() - started) * 1000,
                       len(moves), facelets)


def solve(facelets: str | None = None, *, scramble: str | None = None, metric: str = "htm",
          max_length: int | None = None, time_limit: float | None = None, tables_dir=None, search=None) -> Solution:
    """The first solution found (no time_limit), or the best found within time_limit seconds."""
    best = None
    for best in solutions(facelets, scramble=scramble, metric=metric, max_length=max_length,
                          time_limit=time_limit, tables_dir=tables_dir, search=search):
        if time_limit is None:
            break
    if best is None:
        limit = f"{max_length} moves ({metric})" if max_length is not None else f"{GODS_NUMBER_HTM} moves (htm)"
        within = f" within {time_limit} s" if time_limit is not None else ""
        raise Unsolvable(f"no solution of at most {limit} found{within}")
    return best
