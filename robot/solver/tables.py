"""Solver tables: built on first use (or `cube-robot tables build`), checksummed, rebuilt when stale.

Files in the tables directory (default tables/):
  coords.npz      coordinate transition tables (solver/coords.py), profile independent
  htm.npy         uint8[3,674,160]  optimal half-turn-metric distance (U R F turns, DBL fixed);
                  solved = 0, range 0..11
  qtm.npy         uint8[3,674,160]  the same in the quarter-turn metric; range 0..14
  robot-cost.npy  uint16[n_pairs * n_classes * n_parities, 3,674,160]  exact robot time to solved,
                  in ms, for each holding pair in the profile's canonical order (plan.RobotProfile:
                  not the order of config.yaml), each class of the turn just made (solver/costs.py:
                  one class with the default settings) and, with robot.square_released_arms, each
                  quarter parity of the holding pair's arms (4; else 1); solved = 0; 65535 =
                  unreachable with this arm layout
  manifest.json   format version, the robot profile robot-cost.npy was built for (its pairs listed in
                  row order), and the SHA-256 and size of every file

A table whose checksum or size does not match, built by another format version, or (robot-cost) for
another robot profile, is rebuilt with a message and never used (robot/tables_store.py keeps them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config_types import Config
from ..plan import RobotProfile, Turn
from ..progress import ProgressBar
from ..tables_store import TableError, TableStore, tables_dir
from .coords import FACE_TURNS, N_STATES, SOLVED_INDEX, CoordTables
from .costs import CostModel, start_values

UNREACHABLE = np.iinfo(np.uint16).max
UNSEEN = np.iinfo(np.uint8).max
# Plain puzzle metrics: turns of U, R, F only (the DBL corner stays put).
METRIC_TURNS = {
    "htm": ("U", "U2", "U'", "R", "R2", "R'", "F", "F2", "F'"),
    "qtm": ("U", "U'", "R", "R'", "F", "F'"),
}
TABLE_FILES = ("coords.npz", "robot-cost.npy", *(f"{metric}.npy" for metric in METRIC_TURNS))


def turn_face_indices(turn: Turn) -> tuple:
    """FACE_TURNS indices of the face moves a robot turn makes."""
    return tuple(FACE_TURNS.index(m) for m in turn.moves())


def build_metric_table(coords: CoordTables, metric: str, progress: ProgressBar | None = None) -> np.ndarray:
    """Breadth-first distances in the htm or qtm metric."""
    turns = [FACE_TURNS.index(m) for m in METRIC_TURNS[metric]]
    dist = np.full(N_STATES, UNSEEN, dtype=np.uint8)
    dist[SOLVED_INDEX] = 0
    frontier = np.array([SOLVED_INDEX])
    depth, seen = 0, 1
    while len(frontier):
        cp8, co8 = coords.robot_frame(frontier)
        found = []
        for t in turns:
            succ = coords.canonical_indices(coords.cp_move[t, cp8], coords.co_move[t, co8])
            found.append(succ[dist[succ] == UNSEEN])
        frontier = np.unique(np.concatenate(found))
        depth += 1
        dist[frontier] = depth
        seen += len(frontier)
        if progress:
            progress.update(seen, f"depth {depth}")
    return dist


def build_cost_table(coords: CoordTables, profile: RobotProfile, progress: ProgressBar | None = None) -> np.ndarray:
    """Exact robot time to solved from every (holding pair, class of the last turn, quarter parity
    of the holding pair's arms, state): Dijkstra backwards from solved, with buckets
    (solver/costs.py: the graph).

    A regrip is charged by the turns around it, so the search goes backwards along each step
    (the turn that undoes it), never assuming a step costs the same both ways.  A settled node
    (state, pair q, class c, parity b) was reached by a turn t of q of class c: the state before
    t is one step away, by t alone from any class of q with parity b ^ t's quarters, or (when b
    is t's quarters alone: the taking pair starts square) by a regrip from any class and parity
    of the other pair followed by t (with the restore that parity needs).
    """
    model = CostModel(profile, turn_face_indices)
    dist = np.full((model.n_rows, N_STATES), UNREACHABLE, dtype=np.uint16)
    dist[:, SOLVED_INDEX] = 0
    buckets: dict = {0: [(row, np.array([SOLVED_INDEX])) for row in range(model.n_rows)]}
    finalised = 0
    while buckets:
        level = min(buckets)
        found: dict = {}
        for row, states in buckets.pop(level):
            found.setdefault(row, []).append(states)
        for row, parts in sorted(found.items()):
            frontier = np.unique(np.concatenate(parts))
            frontier = frontier[dist[row, frontier] == level]  # a later, better value settled it already
            if not len(frontier):
                continue
            finalised += len(frontier)
            q, rest = divmod(row, model.n_classes * model.n_parities)
            klass, parity = divmod(rest, model.n_parities)
            cp8, co8 = coords.robot_frame(frontier)
            for option in model.turns[q]:
                if option.klass != klass:
                    continue
                x, y = cp8, co8
                for t in option.inverse_faces:
                    x, y = coords.cp_move[t, x], coords.co_move[t, y]
                before = coords.canonical_indices(x, y)
                for c in range(model.n_classes):
                    _relax(dist, model.row(q, c, parity ^ option.mask), before, level + option.cost, buckets)
                    if parity != option.mask:
                        continue  # a pair that has just taken the cube turns from square
                    for p in range(model.n_pairs):
                        for b in range(model.n_parities) if p != q else ():
                            cost = level + option.cost + model.hand_over(p, c, q, option.kind, b)
                            _relax(dist, model.row(p, c, b), before, cost, buckets)
        if progress:
            progress.update(min(finalised, progress.total), f"{level} ms")
    return dist


def _relax(dist: np.ndarray, row: int, states: np.ndarray, cost: int, buckets: dict) -> None:
    if cost >= UNREACHABLE:
        raise TableError(f"plan costs above {UNREACHABLE - 1} ms do not fit the table; shorten the timings")
    better = states[dist[row, states] > cost]
    if len(better):
        dist[row, better] = cost
        buckets.setdefault(cost, []).append((row, better))


@dataclass
class SolverTables:
    coords: CoordTables
    robot_cost: np.ndarray
    profile: RobotProfile
    directory: Path
    _metric: dict
    explicit: bool = False  # loaded by `tables build`: a build is asked for, not a first use

    def metric(self, name: str, force: bool = False) -> np.ndarray:
        """The htm or qtm distance table (loaded or built on first use; rebuilt with force)."""
        if name not in self._metric or force:
            store = TableStore(self.directory, explicit=self.explicit)
            self._metric[name] = store.load_or_build(
                f"{name}.npy", None, lambda progress: build_metric_table(self.coords, name, progress),
                f"{name} distance table", N_STATES, force=force,
            )
        return self._metric[name]

    def start_costs(self, parity: int = 0) -> np.ndarray:
        """int64[n_pairs, N_STATES]: the optimal plan's cost from every state when that pair holds at
        the start (the start's own step expanded onto the table: solver/costs.py start_values), its
        arms at that quarter parity (0: every arm square)."""
        cp8, co8 = self.coords.robot_frame(np.arange(N_STATES))

        def moved(faces):
            x, y = cp8, co8
            for t in faces:
                x, y = self.coords.cp_move[t, x], self.coords.co_move[t, y]
            return self.coords.canonical_indices(x, y)

        return start_values(CostModel(self.profile, turn_face_indices), self.robot_cost, moved, parity)

    @property
    def nbytes(self) -> int:
        arrays = list(self.coords.arrays().values()) + [self.robot_cost] + list(self._metric.values())
        return sum(a.nbytes for a in arrays)


def load(config: Config, log=None, show_progress: bool | None = None, directory: Path | None = None,
         force: bool = False, explicit: bool = False) -> SolverTables:
    """Load the tables for this config, building or rebuilding what is missing or stale (all: force).
    explicit: the build was asked for (`tables build`), so its messages do not say "first use"."""
    profile = RobotProfile.from_config(config)
    store = TableStore(directory or tables_dir(config), log=log, show_progress=show_progress, explicit=explicit)
    coords = CoordTables(store.load_or_build(
        "coords.npz", None, lambda progress: CoordTables.build().arrays(), "coordinate tables", 1, force=force,
    ))
    robot_cost = store.load_or_build(
        "robot-cost.npy", profile.describe(),
        lambda progress: build_cost_table(coords, profile, progress),
        "robot cost table", CostModel(profile, turn_face_indices).n_rows * N_STATES, force=force,
    )
    return SolverTables(coords, robot_cost, profile, store.directory, {}, explicit)
