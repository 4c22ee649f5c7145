"""Robot-aware 3x3x3 planning: many two-phase candidates, each re-rated by the exact converter.

With the project's own two-phase search (default_solutions), the search first chooses by
robot time itself (robot_cost_stage): every solution it meets, phase-1 solution after
phase-1 solution, is rated by the converter and kept only if cheaper; this usually takes
the whole budget.  The variants below are the fallback for other candidate sources (and
for what time is left).

A face-move solver knows nothing of tilts and grippers, but the robot cares a
lot: U/D moves need a tilt, and a gripper left at 90 blocks the other pair.
So the search asks a two-phase solver (robot.solver3.solutions, robot/solver3/api.py;
axial metric: opposite faces turned together count once, as the robot turns
them) for solutions of the cube seen in each of its 24 orientations, and of
its inverse, maps each back to the cube's own frame, and keeps the one the
converter (robot/solver3/convert.py) rates cheapest, within a time budget.
Orientations whose two-phase U-D axis lands on an arm axis go first: phase 2
turns that axis freely, and here it is an arm pair, so those solutions need
few tilts.  With time left, the same for the cube after each arm move (premoves).
A plain solution given as a seed is rated before all, so a robot-aware plan
is never slower than plain two-phase then converter; every plan is exactly
its own face sequence converted (the floor).

`solutions` is any callable with the signature of robot.solver3.solutions:
solutions(facelets, metric=..., max_length=None, time_limit=None) yielding
successively better solutions (objects with .moves, strings or move indices).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np

from ..config_types import Config
from ..cube import FACE_FRAMES, FACES, CubeError, MoveError
from ..plan3 import Plan3, Robot3Profile, rotation
from . import cube3
from .convert import model

# At most this long for one variant's first solution: a slow view is skipped.  Measured
# (20 cubes, 3 s budget): 0.04 / 0.07 / 0.15 s per variant -> 9.1 / 11.5 / 9.3% faster.
PER_VARIANT_S = 0.07
SOLUTIONS_PER_VARIANT = 1  # different views beat better solutions of one view (measured)


class SearchUnavailable(RuntimeError):
    """No two-phase 3x3x3 search to ask for candidates."""


def _rotations() -> list:
    """The 24 rotations of the cube (identity first)."""
    return cube3.matrix_group([rotation(face, 90) for face in "URF"])


ROTATIONS = _rotations()
# The 48 symmetries: rotations, then rotations after the L-R mirror.  A mirrored
# cube is a legal cube (recoloured); a mirrored move turns the other way.
TRANSFORMS = ROTATIONS + [r @ np.diag([-1, 1, 1]) for r in ROTATIONS]
_STICKER = {g: i for i, g in enumerate(cube3.GEOMETRY)}
_FACE_OF_NORMAL = {tuple(int(v) for v in FACE_FRAMES[f][0]): k for k, f in enumerate(FACES)}


def _rotated_face(m, face: int) -> int:
    return _FACE_OF_NORMAL[tuple(int(v) for v in m @ FACE_FRAMES[FACES[face]][0])]


@dataclass(frozen=True)
class Variant:
    """The cube seen through TRANSFORMS[transform] (and inverted): solve this, map the moves back."""

    transform: int
    inverse: bool
    facelets: str = field(compare=False)
    premove: int | None = None  # a move done first; the variant is of the cube after it

    def back(self, moves) -> list:
        """Moves solving the variant -> moves solving the original cube."""
        m = TRANSFORMS[self.transform]
        face_back = [_rotated_face(m.T, f) for f in range(6)]
        mirrored = round(np.linalg.det(m)) < 0
        out = [3 * face_back[x // 3] + (2 - x % 3 if mirrored else x % 3) for x in moves]
        if self.inverse:
            out = [3 * (x // 3) + 2 - x % 3 for x in reversed(out)]
        return out if self.premove is None else [self.premove] + out

    def describe(self) -> str:
        first = "" if self.premove is None else f" after {cube3.MOVE_NAMES[self.premove]}"
        return f"symmetry {self.transform}{' inverse' if self.inverse else ''}{first}"


def _inverse(state):
    cp, co, ep, eo = (np.asarray(x) for x in state)
    icp, ico, iep, ieo = np.empty_like(cp), np.empty_like(co), np.empty_like(ep), np.empty_like(eo)
    icp[cp] = np.arange(8)
    ico[cp] = (-co) % 3
    iep[ep] = np.arange(12)
    ieo[ep] = eo % 2
    return icp, ico, iep, ieo


def _rotate_facelets(state, m) -> str:
    """Facelets of the whole cube turned by rotation m, recoloured so its centres read U R F D L B."""
    colours = cube3.colours_from_cubies(*(np.asarray(x)[None] for x in state))[0]
    out = [""] * cube3.FACELET_COUNT
    for i, (p, n) in enumerate(cube3.GEOMETRY):
        target = _STICKER[(tuple(int(v) for v in m @ p), tuple(int(v) for v in m @ n))]
        out[target] = FACES[_rotated_face(m, int(colours[i]))]
    return "".join(out)


def _axis_rank(transform: int, profile: Robot3Profile) -> int:
    """Where the variant's U-D axis (phase 2's free axis) lands in the robot frame: 0 on the
    first arm pair, 1 on the second, 2 on U-D (no arm).  Lower ranks are cheaper on average."""
    back = FACES[_rotated_face(TRANSFORMS[transform].T, FACES.index("U"))]
    return next((k for k, (_, faces) in enumerate(profile.pairs) if back in faces), len(profile.pairs))


def variants(state, profile: Robot3Profile, premove: int | None = None):
    """The 96 variants (48 symmetries, direct and inverse) of the cube, lazily: the cube as given
    first, then orientations putting the two-phase U-D axis on an arm pair, direct before inverse
    (measured over 20 cubes x 96 variants: those average 2-4% cheaper than the others)."""
    inverse = _inverse(state)
    keys = {(t, inv): (t != 0 or inv, _axis_rank(t, profile), t >= len(ROTATIONS), inv, t)
            for t in range(len(TRANSFORMS)) for inv in (False, True)}
    for t, inv in sorted(keys, key=lambda k: keys[k]):
        yield Variant(t, inv, _rotate_facelets(inverse if inv else state, TRANSFORMS[t]), premove)


def premoves(profile: Robot3Profile) -> list:
    """Moves an arm can make at the start (half turns first: they leave the gripper at 0)."""
    faces = [FACES.index(arm) for arm in profile.arms]
    return [3 * f + k for k in (1, 0, 2) for f in faces]


def all_variants(state, profile: Robot3Profile, use_premoves: bool = True):
    """The cube's 96 variants, then (use_premoves) those of the cube after each arm move."""
    yield from variants(state, profile)
    for m in premoves(profile) if use_premoves else ():
        yield from variants(cube3.apply(state, [m]), profile, premove=m)


def _as_indices(sequence) -> list:
    """A solution as move indices: from a string, a list of indices, or an object with .moves."""
    sequence = getattr(sequence, "moves", sequence)
    if isinstance(sequence, str):
        return cube3.parse_moves(sequence)
    return [int(m) for m in sequence]


def _solves(state, moves) -> bool:
    return cube3.to_facelets(cube3.apply(state, moves)) == cube3.SOLVED_FACELETS


@dataclass
class SearchReport:
    """What the search did: candidates rated, the plain (first) candidate's cost, the best."""

    candidates: int = 0
    variants_tried: int = 0
    plain_cost_ms: int | None = None
    plain_moves: list = field(default_factory=list)
    best_cost_ms: int | None = None
    best_moves: list = field(default_factory=list)
    robot_cost_found: int = 0  # solutions the robot-cost two-phase stage kept


def _rate(report, state, moves, rate, where):
    if not _solves(state, moves):
        raise AssertionError(f"candidate {cube3.format_moves(moves)} ({where}) does not solve the cube")
    cost = rate.cost(moves)
    report.candidates += 1
    if report.plain_cost_ms is None:
        report.plain_cost_ms, report.plain_moves = cost, moves
    if report.best_cost_ms is None or cost < report.best_cost_ms:
        report.best_cost_ms, report.best_moves = cost, moves


def robot_cost_stage(report, state, engine, rate, deadline, clock=time.perf_counter) -> None:
    """The two-phase search itself choosing by robot time: the six views of the cube (three
    axes, direct and inverse) take turns, every solution found (each phase-1 solution's
    phase-2 finishes, up to 20 moves) is mapped back to the cube's frame and rated by the
    converter, and only those cheaper than the best so far are kept; the search goes on
    past the first solution (its length bound stays 20), until `deadline` (read on `clock`):
    past it no further candidate is rated once one is in hand, however many a level holds.
    Measured (20 cubes, 1 s): 14.8% faster than plain, against ~9-12% for rating the first
    solution of each of many symmetric variants."""
    from . import api, coords

    seen = api.views(state)
    starts = [coords.phase_coords(view) for view, _ in seen]
    costs = [(lambda moves, back=back: rate.cost(back(moves))) for _, back in seen]
    best = report.best_cost_ms
    for index, moves in engine.solutions(starts, max_htm=api.GODS_NUMBER_HTM, deadline=deadline,
                                         hard_deadline=best is not None, cost=costs,
                                         max_cost=None if best is None else best - 1,
                                         htm_bound=lambda cost: api.GODS_NUMBER_HTM, clock=clock):
        _rate(report, state, seen[index][1](moves), rate, "robot-cost two-phase")
        report.robot_cost_found += 1


def search(state, profile: Robot3Profile, solutions, time_limit: float = 1.0, metric: str = "axial",
           seeds=(), use_premoves: bool = True, report: SearchReport | None = None,
           clock=time.perf_counter) -> SearchReport:
    """The cheapest face sequence found for cubie `state` within `time_limit` seconds.

    `seeds`: face sequences already known to solve the cube (e.g. a plain two-phase
    solution), rated first: the result is never slower than converting them.  After
    the 96 variants, while time is left, the variants of the cube after one arm move
    (that move, then their solution: one move longer, often fewer tilts and restores).
    `time_limit` is a budget: past it, the best found so far (read on `clock`).
    """
    deadline = clock() + time_limit  # before the converter's model is built: that is in the budget too
    report = report if report is not None else SearchReport()
    rate = model(profile)
    for seed in seeds:
        _rate(report, state, _as_indices(seed), rate, "seed")
    engine = getattr(solutions, "engine", None)
    if engine is not None:  # the project's own search: let it choose by robot time first
        robot_cost_stage(report, state, engine, rate, deadline, clock)
    for variant in all_variants(state, profile, use_premoves):
        left = deadline - clock()
        if left <= 0 and report.best_cost_ms is not None:
            break
        report.variants_tried += 1
        found = solutions(variant.facelets, metric=metric, time_limit=max(0.0, min(PER_VARIANT_S, left)))
        for sequence in itertools.islice(found, SOLUTIONS_PER_VARIANT):
            moves = variant.back(_as_indices(sequence))
            _rate(report, state, moves, rate, variant.describe())
            if clock() > deadline and report.best_cost_ms is not None:
                break
    if report.best_cost_ms is None:
        raise SearchUnavailable("the two-phase search gave no solution")
    return report


def plan(facelets: str, profile: Robot3Profile, solutions, time_limit: float = 1.0, seeds=(),
         report: SearchReport | None = None) -> Plan3:
    """A robot plan for a 54-facelet string (robot frame); raises a cube3.Cube3Error when invalid."""
    started = time.perf_counter()
    state, _ = cube3.parse_facelets(facelets)
    found = search(state, profile, solutions, time_limit, seeds=seeds, report=report)
    cost, ops = model(profile).schedule(found.best_moves)
    return Plan3(facelets, cube3.format_moves(found.best_moves), ops, cost,
                 solve_ms=(time.perf_counter() - started) * 1000)


def default_solutions(config: Config | None = None):
    """Candidates from the project's two-phase search over the tables of `config` (default
    config.yaml); raises tables.NotBuilt naming the build command when they are missing.

    robot.solver3.solutions races six views of a cube (three axes, inverted or not) and
    yields the winner's solutions, so the 96 variants here would give only a handful of
    different sequences.  This asks the same search (Search.solutions) for one view at a
    time instead, with a hard per-call deadline: a view that is slow to solve is skipped,
    the next variant is another view.
    """
    from .. import config as config_module
    from . import api, coords, tables

    config = config if config is not None else config_module.load()
    search = api.load_search(tables.directory_for(config))

    def solutions(facelets, metric="axial", max_length=None, time_limit=None):
        state, _ = cube3.parse_facelets(facelets)
        deadline = None if time_limit is None else time.perf_counter() + time_limit
        for _, moves in search.solutions([coords.phase_coords(state)], max_htm=api.GODS_NUMBER_HTM,
                                         deadline=deadline, hard_deadline=deadline is not None,
                                         cost=api.COST[metric], max_cost=max_length,
                                         htm_bound=api.HTM_BOUND[metric]):
            yield moves

    solutions.engine = search  # type: ignore[attr-defined]  # robot_cost_stage finds it with getattr and searches with it directly
    return solutions


def solve_robot(facelets: str, config: Config | None = None, time_limit: float = 1.0, solutions=None) -> Plan3:
    """`solve --puzzle 3x3x3 --metric robot` for one cube (config: robot3 profile; default config.yaml).

    Raises a cube3.Cube3Error naming the problem when the facelets are invalid, and
    tables.NotBuilt when the 3x3x3 tables are not built.
    """
    from .. import config as config_module

    config = config if config is not None else config_module.load()
    return plan(facelets, Robot3Profile.from_config(config), solutions or default_solutions(config), time_limit)


def plan_json(facelets: str, config: Config | None = None, time_limit: float = 1.0, solutions=None) -> dict:
    """One `solve --puzzle 3x3x3 --metric robot --json` line: the plan, or {"ok": false, "error": ...}."""
    try:
        return solve_robot(facelets, config, time_limit, solutions).to_json()
    except (CubeError, MoveError) as exc:
        return {"facelets": facelets, "ok": False, "error": str(exc)}
