"""`cube-robot vision decode` and `cube-robot vision show`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..cli_common import add_config_argument
from ..config_types import Config
from ..exit_status import ExitStatus

DECODE_EXAMPLES = """examples:
  cube-robot vision decode readings.json
  cube-robot vision decode --json readings.json
  cube-robot vision decode --calibration calibration/colors.yaml --net net.png readings.json
  cube-robot vision decode - < readings.json

FILE holds a JSON list of 24 [R, G, B] readings (sRGB 0-255) in facelet order
U1-U4 R1-R4 F1-F4 D1-D4 L1-L4 B1-B4 (each face row-major on the standard net;
--puzzle 3x3x3: 54 readings, U1-U9 ... B1-B9, the centres naming the faces);
null for a sticker no view showed.  A JSON object {"1": [R, G, B], ...} is read as the
rubiks-color-resolver's files (squares from 1, faces U L F R B D; the shared real readings).  Every scan of a run keeps its readings so:
runs/scans/<time>/readings.json (scan.images_dir), beside the raw frames.
Exit status: 0 decoded, 1 refused (not confident: rescan the named stickers),
2 unreadable input."""

SHOW_EXAMPLES = """examples:
  cube-robot vision show UUUURRRRFFFFDDDDLLLLBBBB -o net.png
  cube-robot vision show wwwwrrrrggggyyyyoooobbbb -o net.png --doubtful F3,U1
  cube-robot vision show UUUURRRRFFFFDDDDLLLLBBBB -o net.png --no-labels

Letters U R F D L B, and the colour letters w r g y o b (either case), get the usual
colours (white red green yellow orange blue); other symbols are drawn grey with their
letter written on them."""


def register(subparsers) -> None:
    vision = subparsers.add_parser(
        "vision", help="decode sticker readings, draw cube nets",
        description="Sticker colours -> cube: decode readings offline, draw nets.",
        epilog="Run 'cube-robot vision ACTION --help' for examples.",
    )
    actions = vision.add_subparsers(dest="vision_command", metavar="ACTION", required=True)

    decode = actions.add_parser(
        "decode", help="decode 24 RGB readings (54 with --puzzle 3x3x3) into a facelet string with a confidence",
        description="Find the legal cube that best explains 24 sticker readings, or say which stickers "
                    "are doubtful.",
        epilog=DECODE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    decode.add_argument("file", metavar="FILE.json", help="JSON list of 24 [R, G, B]; '-' reads stdin")
    decode.add_argument("--calibration", metavar="PATH",
                        help="colour calibration (YAML) used as a prior and for colour names "
                             "(default: the config's scan.colours_file, if it exists)")
    decode.add_argument("--no-calibration", action="store_true", help="ignore any calibration file")
    decode.add_argument("--json", action="store_true", help="print one JSON object")
    decode.add_argument("--net", metavar="PNG", help="also draw the decoded net (or the readings) to this PNG")
    decode.add_argument("--puzzle", choices=("2x2x2", "3x3x3"), default="2x2x2",
                        help="which cube: 24 readings (default 2x2x2) or 54 (3x3x3: U1-U9 R1-R9 F1-F9 D1-D9 L1-L9 B1-B9)")
    add_config_argument(decode)
    decode.set_defaults(handler=run_decode)

    show = actions.add_parser(
        "show", help="draw a cube net as a PNG",
        description="Draw the 24 stickers of a facelet string on the standard cross net.",
        epilog=SHOW_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show.add_argument("facelets", metavar="FACELETS", help="24 colour symbols, faces U R F D L B")
    show.add_argument("-o", "--output", metavar="PNG", required=True, help="where to write the picture")
    show.add_argument("--doubtful", metavar="NAMES", default="",
                      help="comma-separated facelets to highlight, e.g. F3,U1")
    show.add_argument("--no-labels", action="store_true", help="do not write facelet names on the stickers")
    show.add_argument("--size", type=int, default=48, metavar="PX", help="sticker size in pixels (default 48)")
    add_config_argument(show)
    show.set_defaults(handler=run_show)


def _load_readings(name: str):
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text()
    except OSError as exc:
        raise ValueError(f"cannot read {name}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name}: not valid JSON (line {exc.lineno}): {exc.msg}") from None
    return _resolver_readings(name, data) if isinstance(data, dict) else data


RESOLVER_FACES = "ULFRBD"  # the rubiks-color-resolver's face order (its squares numbered from 1, each face row-major)


def _resolver_readings(name: str, squares: dict) -> list:
    """A reading file of the rubiks-color-resolver ({"1": [R, G, B], ...}, as the shared real readings are) in this
    decoder's facelet order U R F D L B; ValueError naming the format when the object is not one."""
    count = len(squares)
    if count not in (24, 54) or set(squares) != {str(n) for n in range(1, count + 1)}:
        raise ValueError(f'{name}: a JSON object of readings must be keyed "1" to "24" or "1" to "54" (the '
                         "rubiks-color-resolver's squares: faces in the order U L F R B D, each row-major); got keys "
                         f"{', '.join(sorted(map(str, squares))[:6])}{' ...' if count > 6 else ''}: or give a JSON "
                         "list in facelet order U R F D L B")
    per_face = count // 6
    by_square = [squares[str(n)] for n in range(1, count + 1)]
    return [by_square[per_face * RESOLVER_FACES.index(face) + k] for face in "URFDLB" for k in range(per_face)]


def _calibration(args, config: Config):
    """--calibration PATH, else the configured scan.colours_file when it exists (the scans' file)."""
    from ..config import project_path
    from .colour import Calibration

    if args.no_calibration:
        return None
    if args.calibration:
        return Calibration.load(args.calibration)
    path = project_path(config.scan.colours_file)
    return Calibration.load(path) if path.exists() else None


def run_decode(args) -> int:
    from .. import config as config_module
    from .colour import CalibrationError
    from .decode import VisionError, decode
    from .net import save_net

    config = config_module.load(args.config)
    try:
        readings = _load_readings(args.file)
        calibration = _calibration(args, config)
    except (ValueError, CalibrationError) as exc:
        print(f"cube-robot vision decode: {exc}", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    unseen = [i for i, reading in enumerate(readings) if reading is None] if isinstance(readings, list) else []
    if args.puzzle == "3x3x3":
        return _run_decode3(args, config, readings, calibration, unseen)
    try:
        if unseen:  # a scan that stopped once it was sure: decoded as it was then
            from .partial import decode_partial
            from .readings import check_readings

            check_readings([[0, 0, 0] if r is None else r for r in readings])  # 24, and the seen ones 0-255
            if len(unseen) == len(readings):
                raise VisionError("every reading is null: no sticker was seen")
            result = decode_partial(readings, unseen, calibration, config)
        else:
            result = decode(readings, calibration, config)
    except VisionError as exc:
        if exc.result is None:  # not a scan we could even try: bad shape or values
            print(f"cube-robot vision decode: {args.file}: {exc}", file=sys.stderr)
            return ExitStatus.BAD_CONFIG
        if args.net and exc.result is not None:  # the readings as read, doubtful stickers framed
            grey = [128, 128, 128]  # a sticker no view showed
            save_net(None, args.net, rgb=[grey if r is None else r for r in readings], doubtful=exc.stickers)
            print(f"net of the readings (doubtful stickers framed) drawn to {args.net}", file=sys.stderr)
        if args.json:
            print(json.dumps({"ok": False, "error": str(exc), "stickers": list(exc.stickers),
                              "guess": exc.result.facelets if exc.result else None}))
        else:
            print(f"refused: {exc}")
        return ExitStatus.NOT_DONE
    if args.net:
        from ..cube import facelet_name

        save_net(result, args.net, inferred=set(result.unread) | {facelet_name(i) for i in unseen})
        print(f"net drawn to {args.net}", file=sys.stderr)
    return _report(args, config, result, calibration)


def _report(args, config: Config, result, calibration) -> int:
    """Print a decoded cube (either puzzle's result: the same fields)."""
    from .decode import decode_settings

    if args.json:
        print(json.dumps({
            "ok": True, "facelets": result.facelets, "confidence": result.confidence, "margin": result.margin,
            "worst_sticker": result.worst_sticker.name, "colours": result.colours,
            "centres_rgb": {k: list(v) for k, v in result.centres_rgb.items()},
            "alternative": result.alternative, "calibration": str(calibration.created) if calibration else None,
        }))
        return ExitStatus.OK
    worst = result.worst_sticker
    full = decode_settings(config).full_margin
    print(result.facelets)
    # The confidence is the whole cube's (how far the next-best legal cube is), not each sticker's fit.
    if result.alternative is None:  # none was found nearer than full_margin: the margin is at least that
        print(f"confidence {result.confidence:.2f}: no other legal cube within {full:.1f} noise units "
              "(decode.full_margin)")
    else:
        print(f"confidence {result.confidence:.2f}: the next-best legal cube is {result.margin:.1f} noise units "
              f"dearer (1.00 from {full:.1f}, decode.full_margin)")
    print("colours: " + ", ".join(f"{letter}={result.colours[letter]}" for letter in "URFDLB"))
    far = ("read past: it fits no colour, the rest of the cube determines it" if worst.name in result.unread
           else "far from its colour, but no other legal cube explains the readings better"
           if worst.distance > full else "")
    print(f"worst sticker: {worst.name} ({worst.distance:.1f} noise units from {worst.colour}"
          + (f"; {far})" if far else ")"))
    if result.doubtful:
        print("next-best cube differs at: " + " ".join(result.doubtful))
    return ExitStatus.OK


def _run_decode3(args, config: Config, readings, calibration, unseen) -> int:
    """`vision decode --puzzle 3x3x3`: 54 readings through robot.vision.decode3."""
    from .decode3 import decode3
    from .readings import VisionError

    if args.net:
        print("cube-robot vision decode: --net draws 2x2x2 nets only; leave it out with --puzzle 3x3x3", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    if unseen:
        print(f"cube-robot vision decode: {args.file}: a 3x3x3 is decoded from all 54 readings; {len(unseen)} are "
              "null (not seen)", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    try:
        result = decode3(readings, calibration, config)
    except VisionError as exc:
        if exc.result is None:  # bad shape or values
            print(f"cube-robot vision decode: {args.file}: {exc}", file=sys.stderr)
            return ExitStatus.BAD_CONFIG
        if args.json:
            print(json.dumps({"ok": False, "error": str(exc), "stickers": list(exc.stickers),
                              "guess": exc.result.facelets}))
        else:
            print(f"refused: {exc}")
        return ExitStatus.NOT_DONE
    return _report(args, config, result, calibration)


def run_show(args) -> int:
    from ..cube import facelet_index
    from .net import save_net

    facelets = args.facelets.strip()
    doubtful = [name.strip().upper() for name in args.doubtful.split(",") if name.strip()]
    try:
        if len(facelets) != 24:
            raise ValueError(f"expected 24 colour symbols, got {len(facelets)}: {facelets!r}")
        for name in doubtful:
            if len(name) != 2 or name[0] not in "URFDLB" or name[1] not in "1234":
                raise ValueError(f"--doubtful: {name!r} is not a facelet name (U1..B4)")
            facelet_index(name)
        path = save_net(facelets, args.output, doubtful=doubtful, labels=not args.no_labels,
                        sticker_px=max(16, args.size))
    except (ValueError, OSError) as exc:
        print(f"cube-robot vision show: {exc}", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    print(f"wrote {path}")
    return ExitStatus.OK
