"""Serial-port checks for `cube-robot doctor`: every port, and what answers on it."""

from __future__ import annotations

from ..checks import FAIL, INFO, OK, WARN, Result
from ..config_types import Config
from ..paths import make_advice
from . import ports
from .driver import Link, LinkSettings


def check_serial(config: Config, args) -> list[Result]:
    settings = LinkSettings.from_config(config)
    targets = [(device, description) for device, description in ports.list_ports()]
    wanted = getattr(args, "port", None) or settings.port
    if wanted and wanted not in [d for d, _ in targets]:
        targets.append((wanted, "from --port" if getattr(args, "port", None) else "from link.port"))
    if not targets:
        return [Result("(none)", FAIL, "no serial ports: plug in the robot's USB cable "
                                       "(emulated boards: pass --port PATH)")]
    results = []
    found = []
    wanted_unopenable = False
    named_by = "--port" if getattr(args, "port", None) else "link.port"
    for device, description in targets:
        label = f"{device}" + (f" ({description})" if description and description != "n/a" else "")
        if wanted and device != wanted:  # opening a port resets an Uno on it: only the named one is opened
            results.append(Result(label, INFO, f"not opened: only the port {named_by} names is (opening a "
                                               "port resets an Uno on it)"))
            continue
        # The named port's answering robot stays open for the doctor's later rows (another open resets an Uno).
        keep_open = device == wanted and hasattr(args, "named_robot")
        probe = ports.probe(device, settings, description, keep=Link if keep_open else None)
        if probe.connection is not None:
            args.named_robot = probe.connection
        wanted_unopenable |= device == wanted and probe.kind == "cannot open"
        if probe.ok:
            found.append(device)
            results.append(Result(label, OK, probe.answer))
        elif probe.kind == "no answer" and device != wanted:
            results.append(Result(label, INFO, probe.answer))  # some other serial device; not a problem
        else:
            results.append(Result(label, FAIL if device == wanted else WARN, probe.answer))
    if not found and not wanted_unopenable:  # (an unopenable port's row names its fix: flashing cannot help)
        results.append(Result("robot", FAIL, "the cube-robot firmware answers on no port: flash the firmware "
                                              f"({make_advice('flash', 'PORT=' + (wanted or '<port>'))}) or check the cable"))
    elif settings.port is None and len(found) > 1:
        results.append(Result("robot", WARN, f"firmware on several ports ({', '.join(found)}): set link.port"))
    return results


def check_handshake(config: Config, args) -> list[Result]:
    """The run's pre-flight: the robot's link answered the handshake (args.link); the doctor: every port."""
    link = getattr(args, "link", None)
    if link is None:
        return check_serial(config, args)
    identity = link.identity
    return [Result(str(link.url), OK, f"{identity.firmware} {identity.version}, protocol {identity.proto}, "
                                      f"board {identity.board}")]
