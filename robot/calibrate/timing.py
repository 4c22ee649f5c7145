"""`cube-robot calibrate timing`: measure the robot's action durations.

Runs a short sequence of grips, quarter and half turns several times, takes the
durations the firmware reports in its `done` events, and shows the median
quarter turn, half turn and regrip next to config.yaml's robot.timing.  With
--save it rewrites just those three numbers in the config file (comments and
every other line kept), so the solver optimises for the real robot.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from contextlib import contextmanager
from pathlib import Path

from ..cli_common import SIM_NOT_SAVED, add_config_argument, simulated
from ..config_types import Config
from ..exit_status import ExitStatus
from ..motion import TIMING_KEYS, robot_timing
from ..plan import HALF, Grip, Turn, normalise_angle
from .config_lines import VALUE_LINE, save_read_back, with_number

# `  key: value   # comment` (the comment is optional)

# One repetition: both pairs, every angle, single and double-arm turns.  Each
# pair's turns cancel out, so the cube ends as it started; it ends holding FB so
# the next repetition's GRIP RL is a real regrip.
SEQUENCE = (
    Grip("RL"),
    Turn({"R": 90}), Turn({"R": -90}), Turn({"R": 180}), Turn({"R": 180}),
    Turn({"R": 90, "L": -90}), Turn({"R": -90, "L": 90}),
    Grip("FB"),
    Turn({"F": 180}), Turn({"F": 180}), Turn({"F": 90, "B": -90}), Turn({"F": -90, "B": 90}),
)


class TimingCalibrationError(RuntimeError):
    """The measurement or the config rewrite could not be done."""


def kind_of(action) -> str:
    """Which robot.timing key an action's duration measures."""
    if isinstance(action, Grip):
        return "regrip_ms"
    if any(abs(normalise_angle(a)) == HALF for a in action.arms.values()):
        return "half_turn_ms"
    return "quarter_turn_ms"


def measure(link, repeats: int = 3) -> dict:
    """Run SEQUENCE `repeats` times through `link`, as one plan; {key: [measured ms, ...]} per timing key.

    A regrip overlaps the turns around it (robot/regrip.py), so only a GRIP between two turns is a
    regrip's sample: the plan's first, with no turn before it, is not."""
    samples: dict[str, list[float]] = {key: [] for key in TIMING_KEYS}
    plan = list(SEQUENCE) * repeats
    result = link.run(plan)
    for i, (action, ms) in enumerate(zip(plan, result.durations_ms)):
        if ms is None or (isinstance(action, Grip) and i == 0):  # None: that `done` line was lost on the wire
            continue
        samples[kind_of(action)].append(ms)
    return samples


def medians(samples: dict) -> dict:
    missing = [key for key, values in samples.items() if not values]
    if missing:
        raise TimingCalibrationError(f"no `done` durations arrived for {', '.join(missing)}")
    return {key: round(statistics.median(values)) for key, values in samples.items()}


def format_table(measured: dict, samples: dict, current: dict, derived=()) -> str:
    """`derived`: keys whose config value is null (shown as derived from `motion`)."""
    rows = [("setting", "measured", "min..max", "samples", "config", "change")]
    for key in TIMING_KEYS:
        values = samples[key]
        shown = f"{current[key]} ms" + (" (null: from motion)" if key in derived else "")
        rows.append((f"robot.timing.{key}", f"{measured[key]} ms", f"{min(values)}..{max(values)}",
                     str(len(values)), shown, f"{measured[key] - current[key]:+d}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def rewrite_timing(text: str, values: dict, path="config") -> str:
    """`text` with the three robot.timing values replaced; every other character kept.

    Edits the `key: value` lines of the `timing:` block under the top-level
    `robot:` section.  A key that is not written there is an error (adding lines
    would mean guessing the indentation and comments).
    """
    lines = text.splitlines(keepends=True)
    section = timing_indent = None
    found = {}
    for i, line in enumerate(lines):
        content = line.split("#", 1)[0].rstrip()
        if not content.strip():
            continue
        indent = len(content) - len(content.lstrip(" "))
        if indent == 0:
            section, timing_indent = content.split(":", 1)[0], None
            continue
        if section != "robot":
            continue
        if timing_indent is None or indent <= timing_indent:
            timing_indent = indent if content.strip() == "timing:" else None
            continue
        match = VALUE_LINE.match(line)
        if match and match["key"] in values:
            found[match["key"]] = i
            lines[i] = with_number(match, values[match["key"]])
    missing = [key for key in values if key not in found]
    if missing:
        raise TimingCalibrationError(
            f"{path}: no {', '.join('robot.timing.' + k for k in missing)} line to update; "
            "add the line(s) under robot: timing: and run again"
        )
    return "".join(lines)


def save_timing(path, values: dict) -> Path:
    """Rewrite the three timing numbers in the config file at `path`, validated, atomically; the file
    really written (a symlink's target) is returned.  TimingCalibrationError when it cannot be written."""
    return save_read_back(path, rewrite_timing(Path(path).read_text(), values, path), values,
                          lambda loaded: {key: getattr(loaded.robot.timing, key) for key in values},
                          TimingCalibrationError, expected={k: int(v) for k, v in values.items()})


@contextmanager
def _robot_link(config: Config, args):
    """A Link to the robot, the firmware in simavr, or (no AVR toolchain) the mock firmware."""
    from ..link.driver import Link

    if not args.sim:
        with Link.open(config, port=args.port) as link:
            yield link, args.port or config.link.port or "auto-detected port"
        return
    from ..sim import emulator

    ok, reason = emulator.available()
    if ok:
        with emulator.Emulator() as emu, Link.open(config, port=emu.port) as link:
            yield link, "the real firmware in simavr"
        return
    from ..sim.mock_firmware import MockFirmware

    print(simulated(f"simavr not available ({reason}); using the mock firmware"), file=sys.stderr)
    mock = MockFirmware(transport="pty", motion=config.motion).start()
    try:
        with Link.open(config, port=mock.url) as link:
            yield link, "the mock firmware"
    finally:
        mock.stop()


def register_calibrate(group) -> None:
    parser = group.add_parser(
        "timing", help="measure quarter turn, half turn and regrip times (robot.timing)",
        description=(
            "Runs a short sequence of grips and turns (the cube may stay in; every turn is undone) "
            "several times, and shows the median durations reported by the firmware next to "
            "robot.timing in the config.  --save writes them into the config file, changing only "
            "those three lines; the solver's robot cost table is rebuilt for them on next use."
        ),
        epilog=(
            "examples:\n"
            "  cube-robot calibrate timing                      # measure, show, change nothing\n"
            "  cube-robot calibrate timing --save               # measure and update config.yaml\n"
            "  cube-robot calibrate timing --port /dev/ttyACM0 --repeats 5\n"
            "  cube-robot calibrate timing --sim                # firmware in the simulator"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_config_argument(parser)
    parser.add_argument("--port", metavar="URL", help="serial port or pyserial URL (default: link.port, else auto-detect)")
    parser.add_argument("--sim", action="store_true",
                        help="measure the firmware in simavr (or the mock firmware if simavr is not installed)")
    parser.add_argument("--repeats", type=int, default=3, metavar="N", help="repetitions of the sequence (default 3)")
    parser.add_argument("--save", action="store_true", help="write the measured values into the config file")
    parser.set_defaults(handler=run_timing)


def run_timing(args) -> int:
    from .. import config as config_module
    from ..sim.emulator import EmulatorError
    from ..link.errors import LinkError

    def tell_maker(text: str) -> None:  # on the emulated robot every line says SIMULATED (as a simulated run's report)
        print(simulated(text) if args.sim else text)

    def say_error(text: str) -> None:
        print(simulated(f"cube-robot calibrate timing: {text}") if args.sim else f"cube-robot calibrate timing: {text}",
              file=sys.stderr)

    if args.repeats < 1:
        say_error("--repeats must be at least 1")
        return ExitStatus.BAD_CONFIG
    if args.sim and args.save:
        path = args.config or config_module.DEFAULT_CONFIG_PATH
        say_error(SIM_NOT_SAVED.format(what="timings measured on", path=path))
        return ExitStatus.BAD_CONFIG
    connected = False  # a failure before the robot answered: NOT STARTED, nothing moved
    try:
        config = config_module.load(args.config)
        current = robot_timing(config)  # null values: derived from `motion`
        with _robot_link(config, args) as (link, where):
            connected = True
            tell_maker(f"measuring on {where}: {args.repeats} x {len(SEQUENCE)} actions ...")
            samples = measure(link, args.repeats)
        measured = medians(samples)
        derived = [key for key in TIMING_KEYS if getattr(config.robot.timing, key) is None]
        tell_maker(format_table(measured, samples, current, derived))
        if not args.save:
            tell_maker("\nnot saved (" + ("timings measured on the emulator are never saved; measure on the robot "
                                   "with --port and --save" if args.sim else
                                   "add --save to write these into the config file") + ")")
            return ExitStatus.OK
        if measured == current and not derived:
            tell_maker(f"\n{config.path} already has these values; nothing to change")
            return ExitStatus.OK
        written = save_timing(config.path, measured)
    except config_module.ConfigError as exc:
        say_error(f"bad config: {exc}")
        return ExitStatus.BAD_CONFIG
    except (LinkError, EmulatorError) as exc:
        say_error(str(exc))
        return ExitStatus.NOT_DONE if connected else ExitStatus.NOT_STARTED
    except (TimingCalibrationError, OSError) as exc:
        say_error(str(exc))
        return ExitStatus.NOT_DONE
    tell_maker(f"\nsaved robot.timing in {written}; the solver's robot cost table will be rebuilt "
        "for the new timings on next use (this takes a while once)")
    return ExitStatus.OK
