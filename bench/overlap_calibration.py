"""SIMULATED `calibrate overlap` rehearsals (robot/calibrate/overlap.py) against a grid of true jaws
(config simulated_robot.gripper): what it measures, how far from the truth, on which side, how many
questions a maker would answer, and what the safe side costs a regrip (robot/regrip.py regrip_ms of a
quarter, then a quarter, with the measured settings against the true ones).  Prints a table.

    python bench/overlap_calibration.py [--firmware mock|emulator] [--pair FB]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import config as config_module  # noqa: E402
from robot.bringup.connection import ConnectedRobot  # noqa: E402
from robot.calibrate import overlap  # noqa: E402
from robot.regrip import Jaws, regrip_ms, turn_reach  # noqa: E402

TRUTHS = [(50, 70, 12.0), (35, 85, 16.0), (60, 60, 12.0), (40, 75, 14.0), (25, 90, 20.0), (70, 55, 11.0)]
WIDTHS = {"motion.servo_open_us": 1300, "motion.servo_closed_us": 1700}


def rehearse(firmware: str, pair: str, clear: int, contact: int, gap: float):
    config = config_module.with_settings(config_module.load(), {
        **WIDTHS, "simulated_robot.gripper.clear_pct": clear, "simulated_robot.gripper.contact_pct": contact,
        "simulated_robot.gripper.open_gap_mm": gap})
    asked = []
    with ConnectedRobot(config, sim=True, firmware=firmware) as robot:
        link = robot.link
        link.request("MOTORS ON")
        link.run(["OPEN RLFB"])
        trials = overlap._simulated_trials(robot, link, config, pair, lambda text: None)
        touching, layer = trials.ask_touching, trials.ask_layer
        trials.ask_touching = lambda arms: asked.append(1) or touching(arms)
        trials.ask_layer = lambda arms: asked.append(1) or layer(arms)
        link.run([f"GRIP {'RL' if pair == 'FB' else 'FB'}"])
        measured = overlap.measure(trials, config.camera.pose.cube_mm, lambda text: None)
    return config, overlap.settings_from(measured), len(asked)


def regrip_cost(config, clear: float, contact: float, gap: float) -> int:
    m = config.motion
    jaws = Jaws(1300, 1700, m.servo_speed_us_per_ms, clear / 100, contact / 100, gap)
    quarter = turn_reach([m.steps_per_rev // 4], m.steps_per_rev, m.max_speed_steps_per_s, m.accel_steps_per_s2,
                         m.cube_mm)
    return regrip_ms(quarter, quarter, [jaws, jaws], [jaws, jaws])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--firmware", choices=("mock", "emulator"), default="mock")
    parser.add_argument("--pair", choices=("FB", "RL"), default="FB")
    args = parser.parse_args()
    print(f"SIMULATED calibrate overlap, {args.firmware} firmware, pair {args.pair} measured, resolution "
          f"1/{round(1 / overlap.RESOLUTION)} of the travel; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'true clear/contact/gap':>24} | {'measured':>14} | {'error':>14} | {'safe':>4} | {'asked':>5} | "
          f"{'regrip true/measured ms':>23} | {'wall s':>6}")
    for clear, contact, gap in TRUTHS:
        start = time.perf_counter()
        try:
            config, got, asked = rehearse(args.firmware, args.pair, clear, contact, gap)
        except overlap.OverlapCalibrationError as exc:
            print(f"{f'{clear} % / {contact} % / {gap:g} mm':>24} | refused: {exc}")
            continue
        wall = time.perf_counter() - start
        c, k, g = got["jaw_clear_pct"], got["jaw_contact_pct"], got["jaw_open_gap_mm"]
        safe = c >= clear and k <= contact and g <= gap
        cost_true, cost_measured = regrip_cost(config, clear, contact, gap), regrip_cost(config, c, k, g)
        print(f"{f'{clear} % / {contact} % / {gap:g} mm':>24} | {f'{c} / {k} / {g}':>14} | "
              f"{f'{c - clear:+d} / {k - contact:+d} / {g - gap:+.0f}':>14} | {'yes' if safe else 'NO':>4} | "
              f"{asked:>5} | {f'{cost_true} / {cost_measured}':>23} | {wall:6.1f}")


if __name__ == "__main__":
    main()
