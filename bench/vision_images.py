"""Vision image-path benchmark on rendered scans: prints a table.

    python bench/vision_images.py [--scans 1000] [--seed 1]

Each scan: a uniformly random cube rendered in every view of the configured
scan sequence (robot/sim/render.py) under random lighting from one of the
ranges below, then read with the regions a calibration would have stored
(the nominal camera pose: the random camera shift of each scan is NOT in
them), sampled and decoded.  Counts exact / refused (VisionError: the robot
would rescan) / wrong (a confident wrong cube: must be 0), and the
frames-to-state time (sampling + decoding, no camera waits, no rendering).

Two harder ranges: "gloss" puts one broad specular highlight over
a whole sticker (the sampler cannot drop it: every pixel of that sticker is
blended 40-60% toward an over-bright white, its neighbours less), and
"over-exposed" makes whole frames 1.6-2.4x too bright, so channels clip at
255.  Refusals are tallied by rule (VisionError.reason).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import config as config_module  # noqa: E402
from robot import cube  # noqa: E402
from robot.sim import render  # noqa: E402
from robot.vision import camera_geometry  # noqa: E402
from robot.vision.scan import ScanSequence, read_frames  # noqa: E402

# Lighting ranges (name -> Lighting.random ranges).
RANGES = {
    "studio": {"brightness": (0.9, 1.1), "temperature_k": (5500.0, 7000.0), "noise_sigma": (1.0, 2.0),
               "glare_spots": (0, 0), "vignetting": (0.0, 0.1), "shading": (0.05, 0.15), "offset_px": (0.0, 1.0)},
    "room": {},  # Lighting.random defaults: 0.7-1.25 brightness, 4200-8000 K, 0-2 glare spots, 0-4 px shift
    "harsh": {"brightness": (0.5, 1.4), "temperature_k": (3000.0, 9500.0), "noise_sigma": (3.0, 8.0),
              "glare_spots": (1, 4), "vignetting": (0.2, 0.5), "shading": (0.3, 0.5), "offset_px": (2.0, 6.0)},
    "gloss": {"glare_spots": (1, 1)},
    "over-exposed": {"brightness": (1.6, 2.4), "glare_spots": (0, 0)},
}
# Lighting fields drawn per scan beyond Lighting.random's ranges: (low, high).
# A glare spot with a sigma of about one sticker and 0.3-0.45 strength covers
# a whole sticker at 40-60% (the renderer caps a spot at 1.4 x strength).
OVERRIDES = {"gloss": {"glare_radius": (0.8, 1.2), "glare_strength": (0.3, 0.45)}}


def same_partition(a: str, b: str) -> bool:
    return len(set(zip(a, b))) == len(set(a)) == len(set(b))


def run(scans: int, seed: int, names=None) -> list[dict]:
    config = config_module.load()
    sequence = ScanSequence.from_config(config)
    pose = camera_geometry.Pose.from_config(config)
    regions = camera_geometry.scan_regions(pose, sequence)  # what calibration stores: nominal pose
    rng = np.random.default_rng(seed)
    rows = []
    names = names or list(RANGES)
    per_range = [scans // len(names) + (k < scans % len(names)) for k in range(len(names))]
    for name, count in zip(names, per_range):
        ranges = RANGES[name]
        exact = refused = wrong = 0
        times, reasons = [], {}
        for _ in range(count):
            start = cube.random_state(rng).to_facelets()
            lighting = render.Lighting.random(rng, ranges)
            extra = {key: float(rng.uniform(*span)) for key, span in OVERRIDES.get(name, {}).items()}
            lighting = dataclasses.replace(lighting, **extra)
            frames, _ = render.render_scan(start, sequence, pose, lighting, seed=int(rng.integers(1 << 31)))
            t0 = time.perf_counter()
            result = read_frames(frames, sequence, regions, config=config)
            times.append((time.perf_counter() - t0) * 1000)
            if result.error is not None:
                refused += 1
                reason = getattr(result.error, "reason", type(result.error).__name__)
                reasons[reason] = reasons.get(reason, 0) + 1
            elif same_partition(result.decoded.facelets, sequence.final_state(start)):
                exact += 1
            else:
                wrong += 1
        rows.append({"range": name, "scans": count, "exact": exact, "refused": refused, "wrong": wrong,
                     "reasons": reasons,
                     "median_ms": float(np.median(times)) if times else 0.0,
                     "p95_ms": float(np.percentile(times, 95)) if times else 0.0})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scans", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ranges", nargs="*", choices=list(RANGES), help="only these lighting ranges")
    args = parser.parse_args()
    start = time.perf_counter()
    rows = run(args.scans, args.seed, args.ranges)
    print(f"Rendered scans ({args.scans}, seed {args.seed}; {len(ScanSequence.from_config(config_module.load()).views)}"
          " views each, frames -> state time excludes camera waits and rendering)")
    print(f"{'lighting':<14}{'scans':>7}{'exact':>8}{'refused':>9}{'wrong':>7}{'median ms':>11}{'p95 ms':>9}"
          "  refusals by rule")
    for r in rows:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(r["reasons"].items(), key=lambda kv: -kv[1]))
        print(f"{r['range']:<14}{r['scans']:>7}{r['exact']:>8}{r['refused']:>9}{r['wrong']:>7}"
              f"{r['median_ms']:>11.1f}{r['p95_ms']:>9.1f}  {reasons}")
    total = {k: sum(r[k] for r in rows) for k in ("scans", "exact", "refused", "wrong")}
    print(f"{'all':<14}{total['scans']:>7}{total['exact']:>8}{total['refused']:>9}{total['wrong']:>7}")
    print(f"(bench wall time {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
