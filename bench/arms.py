"""SIMULATED arms in the pictures (robot/sim/render_arms.py, config simulated_robot): what they hide, what the
decoder makes of it, and what they cost a run.  Prints tables.

    python bench/arms.py [--scans 300] [--seed 1] [--e2e 0]

1. Per view of the configured scan, per sticker: the share of its sampled region (the inner 0.6 of
   the region, as scan.sampling.inner_fraction) that an arm covers, and that an arm covers or shadows
   (default light), with the arms where a scan puts them (homed, grippers open at the start).
2. Rendered scans (seeded random cubes, bench/vision_images.py lighting ranges; `glare lamp`: the room's
   ranges under the simulated lamp's glare preset), read with the calibrated (nominal) regions, every
   view: exact / refused / wrong with no arms, with the arms where the scan puts them, and with the arms
   at random quarter angles where no two arms meet (as a verify rescan after a solve may find them);
   `same` = the decoded cube is the one read without arms.
3. --e2e N: N seeded simulated runs (mock firmware, real time, no verify) with the arms off and on,
   interleaved: button -> solved mean and p90 (the load average is printed: the renderer's CPU time
   runs while the arms move).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import config as config_module  # noqa: E402
from robot import cube  # noqa: E402
from robot.plan import RobotProfile  # noqa: E402
from robot.sim import lamp, render  # noqa: E402
from robot.sim import render_arms as ra  # noqa: E402
from robot.vision import camera_geometry  # noqa: E402
from robot.vision.scan import ScanSequence, read_frames  # noqa: E402

STUDIO = {"brightness": (0.9, 1.1), "temperature_k": (5500.0, 7000.0), "noise_sigma": (1.0, 2.0),
          "glare_spots": (0, 0), "vignetting": (0.0, 0.1), "shading": (0.05, 0.15), "offset_px": (0.0, 1.0)}
# name -> (bench/vision_images.py lighting ranges, the simulated lamp's preset: robot/sim/lamp.py)
LIGHTS = {"studio": (STUDIO, "none"), "room": ({}, "none"), "glare lamp": ({}, "glare")}


def homed(geometry: ra.ArmGeometry) -> ra.ArmsView:
    return ra.ArmsView(geometry, tuple((f, 0.0) for f in ra.ARM_FACES), tuple((f, False) for f in ra.ARM_FACES))


def geometry_of(config) -> ra.ArmGeometry:
    """The configured gripper (config simulated_robot), drawn whether or not draw_arms is on."""
    geometry = ra.ArmGeometry.from_config(config_module.with_settings(config, {"simulated_robot.draw_arms": True}))
    assert geometry is not None
    return geometry


def coverage(config) -> list[tuple[str, list[str]]]:
    sequence, pose = ScanSequence.from_config(config), camera_geometry.Pose.from_config(config)
    geometry = geometry_of(config)
    views = ra.scan_arms(homed(geometry), sequence, RobotProfile.from_config(config).faces_of)
    flat = render.Lighting(noise_sigma=0.0, sticker_jitter=0.0)
    start = cube.CubieCube().to_facelets(cube.FACES)
    bare, regions = render.render_scan(start, sequence, pose, flat, seed=1)
    shadowed, _ = render.render_scan(start, sequence, pose, flat, seed=1, view_arms=views)
    plain = [dataclasses.replace(v, geometry=dataclasses.replace(geometry, shadow=0.0)) for v in views]
    covered, _ = render.render_scan(start, sequence, pose, flat, seed=1, view_arms=plain)
    inner = config.scan.sampling.inner_fraction
    rows = []
    for view in sequence.views:
        b = bare[view.name].astype(int)
        arm = np.abs(covered[view.name].astype(int) - b).max(axis=2) > 6
        either = np.abs(shadowed[view.name].astype(int) - b).max(axis=2) > 6
        cells = []
        for name, quad in zip(view.facelets, regions.views[view.name]):
            centre = quad.mean(axis=0)
            mask = np.zeros(arm.shape, np.uint8)
            cv2.fillConvexPoly(mask, np.round(centre + inner * (quad - centre)).astype(np.int32), 1)
            m = mask.astype(bool)
            cells.append(f"{name} {100 * arm[m].mean():3.0f}/{100 * either[m].mean():3.0f}")
        rows.append((view.name, cells))
    return rows


def same_partition(a: str, b: str) -> bool:
    return len(set(zip(a, b))) == len(set(a)) == len(set(b))


def after_solve(rng, geometry, sequence, faces_of, half) -> list[ra.ArmsView]:
    """The arms at each view of a scan that starts where a solve left them: random quarter angles, grippers
    open; only starts whose scan no arm meets another in (render_arms.meeting_arms: not every start can be)."""
    while True:
        quarters = ra.ArmsView(geometry, tuple((f, 90.0 * int(rng.integers(4))) for f in ra.ARM_FACES),
                               tuple((f, False) for f in ra.ARM_FACES))
        views = ra.scan_arms(quarters, sequence, faces_of)
        if not any(ra.meeting_arms(v, half) for v in [quarters, *views]):
            return views


def decode_table(config, scans: int, seed: int) -> list[dict]:
    sequence, pose = ScanSequence.from_config(config), camera_geometry.Pose.from_config(config)
    regions = camera_geometry.scan_regions(pose, sequence)
    faces_of = RobotProfile.from_config(config).faces_of
    geometry = geometry_of(config)
    rng = np.random.default_rng(seed)
    out = []
    for name, (ranges, preset) in LIGHTS.items():
        the_lamp, brightness = lamp.preset_lamp(pose, preset)
        counts = {k: {"exact": 0, "refused": 0, "wrong": 0, "same": 0} for k in ("none", "scan", "after solve")}
        for _ in range(scans // len(LIGHTS)):
            start = cube.random_state(rng).to_facelets()
            lighting = lamp.lit(render.Lighting.random(rng, ranges), the_lamp, brightness)
            frame_seed = int(rng.integers(1 << 31))
            arms = {"none": None, "scan": ra.scan_arms(homed(geometry), sequence, faces_of),
                    "after solve": after_solve(rng, geometry, sequence, faces_of, pose.cube_mm / 2)}
            bare = None
            for key, view_arms in arms.items():
                frames, _ = render.render_scan(start, sequence, pose, lighting, seed=frame_seed, view_arms=view_arms)
                result = read_frames(frames, sequence, regions, config=config)
                c = counts[key]
                if result.error is not None or result.decoded is None:
                    c["refused"] += 1
                    got = None
                else:
                    got = result.decoded.facelets
                    c["exact" if same_partition(got, sequence.final_state(start)) else "wrong"] += 1
                if key == "none":
                    bare = got
                c["same"] += got == bare
        out += [{"range": name, "arms": k, "scans": scans // len(LIGHTS), **v} for k, v in counts.items()]
    return out


def e2e(runs: int) -> list[dict]:
    from robot.cli import build_parser
    from robot.run.options import RunOptions
    from robot.run.simulated import run_simulated

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
        text = text.replace("images_dir: runs/scans", f"images_dir: {tmp}/scans").replace(
            "save_images: true", "save_images: false").replace("data_dir: data", f"data_dir: {tmp}/data")
        path = Path(tmp) / "config.yaml"
        path.write_text(text)
        base = config_module.load(path)
        configs = {"off": base, "on": config_module.with_settings(base, {"simulated_robot.draw_arms": True})}
        results: dict = {k: [] for k in configs}
        for seed in range(runs):
            for key, config in configs.items():
                argv = ["run", "--sim", "--firmware", "mock", "--seed", str(seed), "--realtime", "--no-verify"]
                report = run_simulated(config, RunOptions.from_args(build_parser().parse_args(argv)),
                                       lambda message: None).to_json()
                results[key].append(report)
                print(f"  e2e arms {key} seed {seed}: {report.get('button_to_solved_ms')} ms "
                      f"solved {report['solved']}", file=sys.stderr, flush=True)
        for key, reports in results.items():
            times = [r["button_to_solved_ms"] for r in reports if r["solved"]]
            out.append({"arms": key, "runs": runs, "solved": len(times),
                        "mean": statistics.fmean(times) if times else float("nan"),
                        "p90": float(np.percentile(times, 90)) if times else float("nan"),
                        "facelets": [r.get("facelets") for r in reports]})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scans", type=int, default=300, help="rendered scans (split over the lightings)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--e2e", type=int, default=0, help="seeded simulated runs, arms off and on")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting changed for this bench (a YAML value), e.g. "
                        "simulated_robot.gripper.jaw_width_mm=8")
    args = parser.parse_args()
    config = config_module.with_settings(config_module.load(), {k: yaml.safe_load(v) for k, v in
                                                                  (item.split("=", 1) for item in args.set)})
    began = time.perf_counter()
    g = geometry_of(config)
    print(f"SIMULATED arms: jaws {g.jaw_width_mm:g} wide, {g.jaw_depth_mm:g} deep, {g.jaw_thickness_mm:g} thick, "
          f"open {g.open_gap_mm:g}, crossbar gap {g.crossbar_gap_mm:g} mm; load average {os.getloadavg()[0]:.2f}")
    print("1. sampled region covered by an arm / covered or shadowed, % (scan positions, default light)")
    for name, cells in coverage(config):
        print(f"  {name:<12} " + "  ".join(cells))
    if args.scans:
        print(f"2. rendered scans, every view ({args.scans}, seed {args.seed})")
        print(f"  {'lighting':<12}{'arms':<13}{'scans':>6}{'exact':>7}{'refused':>9}{'wrong':>7}{'same':>6}")
        for r in decode_table(config, args.scans, args.seed):
            print(f"  {r['range']:<12}{r['arms']:<13}{r['scans']:>6}{r['exact']:>7}{r['refused']:>9}{r['wrong']:>7}"
                  f"{r['same']:>6}")
    if args.e2e:
        rows = e2e(args.e2e)
        print(f"3. simulated runs (mock firmware, real time), button -> solved ms; load average "
              f"{os.getloadavg()[0]:.2f}")
        for r in rows:
            print(f"  arms {r['arms']:<4} runs {r['runs']:>3} solved {r['solved']:>3} mean {r['mean']:8.1f} "
                  f"p90 {r['p90']:8.1f}")
        same = sum(a == b for a, b in zip(rows[0]["facelets"], rows[1]["facelets"]))
        print(f"  same scan result with and without arms: {same}/{args.e2e}")
    print(f"(bench wall time {time.perf_counter() - began:.0f} s)")


if __name__ == "__main__":
    main()
