"""The 3x3x3 scan sequence (config scan3, robot/scan_sequence3.py): what the 3x3x3 grippers hide, how the
default sequence was chosen and what it costs (SIMULATED geometry, the firmware's op times: robot/plan3.py).  Prints tables.

    python bench/scan3.py [--cap 100000] [--weights 3,2] [--readings 0]

1. Visibility: for each of the 16 gripper angle sets, which of U's and F's places the arms leave
   mostly visible (render3.SEEN_SHARE of the sampled region) with every gripper closed, and what
   changes while one pair stands open (its jaws back off by their open gap).
2. The search (robot/sim/scan3_search.py): the exact A* up to --cap states (its proven lower bound
   when it stops there), then weighted A* with each of --weights (within weight x the optimum):
   arm time, views, states, seconds, peak memory.  And the configured sequence: its arm time and views.
3. --readings N: N seeded scrambled cubes rendered through the configured scan with the grippers drawn
   (render3.rendered_readings3, render.Lighting.random) and decoded by robot/vision/decode3.py:
   exact / refused / wrong.
The load average is printed: seconds depend on it, the arm times do not.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import config as config_module  # noqa: E402
from robot.plan3 import Robot3Profile  # noqa: E402
from robot.scan_sequence3 import ScanSequence3  # noqa: E402
from robot.sim import render, render3, scan3_search  # noqa: E402
from robot.solver3 import cube3  # noqa: E402
from robot.vision.camera_geometry3 import pose3  # noqa: E402


def peak_mb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=int, default=100_000, help="states the exact search may expand")
    parser.add_argument("--weights", default="", help="weighted searches to run too, e.g. 3,2")
    parser.add_argument("--readings", type=int, default=0, help="rendered scans decoded (0: none)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    config = config_module.load()
    profile = Robot3Profile.from_config(config)
    pose, geometry = pose3(config), render3.arm_geometry3(config)
    print(f"SIMULATED geometry: cube {pose.cube_mm} mm, camera elevation {pose.elevation_deg} deg; gripper3 "
          f"{geometry.jaw_width_mm} x {geometry.jaw_depth_mm} mm jaws; load average {os.getloadavg()[0]:.2f}")

    visible = scan3_search.visible_places(pose, geometry, profile)
    pairs = [tuple(sorted(profile.faces_of(p))) for p in profile.pair_names]
    print(f"\n| gripper angles {'/'.join(profile.arms)} | all closed: places seen | "
          + " | ".join(f"{''.join(p)} open: more | {''.join(p)} open: fewer" for p in pairs) + " |")
    print("| --- | --- |" + " --- | --- |" * len(pairs))
    for angles in sorted({a for a, _ in visible}):
        closed = set(visible[(angles, ())])
        cells = []
        for pair in pairs:
            shown = set(visible[(angles, pair)])
            cells += [" ".join(cube3.facelet_name(p) for p in sorted(shown - closed)) or "-",
                      " ".join(cube3.facelet_name(p) for p in sorted(closed - shown)) or "-"]
        print(f"| {'/'.join(str(a) for a in angles)} | {' '.join(cube3.facelet_name(p) for p in sorted(closed))} | "
              + " | ".join(cells) + " |")

    print("\n| search | arm ms | views | states expanded | seconds | peak MB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    start = time.perf_counter()
    try:
        exact = scan3_search.search(profile, visible, args.cap)
        print(f"| exact A* (optimal) | {exact['arm_ms']} | {exact['views_count']} | {exact['expanded']} | "
              f"{time.perf_counter() - start:.1f} | {peak_mb()} |")
    except scan3_search.GaveUp as stop:
        print(f"| exact A*: stopped at {args.cap} states, lower bound | >= {stop.lower_bound_ms:.0f} | | {args.cap} | "
              f"{time.perf_counter() - start:.1f} | {peak_mb()} |")
    for weight in (float(w) for w in args.weights.split(",") if w):
        start = time.perf_counter()
        try:
            found = scan3_search.search(profile, visible, 10 * args.cap, weight)
            print(f"| weighted A*, w={weight:g} | {found['arm_ms']} | {found['views_count']} | {found['expanded']} | "
                  f"{time.perf_counter() - start:.1f} | {peak_mb()} |")
        except scan3_search.GaveUp:
            print(f"| weighted A*, w={weight:g}: stopped at {10 * args.cap} states | | | | "
                  f"{time.perf_counter() - start:.1f} | {peak_mb()} |")
    sequence = ScanSequence3.from_config(config)
    tilts = sum(op["op"] == "tilt" for op in sequence.all_ops())
    print(f"| configured scan3 ({tilts} tilts) | {sequence.arm_ms()} | {len(sequence.views)} | | | |")

    if args.readings:
        from robot.vision.decode3 import decode3
        from robot.vision.readings import VisionError

        rng = np.random.default_rng(args.seed)
        counts = {"exact": 0, "refused": 0, "wrong": 0}
        for k in range(args.readings):
            facelets = cube3.to_facelets(cube3.random_state(rng))
            rgb = render3.rendered_readings3(facelets, sequence, pose, render.Lighting.random(rng), seed=k,
                                             geometry=geometry)
            final = sequence.final_state(facelets)
            try:
                decoded = decode3(rgb).facelets
            except VisionError:
                counts["refused"] += 1
                continue
            pairs = dict(zip(decoded, final))
            same = all(pairs[a] == b for a, b in zip(decoded, final)) and len(set(pairs.values())) == 6
            counts["exact" if same else "wrong"] += 1
        print(f"\n| rendered scans (grippers drawn) | exact | refused | wrong |\n| --- | ---: | ---: | ---: |\n"
              f"| {args.readings} | {counts['exact']} | {counts['refused']} | {counts['wrong']} |")
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
