"""`cube-robot solve --puzzle 3x3x3 --metric robot`: four-arm robot plans (docs/robot3.md).

Called by robot/solver3/commands.py (run_solve3) with its input reader and error printer,
so both metrics read inputs and name bad ones the same way.
"""

from __future__ import annotations

import json
import sys

from ..exit_status import ExitStatus

DEFAULT_TIME_LIMIT_S = 2.0  # robot-aware search budget per cube without --time-limit (bench/solver3_robot.py: 20.5% at 2 s, 19.3% at 1 s)


def run(args, inputs, report_error) -> int:
    """inputs: (facelets or None, scramble or None, label); report_error(args, label, exc)."""
    from .. import config as config_module
    from ..cube import CubeError, MoveError
    from ..plan3 import Robot3Profile, describe
    from . import cube3, robot_search, tables

    for option, hint in (("start_grip", "every arm of the 3x3x3 robot starts closed"),
                         ("max_length", "the robot metric minimises machine time, not moves")):
        if getattr(args, option, None) is not None:
            print(f"cube-robot solve: --{option.replace('_', '-')} does not apply to --metric robot ({hint})",
                  file=sys.stderr)
            return ExitStatus.BAD_CONFIG
    config = config_module.load(args.config)
    profile = Robot3Profile.from_config(config)
    try:
        solutions = robot_search.default_solutions(config)
    except (tables.NotBuilt, robot_search.SearchUnavailable) as exc:
        print(f"cube-robot solve: {exc}", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    time_limit = args.time_limit if args.time_limit is not None else DEFAULT_TIME_LIMIT_S
    failed = False
    for facelets, scramble, label in inputs:
        try:
            if scramble is not None:
                facelets = cube3.to_facelets(cube3.apply(cube3.solved(), cube3.parse_moves(scramble)))
            plan = robot_search.plan(facelets, profile, solutions, time_limit)
        except (CubeError, MoveError, ValueError, robot_search.SearchUnavailable) as exc:
            failed = True
            report_error(args, label, exc)
            continue
        print(json.dumps(plan.to_json()) if args.json else describe(plan, profile), flush=True)
    return ExitStatus.BAD_CONFIG if failed else ExitStatus.OK
