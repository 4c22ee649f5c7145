"""`cube-robot link ...`: talk to the robot's firmware directly."""

from __future__ import annotations

import argparse
import json
import sys

from ..cli_common import add_config_argument

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


def _open(args, configure=True):
    from .. import config as config_module
    from .driver import Link

    return Link.open(config_module.load(args.config), port=args.port, configure=configure)


def _guard(fn):
    def wrapper(args):
        from .errors import LinkError

        try:
            return fn(args)
        except LinkError as exc:
            print(f"cube-robot link: {exc}", file=sys.stderr)
            return 3
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
    return 0


@_guard
def run_reset_alarm(args) -> int:
    with _open(args, configure=False) as link:
        link.clear_alarm()
        print(f"alarm cleared; state {link.status().state.value}")
    return 0


@_guard
def run_plan(args) -> int:
    from ..plan import action_from_json
    from ..progress import ProgressBar

    text = sys.stdin.readline() if args.plan == "-" else open(args.plan).read()
    data = json.loads(text)
    actions = [action_from_json(a) for a in data["plan"]]
    with _open(args) as link:
        bar = ProgressBar(len(actions), "streaming")
        result = link.run(actions, progress=lambda p: bar.update(p.completed))
        bar.finish()
    for action, ms in zip(actions, result.durations_ms):
        label = f"GRIP {action.pair}" if hasattr(action, "pair") else action.notation()
        print(f"{label:12} {'?' if ms is None else ms:>5} ms")
    print(f"total {result.elapsed_s:.3f} s")
    return 0
