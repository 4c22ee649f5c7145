"""3x3x3 solver tables: built only by `cube-robot tables build --puzzle 3x3x3` (or the API on
request), checksummed in a manifest like the 2x2x2 tables (robot/tables_store.py), in
tables/3x3x3/ (config: tables.dir).

  moves.npz      coordinate move tables (coords.build_move_tables)
  symmetry.npz   phase-1 symmetry classes and twist conjugation (coords.build_symmetry_tables)
  phase1.npy     uint8[64,430 * 2,187]  exact moves (HTM) to G1 from each (flip-slice class, twist)
  phase2.npz     uint8 distances to solved inside G1 for (corners, slice order) and (ud, slice order)
"""

from __future__ import annotations

import hashlib
import io
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config_types import Config
from ..tables_store import TableError, TableStore, tables_dir
import robot.solver3.coords as C  # (not `from . import`: that would import the package, which imports api)

SUBDIR = "3x3x3"
UNSEEN = 255
FILES = ("moves.npz", "symmetry.npz", "phase1.npy", "phase2.npz")


class NotBuilt(TableError):
    """The 3x3x3 tables are missing or stale and building was not asked for."""


def _neighbours(entries, m, mt, st):
    """Phase-1 table entries (class * N_TWIST + twist) reached by move m (int32 arrays throughout)."""
    cls, tw = np.divmod(entries, C.N_TWIST)
    sl, fl = np.divmod(st["reps"][cls], C.N_FLIP)
    nfs = mt["set"][m][sl] * C.N_FLIP + mt["flip"][m][fl]
    return st["class_of"][nfs] * C.N_TWIST + _conj(st, mt["twist"][m][tw], st["sym_of"][nfs])


def _conj(st, twist, sym):
    return st["twist_conj_flat"][sym * C.N_TWIST + twist]


def _mark(dist, entries, depth, st):
    """Set unseen entries (and their symmetric twins: same class, conjugated twist) to depth."""
    entries = entries[dist[entries] == UNSEEN]
    dist[entries] = depth
    cls, tw = np.divmod(entries, C.N_TWIST)
    stab = st["stabiliser"][cls]
    twinned = stab != 1
    if twinned.any():
        cls, tw, stab = cls[twinned], tw[twinned], stab[twinned]
        for s in range(1, 16):
            has = (stab >> s) & 1 == 1
            if has.any():
                twins = cls[has] * C.N_TWIST + _conj(st, tw[has], s)
                dist[twins[dist[twins] == UNSEEN]] = depth


def build_phase1(mt, st, progress=None, block=1 << 22) -> np.ndarray:
    """Breadth-first phase-1 distances, forward from the frontier while it is small, then
    backward (which unseen entries have a neighbour at the last depth).  Works in blocks of
    the table so memory stays near the table's own size."""
    mt = {k: np.ascontiguousarray(mt[k].T.astype(np.int32)) for k in ("set", "flip", "twist")}
    st = {"reps": st["reps"].astype(np.int32), "class_of": st["class_of"].astype(np.int32),
          "sym_of": st["sym_of"].astype(np.int32), "stabiliser": st["stabiliser"].astype(np.int32),
          "twist_conj_flat": np.ascontiguousarray(st["twist_conj"].T).astype(np.int32).ravel()}
    n = len(st["reps"]) * C.N_TWIST
    dist = np.full(n, UNSEEN, dtype=np.uint8)
    start = int(st["class_of"][C.SOLVED_SET * C.N_FLIP]) * C.N_TWIST
    _mark(dist, np.array([start], dtype=np.int32), 0, st)
    depth = 0
    counts = [int((dist == 0).sum())]
    while sum(counts) < n:
        unseen = n - sum(counts)
        forward = counts[-1] * 3 < unseen
        for lo in range(0, n, block):
            part = dist[lo:lo + block]
            if forward:
                frontier = np.flatnonzero(part == depth).astype(np.int32) + lo
                for m in range(C.N_MOVES):
                    _mark(dist, _neighbours(frontier, m, mt, st), depth + 1, st)
            else:
                alive = np.flatnonzero(part == UNSEEN).astype(np.int32) + lo
                for m in range(C.N_MOVES):
                    hit = dist[_neighbours(alive, m, mt, st)] == depth
                    _mark(dist, alive[hit], depth + 1, st)
                    alive = alive[~hit]
                    if not len(alive):
                        break
            if progress:
                progress.update(sum(counts) + min(lo + block, n) / n * (unseen if not forward else 0),
                                f"depth {depth + 1}")
        depth += 1
        counts.append(int((dist == depth).sum()))
        if not counts[-1]:
            raise TableError("phase-1 table: search stopped before every entry was reached")
        if progress:
            progress.update(sum(counts), f"depth {depth}")
    return dist


def _bfs(n, start, step, moves):
    dist = np.full(n, UNSEEN, dtype=np.uint8)
    dist[start] = 0
    frontier = np.array([start])
    depth = 0
    while len(frontier):
        found = []
        for m in moves:
            nb = step(frontier, m)
            nb = nb[dist[nb] == UNSEEN]
            dist[nb] = depth + 1
            found.append(nb)
        frontier = np.unique(np.concatenate(found))
        depth += 1
    return dist


def build_phase2(mt, progress=None) -> dict:
    """Distances inside G1 of (corners, slice order) and (ud edges, slice order)."""
    slice_perm = mt["subset"][C.SOLVED_SET * 24 + np.arange(24)].astype(np.int64) - C.SOLVED_SET * 24
    out = {}
    for name in ("corners", "ud"):
        table = mt[name]
        step = lambda e, m, t=table: t[e // 24, m].astype(np.int64) * 24 + slice_perm[e % 24, m]
        out[name] = _bfs(C.N_PERM8 * 24, C.SOLVED_SLICE % 24, step, C.PHASE2_MOVES)
        if progress:
            progress.update(len(out))
    return out


@dataclass
class Tables3:
    moves: dict
    symmetry: dict
    phase1: np.ndarray
    phase2: dict
    directory: Path
    load_seconds: float = 0.0

    @property
    def nbytes(self) -> int:
        arrays = [*self.moves.values(), *self.symmetry.values(), self.phase1, *self.phase2.values()]
        return sum(a.nbytes for a in arrays)


def directory_for(config: Config) -> Path:
    return tables_dir(config) / SUBDIR


def status(directory: Path) -> dict:
    store = TableStore(directory)
    return {name: store.problem(name, None) for name in FILES}


def not_built(directory: Path) -> str | None:
    """Why the tables cannot be loaded when a file is missing (said before a run starts), else None.  Cheap: no
    checksum is read (a changed file is still refused, as NotBuilt, when the tables load)."""
    store = TableStore(Path(directory))
    listed = store.manifest()["files"]
    missing = [name for name in FILES if name not in listed or not (store.directory / name).exists()]
    if not missing:
        return None
    return (f"3x3x3 tables are not built in {store.directory} ({', '.join(missing)} missing): run "
            "`cube-robot tables build --puzzle 3x3x3` (about a minute, once)")


def _read_verified(store: TableStore, name: str) -> bytes | None:
    """A table file's bytes if its size and SHA-256 match the manifest (read once), else None."""
    entry = store.manifest()["files"].get(name)
    try:
        data = (store.directory / name).read_bytes() if entry else None
    except OSError:
        return None
    if data is None or len(data) != entry.get("bytes") or hashlib.sha256(data).hexdigest() != entry.get("sha256"):
        return None
    return data


def _load_built(store: TableStore, started: float) -> Tables3:
    """Every file read once, checked against the manifest, used without copying (the phase-1
    table is a view of the file's bytes); NotBuilt if any fails."""
    read = {name: _read_verified(store, name) for name in FILES}
    problems = {name: store.problem(name, None) for name, data in read.items() if data is None}
    if problems:
        raise NotBuilt("3x3x3 tables are not ready ("
                       + "; ".join(f"{name}: {p}" for name, p in problems.items())
                       + "): run `cube-robot tables build --puzzle 3x3x3` (about a minute, once)")
    raw = {name: data for name, data in read.items() if data is not None}  # every file, verified
    moves, symmetry, phase2 = ({k: v for k, v in np.load(io.BytesIO(raw[name])).items()}
                               for name in ("moves.npz", "symmetry.npz", "phase2.npz"))
    moves["set"] = (moves["subset"][::24] // 24).astype(np.uint16)
    header = io.BytesIO(raw["phase1.npy"])
    np.lib.format.read_magic(header)
    shape, _, dtype = np.lib.format.read_array_header_1_0(header)
    phase1 = np.frombuffer(raw["phase1.npy"], dtype=dtype, count=shape[0], offset=header.tell())
    return Tables3(moves, symmetry, phase1, phase2, store.directory, time.perf_counter() - started)


def load(directory: Path, build: bool = False, log=None, show_progress=None, force: bool = False) -> Tables3:
    """Load the tables; with build=True build (with progress bars) whatever is missing or stale
    (every table with force: each rebuilt beside the old one, which stays until the new one is
    verified).  A file at a table's name that the manifest does not list is refused, never replaced."""
    directory = Path(directory)
    store = TableStore(directory, log=log, show_progress=show_progress, explicit=True)  # built only on request
    started = time.perf_counter()
    if not build:
        return _load_built(store, started)
    store.check_ours(FILES)  # before a minute of building
    moves = store.load_or_build("moves.npz", None, lambda bar: C.build_move_tables(bar),
                                "3x3x3 move tables", C.N_MOVES, force=force)
    moves["set"] = (moves["subset"][::24] // 24).astype(np.uint16)  # phase-1 slice set moves
    symmetry = store.load_or_build("symmetry.npz", None, lambda bar: C.build_symmetry_tables(bar),
                                   "3x3x3 symmetry tables", 16, force=force)
    phase1 = store.load_or_build("phase1.npy", None, lambda bar: build_phase1(moves, symmetry, bar),
                                 "3x3x3 phase-1 distance table", len(symmetry["reps"]) * C.N_TWIST, force=force)
    phase2 = store.load_or_build("phase2.npz", None, lambda bar: build_phase2(moves, bar),
                                 "3x3x3 phase-2 distance tables", 2, force=force)
    return Tables3(moves, symmetry, phase1, phase2, directory, time.perf_counter() - started)


__all__ = ["Tables3", "load", "status", "directory_for", "NotBuilt"]
