"""The 3x3x3's region calibration (cube-robot calibrate colours --puzzle 3x3x3) on SIMULATED cameras
that sit off camera.pose: prints a table.

    python bench/calibrate3.py [--trials 10] [--seed 1] [--shift 8] [--degrees 4]

Each trial: the simulated 3x3x3 (mock firmware) with its camera moved by a seeded random image shift
(up to --shift px each way) and elevation / azimuth change (up to --degrees each), a solved cube
presented in every scan3 view, robot/calibrate/colours3.py calibrate3 on the pictures; then a seeded
scrambled cube under the same camera read with the calibrated regions and colours (decode3).
Per trial: how far the regions' centres are from the renderer's true sticker centres before (the
camera.pose guess) and after (calibrated), max over every region of every view, px; found or refused
(the refusal's view and stickers); the scrambled cube exact / refused / wrong (wrong must be 0).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import config as config_module  # noqa: E402
from robot.calibrate.colours3 import calibrate3, faces_by_centres, present_views  # noqa: E402
from robot.scan_sequence3 import ScanSequence3  # noqa: E402
from robot.sim import render  # noqa: E402
from robot.sim.robot_sim3 import SimulatedRobot3  # noqa: E402
from robot.solver3 import cube3  # noqa: E402
from robot.vision.camera_geometry3 import pose3, scan_regions3  # noqa: E402
from robot.vision.decode3 import decode3  # noqa: E402
from robot.vision.readings import VisionError  # noqa: E402
from robot.vision.regions3 import Calibration3Error, read3, readings54  # noqa: E402


def pictures(config, sequence, facelets: str, shift, elevation: float, azimuth: float):
    robot = SimulatedRobot3(config, facelets, seed=5, firmware="mock")
    robot.camera.lighting = replace(render.Lighting(), offset_px=shift)
    robot.camera.pose = replace(robot.camera.pose, elevation_deg=elevation, azimuth_deg=azimuth)
    try:
        return present_views(robot, sequence, lambda text: None), scan_regions3(robot.camera.pose, sequence, shift)
    finally:
        robot.close()


def worst(regions, drawn, sequence) -> float:
    return max(float(np.linalg.norm(regions.quads(v.name).mean(axis=1) - drawn.quads(v.name).mean(axis=1),
                                    axis=1).max()) for v in sequence.views)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shift", type=float, default=8.0, help="largest image shift each way, px")
    parser.add_argument("--degrees", type=float, default=4.0, help="largest elevation / azimuth change, degrees")
    args = parser.parse_args()
    config = config_module.defaults()
    sequence = ScanSequence3.from_config(config)
    pose = pose3(config)
    rng = np.random.default_rng(args.seed)
    folder = Path(tempfile.mkdtemp(prefix="calibrate3-bench-"))
    started, loads = time.perf_counter(), [os.getloadavg()[0]]
    print(f"SIMULATED cameras off camera.pose; {args.trials} trials, seed {args.seed}, shift <= {args.shift} px, "
          f"angles <= {args.degrees} deg; load average at start {loads[0]:.1f}")
    print(f"{'trial':>5} {'shift px':>13} {'elev':>5} {'azim':>5} {'before px':>9} {'after px':>8}  {'regions':<34} "
          f"{'scrambled':<9}")
    counts = {"found": 0, "refused": 0, "exact": 0, "read refused": 0, "wrong": 0}
    for trial in range(args.trials):
        shift = tuple(float(v) for v in rng.uniform(-args.shift, args.shift, 2))
        elevation = pose.elevation_deg + float(rng.uniform(-args.degrees, args.degrees))
        azimuth = pose.azimuth_deg + float(rng.uniform(-args.degrees, args.degrees))
        frames, drawn = pictures(config, sequence, cube3.SOLVED_FACELETS, shift, elevation, azimuth)
        before = worst(scan_regions3(pose, sequence), drawn, sequence)
        try:
            outcome = calibrate3(config, frames, lambda text: None, folder / f"pictures{trial}",
                                 folder / f"r{trial}.yaml", folder / f"c{trial}.yaml", simulated=True)
        except Calibration3Error as exc:
            counts["refused"] += 1
            print(f"{trial:>5} ({shift[0]:+5.1f},{shift[1]:+5.1f}) {elevation:5.1f} {azimuth:5.1f} {before:9.1f} "
                  f"{'-':>8}  refused: {str(exc).split(':')[0] + ':' + str(exc).split(':')[1][:20]}")
            continue
        counts["found"] += 1
        after = worst(outcome.regions, drawn, sequence)
        start = cube3.to_facelets(cube3.random_state(np.random.default_rng([args.seed, trial])))
        check, _ = pictures(config, sequence, start, shift, elevation, azimuth)
        try:
            read = decode3(readings54(read3(check, sequence, outcome.regions, config.scan.sampling)),
                           outcome.calibration, config).facelets
            verdict = "exact" if read == faces_by_centres(sequence.final_state(start)) else "wrong"
        except VisionError:
            verdict = "read refused"
        counts[verdict] += 1
        loads.append(os.getloadavg()[0])
        print(f"{trial:>5} ({shift[0]:+5.1f},{shift[1]:+5.1f}) {elevation:5.1f} {azimuth:5.1f} {before:9.1f} "
              f"{after:8.1f}  {'found':<34} {verdict:<9}")
    print(f"regions found {counts['found']}, refused {counts['refused']}; scrambled cubes read with them: exact "
          f"{counts['exact']}, refused {counts['read refused']}, wrong {counts['wrong']}")
    print(f"wall {time.perf_counter() - started:.0f} s, load average {min(loads):.1f}-{max(loads):.1f}")


if __name__ == "__main__":
    main()
