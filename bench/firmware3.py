"""The 3x3x3 mode of the real firmware in simavr: solver3 plans streamed through the host's link.

    python3 bench/firmware3.py [--cubes 3] [--seed 2026] [--budget 0.5]

For each seeded scrambled cube: robot.solver3's robot-aware plan (robot_search.solve_robot within
--budget s), its ops as command lines (robot/link/protocol.py plan3_command), streamed by
Link(puzzle="3x3x3") to the firmware in simavr (free-running, not paced), and the virtual 3x3x3 moved only
by the pins it drove (robot/sim/pins3.py).  Prints per cube: face moves, ops, the model's machine
time (robot/plan3.py Robot3Profile: robot.timing's turns, the firmware's OPEN / CLOSE wait from
`motion`), the firmware's (the sum of its `done` durations) and their difference, solved from the pins
and the jams; then the mean and worst difference and the load average.  SIMULATED: an emulated board, a rigid virtual cube.  Needs the 3x3x3
tables (cube-robot tables build --puzzle 3x3x3) and the emulator (make -C firmware harness).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robot import config as config_module  # noqa: E402
from robot.link import ports  # noqa: E402
from robot.link import protocol as P  # noqa: E402
from robot.link.driver import Link, LinkSettings  # noqa: E402
from robot.plan3 import Robot3Profile  # noqa: E402
from robot.sim import emulator, pins3  # noqa: E402
from robot.sim.virtual_robot3 import Jam3, VirtualRobot3  # noqa: E402
from robot.solver3 import cube3, robot_search  # noqa: E402


def ready_link3(emu, config) -> Link:
    """The host's link to the firmware in simavr in 3x3x3 mode at the model's start: the motion and gripper
    settings, PUZZLE 3, MOTORS ON, every arm zeroed and closed at 0.  The caller closes it."""
    settings = LinkSettings()
    link = Link(ports.open_port(emu.port, settings.baud), settings, motion=config.motion, url=emu.port,
                puzzle="3x3x3")
    try:
        link.handshake()
        link.configure()
        link.request("ZERO RLFB")
        link.run(["CLOSE RLFB"])
    except Exception:
        link.close()
        raise
    return link


def run_one(config, facelets: str, budget_s: float) -> dict:
    plan = robot_search.solve_robot(facelets, config, time_limit=budget_s)
    commands = [P.plan3_command(op) for op in plan.ops]
    with emulator.Emulator() as emu:
        link = ready_link3(emu, config)
        try:
            start = emu.cycle()
            result = link.run(commands)
            events = emu.pin_events()
        finally:
            link.close()
    robot = VirtualRobot3(Robot3Profile.from_config(config), facelets, steps_per_rev=config.motion.steps_per_rev)
    try:
        pins3.replay(robot, events, config.motion, start)
    except Jam3:
        pass  # kept in robot.jams
    return {"moves": plan.length, "ops": len(plan.ops), "model_ms": plan.cost_ms,
            "firmware_ms": sum(result.durations_ms), "solved": robot.is_solved() and not robot.jams,
            "jams": len(robot.jams)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubes", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--budget", type=float, default=0.5, help="the plan search's time budget, s")
    args = parser.parse_args()
    ok, why = emulator.available()
    if not ok:
        print(f"the firmware emulator is not available: {why}")
        return 2
    config = config_module.defaults()
    rng = np.random.default_rng(args.seed)
    print("SIMULATED: the firmware in simavr (3x3x3 mode), the virtual 3x3x3 moved by its pins")
    print("| cube | face moves | ops | model ms (Robot3Profile) | firmware ms (sum of done) | difference | "
          "solved from pins | jams |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    rows = []
    for k in range(args.cubes):
        row = run_one(config, cube3.to_facelets(cube3.random_state(rng)), args.budget)
        rows.append(row)
        row["off"] = 100 * (row["firmware_ms"] / row["model_ms"] - 1)
        print(f"| {k + 1} | {row['moves']} | {row['ops']} | {row['model_ms']} | {row['firmware_ms']} | "
              f"{row['off']:+.2f} % | {'yes' if row['solved'] else 'NO'} | {row['jams']} |", flush=True)
    model = sum(r["model_ms"] for r in rows) / len(rows)
    firmware = sum(r["firmware_ms"] for r in rows) / len(rows)
    worst = max(rows, key=lambda r: abs(r["off"]))["off"]
    print(f"mean: model {model:.0f} ms, firmware {firmware:.0f} ms ({100 * (firmware / model - 1):+.2f} %); "
          f"difference per cube: mean {sum(r['off'] for r in rows) / len(rows):+.2f} %, worst {worst:+.2f} %; "
          f"solved {sum(r['solved'] for r in rows)}/{len(rows)}; load average {os.getloadavg()[0]:.1f}")
    return 0 if all(r["solved"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
