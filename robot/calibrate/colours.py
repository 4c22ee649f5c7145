"""`cube-robot calibrate colours` (alias: `calibrate colors`).

The `calibrate` group itself is made in robot/cli.py, which calls
`register_calibrate(group)` here.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..cli_common import add_config_argument
from ..config_types import Config


def register_calibrate(group) -> None:
    colours = group.add_parser(
        "colours", aliases=["colors"], help="learn the sticker colours and regions from a solved cube",
        description=(
            "Walks you through: camera check, sticker regions (detected or clicked), a solved cube scan, "
            "colour separability, a check on a scrambled cube.  Saves the colours (scan.colours_file) and "
            "the regions (scan.regions_file).  Without a person: --answers FILE (and/or --yes) plus "
            "--solved-images/--scrambled-images folders of <view>.png pictures.  --sim rehearses it: the "
            "emulated robot presents each view of a virtual cube to the simulated webcam; nothing is saved."
        ),
        epilog="examples:\n  cube-robot calibrate colours --answers answers.yaml --solved-images shots/solved "
               "--scrambled-images shots/scrambled --no-window\n"
               "  cube-robot calibrate colours --sim            (you answer the prompts)\n"
               "  cube-robot calibrate colours --sim --yes --no-window   (every default answer)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_config_argument(colours)
    colours.add_argument("--answers", metavar="FILE",
                         help="YAML answers to the prompts (see robot/vision/calibrate.py); '-' reads them from stdin")
    colours.add_argument("--yes", action="store_true", help="take the default for every prompt not in --answers")
    colours.add_argument("--solved-images", metavar="DIR", help="pictures of the solved cube (<view>.png) instead of the camera")
    colours.add_argument("--scrambled-images", metavar="DIR", help="pictures of a scrambled cube for the check")
    colours.add_argument("--no-window", action="store_true", help="never open a window; write previews as PNGs")
    colours.add_argument("--colours-out", "--colors-out", dest="colours_out", metavar="PATH",
                         help="where to save the colours (default: scan.colours_file)")
    colours.add_argument("--regions-out", metavar="PATH", help="where to save the regions (default: scan.regions_file)")
    colours.add_argument("--port", metavar="PATH",
                         help="the robot presents each view itself (default: link.port, else a robot "
                              "found on any port; none: you turn the cube by hand)")
    colours.add_argument("--no-robot", action="store_true", help="turn the cube by hand even if a robot answers")
    colours.add_argument("--sim", action="store_true",
                         help="rehearse on the emulated robot (the firmware in simavr, else the mock) and the "
                              "simulated webcam: it presents each view of a virtual cube; saves nothing and "
                              "says what it would save")
    colours.add_argument("--firmware", choices=("auto", "emulator", "mock"), default="auto",
                         help="with --sim: the real firmware in simavr (emulator), the Python mock, or auto")
    colours.add_argument("--seed", type=int, default=None, help="with --sim: seed of the scrambled check cube")
    colours.add_argument("--puzzle", choices=("2x2x2", "3x3x3"), default="2x2x2",
                         help="which cube (default 2x2x2); 3x3x3: the robot presents scan3's views of a solved "
                              "3x3x3, the regions and colours go to scan3.regions_file / scan3.colours_file "
                              "(robot/calibrate/colours3.py; with --sim the simulated 3x3x3, saved too)")
    colours.set_defaults(handler=_colours)


def _robot_view_mover(config: Config, args, tell_maker):
    """(view_mover, link): the robot presents each scan view itself with the run's ArmViewMover when one
    is named (--port, link.port) or, without picture folders, found on a port; else (None, None)."""
    from ..link import ports
    from ..link.driver import Link, LinkSettings
    from ..link.errors import LinkError
    from ..arms.view_mover import ArmViewMover

    if args.no_robot:
        return None, None
    settings = LinkSettings.from_config(config)
    port, probed = args.port or settings.port, None
    if port is None:
        if args.solved_images:
            return None, None
        try:  # the probe's connection is kept: the port is opened once (each open resets an Uno)
            probed = ports.find_robot(settings, keep=Link).connection
        except LinkError:
            tell_maker("no robot answers on a serial port: you will be asked to turn the cube for each view")
            return None, None
    link = Link.open(config, port=port, probed=probed)  # a named robot that does not answer: LinkError
    identity = link.connection.known_identity()  # open() returned after the handshake
    tell_maker(f"the robot on {link.url} presents each view ({identity.firmware} {identity.version})")
    return ArmViewMover(link), link


# Options that name real pictures, a real robot or files to write: refused with --sim.
SIM_REFUSED = {"solved_images": "--solved-images", "scrambled_images": "--scrambled-images",
               "colours_out": "--colours-out", "regions_out": "--regions-out", "port": "--port",
               "no_robot": "--no-robot"}


def _simulated(config: Config, args, answers, use_window: bool):
    """The calibration rehearsed on the emulated robot: it presents each view of a virtual cube (solved,
    then a scrambled one for the check) to the simulated webcam; nothing is saved."""
    import numpy as np

    from .. import cube
    from ..cli_common import simulated
    from ..sim.render import STANDARD_NAMES
    from ..sim.robot_sim import SimulatedRobot
    from ..vision.calibrate import net_rows, run

    def tell_maker(text):
        print(simulated(text))
    answers.tell_maker = tell_maker
    if answers.interactive:
        answers.ask = lambda prompt: input(simulated(prompt))
    rng = np.random.default_rng(args.seed)

    def put_in(kind: str) -> None:  # what the person does at the robot, done to the virtual cube
        robot.virtual.state = cube.SOLVED if kind == "solved" else cube.random_placed_state(rng)
        tell_maker(f"a {kind} cube is now in the virtual robot: {robot.virtual.facelets()} (as put in)")

    def scanned(kind: str) -> None:  # the scan turned the virtual cube: the net to compare is of it now
        tell_maker(f"the {kind} cube in the virtual robot after the scan's turns (the net to compare):")
        for row in net_rows(robot.virtual.facelets(), STANDARD_NAMES):
            tell_maker(row)
    robot = SimulatedRobot(config, cube.SOLVED, firmware=args.firmware, seed=int(rng.integers(1 << 30)))
    with robot:
        tell_maker(f"the emulated robot ({robot.backend}) presents each view to the simulated webcam")
        return run(config, answers, robot.camera, view_mover=robot.view_mover, use_window=use_window, tell_maker=tell_maker,
                   simulated=True, put_in=put_in, scanned=scanned)


def _colours(args) -> int:
    from .. import config as config_module
    from ..cli_common import simulated
    from ..exit_status import ExitStatus
    from ..link.errors import LinkError
    from ..sim.emulator import EmulatorError
    from ..vision.calibrate import Answers, CalibrationAborted, run
    from ..vision.camera import CameraError, FileCamera
    from ..vision.colour import CalibrationError
    from ..vision.regions import RegionsError
    from ..vision.scan import ScanConfigError

    config = config_module.load(args.config)
    if args.puzzle == "3x3x3":
        from .colours3 import command3

        return command3(config, args)
    if args.sim:
        given = [flag for name, flag in SIM_REFUSED.items() if getattr(args, name)]
        if given:
            print(simulated(f"cube-robot calibrate colours: --sim presents a virtual cube on the emulated robot "
                            f"and saves nothing; {', '.join(given)} cannot go with it"), file=sys.stderr)
            return ExitStatus.BAD_CONFIG
    interactive = args.answers is None and not args.yes and sys.stdin.isatty()
    try:
        if args.answers:
            answers = Answers.from_file(args.answers, interactive=False, assume_yes=args.yes)
        else:
            answers = Answers({}, interactive=interactive, assume_yes=args.yes)
        if args.sim:
            outcome = _simulated(config, args, answers, bool(os.environ.get("DISPLAY")) and not args.no_window)
            print(simulated(f"calibration rehearsed ({outcome.verified} on a scrambled cube, "
                            f"{len(outcome.warnings)} warning(s)); nothing saved"))
            return ExitStatus.OK
        solved = FileCamera(args.solved_images) if args.solved_images else None
        scrambled = FileCamera(args.scrambled_images) if args.scrambled_images else None
        use_window = bool(os.environ.get("DISPLAY")) and not args.no_window
        try:
            view_mover, link = _robot_view_mover(config, args, print)
        except LinkError as exc:  # the named robot does not answer: nothing moved
            print(f"cube-robot calibrate colours: {exc}", file=sys.stderr)
            return ExitStatus.NOT_STARTED
        try:
            outcome = run(config, answers, solved, scrambled, view_mover=view_mover, use_window=use_window,
                          colours_path=args.colours_out, regions_path=args.regions_out)
        finally:
            if link is not None:
                link.close()
    except (CalibrationAborted, CameraError, RegionsError, ScanConfigError, CalibrationError, LinkError,
            EmulatorError) as exc:
        said = f"cube-robot calibrate colours: {exc}"
        print(simulated(said) if args.sim else said, file=sys.stderr)
        return ExitStatus.NOT_DONE
    print(f"calibration done ({outcome.verified} on a scrambled cube, {len(outcome.warnings)} warning(s))")
    return ExitStatus.OK
