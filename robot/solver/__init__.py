"""Robot-time-optimal solver: IDA* with an exact cost-to-go table.

    from robot.solver import solve
    plan = solve("UUUURRRRFFFFDDDDLLLLBBBB")        # -> robot.plan.Plan
    plan = solve(scramble="R U2 F'", start_grip="RL")
    plan = solve(facelets, metric="htm")            # plain puzzle metric, U/R/F turns

`Solver` holds loaded tables; `solve()` keeps one Solver per config.
"""

from __future__ import annotations

import time

from .. import config as config_module
from .. import cube
from ..config_types import Config
from ..plan import Plan, RobotProfile
from . import tables as tables_module
from .coords import cubie_coords
from .search import MetricSearch, RobotSearch, Unsolvable

METRICS = ("robot", "htm", "qtm")
__all__ = ["Solver", "solve", "Unsolvable", "METRICS"]


class Solver:
    def __init__(self, config: Config | None = None, log=None, show_progress=None, tables_directory=None, tables=None):
        """tables: already loaded for this config (the run's pre-flight loads them); else loaded here."""
        self.config = config if config is not None else config_module.load()
        self.profile = RobotProfile.from_config(self.config)
        if tables is not None and tables.profile != self.profile:
            raise ValueError("the loaded solver tables are for another robot profile than this config's")
        started = time.perf_counter()
        self.tables = tables if tables is not None else tables_module.load(
            self.config, log=log, show_progress=show_progress, directory=tables_directory)
        self.load_seconds = time.perf_counter() - started
        self._robot = RobotSearch(self.tables.coords, self.tables.robot_cost, self.profile)
        self._metric: dict[str, MetricSearch] = {}

    def solve(self, facelets: str | None = None, *, state: cube.CubieCube | None = None,
              scramble: str | None = None, start_grip: str | None = None, metric: str = "robot",
              start_angles=None) -> Plan:
        """A cheapest plan for a cube in the robot frame.

        Give exactly one of: a facelet string (validated; raises a cube.CubeError
        subclass when invalid), a CubieCube, or a scramble applied to a solved cube.
        start_angles: where the arms stand at the start (face -> degrees; None: all at 0);
        only robot.square_released_arms looks at them (an arm a quarter round is turned back).
        """
        if sum(x is not None for x in (facelets, state, scramble)) != 1:
            raise ValueError("give exactly one of facelets, state or scramble")
        if facelets is not None:
            parsed = cube.parse_facelets(facelets)
            state, facelets = parsed.cubie, parsed.facelets  # (faces written apart: joined)
        else:
            if scramble is not None:
                state = cube.SOLVED.apply(cube.parse_moves(scramble))
            assert state is not None  # exactly one of the three was given (checked above)
            facelets = state.to_facelets()
        if metric in ("htm", "qtm") and metric not in self._metric:
            self._metric[metric] = MetricSearch(self.tables.coords, self.tables.metric(metric), metric)
        started = time.perf_counter()
        cp8, co8 = cubie_coords(state)
        if metric == "robot":
            pairs = self._start_pairs(start_grip)
            cost, actions = self._robot.solve(cp8, co8, pairs, start_angles)
            plan = Plan(facelets, actions, cost)
        elif metric in ("htm", "qtm"):
            canonical = state.canonical()  # U/R/F turns keep DBL fixed
            moves = self._metric[metric].solve(*cubie_coords(canonical))
            plan = Plan(facelets, [], None, metric=metric, metric_moves=moves)
        else:
            raise ValueError(f"unknown metric {metric!r} (use {', '.join(METRICS)})")
        plan.solve_ms = (time.perf_counter() - started) * 1000
        return plan

    def _start_pairs(self, start_grip):
        grip = start_grip or self.config.robot.start_grip
        names = self.profile.pair_names
        if grip == "any":
            return range(len(names))
        if grip not in names:
            raise ValueError(f"start grip {grip!r} is not a pair (pairs: {', '.join(names)}, or any)")
        return [names.index(grip)]


_solvers: dict = {}


def solve(facelets: str | None = None, *, state=None, scramble=None, config: Config | None = None,
          start_grip=None, metric="robot") -> Plan:
    """Solve with a cached Solver for `config` (default: config.yaml)."""
    config = config if config is not None else config_module.load()
    key = (str(getattr(config, "path", "")), repr(RobotProfile.from_config(config)), config.tables.dir)
    if key not in _solvers:
        _solvers[key] = Solver(config)
    return _solvers[key].solve(facelets, state=state, scramble=scramble, start_grip=start_grip, metric=metric)
