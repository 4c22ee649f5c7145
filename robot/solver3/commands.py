"""`cube-robot solve --puzzle 3x3x3` and `cube-robot tables build|status --puzzle 3x3x3`.

Registered through robot/solver/commands.py (one `solve` and one `tables` command with a
--puzzle option); this module holds what is 3x3x3-specific.
"""

from __future__ import annotations

import json
import sys
import time

from ..config_types import Config
from ..exit_status import ExitStatus

BUILD_HINT = "cube-robot tables build --puzzle 3x3x3"


def _inputs(args):
    """(facelets or None, scramble or None, label) for every input."""
    if args.scramble is not None:
        yield None, args.scramble, args.scramble
    for item in args.facelets:
        if item == "-":
            for line in sys.stdin:
                line = line.strip()
                if line:
                    yield line, None, line
        else:
            yield item, None, item


def _error(args, label, exc) -> None:
    from .cube3 import Cube3Error

    error = str(exc) if isinstance(exc, Cube3Error) else f"{type(exc).__name__}: {exc}"
    if args.json:
        print(json.dumps({"facelets": label, "ok": False, "puzzle": "3x3x3", "error": error,
                          "error_type": type(exc).__name__}), flush=True)
    else:
        print(f"{label}\n  invalid: {error}\n", flush=True)


def run_solve3(args) -> int:
    from .. import config as config_module
    from ..cube import CubeError, MoveError
    from . import api, tables
    from .search import Unsolvable

    metric = args.metric or "htm"
    if metric == "robot":  # four-arm robot plans: robot/solver3/robot_commands.py
        from . import robot_commands
        return robot_commands.run(args, _inputs(args), _error)
    try:
        api.check_metric(metric)
    except api.MetricNotReady as exc:
        print(f"cube-robot solve: {exc}", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    if args.start_grip is not None:
        print("cube-robot solve: --start-grip is for the 2x2x2 robot; the 3x3x3 has no robot plans yet",
              file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    if args.scramble is None and not args.facelets:
        print("cube-robot solve: give facelet strings, '-' for stdin, or --scramble (see --help)", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    config = config_module.load(args.config)
    try:
        search = api.load_search(tables.directory_for(config))
    except tables.NotBuilt as exc:
        print(f"cube-robot solve: {exc}", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    failed = False
    for facelets, scramble, label in _inputs(args):
        try:
            solution = api.solve(facelets, scramble=scramble, metric=metric, max_length=args.max_length,
                                 time_limit=args.time_limit, search=search)
        except (CubeError, MoveError, Unsolvable, ValueError) as exc:
            failed = True
            _error(args, label, exc)
            continue
        if args.json:
            print(json.dumps(solution.to_json()), flush=True)
        else:
            print(f"cube   {solution.facelets}\n{metric:6} {solution.length} moves: "
                  f"{solution.moves or '(already solved)'}\nsolved in {solution.solve_ms:.1f} ms\n", flush=True)
    return ExitStatus.BAD_CONFIG if failed else ExitStatus.OK


def run_tables_build3(args) -> int:
    from .. import config as config_module
    from ..tables_store import TableError
    from . import tables

    config = config_module.load(args.config)
    directory = tables.directory_for(config)
    started = time.perf_counter()
    try:
        loaded = tables.load(directory, build=True, show_progress=None, force=args.force)
    except TableError as exc:
        print(f"cube-robot tables: {exc}", file=sys.stderr)
        return ExitStatus.NOT_DONE
    print(f"3x3x3 tables ready in {directory} ({loaded.nbytes / 2**20:.0f} MiB, "
          f"{time.perf_counter() - started:.1f} s)")
    return ExitStatus.OK


def print_tables_status3(config: Config) -> bool:
    """Print the 3x3x3 table lines of `tables status`; True if all are ready."""
    from . import tables

    directory = tables.directory_for(config)
    ok = True
    print(f"3x3x3 ({directory}):")
    for name, problem in tables.status(directory).items():
        ok &= problem is None
        print(f"  {name:15} {'ok' if problem is None else problem}")
    if not ok:
        print(f"  (only needed for --puzzle 3x3x3: {BUILD_HINT}, about a minute, once)")
    return ok
