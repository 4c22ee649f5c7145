"""`cube-robot run` and `cube-robot history`: argument parsing and output only."""

from __future__ import annotations

import argparse
import json
import sys

from ..cli_common import add_config_argument, simulated
from ..exit_status import ExitStatus
from .report import EXIT_STATUS_HELP

RUN_EXAMPLES = """examples:
  cube-robot run                       robot attached: wait for its start button; none named or found: simulate
  cube-robot run --port /dev/ttyACM0   this robot, or an error (never a simulation)
  cube-robot run --arms-straight       no homing sensors: the arms were squared by eye (cube-robot home)
  cube-robot run --sim                 simulated robot, random scramble
  cube-robot run --sim --scramble "R U2 F' L"
  cube-robot run --sim --fault-rate 0.01 --disconnect-at 5
  cube-robot run --sim --estop-at 4    safe stop demo: the report names the cube state
  cube-robot run --sim --bad-scan dark --json
  cube-robot run --sim --light glare   a lamp's reflection on every scan (not only the first)"""
LIGHT_CHOICES = ("none", "glare", "side", "dim")  # robot/sim/lamp.py CHOICES (the run imports nothing of sim)


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a probability: give a value from 0 to 1 (e.g. 0.01)")
    return value


def _whole_number(minimum: int, below_minimum: str):
    """An argparse type: a whole number >= minimum; `below_minimum` says why a smaller one is wrong."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text}{below_minimum}")
        return value
    return parse


_count = _whole_number(0, " is negative: give how many runs to list (0 or more)")
_action_number = _whole_number(1, ": plan actions are numbered from 1")


def _scramble(text: str) -> str:
    from ..cube import MoveError, parse_moves

    if not text.strip():  # an empty one would silently become a random scramble
        raise argparse.ArgumentTypeError("the scramble is empty: give moves, e.g. \"R U2 F'\", or leave out "
                                         "--scramble for a random scramble")
    try:
        parse_moves(text)
    except MoveError as exc:
        raise argparse.ArgumentTypeError(exc.args[0]) from None
    return text


def register(subparsers) -> None:
    run = subparsers.add_parser(
        "run", help="solve a cube: scan, plan, execute (simulated when no robot is attached)",
        description="Wait for start, scan the cube, plan the fastest solve and execute it, then report.",
        epilog=RUN_EXAMPLES + "\n\n" + EXIT_STATUS_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("--sim", action="store_true", help="use the simulated robot even if one is attached")
    run.add_argument("--port", metavar="PATH", help="the robot's serial port (default: link.port, else auto-detect)")
    run.add_argument("--scramble", type=_scramble, metavar="MOVES", help="simulation: scramble the virtual cube with these moves")
    run.add_argument("--seed", type=int, default=None, help="simulation: seed for the random scramble and images")
    run.add_argument("--firmware", choices=("auto", "emulator", "mock"), default="auto",
                     help="simulation: real firmware in simavr, or the Python mock (default: emulator if installed)")
    run.add_argument("--realtime", action="store_true", help="simulation: run at real speed")
    run.add_argument("--fault-rate", type=_probability, default=0.0, metavar="P",
                     help="simulation: corrupt/drop/duplicate/delay serial bytes with probability P")
    run.add_argument("--disconnect-at", type=_action_number, metavar="N", help="simulation: pull the cable at plan action N")
    run.add_argument("--estop-at", type=_action_number, metavar="N", help="simulation: press e-stop during plan action N")
    run.add_argument("--keep-power", action="store_true",
                     help="simulation: a pulled cable does not reset the board on reconnect (a real Uno resets)")
    run.add_argument("--bad-scan", choices=("dark", "glare"), help="simulation: the first scan gets a bad picture")
    run.add_argument("--light", choices=LIGHT_CHOICES,
                     help="simulation: a lamp whose reflection is on every scan (default: config camera.lighting)")
    run.add_argument("--no-verify", action="store_true", help="do not re-scan after solving to confirm")
    run.add_argument("--arms-straight", action="store_true",
                     help="robot without homing sensors: you confirm the arms stand straight (squared by eye, "
                          "e.g. with `cube-robot home`); the board forgets their positions when its port opens")
    run.add_argument("--resume", action="store_true",
                     help="after a stop where the board reset mid-move (alarm RESET_DURING_MOTION) and you have "
                          "turned that layer square by hand: clear that alarm, rescan the cube and solve it")
    run.add_argument("--json", action="store_true", help="print the report as one JSON object")
    run.add_argument("--puzzle", choices=("2x2x2", "3x3x3"), default="2x2x2",
                     help="the puzzle in the grippers (3x3x3: simulated only, with 3x3x3 grippers; docs/robot3.md)")
    add_config_argument(run)
    run.set_defaults(handler=run_command)

    history = subparsers.add_parser(
        "history", help="summarise the solve log",
        description="Summarise the solve log (one JSON line per run, in run.data_dir).",
        epilog="examples:\n  cube-robot history\n  cube-robot history --last 5",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    history.add_argument("--last", type=_count, default=10, help="list this many recent runs (default 10)")
    add_config_argument(history)
    history.set_defaults(handler=history_command)


def run_command(args) -> int:
    from .. import config as config_module
    from . import log
    from .events import EventBus
    from .options import RunOptions
    from .hardware import not_started_report, run_hardware
    from .robot import RobotNotReady, choose_robot
    from .simulated import run_simulated

    config = config_module.load(args.config)
    options = RunOptions.from_args(args)
    if getattr(args, "puzzle", "2x2x2") == "3x3x3":
        from .puzzle3 import run_command3

        return run_command3(config, options)
    tell_maker = (lambda text: print(text, file=sys.stderr)) if options.json else print
    simulated_by = (["--sim"] if options.sim else []) + options.simulation_flags()
    if options.port and simulated_by:  # which robot was meant is not clear: move neither
        print(f"cube-robot run: --port {options.port} names a real robot, but {', '.join(simulated_by)} "
              f"{'is' if len(simulated_by) == 1 else 'are'} for the simulated one: give one or the other "
              "(nothing moved)", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    if options.resume and simulated_by:  # it would be ignored: a simulated robot starts with no alarm
        print(f"cube-robot run: --resume clears the alarm a reset left on a real robot's board "
              f"(RESET_DURING_MOTION), but {', '.join(simulated_by)} "
              f"{'runs' if len(simulated_by) == 1 else 'run'} the simulated robot, which starts afresh with no "
              "such alarm: leave out --resume, or run the real robot (--port PATH) without them (nothing moved)",
              file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    if options.simulation_flags() and not options.sim:
        options = options.replace(sim=True)  # these only make sense for the virtual robot
    bus = EventBus()
    bus.subscribe(log.SolveLog(config))  # appends the run's report when its RunEnded arrives
    report = link = None
    if not options.sim:
        try:
            link = choose_robot(config, options.port)  # the probe's connection: the port is opened once
        except RobotNotReady as exc:  # no robot answers: NOT STARTED, reported and logged like any run
            report = not_started_report(exc, bus)
            if options.json:  # the text report says it all; beside JSON a person still reads why
                print(f"cube-robot run: NOT STARTED, nothing moved: {exc}", file=sys.stderr)
        else:
            if link is None:
                tell_maker("SIMULATED | no port is named (--port, link.port) and no robot answers on any serial port: "
                    "running the simulated robot (--sim says so; --port PATH names a robot).")
                options = options.replace(sim=True)
            else:
                options = options.replace(port=link.url)
    if report is None and options.sim:
        report = run_simulated(config, options, lambda text: tell_maker(simulated(text)), bus)
    elif report is None:
        report = run_hardware(config, options, tell_maker, bus, probed=link)
    print(json.dumps(report.to_json()) if options.json else report.format())
    if report.execute_ok is not None and report.mode == "simulated":  # no robot is left to release it
        tell_maker("SIMULATED | The virtual robot ended with the run; on a real robot the grippers would still "
                   "hold the cube and `cube-robot release` would open them.")
    elif report.execute_ok is not None:  # the robot took the cube, and still holds it
        tell_maker("The robot still holds the cube: `cube-robot release` opens all grippers.")
    return report.exit_status()


def history_command(args) -> int:
    from .. import config as config_module
    from . import log

    config = config_module.load(args.config)
    path = log.log_path(config)
    if not path.exists():
        print(f"no runs logged yet ({path})")
        return ExitStatus.OK
    runs = log.read(path, warn=lambda text: print(text, file=sys.stderr))
    print("\n".join(log.summary(runs, path, args.last)))
    return ExitStatus.OK
