"""`cube-robot jog | grip | motors | home | load | release | tune grippers`: bringing a robot up.

Every command takes --config, --port, --sim (the emulated robot: the real firmware in simavr, or
the mock with --firmware mock), --json (one JSON object on stdout; the running commentary goes
to stderr) and --puzzle (the board's rules: 2x2x2, or 3x3x3 for 3x3x3 grippers: puzzle3.py).  Ctrl-C while the robot moves sends the real-time stop first, then reports the robot's
state; Ctrl-C at a prompt, with nothing moving, sends no stop and latches no alarm.  `home` by eye
needs a person at a terminal, `tune grippers` by keys a terminal or keys on stdin (each says so at the
start otherwise, and names its non-interactive way); `load` goes on without one.
Exit status (robot/exit_status.py, the same in every command): 0 done, 1 not done (the robot
refused, an alarm latched, the link failed, or tuning quit without saving), 2 bad config or arguments,
4 no robot answers on the port or it is not ready (nothing moved), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import cli_common
from ..cli_common import add_config_argument
from ..config_types import Config
from ..exit_status import ExitStatus

PUZZLES = ("2x2x2", "3x3x3")  # --puzzle: the board's rules (PUZZLE 2 / PUZZLE 3 at the handshake)

EXAMPLES = {
    "jog": """examples:
  cube-robot jog R 90              turn arm R a quarter turn clockwise (seen from outside R), in the air
  cube-robot jog L -45
  cube-robot jog F --steps 5       five (micro)steps: for squaring an arm by eye
  cube-robot jog R 90 --with-cube  pair RL takes the cube and R turns its layer
  cube-robot jog B 90 --sim        try it on the emulated robot
  cube-robot jog R 90 --puzzle 3x3x3               3x3x3 grippers: in the air (R's gripper open)
  cube-robot jog R 90 --with-cube --puzzle 3x3x3 --arms-straight   R and pair FB closed at 0, R turns its layer""",
    "grip": """examples:
  cube-robot grip R open           one gripper
  cube-robot grip RL close         a pair (both its grippers)
  cube-robot grip all open
  cube-robot grip FB close --sim --json
  cube-robot grip all close --puzzle 3x3x3 --arms-straight   3x3x3: closes only on arms known square""",
    "motors": """examples:
  cube-robot motors on             drivers on: the arms hold
  cube-robot motors off            drivers off: turn the arms by hand (positions are forgotten)
  cube-robot motors on --sim --json""",
    "home": """examples:
  cube-robot home                  with motion.homing.sensors: find each arm's zero with its sensor;
                                   without: square each arm by eye (+ / - / steps, Enter = straight)
  cube-robot home --arms RL
  cube-robot home --sim
  cube-robot home --puzzle 3x3x3   one pair at a time: the other pair holds the cube meanwhile""",
    "load": """examples:
  cube-robot load                  open all grippers, wait for the cube (Enter or the start button),
                                   close the start pair (robot.start_grip; RL when 'any')
  cube-robot load --pair FB --sim
  cube-robot load --puzzle 3x3x3 --arms-straight   3x3x3: all four open, wait, all four close at 0""",
    "release": """examples:
  cube-robot release               open all grippers: take the cube out
  cube-robot release --sim --json
  cube-robot release --puzzle 3x3x3""",
    "tune": """examples:
  cube-robot tune grippers                        keys: + - ] [ nudge, o / c open or closed, n next, s save, q quit
  cube-robot tune grippers --set R.open=1100 --set L.closed=1850 --save
  cube-robot tune grippers --sim --set F.open=1050 --json
  cube-robot tune grippers --puzzle 3x3x3 --arms-straight   3x3x3: CLOSE needs the arms known square""",
}


def _common(parser) -> None:
    parser.add_argument("--port", metavar="PATH", help="the robot's serial port (default: link.port, else auto-detect)")
    parser.add_argument("--sim", action="store_true",
                        help="use the emulated robot (the real firmware in simavr; the mock with --firmware mock)")
    parser.add_argument("--firmware", choices=("auto", "emulator", "mock"), default="auto",
                        help="with --sim: which emulated firmware (default: simavr if installed)")
    parser.add_argument("--realtime", action="store_true", help="with --sim: run at real speed")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument("--puzzle", choices=PUZZLES, default=None,
                        help="the board's rules: 2x2x2 (default) or 3x3x3 (3x3x3 grippers: every arm closed at 0 by "
                             "default, a layer turns while the other pair is closed at 0; docs/running.md)")
    add_config_argument(parser)


def _arms_straight(parser) -> None:
    parser.add_argument("--arms-straight", action="store_true",
                        help="with --puzzle 3x3x3: the arms stand straight (your word; the board forgets their "
                             "positions when the port opens, and closes a 3x3x3 gripper only on a known square arm)")


def _puzzle(args, config: Config) -> str:
    """--puzzle, else the config's puzzle if it names one, else 2x2x2."""
    return args.puzzle or getattr(config.robot, "puzzle", None) or PUZZLES[0]


def _parser(subparsers, name, help_text, description):
    return subparsers.add_parser(name, help=help_text, description=description, epilog=EXAMPLES[name],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)


def register(subparsers) -> None:
    jog = _parser(subparsers, "jog", "turn one arm (drivers switched on as needed)",
                  "Turn one arm by DEGREES (or --steps N). In the air: its gripper is opened first if needed. "
                  "The firmware refuses any turn against a closed gripper of the other pair.")
    jog.add_argument("arm", metavar="ARM", help="R, L, F or B")
    jog.add_argument("degrees", metavar="DEGREES", nargs="?", type=float,
                     help="angle, clockwise-positive seen from outside the arm's face")
    jog.add_argument("--steps", type=int, help="turn by this many (micro)steps instead of DEGREES")
    jog.add_argument("--with-cube", action="store_true", help="the arm's pair takes the cube, the arm turns its layer")
    jog.add_argument("--arms-straight", action="store_true",
                     help="with --with-cube (or --puzzle 3x3x3): the pair's arms stand straight (your word; the board "
                          "forgets their positions when the port opens)")
    _common(jog)
    jog.set_defaults(handler=run_jog)

    grip = _parser(subparsers, "grip", "open or close one gripper, a pair, or all",
                   "Open or close grippers (each with its own pulse widths from config.yaml).")
    grip.add_argument("target", metavar="ARM|PAIR", help="R, L, F, B, a pair RL / FB, or all")
    grip.add_argument("action", choices=("open", "close"))
    _arms_straight(grip)
    _common(grip)
    grip.set_defaults(handler=run_grip)

    motors = _parser(subparsers, "motors", "switch the stepper drivers on or off (EN pin)",
                     "Stepper drivers on (the arms hold) or off (turn them by hand; positions are forgotten).")
    motors.add_argument("state", choices=("on", "off"))
    _common(motors)
    motors.set_defaults(handler=run_motors)

    home = _parser(subparsers, "home", "find each arm's zero (sensors) or square the arms by eye",
                   "Home the arms: with motion.homing.sensors, each arm seeks its sensor, backs off, approaches "
                   "slowly and moves by its zero offset; without sensors, you square each arm by eye.")
    home.add_argument("--arms", default="RLFB", help="which arms, in order (default RLFB)")
    home.add_argument("--by-eye", action="store_true", help="square by eye even if sensors are configured")
    _common(home)
    home.set_defaults(handler=run_home)

    load = _parser(subparsers, "load", "open all grippers, wait for the cube, close the start pair",
                   "Put the cube in: all grippers open, then Enter or the start button, then the start pair closes.")
    load.add_argument("--pair", choices=("RL", "FB"), help="the pair that takes the cube (default robot.start_grip; "
                      "2x2x2 only: a 3x3x3 is held by all four)")
    _arms_straight(load)
    _common(load)
    load.set_defaults(handler=run_load)

    release = _parser(subparsers, "release", "open all grippers (take the cube out)", "Open all four grippers.")
    _common(release)
    release.set_defaults(handler=run_release)

    tune = _parser(subparsers, "tune", "trim the grippers' pulse widths live, saved to config.yaml",
                   "Trim each gripper's open and closed pulse widths on the robot.")
    tune_sub = tune.add_subparsers(dest="what", metavar="WHAT", required=True)
    grippers = tune_sub.add_parser(
        "grippers", help="per-gripper open/closed widths", epilog=EXAMPLES["tune"],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Interactive (keys) or with --set; saving rewrites only the motion.arms.<arm>.servo_*_us lines.")
    grippers.add_argument("--set", action="append", default=[], metavar="ARM.open|closed=US",
                          help="set a width without the interactive keys (repeatable)")
    grippers.add_argument("--save", action="store_true", help="with --set: write the widths into the config file")
    _arms_straight(grippers)
    _common(grippers)
    grippers.set_defaults(handler=run_tune)


# ---------------------------------------------------------------------------
# Running a command


class Output:
    """The commentary (stdout, or stderr with --json) and the JSON result."""

    def __init__(self, args):
        self.json = args.json
        self.messages = []
        self.simulated = bool(getattr(args, "sim", False))  # every line says so, as a simulated run's report

    def tell_maker(self, text: str) -> None:
        self.messages.append(text)
        if self.simulated:
            text = cli_common.simulated(text)
        print(text, file=sys.stderr if self.json else sys.stdout, flush=True)

    def ask(self, prompt: str) -> str:
        print(cli_common.simulated(prompt) if self.simulated else prompt, end="", file=sys.stderr, flush=True)
        line = sys.stdin.readline()
        if not line:
            raise EOFError("no more input")
        return line


def _run(args, body, check=None) -> int:
    """Load the config, check the arguments (check(config), before anything connects or moves: a
    bad one is exit 2), connect (real or --sim), run body(robot, config, out) -> (ok, extra), report."""
    from .. import config as config_module
    from ..link.errors import DisconnectedError, LinkError
    from ..sim.emulator import EmulatorError
    from ..arms.actions import BringupError
    from .connection import ConnectedRobot, CommandInterrupted, stop_on_interrupt
    from .tune import TuneError

    config = config_module.load(args.config)
    puzzle = _puzzle(args, config)
    try:
        if getattr(args, "arms_straight", False) and puzzle == PUZZLES[0] and args.command != "jog":
            raise BringupError("--arms-straight is for --puzzle 3x3x3 (and jog --with-cube): a 2x2x2 gripper "
                               "closes without the arms' positions")
        if check is not None:
            check(config)
    except (BringupError, TuneError) as exc:
        _say_error(args, f"cube-robot {args.command}: {exc}")
        return ExitStatus.BAD_CONFIG
    out = Output(args)
    result = {"command": args.command, "simulated": bool(args.sim), "puzzle": puzzle}
    code = ExitStatus.OK
    connected = False  # a failure before the robot answered: NOT STARTED, nothing moved
    try:
        with ConnectedRobot(config, port=args.port, sim=args.sim, firmware=args.firmware, realtime=args.realtime,
                            puzzle=puzzle) as robot:
            connected = True
            result["robot"] = robot.backend
            if args.sim:
                out.tell_maker(f"Robot: {robot.backend}.")
            if puzzle != PUZZLES[0]:
                out.tell_maker(f"The board is in its {puzzle} mode (PUZZLE {puzzle[0]}, its id line says pz {puzzle[0]}): "
                               "every arm closed at 0 by default, a layer turns only while the other pair is closed "
                               "at 0, an arm jogs only in the air.")
            try:
                with stop_on_interrupt(robot, out.tell_maker):
                    ok, extra = body(robot, config, out)
            except (LinkError, BringupError, TuneError, EOFError):
                _state_into(result, robot, config, out, quiet=True)  # a refusal: what the robot is doing now
                raise
            result.update(extra)
            _state_into(result, robot, config, out)
            code = ExitStatus.OK if ok else ExitStatus.NOT_DONE
    except CommandInterrupted as exc:
        result["error"] = str(exc)
        code = ExitStatus.INTERRUPTED
    except (LinkError, BringupError, TuneError, EmulatorError, EOFError) as exc:
        result["error"] = str(exc)
        if connected and isinstance(exc, DisconnectedError):  # what the person at the robot does next
            result["error"] += (". The robot finishes what it had been sent, then waits: plug the USB cable back in "
                                "and look at the arms before the next command (it may have completed this one); "
                                "opening the port restarts an Uno, which forgets the arms' positions ('cube-robot "
                                "home' finds them)")
        code = ExitStatus.NOT_DONE if connected else ExitStatus.NOT_STARTED
    if "error" in result:
        _say_error(args, f"cube-robot {args.command}: {result['error']}")
    result["ok"] = code == ExitStatus.OK
    if args.json:
        print(json.dumps(result))
    return int(code)


def _say_error(args, text: str) -> None:
    """A refusal or failure, on stderr; marked SIMULATED with --sim, as every line of a rehearsal."""
    print(cli_common.simulated(text) if args.sim else text, file=sys.stderr)


def _state_into(result: dict, robot, config: Config, out, quiet: bool = False) -> None:
    """Say the robot's state (drivers, arms, grippers) and put it into the JSON result; after a
    failure (quiet) a state that cannot be read is left out."""
    from .connection import describe

    try:
        where = robot.link.where()
    except Exception:
        if quiet:
            return
        raise
    out.tell_maker("Now: " + describe(where, None, config.motion.steps_per_rev) + ".")
    result["where"] = {"motors_on": where.motors_on, "positions": where.positions,
                       "grippers": where.grippers, "home_input_active": where.sensor_active}


def _sim_left_off(robot, config: Config):
    """Simulation: arm -> its true steps from straight (said with a confirmation); None on a real robot."""
    if not robot.sim:
        return None
    rev = config.motion.steps_per_rev
    return lambda arm: (robot.arm_angle(arm) + rev // 2) % rev - rev // 2


def run_jog(args) -> int:
    from ..arms import actions
    from . import puzzle3

    arm = args.arm.upper()
    if arm not in "RLFB" or len(arm) != 1:
        _say_error(args, f"cube-robot jog: {args.arm!r} is not an arm (R, L, F, B)")
        return ExitStatus.BAD_CONFIG
    if (args.degrees is None) == (args.steps is None):
        _say_error(args, "cube-robot jog: give DEGREES or --steps N (one of them)")
        return ExitStatus.BAD_CONFIG

    def steps_of(config: Config) -> int:
        from .. import firmware_header

        rev = config.motion.steps_per_rev
        steps = args.steps if args.steps is not None else actions.steps_for_degrees(args.degrees, rev)
        most = firmware_header.limits()["JOG_STEPS_MAX"]
        if steps == 0:
            raise actions.BringupError("that is 0 steps: nothing to turn")
        if abs(steps) > most:
            raise actions.BringupError(f"{steps} steps is more than one jog may turn ({most} steps = "
                                       f"{most * 360 / rev:g} deg at {rev} steps per turn); jog in parts")
        if args.with_cube and _puzzle(args, config) == "3x3x3":
            puzzle3.check_layer_turn(steps, rev)
        return steps

    def body(robot, config: Config, out):
        rev = config.motion.steps_per_rev
        steps = steps_of(config)
        if args.degrees is not None and abs(steps * 360 / rev - args.degrees) > 1e-9:
            out.tell_maker(f"{args.degrees:g} deg is {steps} steps ({steps * 360 / rev:.2f} deg) at {rev} steps per turn.")
        if robot.puzzle == "3x3x3":
            puzzle3.jog(robot.link, arm, steps, out.tell_maker, with_cube=args.with_cube,
                        arms_straight=args.arms_straight, left_off=_sim_left_off(robot, config))
        else:
            actions.jog(robot.link, arm, steps, out.tell_maker, with_cube=args.with_cube, arms_straight=args.arms_straight)
        return True, {"arm": arm, "steps": steps}

    return _run(args, body, check=steps_of)


def run_grip(args) -> int:
    from ..arms import actions

    def target(config: Config | None = None) -> str:
        arms = actions.arms_of(args.target)
        if len(arms) not in (1, 4) and not any(set(arms) == set(pair) for pair in actions.PAIRS):
            raise actions.BringupError(f"{args.target!r} is not one gripper, a pair ({', '.join(actions.PAIRS)}) "
                                       "or 'all'")
        return arms

    def body(robot, config: Config, out):
        arms = target()
        if robot.puzzle == "3x3x3":
            from . import puzzle3

            puzzle3.grip(robot.link, arms, args.action == "close", out.tell_maker, arms_straight=args.arms_straight,
                         left_off=_sim_left_off(robot, config))
        else:
            actions.grip(robot.link, arms, args.action == "close", out.tell_maker)
        return True, {"arms": arms, "action": args.action}

    return _run(args, body, check=target)


def run_motors(args) -> int:
    from ..arms import actions

    def body(robot, config: Config, out):
        actions.set_motors(robot.link, args.state == "on", out.tell_maker)
        if robot.puzzle == "3x3x3" and args.state == "off":
            out.tell_maker("3x3x3 mode: the board closes a gripper and turns a layer only on arms whose position it "
                           "knows: after this, confirm them straight (--arms-straight) or home them.")
        return True, {"motors": args.state}

    return _run(args, body)


def run_home(args) -> int:
    from ..arms import actions

    def by_eye(config: Config) -> bool:
        return args.by_eye or not config.motion.homing.sensors

    def check(config: Config) -> None:
        actions.arms_of(args.arms)
        if by_eye(config) and not (sys.stdin is not None and sys.stdin.isatty()):
            raise actions.BringupError(
                "squaring the arms by eye needs a person at a terminal, and stdin is not one (nothing moved); "
                "without one: home with sensors (motion.homing.sensors: true), or square the arms by hand and "
                "confirm it with `cube-robot run --arms-straight`")

    def body(robot, config: Config, out):
        arms = actions.arms_of(args.arms)
        hint = left_off = None
        if by_eye(config) and args.sim:
            left_off = _sim_left_off(robot, config)  # the virtual robot knows how far off straight the arm stands

            def hint(arm):
                off = left_off(arm)
                return "straight" if off == 0 else f"arm {arm} stands {abs(off)} step{'s' if abs(off) != 1 else ''} {'clockwise' if off > 0 else 'anticlockwise'} of straight"
        if robot.puzzle == "3x3x3":
            from . import puzzle3

            puzzle3.home(robot.link, arms, out.tell_maker, by_eye(config), out.ask, hint, left_off)
        elif not by_eye(config):
            actions.home_with_sensors(robot.link, arms, out.tell_maker)
        else:
            actions.square_by_eye(robot.link, arms, out.ask, out.tell_maker, hint, left_off)
        method = "by eye" if by_eye(config) else "sensors"
        if args.sim:
            out.tell_maker("Simulated arms now at (steps from straight): "
                    + ", ".join(f"{a} {robot.arm_angle(a)}" for a in arms) + ".")
        return True, {"arms": arms, "method": method}

    return _run(args, body, check=check)


def run_load(args) -> int:
    from ..arms import actions

    def check(config: Config) -> None:
        if args.pair and _puzzle(args, config) == "3x3x3":
            raise actions.BringupError("--pair is for the 2x2x2: with --puzzle 3x3x3 all four grippers close on the cube")

    def body(robot, config: Config, out):
        def wait():
            _wait_enter_or_button(robot, config, out, args.sim)

        if robot.puzzle == "3x3x3":
            from . import puzzle3

            puzzle3.load(robot.link, config, wait, out.tell_maker, arms_straight=args.arms_straight,
                         left_off=_sim_left_off(robot, config))
            return True, {"pair": None}
        start = args.pair or config.robot.start_grip
        pair = start if start in actions.PAIRS else actions.PAIRS[0]
        actions.load(robot.link, pair, wait, out.tell_maker)
        return True, {"pair": pair}

    return _run(args, body, check=check)


def _wait_enter_or_button(robot, config: Config, out, sim: bool) -> None:
    """Enter on the keyboard or the robot's start button, whichever comes first."""
    import threading
    import time

    from ..arms.actions import BringupError

    entered = threading.Event()
    keyboard = sys.stdin is not None and not sys.stdin.closed
    if not (keyboard and sys.stdin.isatty()):  # no person at a terminal is needed: say what is assumed
        out.tell_maker("stdin is not a terminal: going on without a person at the keyboard ("
                + ("the simulation presses the emulated start button)" if sim
                   else "a line on stdin counts as Enter; else the robot's start button)"))

    def read():
        if sys.stdin.readline():
            entered.set()
    if keyboard:
        threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + config.run.start_timeout_s
    pressed_in_sim = False
    while time.monotonic() < deadline:
        if entered.is_set() or robot.link.wait_button(timeout_s=0.2):
            return
        if sim and not pressed_in_sim and not (keyboard and sys.stdin.isatty()) and not entered.is_set():
            out.tell_maker("(simulation: nobody at the keyboard; pressing the emulated start button)")
            robot.press_start()
            pressed_in_sim = True
    raise BringupError(f"nobody pressed Enter or the start button within {config.run.start_timeout_s:.0f} s")


def run_release(args) -> int:
    from ..arms import actions

    def body(robot, config: Config, out):
        actions.release(robot.link, out.tell_maker)
        return True, {}

    return _run(args, body)


def run_tune(args) -> int:
    from . import tune as tune_module
    from ..arms.actions import ensure_motors

    def body(robot, config: Config, out):
        from .. import firmware_header

        limits = firmware_header.limits()
        bounds = (limits["SERVO_US_MIN"], limits["SERVO_US_MAX"])
        widths = tune_module.Widths.from_motion(config.motion)
        ensure_motors(robot.link, out.tell_maker)
        if robot.puzzle == "3x3x3":  # the board closes a 3x3x3 gripper only on an arm it knows square
            from . import puzzle3

            closing = ("".join(a for a in "RLFB" if any(tune_module.parse_setting(t)[:2] == (a, "closed") for t in args.set))
                       if args.set else "RLFB")
            puzzle3.find_positions(robot.link, closing, config, out.tell_maker, args.arms_straight,
                                   _sim_left_off(robot, config))
        if args.set:
            for text in args.set:
                arm, which, us = tune_module.parse_setting(text)  # checked before connecting too
                widths.set(arm, which, us, bounds)
                tune_module.apply_live(robot.link, widths, arm, which)
                out.tell_maker(f"gripper {arm} {which}: {us} us (sent; the gripper moved there)")
            save = args.save
        else:
            save = tune_module.interactive(robot.link, widths, bounds, _key_reader(typed), out.tell_maker)
        result: dict[str, object] = {
            "widths": {arm: {"open_us": w[0], "closed_us": w[1]} for arm, w in widths.values.items()}}
        if save and widths.changed and robot.sim:  # the keys' `s` on the emulated robot
            out.tell_maker(cli_common.SIM_NOT_SAVED.format(what="widths tuned on", path=config.path))
            result["saved"] = []
        elif save and widths.changed:
            written = tune_module.save(config.path, widths)
            out.tell_maker(f"Saved {len(widths.changed)} width(s) into {written} "
                    f"(motion.arms.<arm>.servo_*_us lines only).")
            result["saved"] = sorted(f"{a}.{w}" for a, w in widths.changed)
        elif not save:
            out.tell_maker(f"Not saved: {config.path} is unchanged.")
        return save or bool(args.set), result  # quitting the keys without saving: not done

    typed: list[str] = []  # keys already read from a stdin that is not a terminal (the key reader starts with them)

    def settings_parse(config: Config) -> None:
        from .. import firmware_header

        if args.sim and args.save:
            raise tune_module.TuneError(cli_common.SIM_NOT_SAVED.format(what="widths tuned on", path=config.path))
        if not args.set and not _keys_at_hand(typed):
            raise tune_module.TuneError(
                "tuning with keys needs a person at a terminal, and stdin is not one and gives no keys (nothing "
                "moved); without one: `cube-robot tune grippers --set R.open=1100 --set R.closed=1900` "
                "(repeatable; --save writes them)")
        limits = firmware_header.limits()
        widths = tune_module.Widths.from_motion(config.motion)
        for text in args.set:
            widths.set(*tune_module.parse_setting(text), (limits["SERVO_US_MIN"], limits["SERVO_US_MAX"]))

    return _run(args, body, check=settings_parse)


def _keys_at_hand(typed: list) -> bool:
    """Whether keys can come: stdin is a terminal, or it has input (its first line is read into `typed`
    and the key reader starts with it); an empty one (</dev/null) gives none."""
    if sys.stdin is None or sys.stdin.closed:
        return False
    if sys.stdin.isatty():
        return True
    line = sys.stdin.readline()
    typed.extend(line.strip() or "?")
    return bool(line)


def _key_reader(typed=()):
    """One key at a time: raw keys from a terminal, else the characters of each input line (starting
    with those already read, `typed`)."""
    if sys.stdin.isatty():
        import termios
        import tty

        def read_key() -> str:
            fd = sys.stdin.fileno()
            old = termios.tcgetattr(fd)
            try:
                tty.setraw(fd)
                return sys.stdin.read(1)
            finally:
                termios.tcsetattr(fd, termios.TCSADRAIN, old)
        return read_key

    pending = list(typed)

    def read_line_keys() -> str:
        while not pending:
            line = sys.stdin.readline()
            if not line:
                return ""  # end of input: quit without saving
            pending.extend(line.strip() or "?")
        return pending.pop(0)
    return read_line_keys
