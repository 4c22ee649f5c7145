"""`cube-robot calibrate overlap`: where a robot's jaws stop touching the cube, first touch it, and clear a
turning layer, found without instruments (motion.jaw_clear_pct, jaw_contact_pct, jaw_open_gap_mm).

One pair holds the cube; the other pair's jaws (both, each at the same fraction of its own travel) are
put at a candidate width, and the maker answers one question per try.  Three bisections along the
travel (0 = closed, 1 = open), each to RESOLUTION:
  clear    opened from closed to the candidate: do the jaws still touch the cube?  (a sheet of paper
           slid between jaw and cube is held: touching)
  contact  closed from open to the candidate: do the jaws touch the cube?
  layer    opened from closed to the candidate, then the holding pair turns its layer slowly through a
           whole quarter (its corners reach furthest at 45 degrees): did the layer touch a jaw?
Each answer is taken on the safe side of its bisection: clear the first width that no longer touched,
contact the last that did not touch yet, the layer's clearance the first width it did not touch.
The gap grows linearly from the clear point to the open width (robot/regrip.py), so the layer's
clearance says how far the open jaws are from the cube: open gap = reach * (1 - clear) / (layer - clear),
rounded down.  Saved (--save) through the validated writer, only those three lines.

With --sim the virtual robot's true jaws (config simulated_robot.gripper) answer, from their jam check:
a rehearsal that finds the simulated truth, never saved.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..cli_common import SIM_NOT_SAVED, add_config_argument, simulated
from ..config_types import Config
from ..exit_status import ExitStatus
from ..link import protocol as P
from ..regrip import envelope_mm
from .config_lines import VALUE_LINE, save_read_back, with_number

RESOLUTION = 1 / 64  # of the travel: about 6 us for the default 400 us
QUARTER_PIECES = 10  # the quarter is turned in this many jogs, slowly enough to see a touch
SETTLE_MS = 400  # after moving the jaws, before asking or turning: every servo has arrived
KEYS = ("jaw_clear_pct", "jaw_contact_pct", "jaw_open_gap_mm")


class OverlapCalibrationError(RuntimeError):
    """A measurement that cannot be turned into settings (the message says which and why)."""


def bisect_travel(touches: Callable[[float], bool], resolution: float = RESOLUTION) -> tuple[float, float]:
    """(last fraction that touched, first that did not) between closed (0, taken as touching) and open
    (1, asked first: a touch there is an error the caller names)."""
    lo, hi = 0.0, 1.0
    while hi - lo > resolution:
        mid = (lo + hi) / 2
        if touches(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi


@dataclass(frozen=True)
class Measured:
    clear: tuple[float, float]  # (still touching, no longer) opening from closed
    contact: tuple[float, float]  # (touching, not yet) closing from open, as fractions from closed
    layer: tuple[float, float]  # (touched, cleared) opening from closed, a quarter turned
    reach_mm: float  # how far the turning layer reaches past its faces (at 45 degrees)


def settings_from(measured: Measured) -> dict[str, int]:
    """The three settings, each on its safe side (see the module's docstring)."""
    clear_pct = math.ceil(round(measured.clear[1] * 100, 6))
    contact_pct = math.floor(round((1 - measured.contact[1]) * 100, 6))  # % of the closing travel
    clear = clear_pct / 100
    layer = measured.layer[1]
    if layer <= clear:
        raise OverlapCalibrationError(
            f"the turning layer cleared the jaws at {layer:.0%} of the opening, before they stopped touching the cube "
            f"({clear:.0%}): the answers disagree; run the calibration again")
    gap = math.floor(measured.reach_mm * (1 - clear) / (layer - clear))
    if gap <= measured.reach_mm:
        raise OverlapCalibrationError(
            f"the open jaws stand only about {measured.reach_mm * (1 - clear) / (layer - clear):.1f} mm off the cube: "
            f"{gap} mm, rounded down to be safe, is inside a turning layer's reach ({measured.reach_mm:.1f} mm), which "
            "the firmware refuses; open them further (`cube-robot tune grippers`) and calibrate again")
    return {"jaw_clear_pct": clear_pct, "jaw_contact_pct": contact_pct, "jaw_open_gap_mm": gap}


class Trials:
    """The moves of each try on a robot: `pair` is measured while the other pair holds the cube."""

    def __init__(self, link, config: Config, pair: str, ask_touching: Callable[[str], bool],
                 ask_layer: Callable[[str], bool], after: Callable[[], None] = lambda: None):
        self.link, self.pair = link, pair
        self.holder = next(arm for arm in P.ARMS if arm not in pair)  # its layer turns
        self.widths = {arm: P.gripper_widths(config.motion, arm) for arm in pair}
        self.quarter = config.motion.steps_per_rev // 4
        self.ask_touching, self.ask_layer, self.after = ask_touching, ask_layer, after

    def width(self, arm: str, f: float) -> int:
        open_us, closed_us = self.widths[arm]
        return round(closed_us + f * (open_us - closed_us))

    def _run(self, command: str) -> None:
        self.link.run([command])
        self.after()

    def _set(self, f_open: float | None = None, f_closed: float | None = None) -> None:
        for arm in self.pair:
            open_us, closed_us = self.widths[arm]
            self.link.request(P.gripper_command(arm, self.width(arm, f_open) if f_open is not None else open_us,
                                                self.width(arm, f_closed) if f_closed is not None else closed_us))

    def _jaws_to(self, close: bool) -> None:
        self._run(P.grippers_command(self.pair, close=close))
        self._run(P.dwell_command(SETTLE_MS))

    def opened_to(self, f: float) -> None:
        """From closed on the cube, opened to f."""
        self._set()
        self._jaws_to(close=True)
        self._set(f_open=f)
        self._jaws_to(close=False)

    def clear_trial(self, f: float) -> bool:
        self.opened_to(f)
        return self.ask_touching(self.pair)

    def contact_trial(self, f: float) -> bool:
        self._set()
        self._jaws_to(close=False)
        self._set(f_closed=f)
        self._jaws_to(close=True)
        return self.ask_touching(self.pair)

    def layer_trial(self, f: float) -> bool:
        self.opened_to(f)
        piece = self.quarter // QUARTER_PIECES
        for done in range(0, self.quarter, piece):
            self._run(P.jog_command(self.holder, min(piece, self.quarter - done)))
        return self.ask_layer(self.pair)

    def restore(self) -> None:
        """The configured widths again, the pair open."""
        self._set()
        self._jaws_to(close=False)


def measure(trials: Trials, cube_mm: float, tell_maker, resolution: float = RESOLUTION) -> Measured:
    pair = " and ".join(trials.pair)
    tell_maker(f"1/3 clear: {pair} open from closed to a width; say whether they still touch the cube.")
    if trials.clear_trial(1.0):
        raise OverlapCalibrationError(f"{pair} still touch the cube fully open: widen their open width "
                                      "(`cube-robot tune grippers`) and calibrate again")
    clear = bisect_travel(trials.clear_trial, resolution)
    tell_maker(f"2/3 contact: {pair} close from open to a width; say whether they touch the cube.")
    contact = bisect_travel(trials.contact_trial, resolution)
    tell_maker(f"3/3 layer: {pair} open to a width, then arm {trials.holder} turns its layer slowly through "
               "a quarter; say whether the layer touched a jaw.")
    if trials.layer_trial(1.0):
        raise OverlapCalibrationError(
            f"the turning layer touches {pair} even fully open: the open jaws are inside its reach; widen "
            "their open width (`cube-robot tune grippers`) and calibrate again")
    layer = bisect_travel(trials.layer_trial, resolution)
    trials.restore()
    return Measured(clear, contact, layer, envelope_mm(45.0, cube_mm))


# ---------------------------------------------------------------------------
# Saving: only the three motion lines


def rewrite_jaw_settings(text: str, values: dict, path="config") -> str:
    """`text` with motion.jaw_clear_pct / jaw_contact_pct / jaw_open_gap_mm replaced; every other
    character kept.  A setting not written under `motion:` is an error."""
    lines = text.splitlines(keepends=True)
    section, found = None, set()
    for i, line in enumerate(lines):
        content = line.split("#", 1)[0].rstrip()
        if not content.strip():
            continue
        indent = len(content) - len(content.lstrip(" "))
        if indent == 0:
            section = content.split(":", 1)[0]
            continue
        match = VALUE_LINE.match(line)
        if section == "motion" and indent == 2 and match and match["key"] in values:
            found.add(match["key"])
            lines[i] = with_number(match, values[match["key"]])
    missing = [f"motion.{key}" for key in values if key not in found]
    if missing:
        raise OverlapCalibrationError(f"{path}: no {', '.join(missing)} line to update; add it under motion: "
                                      "(see the shipped config.yaml) and save again")
    return "".join(lines)


def save(path, values: dict) -> Path:
    return save_read_back(path, rewrite_jaw_settings(Path(path).read_text(), values, path), values,
                          lambda loaded: {key: getattr(loaded.motion, key) for key in values}, OverlapCalibrationError)


# ---------------------------------------------------------------------------
# The command


def register_calibrate(group) -> None:
    parser = group.add_parser(
        "overlap", help="find where the jaws stop touching, first touch and clear a turning layer (motion.jaw_*)",
        description=(
            "A guided procedure: one pair holds the cube, the other pair's jaws are set to candidate widths and you "
            "answer y or n (do they touch the cube? did the turning layer touch them?).  About 20 questions.  "
            "--save writes motion.jaw_clear_pct, jaw_contact_pct and jaw_open_gap_mm, changing only those lines."),
        epilog=("examples:\n"
                "  cube-robot calibrate overlap                 # measure, show, change nothing\n"
                "  cube-robot calibrate overlap --save          # measure and update config.yaml\n"
                "  cube-robot calibrate overlap --sim           # rehearse: the simulated jaws answer"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_argument(parser)
    parser.add_argument("--port", metavar="URL", help="serial port or pyserial URL (default: link.port, else auto-detect)")
    parser.add_argument("--sim", action="store_true", help="rehearse on the emulated robot: its true jaws answer")
    parser.add_argument("--firmware", choices=("auto", "emulator", "mock"), default="auto",
                        help="with --sim: which emulated firmware (default: simavr if installed)")
    parser.add_argument("--pair", choices=("FB", "RL"), default="FB", help="the pair measured (the other holds)")
    parser.add_argument("--save", action="store_true", help="write the three settings into the config file")
    parser.set_defaults(handler=run_overlap)


def _ask(question: str) -> bool:
    while True:
        print(f"{question} [y/n] ", end="", file=sys.stderr, flush=True)
        line = sys.stdin.readline()
        if not line:
            raise OverlapCalibrationError("no answer (end of input): nothing measured, nothing saved")
        if line.strip().lower() in ("y", "yes", "n", "no"):
            return line.strip().lower().startswith("y")


def run_overlap(args) -> int:
    from .. import config as config_module
    from ..arms.actions import ensure_motors
    from ..bringup.connection import ConnectedRobot
    from ..link.errors import LinkError
    from ..sim.emulator import EmulatorError

    def tell_maker(text: str) -> None:
        print(simulated(text) if args.sim else text)

    def say_error(text: str) -> None:
        text = f"cube-robot calibrate overlap: {text}"
        print(simulated(text) if args.sim else text, file=sys.stderr)

    if args.sim and args.save:  # as `tune grippers` and `calibrate timing`: refused before anything moves
        say_error(SIM_NOT_SAVED.format(what="jaw settings measured on", path=args.config or config_module.DEFAULT_CONFIG_PATH))
        return ExitStatus.BAD_CONFIG
    connected = False
    try:
        config = config_module.load(args.config)
        with ConnectedRobot(config, port=args.port, sim=args.sim, firmware=args.firmware) as robot:
            connected = True
            link = robot.link
            assert link is not None  # started
            holder = "RL" if args.pair == "FB" else "FB"
            ensure_motors(link, tell_maker)
            link.run([P.grippers_command(P.ARMS, close=False)])
            if args.sim:
                trials = _simulated_trials(robot, link, config, args.pair, tell_maker)
            else:
                tell_maker("The arms must stand straight (`cube-robot home`, or squared by eye).  Put the cube "
                           f"between the open jaws, then press Enter: pair {holder} will hold it.")
                sys.stdin.readline()
                trials = Trials(link, config, args.pair, _ask_touching, _ask_layer)
            link.run([P.grip_command(holder)])
            measured = measure(trials, config.camera.pose.cube_mm, tell_maker)
        values = settings_from(measured)
    except config_module.ConfigError as exc:
        say_error(f"bad config: {exc}")
        return ExitStatus.BAD_CONFIG
    except (LinkError, EmulatorError) as exc:
        say_error(str(exc))
        return ExitStatus.NOT_DONE if connected else ExitStatus.NOT_STARTED
    except OverlapCalibrationError as exc:
        say_error(str(exc))
        return ExitStatus.NOT_DONE
    tell_maker(describe(measured, values, config))
    if args.sim:
        tell_maker("not saved (a rehearsal on the emulated robot: measure on the robot, with --port and --save)")
        return ExitStatus.OK
    if not args.save:
        tell_maker("not saved (add --save to write these into the config file)")
        return ExitStatus.OK
    try:
        written = save(config.path, values)
    except (OverlapCalibrationError, config_module.ConfigError) as exc:
        say_error(str(exc))
        return ExitStatus.NOT_DONE
    tell_maker(f"saved motion.{', motion.'.join(KEYS)} in {written}; the solver's tables follow on next use")
    return ExitStatus.OK


def describe(measured: Measured, values: dict, config: Config) -> str:
    m = config.motion
    return "\n".join([
        f"stop touching when opening: between {measured.clear[0]:.0%} and {measured.clear[1]:.0%} of the travel "
        f"-> jaw_clear_pct {values['jaw_clear_pct']} (config now {m.jaw_clear_pct})",
        f"first touch when closing: between {1 - measured.contact[1]:.0%} and {1 - measured.contact[0]:.0%} of the "
        f"closing travel -> jaw_contact_pct {values['jaw_contact_pct']} (config now {m.jaw_contact_pct})",
        f"a turning layer ({measured.reach_mm:.1f} mm past its faces at 45 degrees) cleared from "
        f"{measured.layer[1]:.0%} of the opening -> the open jaws stand about {values['jaw_open_gap_mm']} mm off the "
        f"cube: jaw_open_gap_mm {values['jaw_open_gap_mm']} (config now {m.jaw_open_gap_mm})"])


def _ask_touching(pair: str) -> bool:
    return _ask(f"Do {' or '.join(pair)}'s jaws touch the cube? (slide a sheet of paper between each jaw and the "
                "cube: held or rubbing = touching)")


def _ask_layer(pair: str) -> bool:
    return _ask(f"While the layer turned, did it touch, rub or push {' or '.join(pair)}'s jaws?")


def _simulated_trials(robot, link, config: Config, pair: str, tell_maker) -> Trials:
    """Trials whose answers come from the virtual robot's true jaws (their jam check), said as they come."""
    from ..sim.jaw_witness import witness_for

    witness = witness_for(robot, config)
    jams: list[str] = []

    def after() -> None:
        jam = witness.sync()
        if jam is not None:
            jams.append(str(jam))

    def touching(arms: str) -> bool:
        after()
        jams.clear()  # no layer turned in these tries
        answer = witness.touching(arms)
        tell_maker(f"  touching? {'y' if answer else 'n'} (the true jaws)")
        return answer

    def touched_layer(arms: str) -> bool:
        after()
        answer = bool(jams)
        jams.clear()
        tell_maker(f"  layer touched a jaw? {'y' if answer else 'n'} (the true jaws' jam check)")
        return answer

    tell_maker(f"the answers come from the simulated robot's true jaws (config simulated_robot.gripper: clear "
               f"{config.simulated_robot.gripper.clear_pct} %, contact {config.simulated_robot.gripper.contact_pct} %, "
               f"open gap {config.simulated_robot.gripper.open_gap_mm:g} mm)")
    return Trials(link, config, pair, touching, touched_layer, after)
