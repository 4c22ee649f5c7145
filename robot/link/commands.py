"""`cube-robot link ...`: talk to the robot's firmware directly."""

from __future__ import annotations

import argparse
import json
import sys

from ..cli_common import add_config_argument
from ..exit_status import ExitStatus

EXAMPLES = """examples:
  cube-robot link info                       identity and status of the board
  cube-robot link info --port /dev/ttyACM0
  cube-robot link reset-alarm                clear a latched alarm (check the robot first)
  cube-robot solve --json --scramble "R U" | cube-robot link run -     stream a plan"""


def register(subparsers) -> None:
    link = subparsers.add_parser(
        "link", help="talk to the robot's firmware (identity, alarms, stream a plan)",
        description="Direct access to the serial link (docs/protocol.md).",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = link.add_subparsers(dest="link_command", metavar="ACTION", required=True)
    for name, help_text, handler in (
        ("info", "handshake and print the board's identity and status", run_info),
        ("reset-alarm", "clear a latched alarm (RESET)", run_reset_alarm),
        ("run", "stream a plan (JSON from `cube-robot solve --json`) and print each action's duration", run_plan),
    ):
        parser = sub.add_parser(name, help=help_text, description=help_text, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("--port", metavar="PATH", help="serial port or pyserial URL (default: link.port)")
        if name == "run":
            parser.add_argument("plan", help="plan JSON file, or - for stdin (first line)")
        add_config_argument(parser)
        parser.set_defaults(handler=handler)


class _NotStarted(Exception):
    """No robot answered when the port was opened (a LinkError inside): nothing was sent to it."""


def _open(args, configure=True):
    from .. import config as config_module
    from .driver import Link
    from .errors import LinkError

    config = config_module.load(args.config)
    try:
        return Link.open(config, port=args.port, configure=configure)
    except LinkError as exc:
        raise _NotStarted(exc) from exc


def _guard(fn):
    """Exit statuses (robot/exit_status.py): no robot answering is NOT_STARTED; a failure after it
    answered (a refusal, an alarm, the link lost) is NOT_DONE."""
    def wrapper(args):
        from .errors import LinkError

        try:
            return fn(args)
        except _NotStarted as exc:
            print(f"cube-robot link: {exc.args[0]}", file=sys.stderr)
            return ExitStatus.NOT_STARTED
        except LinkError as exc:
            print(f"cube-robot link: {exc}", file=sys.stderr)
            return ExitStatus.NOT_DONE
    return wrapper


@_guard
def run_info(args) -> int:
    with _open(args, configure=False) as link:
        identity, status = link.identity, link.status()
    print(f"port:      {link.url}")
    print(f"firmware:  {identity.firmware} {identity.version} (protocol {identity.proto}, board {identity.board})")
    print(f"limits:    queue {identity.queue_depth} actions, receive buffer {identity.rx_bytes} bytes")
    print(f"state:     {status.state.value}, alarm {status.alarm.name}, last action seq {status.done}"
          + (f", a reset cut action seq {identity.cut}" if identity.cut else ""))
    return ExitStatus.OK


@_guard
def run_reset_alarm(args) -> int:
    from . import protocol as P
    from .errors import AlarmError

    with _open(args, configure=False) as link:
        try:
            link.clear_alarm()
        except AlarmError as exc:  # the board keeps the alarm while its cause is still there
            code = link.status().alarm
            cause = ("the emergency-stop button is still pressed: release it (twist or pull), then run "
                     "'cube-robot link reset-alarm' again" if code == P.AlarmCode.ESTOP_INPUT else
                     "its cause is still present: fix it, then run 'cube-robot link reset-alarm' again")
            print(f"cube-robot link: the board refused to clear alarm {code.name}: {cause} "
                  f"({exc.args[0].splitlines()[0].split(':')[0]})", file=sys.stderr)
            return ExitStatus.NOT_DONE
        print(f"alarm cleared; state {link.status().state.value}")
    return ExitStatus.OK


def _read_plan(name: str) -> list:
    """The actions of a plan file (`cube-robot solve --json`), or ValueError naming what is wrong."""
    from ..plan import action_from_json

    try:
        text = sys.stdin.readline() if name == "-" else open(name, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {name}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{name}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("plan"), list):
        raise ValueError(f"{name}: expected a JSON object with a \"plan\" list (the output of "
                         "'cube-robot solve --json'), got " + type(data).__name__)
    actions = []
    for number, item in enumerate(data["plan"], start=1):
        try:
            action = action_from_json(item)
            _check_action(action)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{name}: plan action {number} {json.dumps(item)}: {exc}") from None
        actions.append(action)
    return actions


def _check_action(action) -> None:
    """What the firmware accepts: a pair it has, and quarter-turn multiples on the arms."""
    from .. import firmware_header
    from . import protocol as P

    if hasattr(action, "pair"):
        pairs = sorted(firmware_header.ARM_PAIRS)
        if action.pair not in pairs:
            raise ValueError(f"no arm pair {action.pair!r} (pairs: {', '.join(pairs)})")
        return
    for arm, angle in action.arms.items():
        if arm not in P.ARMS:
            raise ValueError(f"no arm {arm!r} (arms: {', '.join(P.ARMS)})")
        if angle % 90:
            raise ValueError(f"arm {arm}: {angle} degrees is not a multiple of 90")


@_guard
def run_plan(args) -> int:
    from ..progress import ProgressBar

    try:
        actions = _read_plan(args.plan)
    except ValueError as exc:
        print(f"cube-robot link run: {exc}", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    with _open(args) as link:
        bar = ProgressBar(len(actions), "streaming")
        result = link.run(actions, progress=lambda p: bar.update(p.completed))
        bar.finish()
    for action, ms in zip(actions, result.durations_ms):
        label = f"GRIP {action.pair}" if hasattr(action, "pair") else action.notation()
        print(f"{label:12} {'?' if ms is None else ms:>5} ms")
    print(f"total {result.elapsed_s:.3f} s")
    return ExitStatus.OK
