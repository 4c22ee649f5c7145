"""Serial-link benchmark: command round trip, action throughput, action durations, firmware size.

    python3 bench/link.py [--count N]

Against the mock firmware (pty) and the real firmware in simavr paced at real
time (Emulator(realtime=True), 115200 baud as the firmware sets it).  Action
durations are measured from the emulator's pin log with the default motion
settings.  Target: <= 3 ms per command round trip at real time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robot import config as config_module  # noqa: E402
from robot import motion as motion_model  # noqa: E402
from robot import regrip  # noqa: E402
from robot.link import ports  # noqa: E402
from robot.link.driver import Link, LinkSettings  # noqa: E402
from robot.plan import Grip, Turn  # noqa: E402
from robot.sim import emulator, pinlog  # noqa: E402
from robot.sim.mock_firmware import MockFirmware  # noqa: E402

CONFIG = config_module.defaults()
MOTION = CONFIG.motion
SETTINGS = LinkSettings.from_config(CONFIG)


def connect(url):
    link = Link(ports.open_port(url, SETTINGS.baud), SETTINGS, motion=MOTION, url=url)
    link.handshake()
    link.configure()
    return link


def round_trips(link, command, count):
    times = []
    for _ in range(count):
        start = time.perf_counter()
        link.request(command)
        times.append((time.perf_counter() - start) * 1000)
    return times


def throughput(link, count):
    start = time.perf_counter()
    link.run(["DWELL 1"] * count)
    return count / (time.perf_counter() - start)


def measure(url, count):
    with connect(url) as link:
        dwell = round_trips(link, "DWELL 1", count)
        status = round_trips(link, "STATUS", count)
        rate = throughput(link, count)
    return dwell, status, rate


def durations_from_pins():
    plan = [Grip("RL"), Turn({"R": 90}), Turn({"R": 180}), Turn({"R": 90, "L": -90}), Grip("FB"), Turn({"F": 90})]
    with emulator.Emulator(realtime=False, pin_log=True) as emu:
        with connect(emu.port) as link:
            result = link.run(plan)
            link.status()
        spans = pinlog.action_spans(emu.pin_events())
    turns = [s for s in spans if s.kind == "turn"]
    grips = [s for s in spans if s.kind == "grip" and len(s.detail) == 4]
    return result.durations_ms, turns, grips


def regrip_model_ms() -> int:
    """robot/regrip.py's GRIP FB between TURN R90 L-90 and TURN F90 (the default widths on every gripper)."""
    m = MOTION
    jaws = [regrip.Jaws(m.servo_open_us, m.servo_closed_us, m.servo_speed_us_per_ms, m.jaw_clear_pct / 100,
                        m.jaw_contact_pct / 100, m.jaw_open_gap_mm)]

    def reach(*steps):
        return regrip.turn_reach(list(steps), m.steps_per_rev, m.max_speed_steps_per_s, m.accel_steps_per_s2,
                                 m.cube_mm)

    quarter = m.steps_per_rev // 4
    return regrip.regrip_ms(reach(quarter, quarter), reach(quarter), jaws, jaws)


def row(*cells):
    print("  ".join(f"{c:<34}" if i == 0 else f"{c:>14}" for i, c in enumerate(cells)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=100, help="commands per measurement")
    args = parser.parse_args(argv)

    results = {}
    with MockFirmware("pty", time_scale=0.0) as mock:
        results["mock (pty)"] = measure(mock.url, args.count)
    ok, why = emulator.available()
    if ok:
        with emulator.Emulator(realtime=True, pin_log=False) as emu:
            results["firmware, simavr real time"] = measure(emu.port, args.count)
    else:
        print(f"(emulator not available: {why})")

    print(f"\nround trip per command ({args.count} each; median / p95, ms) and streamed DWELL 1 actions per second")
    row("board", "DWELL 1 ok", "STATUS+ok", "actions/s")
    for name, (dwell, status, rate) in results.items():
        q = lambda xs: f"{statistics.median(xs):.2f} / {sorted(xs)[int(0.95 * len(xs)) - 1]:.2f}"  # noqa: E731
        row(name, q(dwell), q(status), f"{rate:.0f}")

    if ok:
        done_ms, turns, grips = durations_from_pins()
        print("\naction durations, default motion settings (firmware in simavr; pin log = first to last step,"
              " or first servo change to the second pair's change)")
        row("action", "pin log ms", "`done` ms", "model ms")
        labels = [("quarter turn R90", 1, [90]), ("half turn R180", 2, [180]), ("double turn R90 L-90", 3, [90, -90])]
        for (label, index, angles), span in zip(labels, turns):
            row(label, f"{span.ms:.1f}", f"{done_ms[index]}", f"{motion_model.turn_ms(angles, MOTION):.1f}")
        for grip in grips[1:2] or grips[:1]:
            row("regrip RL -> FB (overlapped)", f"{grip.ms:.1f} + wait", f"{done_ms[4]}", f"{regrip_model_ms():.0f}")
        size = emulator.size()
        print("\nfirmware size (avr-size, ATmega328P: 32256 bytes flash for sketches, 2048 bytes RAM)")
        row("flash", f"{size['flash']} B", f"{100 * size['flash'] / 32256:.1f}%")
        row("RAM (static)", f"{size['ram']} B", f"{100 * size['ram'] / 2048:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
