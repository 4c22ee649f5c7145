"""Solver tables: built on first use (or `cube-robot tables build`), checksummed, rebuilt when stale.

Files in the tables directory (default tables/):
  coords.npz      coordinate transition tables (solver/coords.py), profile independent
  htm.npy         uint8[3,674,160]  optimal half-turn-metric distance (U R F turns, DBL fixed);
                  solved = 0, range 0..11
  qtm.npy         uint8[3,674,160]  the same in the quarter-turn metric; range 0..14
  robot-cost.npy  uint16[n_pairs, 3,674,160]  exact robot time to solved, in ms, for each holding
                  pair in the profile's canonical order (plan.RobotProfile: not the order of
                  config.yaml); solved = 0; 65535 = unreachable with this arm layout
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
    """Exact robot time to solved from every (holding pair, state): Dijkstra with buckets.

    Every action has an inverse of the same duration (a turn by the opposite
    angles; a regrip back), so distances from solved are costs to solved.
    """
    n_pairs = len(profile.pairs)
    dist = np.full((n_pairs, N_STATES), UNREACHABLE, dtype=np.uint16)
    dist[:, SOLVED_INDEX] = 0
    turns_by_pair = [
        [(turn_face_indices(turn), profile.cost(turn)) for turn in profile.turns_of(name)]
        for name, _ in profile.pairs
    ]
    pending = {0}
    finalised = 0
    while pending:
        level = min(pending)
        pending.discard(level)
        for p in range(n_pairs):
            frontier = np.flatnonzero(dist[p] == level)
            if not len(frontier):
                continue
            finalised += len(frontier)
            cp8, co8 = coords.robot_frame(frontier)
            moved = {(): (cp8, co8)}  # face-turn prefix -> robot-frame coordinates
            for faces, cost in turns_by_pair[p]:
                for k in range(1, len(faces) + 1):
                    if faces[:k] not in moved:
                        x, y = moved[faces[:k - 1]]
                        t = faces[k - 1]
                        moved[faces[:k]] = (coords.cp_move[t, x], coords.co_move[t, y])
                succ = coords.canonical_indices(*moved[faces])
                _relax(dist[p], succ, level + cost, pending)
            for q in range(n_pairs):
                if q != p:
                    _relax(dist[q], frontier, level + profile.regrip_ms, pending)
        if progress:
            progress.update(finalised, f"{level} ms")
    return dist


def _relax(row: np.ndarray, states: np.ndarray, cost: int, pending: set) -> None:
    if cost >= UNREACHABLE:
        raise TableError(f"plan costs above {UNREACHABLE - 1} ms do not fit the table; shorten the timings")
    better = states[row[states] > cost]
    if len(better):
        row[better] = cost
        pending.add(cost)


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
        "robot cost table", len(profile.pairs) * N_STATES, force=force,
    )
    return SolverTables(coords, robot_cost, profile, store.directory, {}, explicit)
