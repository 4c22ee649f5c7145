"""The simulated lamp's sweep (SIMULATED pictures): today's single-look decoder on whole rendered scans.

    python bench/vision_lamp.py [--cubes 200] [--seed 1] [--presets glare side dim]
                                [--strengths 0.2 0.4 0.55 0.7] [--room] [--quick]

Each setting (a lamp preset of robot/sim/lamp.py at a strength: the mix with white at the centre of the
most washed sticker) renders the same seeded cubes (uniformly random, any orientation) in every view of
the configured scan sequence, as a simulated run's scan presents them (robot/scan_sequence.py: the lamp
stays where it is, so each view washes the stickers that sit under its reflection then), reads them with
the nominal regions and decodes the 24 readings with the single-look decoder (robot/vision/scan.py
read_frames: sampling, then robot/vision/decode.py), as the run's full scan does (no colour calibration,
as a simulated run).  Prints exact / refused / wrong per setting (wrong: a confident wrong cube, must be
0), the same for the run's adaptive scan (it stops early when the views so far decide the cube) with its
mean views, the refusals by rule (VisionError.reason) and how many refusals had the right best cube, and the
washed stickers per scan (mix >= 0.2 at the centre).  The first row is the same cubes without a lamp.
"run" is the whole scan as the run does it (robot/vision/adaptive.py scan, with config's `scan.second_look`,
or --second-look on/off): a camera renders the cube where the views left it, so a second look sees it
from its own pose; exact / refused / wrong, the mean views, the runs that took a second look and the
robot time of its views per run (the plan cost of their actions: they are stages of the run's waterfall).

The light is a simulated run's (robot/sim/render.py Lighting(): brightness 1, 6500 K, noise 2, shading,
vignetting) with the lamp; --room draws each cube's light from Lighting.random's moderate room ranges
(no random glare spots) instead.  This is the baseline the fused second look is measured against;
robot/sim/render.py render_looks gives each view's own readings and mixes for it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import config as config_module  # noqa: E402
from robot import cube  # noqa: E402
from robot.sim import lamp, render  # noqa: E402
from robot.vision import adaptive, camera_geometry  # noqa: E402
from robot.vision.scan import ScanSequence, read_frames  # noqa: E402

STRENGTHS = (0.2, 0.4, 0.55, 0.7)
WASHED = 0.2  # a sticker counts as washed when its centre mixes at least this much white


def same_partition(a: str, b: str) -> bool:
    return len(set(zip(a, b))) == len(set(a)) == len(set(b))


def cubes(count: int, seed: int, room: bool) -> list[tuple[str, render.Lighting, int]]:
    """(start facelets, base light, render seed) per cube: the same for every setting."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        start = cube.random_state(rng).to_facelets()
        light = render.Lighting.random(rng, {"glare_spots": (0, 0), "offset_px": (0.0, 0.0)}) if room \
            else render.Lighting()
        out.append((start, light, int(rng.integers(1 << 31))))
    return out


def sweep(config, settings, scans) -> list[dict]:
    """One row per (preset, strength): exact / refused / wrong over `scans`."""
    sequence = ScanSequence.from_config(config)
    pose = camera_geometry.Pose.from_config(config)
    regions = camera_geometry.scan_regions(pose, sequence)  # what calibration stores: the nominal pose
    rows = []
    for name, strength in settings:
        found, brightness = lamp.preset_lamp(pose, name, strength=strength)
        washed = sum(int(np.sum(m >= WASHED)) for m in lamp.view_mix(pose, found, sequence)) if found else 0
        row = {"preset": name, "strength": strength, "scans": 0, "exact": 0, "refused": 0, "wrong": 0,
               "reasons": {}, "right_best": 0, "washed": washed, "ms": [], "wrong_cases": [],
               "adaptive": {"exact": 0, "refused": 0, "wrong": 0, "views": 0},
               "run": {"exact": 0, "refused": 0, "wrong": 0, "views": 0, "looked": 0, "arm_ms": 0.0}}
        for number, (start, light, seed) in enumerate(scans):
            frames, _ = render.render_scan(start, sequence, pose, lamp.lit(light, found, brightness), seed=seed)
            t0 = time.perf_counter()
            result = read_frames(frames, sequence, regions, config=config)
            row["ms"].append((time.perf_counter() - t0) * 1000)
            truth = sequence.final_state(start)
            row["scans"] += 1
            early = adaptive_outcome(frames, start, sequence, regions, config)
            outcome = early[0] if early is not None else None
            if result.error is not None:
                row["refused"] += 1
                reason = getattr(result.error, "reason", type(result.error).__name__)
                row["reasons"][reason] = row["reasons"].get(reason, 0) + 1
                best = getattr(result.error, "result", None)
                row["right_best"] += best is not None and same_partition(best.facelets, truth)
                outcome = outcome or "refused"
            elif same_partition(result.decoded.facelets, truth):
                row["exact"] += 1
                outcome = outcome or "exact"
            else:
                row["wrong"] += 1
                row["wrong_cases"].append(f"cube {number}: start {start}, render seed {seed}")
                outcome = outcome or "wrong"
            row["adaptive"][outcome] += 1
            row["adaptive"]["views"] += early[1] if early is not None else len(sequence.views)
            run_outcome(row["run"], start, lamp.lit(light, found, brightness), seed, config, sequence, pose, regions)
            if row["run"].pop("wrong_now", False):
                row["wrong_cases"].append(f"run, cube {number}: start {start}, render seed {seed}")
        rows.append(row)
    return rows


def adaptive_outcome(frames, start: str, sequence, regions, config) -> tuple[str, int] | None:
    """What the run's adaptive scan (robot/vision/adaptive.py, scan.adaptive_from) decided before its last
    view: (exact | wrong, views taken), or None when it took every view (then it reads as the full scan)."""
    first = max(1, config.scan.adaptive_from)
    if not config.scan.adaptive_from or sequence.finish:
        return None
    sampling = config.scan.sampling
    samples = []
    for k in range(1, len(sequence.views)):
        samples.append(adaptive.sample_view(frames[sequence.views[k - 1].name], k - 1, sequence, regions, sampling))
        if k < first:
            continue
        taken = sequence.prefix(k)
        _, decoded, _ = adaptive.decode_partial(samples, taken, None, config)
        if decoded is not None:
            return ("exact" if same_partition(decoded.facelets, taken.final_state(start)) else "wrong"), k
    return None


class RenderCamera:
    """SIMULATED: renders the cube where the mover left it, under the lamp (one seed per picture)."""

    def __init__(self, start: str, pose, lighting, seed: int):
        self.state, self.pose, self.lighting, self.seed, self.taken = start, pose, lighting, seed, 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def capture(self, view, still_since=None):
        self.taken += 1
        return render.render_state(self.state, self.pose, self.lighting, np.random.default_rng([self.seed, self.taken]))


class RenderMover:
    def __init__(self, camera: RenderCamera):
        self.camera = camera

    def move_to(self, view):
        self.camera.state = cube.apply_moves(self.camera.state, view.moves)


def run_outcome(counts: dict, start: str, lighting, seed: int, config, sequence, pose, regions) -> None:
    """The run's scan of one cube (adaptive.scan: early stop, full scan, second look as config says)."""
    from robot.plan import RobotProfile
    from robot.vision.scan import Scanner

    camera = RenderCamera(start, pose, lighting, seed)
    scanner = Scanner(config, camera=camera, view_mover=RenderMover(camera), calibration=None, regions=regions)
    result = adaptive.scan(scanner)
    views = (result.sequence or sequence).views
    counts["views"] += len(views)
    extra = views[len(sequence.views):]
    if extra:
        counts["looked"] += 1
        counts["arm_ms"] += sum(RobotProfile.from_config(config).plan_cost(list(v.actions)) for v in extra)
    if result.decoded is None:
        counts["refused"] += 1
    elif same_partition(result.decoded.facelets, camera.state):
        counts["exact"] += 1
    else:
        counts["wrong"] += 1
        counts["wrong_now"] = True


def run_cell(row: dict) -> str:
    r = row["run"]
    n = max(1, row["scans"])
    return f"{r['exact']}/{r['refused']}/{r['wrong']}, {r['views'] / n:.2f}, {r['looked']}, {r['arm_ms'] / n:.0f}"


def adaptive_cell(row: dict) -> str:
    a = row["adaptive"]
    return f"{a['exact']}/{a['refused']}/{a['wrong']}, {a['views'] / max(1, row['scans']):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cubes", type=int, default=200, help="seeded cubes per setting (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--presets", nargs="*", choices=list(lamp.PRESETS), default=list(lamp.PRESETS))
    parser.add_argument("--strengths", nargs="*", type=float, default=list(STRENGTHS))
    parser.add_argument("--room", action="store_true", help="moderate random room light under the lamp")
    parser.add_argument("--quick", action="store_true", help="20 cubes, glare only at 0.4 and 0.7 (a smoke run)")
    parser.add_argument("--second-look", choices=["config", "on", "off"], default="config",
                        help="the run's scan.second_look (default: as config.yaml says)")
    parser.add_argument("--no-lamp-row", action="store_true", help="leave out the first row (the cubes without a lamp)")
    args = parser.parse_args()
    if args.quick:
        args.cubes, args.presets, args.strengths = 20, ["glare"], [0.4, 0.7]
    config = config_module.load()
    config = config_module.with_settings(config, {"scan.save_images": False} if args.second_look == "config" else
                                         {"scan.save_images": False, "scan.second_look": args.second_look == "on"})
    settings = ([] if args.no_lamp_row else [(lamp.NONE, 0.0)]) + [(name, s) for name in args.presets for s in args.strengths]
    load_before = os.getloadavg()
    start = time.perf_counter()
    rows = sweep(config, settings, cubes(args.cubes, args.seed, args.room))
    load_after = os.getloadavg()
    views = len(ScanSequence.from_config(config).views)
    print(f"Lamp sweep, SIMULATED pictures: {args.cubes} seeded cubes per setting (seed {args.seed}), {views} views "
          f"each, single-look decoder; light: {'moderate random room' if args.room else 'a simulated run'}'s")
    print(f"{'preset':<8}{'strength':>9}{'washed':>8}{'scans':>7}{'exact':>8}{'refused':>9}{'wrong':>7}"
          f"{'exact %':>9}{'best ok':>9}{'median ms':>11}  {'adaptive: exact/refused/wrong, views':<37}"
          f"{'run: exact/refused/wrong, views, 2nd-look runs, their arm ms/run':<66}refusals by rule")
    for r in rows:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(r["reasons"].items(), key=lambda kv: -kv[1]))
        print(f"{r['preset']:<8}{r['strength']:>9.2f}{r['washed']:>8}{r['scans']:>7}{r['exact']:>8}{r['refused']:>9}"
              f"{r['wrong']:>7}{100 * r['exact'] / max(1, r['scans']):>8.1f}%{r['right_best']:>9}"
              f"{float(np.median(r['ms'])):>11.1f}  {adaptive_cell(r):<37}{run_cell(r):<66}{reasons}")
    for r in rows:  # a confident wrong cube, to replay: the cube's index among the seeded ones and its seeds
        for case in r["wrong_cases"]:
            print(f"WRONG {r['preset']} {r['strength']:.2f}: {case}")
    print(f"(washed: stickers per scan whose centre mixes >= {WASHED} white, over all views; best ok: refusals whose "
          "best legal cube was the right one; median ms: sampling + decoding, no rendering; adaptive: the run's scan, "
          "which stops after a view once the stickers seen so far decide the cube (scan.adaptive_from), and the "
          "mean views it took)")
    print(f"(run: scan.second_look {config.scan.second_look}; the run's scan with a camera that renders each view, "
          "second looks included, where the cube then is)")
    print(f"(bench wall time {time.perf_counter() - start:.0f} s; load average {load_before[0]:.2f} before, "
          f"{load_after[0]:.2f} after (1 min), {load_after[1]:.2f} (5 min), on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
