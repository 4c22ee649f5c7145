"""`cube-robot calibrate ...`: the calibration command group.

Each calibration is a subcommand.  Modules listed in CALIBRATE_MODULES
expose `register_calibrate(group)` (group: the argparse subparsers of
`calibrate`) and add their subcommand there; this module adds `colors`.
To add one (e.g. `calibrate timing`), append its module to the list.
"""

from __future__ import annotations

import importlib
import os
import sys

from ..cli import add_config_argument

CALIBRATE_MODULES = [
    "robot.vision.calibrate_cmd",
    "robot.link.timing_calibration",
]


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "calibrate", help="guided calibrations (colours, ...); results go to calibration/",
        description="Guided calibrations. Their results live in calibration/ (see calibration/README.md).",
    )
    group = parser.add_subparsers(dest="calibration", metavar="WHAT")
    parser.set_defaults(handler=lambda args: parser.print_help() or 1)
    for name in CALIBRATE_MODULES:
        importlib.import_module(name).register_calibrate(group)


def register_calibrate(group) -> None:
    colors = group.add_parser(
        "colors", help="learn the sticker colours and regions from a solved cube",
        description=(
            "Walks you through: camera check, sticker regions (detected or clicked), a solved cube scan, "
            "colour separability, a check on a scrambled cube.  Saves calibration/colors.yaml and "
            "calibration/regions.yaml.  Without a person: --answers FILE (and/or --yes) plus "
            "--solved-images/--scrambled-images folders of <view>.png pictures."
        ),
        epilog="example: cube-robot calibrate colors --answers answers.yaml --solved-images shots/solved "
               "--scrambled-images shots/scrambled --no-window",
    )
    add_config_argument(colors)
    colors.add_argument("--answers", metavar="FILE", help="YAML answers to the prompts (see robot/vision/calibrate.py)")
    colors.add_argument("--yes", action="store_true", help="take the default for every prompt not in --answers")
    colors.add_argument("--solved-images", metavar="DIR", help="pictures of the solved cube (<view>.png) instead of the camera")
    colors.add_argument("--scrambled-images", metavar="DIR", help="pictures of a scrambled cube for the check")
    colors.add_argument("--no-window", action="store_true", help="never open a window; write previews as PNGs")
    colors.add_argument("--colors-out", metavar="PATH", help="where to save the colours (default: scan.colors_file)")
    colors.add_argument("--regions-out", metavar="PATH", help="where to save the regions (default: scan.regions_file)")
    colors.set_defaults(handler=_colors)


def _colors(args) -> int:
    from .. import config as config_module
    from .calibrate import Answers, CalibrationAborted, run
    from .camera import CameraError, FileCamera
    from .colour import CalibrationError
    from .regions import RegionsError
    from .scan import ScanConfigError

    config = config_module.load(args.config)
    interactive = args.answers is None and not args.yes and sys.stdin.isatty()
    try:
        if args.answers:
            answers = Answers.from_file(args.answers, interactive=False, assume_yes=args.yes)
        else:
            answers = Answers({}, interactive=interactive, assume_yes=args.yes)
        solved = FileCamera(args.solved_images) if args.solved_images else None
        scrambled = FileCamera(args.scrambled_images) if args.scrambled_images else None
        use_window = bool(os.environ.get("DISPLAY")) and not args.no_window
        outcome = run(config, answers, solved, scrambled, use_window=use_window,
                      colors_path=args.colors_out, regions_path=args.regions_out)
    except (CalibrationAborted, CameraError, RegionsError, ScanConfigError, CalibrationError) as exc:
        print(f"cube-robot calibrate colors: {exc}", file=sys.stderr)
        return 1
    print(f"calibration done ({outcome.verified} on a scrambled cube, {len(outcome.warnings)} warning(s))")
    return 0
