"""`cube-robot panel`: the robot in a web page (docs/panel.md)."""

from __future__ import annotations

import argparse
import signal
import sys

from ..cli_common import add_config_argument, simulated
from ..exit_status import ExitStatus

EXAMPLES = """examples:
  cube-robot panel --sim                 the simulated robot; open the URL it prints
  cube-robot panel                       the robot on link.port (or found on a serial port), camera.device
  cube-robot panel --host 0.0.0.0        reachable from a phone on the same network (the URL carries a token)
  cube-robot panel --sim --http-port 0   any free port"""


def register(subparsers) -> None:
    from ..run.commands import LIGHT_CHOICES

    panel = subparsers.add_parser(
        "panel", help="the robot in a web page: live camera, the cube read, start/stop, bring-up, history",
        description="Serve a web page that shows and drives the robot. It holds the robot's serial port and "
                    "camera while it runs; Ctrl-C ends it (a run in progress stops first, as in `run`).",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    panel.add_argument("--sim", action="store_true", help="the simulated robot, even if one is attached")
    panel.add_argument("--port", metavar="PATH", help="the robot's serial port (default: link.port, else auto-detect)")
    panel.add_argument("--host", metavar="ADDRESS",
                       help="the address to listen on (default: panel.host, 127.0.0.1; any other needs the token)")
    panel.add_argument("--http-port", type=int, metavar="N", help="the web port (default: panel.http_port; 0: any free)")
    panel.add_argument("--firmware", choices=("auto", "emulator", "mock"), default="auto",
                       help="with --sim: the real firmware in simavr, or the Python mock (default: simavr if installed)")
    panel.add_argument("--seed", type=int, default=None, help="with --sim: the first scrambled cube's seed")
    panel.add_argument("--light", choices=LIGHT_CHOICES,
                       help="with --sim: a lamp whose reflection is on every scan (default: config camera.lighting)")
    panel.add_argument("--arms-straight", action="store_true",
                       help="a robot without homing sensors: you confirm the arms stand straight (as `run --arms-straight`)")
    add_config_argument(panel)
    panel.set_defaults(handler=panel_command)


def panel_command(args) -> int:
    from .. import config as config_module
    from ..run.robot import RobotNotReady, choose_robot

    config = config_module.load(args.config)
    host = args.host or config.panel.host
    http_port = config.panel.http_port if args.http_port is None else args.http_port
    if not 0 <= http_port <= 65535:
        print(f"cube-robot panel: --http-port {http_port} is not a port (0-65535)", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    if args.port and args.sim:
        print(f"cube-robot panel: --port {args.port} names a real robot, but --sim is the simulated one: give one "
              "or the other (nothing moved)", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    tell = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    link = None
    sim = args.sim
    if not sim:
        try:
            link = choose_robot(config, args.port)  # the probe's connection: the port is opened once
        except RobotNotReady as exc:
            print(f"cube-robot panel: NOT STARTED, nothing moved: {exc}", file=sys.stderr)
            return ExitStatus.NOT_STARTED
        if link is None:
            tell(simulated("no port is named (--port, link.port) and no robot answers on any serial port: the panel "
                           "drives the simulated robot (--sim says so; --port PATH names a robot)."))
            sim = True
    return serve(config, sim, link, host, http_port, args, tell)


def serve(config, sim: bool, link, host: str, http_port: int, args, tell) -> int:
    import numpy as np
    import tornado.httpserver
    import tornado.netutil
    from tornado.ioloop import IOLoop

    from .. import cube
    from .held import HeldRobot
    from .history_api import runs_folder
    from .live import LiveView
    from .security import MAX_BODY_BYTES, Guard
    from .server import PanelApp, make_app
    from .session import PanelSession

    guard = Guard(host, config.panel.token or None)
    try:
        sockets = tornado.netutil.bind_sockets(http_port, address=host)
    except OSError as exc:
        if link is not None:
            link.close()
        print(f"cube-robot panel: cannot listen on {host}:{http_port}: {exc.strerror} (another panel? give "
              "--http-port 0 for any free port)", file=sys.stderr)
        return ExitStatus.BAD_CONFIG
    if sim:
        state = cube.random_placed_state(np.random.default_rng(args.seed))
        held = HeldRobot.simulated_robot(config, state, firmware=args.firmware, seed=args.seed or 0, light=args.light)
        tell(simulated(f"starting the simulated robot with a scrambled cube ({state.to_facelets()})..."))
    else:
        from ..run.robot import HardwareRobot

        held = HeldRobot(config, HardwareRobot(config, link.url, tell, arms_straight=args.arms_straight, probed=link),
                         simulated=False)
        tell(f"starting the robot on {link.url}...")
    live = LiveView()
    session = PanelSession(config, held, live)
    try:
        session.open()
    except BaseException as exc:
        for sock in sockets:
            sock.close()
        session.close()
        if isinstance(exc, KeyboardInterrupt):
            return ExitStatus.INTERRUPTED
        print(f"cube-robot panel: the robot did not start: {type(exc).__name__}: {exc}", file=sys.stderr)
        return ExitStatus.NOT_STARTED
    app = make_app(PanelApp(session, guard, config, runs_folder(config)))
    server = tornado.httpserver.HTTPServer(app, max_body_size=MAX_BODY_BYTES)
    server.add_sockets(sockets)
    port = sockets[0].getsockname()[1]
    shown = host if host not in ("0.0.0.0", "::", "") else _hostname()
    url = f"http://{'[' + shown + ']' if ':' in shown else shown}:{port}/"
    if guard.token is not None:
        url += f"?token={guard.token}"
    print(f"Panel: {url}", flush=True)
    tell(("SIMULATED robot: " if sim else "Robot: ") + f"{held.backend}. Ctrl-C ends the panel.")
    loop = IOLoop.current()
    signal.signal(signal.SIGTERM, lambda *_: loop.add_callback_from_signal(loop.stop))
    try:
        loop.start()
    except KeyboardInterrupt:
        tell("\nPanel: Ctrl-C: closing (a run in progress stops first, as in `cube-robot run`)...")
    finally:
        server.stop()
        session.close()
    return ExitStatus.OK


def _hostname() -> str:
    import socket

    return socket.gethostname()
