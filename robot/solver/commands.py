"""`cube-robot solve` and `cube-robot tables build`."""

from __future__ import annotations

import argparse
import json
import sys

from ..cli_common import add_config_argument
from ..exit_status import ExitStatus

PUZZLES = ("2x2x2", "3x3x3")  # the 3x3x3 commands live in robot/solver3/commands.py
SOLVE_EXAMPLES = """examples:
  cube-robot solve --scramble "R U2 F' R2"
  cube-robot solve UFUFRRRRFDFDDBDBLLLLUBUB
  cube-robot solve --json --metric htm - < cubes.txt     (one facelet string per line)
  cube-robot solve --start-grip FB wwwwrrrrggggyyyyoooobbbb
  cube-robot solve --puzzle 3x3x3 --time-limit 1 --scramble "R U F' D2 L B'"
  cube-robot solve --puzzle 3x3x3 --json --metric axial - < cubes3.txt

Facelet strings: 24 colour symbols (any 6 symbols), faces U R F D L B, each face
row-major on the standard net, read in the robot frame (U up, R = right arm's face,
F = front arm's face).  3x3x3: 54 symbols, same faces and net (needs
`cube-robot tables build --puzzle 3x3x3` once).  Exit status 2 if any input was invalid."""


def register(subparsers) -> None:
    solve = subparsers.add_parser(
        "solve", help="plan the fastest arm sequence for a cube",
        description="Plan the robot-time-optimal arm sequence (or an optimal htm/qtm solution).",
        epilog=SOLVE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    solve.add_argument("facelets", nargs="*", help="facelet strings; '-' reads one per line from stdin")
    solve.add_argument("--scramble", metavar="MOVES", help="solve the cube this scramble gives from solved")
    solve.add_argument("--start-grip", choices=None, metavar="RL|FB|any",
                       help="pair holding the cube at the start (default: robot.start_grip in config)")
    solve.add_argument("--metric", choices=("robot", "htm", "qtm", "axial"), default=None,
                       help="robot: minimise machine time (2x2x2 default); htm/qtm: fewest turns "
                            "(3x3x3 default htm); axial (3x3x3): opposite faces turned together count once")
    solve.add_argument("--puzzle", choices=PUZZLES, default="2x2x2", help="which cube (default 2x2x2)")
    solve.add_argument("--max-length", type=int, metavar="N", help="3x3x3: at most N moves in the metric")
    solve.add_argument("--time-limit", type=float, metavar="S",
                       help="3x3x3: keep looking for shorter solutions for S seconds")
    solve.add_argument("--json", action="store_true", help="one JSON object per input line")
    add_config_argument(solve)
    solve.set_defaults(handler=run_solve)

    tables = subparsers.add_parser(
        "tables", help="build or check the solver tables",
        description="Solver tables live in tables/ (config: tables.dir); they are built on first use.",
        epilog="examples:\n  cube-robot tables build\n  cube-robot tables build --force\n  cube-robot tables status",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tables_sub = tables.add_subparsers(dest="tables_command", metavar="ACTION", required=True)
    table_examples = ("examples:\n  cube-robot tables build\n  cube-robot tables build --force\n  cube-robot tables status"
                      "\n  cube-robot tables build --puzzle 3x3x3   (only for solving 3x3x3 cubes; about a minute)")
    build = tables_sub.add_parser("build", help="build (or rebuild) every table, with a progress bar",
                                  epilog=table_examples, formatter_class=argparse.RawDescriptionHelpFormatter)
    build.add_argument("--force", action="store_true", help="rebuild even if the tables are up to date")
    build.add_argument("--puzzle", choices=PUZZLES, default="2x2x2", help="which cube's tables (default 2x2x2)")
    add_config_argument(build)
    build.set_defaults(handler=run_tables_build)
    status = tables_sub.add_parser("status", help="say which tables are present and valid",
                                   epilog=table_examples, formatter_class=argparse.RawDescriptionHelpFormatter)
    status.add_argument("--puzzle", choices=PUZZLES, default=None, help="only this cube's tables")
    add_config_argument(status)
    status.set_defaults(handler=run_tables_status)


def _inputs(args):
    """(label, kwargs for Solver.solve) for every input; a stdin line that is not UTF-8 text gives
    kwargs {"error": ...} so it is reported like any bad cube and the other lines still go through."""
    if args.scramble is not None:
        yield args.scramble, {"scramble": args.scramble}
    for item in args.facelets:
        if item == "-":
            for number, raw in enumerate(sys.stdin.buffer, start=1):
                try:
                    line = raw.decode("utf-8").strip()
                except UnicodeDecodeError as exc:
                    label = raw.decode("utf-8", "replace").strip()
                    yield label, {"error": f"stdin line {number}: not UTF-8 text (byte 0x{raw[exc.start]:02x} "
                                           f"at column {exc.start + 1})"}
                    continue
                if line:
                    yield line, {"facelets": line}
        else:
            yield item, {"facelets": item}


def run_solve(args) -> int:
    from .. import config as config_module
    from ..cube import CubeError, LengthError, MoveError, parse_moves
    from . import Solver, Unsolvable
    from ..tables_store import TableError

    if args.puzzle == "3x3x3":
        from ..solver3.commands import run_solve3
        return run_solve3(args)
    if args.metric == "axial" or args.max_length is not None or args.time_limit is not None:
        print("cube-robot solve: --metric axial, --max-length and --time-limit are for --puzzle 3x3x3 "
              "(the 2x2x2 solver is optimal and instant)", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    args.metric = args.metric or "robot"
    if args.scramble is None and not args.facelets:
        print("cube-robot solve: give facelet strings, '-' for stdin, or --scramble (see --help)", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    config = config_module.load(args.config)
    pairs = list(config.robot.pairs)
    if args.start_grip is not None and args.start_grip not in pairs + ["any"]:
        print(f"cube-robot solve: --start-grip {args.start_grip!r} is not an arm pair "
              f"(pairs: {', '.join(pairs)}, or any)", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    try:
        solver = Solver(config)
    except TableError as exc:
        print(f"cube-robot solve: {exc}", file=sys.stderr)
        return ExitStatus.NOT_DONE
    failed = False
    for label, kwargs in _inputs(args):
        try:
            if "error" in kwargs:
                raise ValueError(kwargs["error"])
            plan = solver.solve(start_grip=args.start_grip, metric=args.metric, **kwargs)
        except (CubeError, MoveError, Unsolvable, ValueError) as exc:
            failed = True
            facelets = kwargs.get("facelets", label)
            error = str(exc) if isinstance(exc, CubeError) else f"{type(exc).__name__}: {exc}"
            if isinstance(exc, LengthError) and " " in facelets.strip():
                try:
                    parse_moves(facelets)
                    error += f"; it looks like a move sequence: solve it with --scramble \"{facelets.strip()}\""
                except MoveError:
                    pass
            if args.json:
                print(json.dumps({"facelets": facelets, "ok": False, "error": error}))
            else:
                print(f"{facelets}\n  invalid: {error}\n")
            continue
        if args.json:
            print(json.dumps(plan.to_json()))
        else:
            print(describe_plan(plan, solver.profile))
    return ExitStatus.BAD_CONFIG if failed else ExitStatus.OK


def describe_plan(plan, profile) -> str:
    """Human-readable plan listing with timings."""
    from ..plan import Grip

    lines = [f"cube   {plan.facelets}"]
    if plan.metric != "robot":
        lines.append(f"{plan.metric}    {plan.length} turns: {plan.moves or '(already solved)'}")
        lines.append(f"solved in {plan.solve_ms:.2f} ms")
        return "\n".join(lines) + "\n"
    restores = f", {plan.restore_count} arm restores" if plan.restore_count else ""
    lines.append(f"plan   {plan.cost_ms} ms machine time: {plan.turn_count} turns, "
                 f"{plan.regrip_count} regrips{restores} (found in {plan.solve_ms:.2f} ms)")
    clock = 0
    for i, (action, ms) in enumerate(zip(plan.actions, profile.action_costs(plan.actions))):
        if i == 0:
            lines.append(f"  {'start':>5}  {action.pair} holds the cube")
            continue
        clock += ms  # a regrip's own cost, by the turns around it
        if isinstance(action, Grip):
            what = f"regrip: {action.pair} takes the cube ({ms} ms)"
        elif action.air:
            what = "released arm back square in the air: " + " + ".join(
                f"{face} arm {angle:+d}\u00b0" for face, angle in action.arms.items())
        else:
            what = "turn " + " + ".join(
                f"{face} arm {angle:+d}\u00b0" for face, angle in action.arms.items()
            ) + f"   ({action.notation()})"
        lines.append(f"  {clock:5d}  {what}")
    lines.append(f"moves  {plan.moves or '(already solved)'}")
    return "\n".join(lines) + "\n"


def run_tables_build(args) -> int:
    from .. import config as config_module
    from .. import tables_store
    from . import tables

    if args.puzzle == "3x3x3":
        from ..solver3.commands import run_tables_build3
        return run_tables_build3(args)
    config = config_module.load(args.config)
    directory = tables_store.tables_dir(config)
    try:
        # --force rebuilds each table beside the current one and swaps it in once verified: a valid
        # table is never deleted first, and no file we did not write is touched (refused before
        # anything is built).
        tables_store.TableStore(directory).check_ours(tables.TABLE_FILES)
        loaded = tables.load(config, show_progress=None, force=args.force, explicit=True)
        for metric in tables.METRIC_TURNS:
            loaded.metric(metric, force=args.force)
    except tables_store.TableError as exc:
        print(f"cube-robot tables: {exc}", file=sys.stderr)
        return ExitStatus.NOT_DONE
    print(f"tables ready in {directory} ({loaded.nbytes / 2**20:.1f} MiB)")
    return ExitStatus.OK


def run_tables_status(args) -> int:
    from .. import config as config_module
    from ..plan import RobotProfile
    from ..tables_store import TableStore, tables_dir

    from ..solver3.commands import print_tables_status3

    config = config_module.load(args.config)
    puzzle = getattr(args, "puzzle", None)
    if puzzle == "3x3x3":
        return ExitStatus.OK if print_tables_status3(config) else ExitStatus.NOT_DONE
    store = TableStore(tables_dir(config))
    profile = RobotProfile.from_config(config).describe()
    ok = True
    print(f"2x2x2 ({store.directory}):")  # as the 3x3x3 section is headed
    for name, prof in (("coords.npz", None), ("robot-cost.npy", profile), ("htm.npy", None), ("qtm.npy", None)):
        problem = store.problem(name, prof)
        optional = name in ("htm.npy", "qtm.npy")  # only `solve --metric htm/qtm` needs them
        if problem is None:
            print(f"  {name:15} ok")
        elif problem == "not built yet" and optional:
            print(f"  {name:15} not built yet (only `solve --metric {name[:3]}` uses it; built on first use)")
        else:
            ok = False
            print(f"  {name:15} {problem}")
    if not ok:
        print("Rebuilt automatically on first use; to build now: cube-robot tables build")
    if puzzle is None:
        print_tables_status3(config)  # informational: a 2x2x2 robot does not need them
    return ExitStatus.OK if ok else ExitStatus.NOT_DONE
