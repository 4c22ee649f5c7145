"""3x3x3 decoding benchmark (robot/vision/decode3.py): prints tables.

    python bench/vision3.py [--synthetic 1000] [--sweep 10] [--seed 1] [--rows 'clean;noise 8']

1. Real readings: every 3x3x3 scan with a known answer in
   ../shared/data/real-cube-readings/dwalton76-rubiks-color-resolver (tests/test-data
   and history, answers in expected.json; the files number the squares U L F R B D,
   reordered here to U R F D L B).  Exact (same partition as the answer), refused
   (VisionError: the robot would rescan) or wrong (a confident wrong cube: must be 0).
   The scans without a known answer are decoded too and shown beside the
   resolver's own output (not counted).  Then a light sweep: every known-answer
   scan under the 2x2x2 bench's moderate light rows (exposure, cast, noise, glare,
   shadow) and over-exposed, --sweep times each.
2. Synthetic scans: seeded random legal 3x3x3s under a random colour scheme, per
   condition (sensor noise, shading, exposure and per-channel cast, glare stickers
   blended toward the lamp's white, two stickers swapped), decode3 on each.
   Counts and CPU time per decode (this thread's: the machine may be shared);
   wrong must be 0.  In the swapped row "exact" is the cube before the swap (as if
   two readings were exchanged): on a cube with two stickers physically exchanged
   every accepted cube is a miss, so that row is reported, not targeted.

3. Rendered scans (--rendered N; SIMULATED pictures): N seeded uniformly random 3x3x3s, each scanned as
   the run scans it: every view of config scan3 rendered by robot/sim/render3.py with the arms and
   grippers drawn where the sequence leaves them (config simulated_robot.draw_arms), the run's nominal
   regions (scan_regions3), its sampling (regions.sample_sticker), the per-channel median of a sticker's
   looks, decode3(readings, None, config) as robot/run/puzzle3.py does.  Per setting (RENDERED: clean,
   sensor noise, under- and over-exposure, the lamp of robot/sim/lamp.py: glare 0.4 up to 0.7, side,
   dim): exact / refused / wrong, the refusals by rule, the washed stickers per scan, wall time and
   the load average.  --first K starts at cube K of the same seeded list (to split a long run over
   time: the counts of two parts add up); the wrong cubes are listed by number for a test to render.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import config as config_module  # noqa: E402
from robot.solver3 import cube3  # noqa: E402
from robot.vision.decode3 import decode3  # noqa: E402
from robot.vision.readings import VisionError  # noqa: E402

_DATA = Path("shared") / "data" / "real-cube-readings" / "dwalton76-rubiks-color-resolver"
# ../shared from the project root (a git worktree one level deeper finds it one level further up).
RESOLVER = next((p / _DATA for p in Path(__file__).resolve().parents[1].parents[:2] if (p / _DATA).exists()),
                Path(__file__).resolve().parents[1].parent / _DATA)
# The resolver's files number the squares from 1, faces in the order U L F R B D, each row-major on the
# same net as Kociemba's; the decoder takes U R F D L B.  (tests/test_vision_decode3.py reads the cases here.)
FILE_FACES = "ULFRBD"
PALETTE = np.array([
    (235, 235, 230), (235, 215, 40), (185, 25, 35), (245, 110, 25), (25, 155, 70), (25, 75, 185),
], dtype=float)
_LIGHT = {"exposure": (0.6, 1.2), "cast": (0.8, 1.2), "noise": 4.0, "shade": 0.1}
CONDITIONS = {
    "clean": {"noise": 2.0, "shade": 0.05},
    "noise 8": {"noise": 8.0, "shade": 0.2},
    "noise 12, shade 0.4": {"noise": 12.0, "shade": 0.4, "cast": (0.8, 1.2)},
    "exposure 0.6-1.2, cast 0.8-1.2": _LIGHT,
    "glare 0.4 (+ exposure, cast)": {**_LIGHT, "glare": (0.4,)},
    "2 glare 0.5 (+ exposure, cast)": {**_LIGHT, "glare": (0.5, 0.5)},
    "swapped pair, noise 8": {"noise": 8.0, "shade": 0.3, "cast": (0.8, 1.2), "swap": True},
}


def same_partition(a: str, b: str) -> bool:
    return len(a) == len(b) and len(set(zip(a, b))) == len(set(a)) == len(set(b))


def classify(rgb, truth: str, reasons: dict | None = None) -> tuple[str, float, object]:
    """(exact / refused / wrong, CPU seconds, the result or the error) of decode3 on 54 readings."""
    start = time.thread_time()
    try:
        result = decode3(rgb)
    except VisionError as error:
        seconds = time.thread_time() - start
        if reasons is not None:
            reasons[error.reason] = reasons.get(error.reason, 0) + 1
        return "refused", seconds, error
    seconds = time.thread_time() - start
    return ("exact" if same_partition(result.facelets, truth) else "wrong"), seconds, result


def real_cases(folder: Path = RESOLVER) -> list[dict]:
    """Every 3x3x3 scan: id, rgb (54, URFDLB), truth (None when unknown), the resolver's own output."""
    expected = json.loads((folder / "expected.json").read_text())
    cases = []
    for name, entry in sorted(expected.items()):
        if entry["cube"] != "3x3x3":
            continue
        squares = json.loads((folder / name).read_text())
        by_file = np.array([squares[str(n)] for n in range(1, 55)], dtype=float)
        rgb = np.concatenate([by_file[9 * FILE_FACES.index(f):9 * FILE_FACES.index(f) + 9] for f in "URFDLB"])
        truth = entry.get("expected_kociemba_URFDLB") or entry.get("expected_kociemba_URFDLB_historical")
        cases.append({"id": name, "rgb": rgb, "truth": truth, "resolver": entry.get("resolver_HEAD_output")})
    return cases


def real_rows(folder: Path = RESOLVER) -> list[dict]:
    rows = []
    for case in real_cases(folder):
        if case["truth"] is None:
            try:
                result = decode3(case["rgb"])
                agrees = case["resolver"] is not None and same_partition(result.facelets, case["resolver"])
                rows.append({**case, "outcome": "(no answer)", "detail": f"margin {result.margin:.1f}; "
                             f"{'same as' if agrees else 'differs from'} the resolver's output"})
            except VisionError as error:
                rows.append({**case, "outcome": "(no answer)", "detail": f"refused: {error.reason}"})
            continue
        outcome, seconds, got = classify(case["rgb"], case["truth"])
        detail = f"margin {got.margin:.1f}" if outcome != "refused" else f"{got.reason}: {', '.join(got.stickers[:6])}"
        rows.append({**case, "outcome": outcome, "detail": detail, "ms": seconds * 1000})
    return rows


# The 2x2x2 bench's light rows (bench/vision.py), on the real 3x3x3 readings.
_MODERATE = {"exposure": (0.6, 1.2), "cast": (0.8, 1.2), "noise": 4.0}
SWEEP = {
    "moderate (exposure 0.6-1.2, cast 0.8-1.2, noise 4)": _MODERATE,
    "moderate + 1 glare 0.4": {**_MODERATE, "glare": (0.4,)},
    "moderate + 2 glare 0.5 + shadow 0.5": {**_MODERATE, "glare": (0.5, 0.5), "shadow": (0.5,)},
    # No over-exposure rule for the 3x3x3 (robot/vision/decode3.py): these rows show what stands in for it.
    "over-exposed 1.8 (noise 2)": {"exposure": (1.8, 1.8), "noise": 2.0},
    "over-exposed 2.5, cast 0.8-1.2 (noise 4)": {"exposure": (2.5, 2.5), "cast": (0.8, 1.2), "noise": 4.0},
}


def perturb(rgb, spec: dict, rng) -> np.ndarray:
    """A real scan under other light: exposure x cast, glare stickers (blended toward the lamp's white under
    the same light), shadowed stickers, sensor noise; clipped to 0-255 like a sensor."""
    light = rng.uniform(*spec.get("exposure", (1.0, 1.0))) * rng.uniform(*spec.get("cast", (1.0, 1.0)), 3)
    rgb = np.array(rgb, dtype=float) * light
    spots = rng.permutation(54)
    glare = spec.get("glare", ())
    for i, fraction in zip(spots, glare):
        rgb[i] = (1 - fraction) * rgb[i] + fraction * 255.0 * light
    for i, fraction in zip(spots[len(glare):], spec.get("shadow", ())):
        rgb[i] = rgb[i] * (1 - fraction)
    return np.clip(np.round(rgb + rng.normal(0, spec.get("noise", 0.0), rgb.shape)), 0, 255)


def light_sweep(trials: int, seed: int, folder: Path = RESOLVER) -> list[dict]:
    """Per SWEEP row: exact / refused / wrong over `trials` perturbations of every known-answer real scan,
    also over the scans decoded exactly as read ("clean")."""
    cases = [case for case in real_cases(folder) if case["truth"] is not None]
    clean = {case["id"] for case in cases if classify(case["rgb"], case["truth"])[0] == "exact"}
    rows = []
    for name, spec in SWEEP.items():
        rng = np.random.default_rng([seed, sum(map(ord, name))])
        counts, clean_counts, reasons, wrong = {"exact": 0, "refused": 0, "wrong": 0}, {}, {}, []
        for _ in range(trials):
            for case in cases:
                outcome = classify(perturb(case["rgb"], spec, rng), case["truth"], reasons)[0]
                counts[outcome] += 1
                if case["id"] in clean:
                    clean_counts[outcome] = clean_counts.get(outcome, 0) + 1
                if outcome == "wrong":
                    wrong.append(case["id"].split("/")[-1])
        rows.append({"name": name, **counts, "clean": clean_counts, "clean_total": trials * len(clean),
                     "reasons": reasons, "wrong_cases": wrong})
    return rows


def synthetic_readings(rng, spec: dict):
    """(54 readings, the truth they show) of a random legal cube under `spec`."""
    faces = cube3.colours_from_cubies(*(np.asarray(x)[None] for x in cube3.random_state(rng)))[0].astype(int)
    truth = "".join("URFDLB"[f] for f in faces)
    shade = spec.get("shade", 0.0)
    rgb = PALETTE[rng.permutation(6)[faces]] * rng.uniform(1 - shade, 1, (54, 1))
    light = rng.uniform(*spec.get("exposure", (1.0, 1.0))) * rng.uniform(*spec.get("cast", (1.0, 1.0)), 3)
    rgb = rgb * light
    for i, fraction in zip(rng.permutation(54), spec.get("glare", ())):
        rgb[i] = (1 - fraction) * rgb[i] + fraction * 255.0 * light
    if spec.get("swap"):
        while True:
            i, j = rng.choice(54, 2, replace=False)
            if faces[i] != faces[j] and i % 9 != 4 and j % 9 != 4:
                break
        rgb[[i, j]] = rgb[[j, i]]
        swapped = list(truth)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        try:  # the right answer is the swapped cube if that is legal, else the cube before the swap
            cube3.parse_facelets("".join(swapped))
            truth = "".join(swapped)
        except cube3.Cube3Error:
            pass
    return np.clip(np.round(rgb + rng.normal(0, spec.get("noise", 0.0), rgb.shape)), 0, 255), truth


def synthetic(count: int, seed: int, names=None) -> list[dict]:
    rows = []
    for name in names or CONDITIONS:
        spec = CONDITIONS[name]
        rng = np.random.default_rng([seed, sum(map(ord, name))])
        counts, reasons, times = {"exact": 0, "refused": 0, "wrong": 0}, {}, []
        started = time.perf_counter()
        for _ in range(count):
            rgb, truth = synthetic_readings(rng, spec)
            outcome, seconds, _ = classify(rgb, truth, reasons)
            counts[outcome] += 1
            times.append(seconds * 1000)
        rows.append({"name": name, **counts, "reasons": reasons, "median_ms": float(np.median(times)),
                     "p90_ms": float(np.percentile(times, 90)), "max_ms": float(np.max(times)),
                     "wall_s": time.perf_counter() - started, "load": os.getloadavg()[0]})
    return rows


# Rendered settings: render.Lighting fields (a value, or (low, high) drawn per scan) and a lamp (preset, strength;
# None: the preset's).  The light is otherwise a simulated run's (render.Lighting(): noise 2, vignetting, shading).
RENDERED = {
    "clean": {},
    "noise 10, jitter 8": {"light": {"noise_sigma": 10.0, "sticker_jitter": 8.0}},
    "under-exposed 0.4-0.7": {"light": {"brightness": (0.4, 0.7)}},
    "over-exposed 1.6-2.4": {"light": {"brightness": (1.6, 2.4)}},
    "glare 0.4": {"lamp": ("glare", 0.4)},
    "glare 0.55": {"lamp": ("glare", 0.55)},
    "glare 0.7": {"lamp": ("glare", 0.7)},
    "side 0.4": {"lamp": ("side", None)},
    "dim (0.25, brightness 0.55)": {"lamp": ("dim", None)},
}
WASHED = 0.2  # a sticker's look counts as washed when its centre mixes at least this much of the lamp's white


def rendered_cubes(count: int, seed: int, first: int = 0) -> list[tuple[int, str, int]]:
    """(number, start facelets, render seed) of cubes first..first+count-1 of the seeded list."""
    rng = np.random.default_rng([seed, 3])
    out = []
    for number in range(first + count):
        start = cube3.to_facelets(cube3.random_state(rng))
        render_seed = int(rng.integers(1 << 31))
        if number >= first:
            out.append((number, start, render_seed))
    return out


def rendered_lighting(spec: dict, pose, rng):
    """(render.Lighting, lamp or None) of one scan under a RENDERED setting."""
    from robot.sim import lamp as lamp_module
    from robot.sim import render, render3

    fields = {k: (float(rng.uniform(*v)) if isinstance(v, tuple) else v) for k, v in spec.get("light", {}).items()}
    light = render.Lighting(**fields)
    if "lamp" not in spec:
        return light, None
    found, brightness = render3.preset_lamp3(pose, spec["lamp"][0], strength=spec["lamp"][1])
    return lamp_module.lit(light, found, brightness), found


def scan_readings3(frames: dict, sequence, regions) -> np.ndarray:
    """The run's readings of a scan's frames (robot/run/puzzle3.py scan_once): each region sampled, a
    sticker's looks merged by their per-channel median, in final-frame facelet order."""
    from robot.vision.regions import sample_sticker

    samples: dict = {}
    for view_index, region, final in sequence.mapping():
        view = sequence.views[view_index]
        samples.setdefault(final, []).append(sample_sticker(frames[view.name], regions.quads(view.name)[region]).rgb)
    return np.array([np.median(samples[i], axis=0) for i in range(54)])


def rendered(count: int, seed: int, names=None, first: int = 0, config=None, progress: int = 0) -> list[dict]:
    """One row per RENDERED setting over the same seeded cubes (see the module's part 3); progress: the
    counts so far every that many cubes (stderr)."""
    from robot.scan_sequence3 import ScanSequence3
    from robot.sim import render3
    from robot.vision.camera_geometry3 import pose3, scan_regions3

    config = config or config_module.defaults()
    sequence = ScanSequence3.from_config(config)
    pose = pose3(config)
    regions = scan_regions3(pose, sequence)  # the run's: the nominal pose
    geometry = render3.arm_geometry3(config) if config.simulated_robot.draw_arms else None
    cubes = rendered_cubes(count, seed, first)
    rows = []
    for name in names or RENDERED:
        spec = RENDERED[name]
        rng = np.random.default_rng([seed, sum(map(ord, name)), first])
        row = {"name": name, "exact": 0, "refused": 0, "wrong": 0, "reasons": {}, "wrong_cubes": [], "washed": 0.0,
               "first": first, "count": count}
        started, load = time.perf_counter(), [os.getloadavg()[0]]
        for number, start, render_seed in cubes:
            lighting, found = rendered_lighting(spec, pose, rng)
            frames, _ = render3.render_scan3(start, sequence, pose, lighting, render_seed, geometry=geometry)
            readings = scan_readings3(frames, sequence, regions)
            outcome, _, _ = classify_config(readings, sequence.final_state(start), row["reasons"], config)
            row[outcome] += 1
            if outcome == "wrong":
                row["wrong_cubes"].append(number)
            if found is not None:
                row["washed"] += sum(int(np.nansum(m >= WASHED)) for m in render3.view_mix3(pose, found, sequence))
            load.append(os.getloadavg()[0])
            if progress and (number + 1 - first) % progress == 0:  # a long run's counts so far, on stderr
                print(f"  {name}: cubes {first}..{number}: exact {row['exact']}, refused {row['refused']}, wrong "
                      f"{row['wrong']} {row['wrong_cubes']} ({time.perf_counter() - started:.0f} s)",
                      file=sys.stderr, flush=True)
        row.update(wall_s=time.perf_counter() - started, load=(min(load), max(load)), washed=row["washed"] / max(count, 1))
        rows.append(row)
    return rows


def classify_config(rgb, truth: str, reasons: dict, config) -> tuple[str, float, object]:
    """classify() with the run's call (decode3(readings, None, config))."""
    start = time.thread_time()
    try:
        result = decode3(rgb, None, config)
    except VisionError as error:
        reasons[error.reason] = reasons.get(error.reason, 0) + 1
        return "refused", time.thread_time() - start, error
    return ("exact" if same_partition(result.facelets, truth) else "wrong"), time.thread_time() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--synthetic", type=int, default=1000, help="random cubes per condition (0: skip)")
    parser.add_argument("--sweep", type=int, default=10, help="perturbations of each real scan per light row (0: skip)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rows", help="condition names separated by ; (default: all)")
    parser.add_argument("--rendered", type=int, default=0, help="rendered scans per setting (0: skip)")
    parser.add_argument("--settings", help="rendered setting names separated by ; (default: all of RENDERED)")
    parser.add_argument("--first", type=int, default=0, help="the first rendered cube's number (split a long run)")
    parser.add_argument("--progress", type=int, default=0, help="rendered: the counts so far every N cubes (stderr)")
    parser.add_argument("--no-real", action="store_true", help="skip the real readings (part 1)")
    args = parser.parse_args()
    print(f"SIMULATED readings below part 1 (synthetic scans); load average at start "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")

    if args.no_real:
        pass
    elif (RESOLVER / "expected.json").exists():
        rows = real_rows()
        known = [r for r in rows if r["truth"] is not None]
        print(f"\nReal 3x3x3 readings ({RESOLVER}): {len(known)} with a known answer")
        print(f"| {'case':40s} | outcome | detail |")
        print("|---|---|---|")
        for row in rows:
            print(f"| {row['id'].split('/')[-1]:40s} | {row['outcome']} | {row['detail']} |")
        counts = {k: sum(r["outcome"] == k for r in known) for k in ("exact", "refused", "wrong")}
        print(f"Known answers: {counts['exact']} exact, {counts['refused']} refused, {counts['wrong']} wrong "
              f"(target: 0 wrong); decode CPU time median {np.median([r['ms'] for r in known]):.1f} ms")
    else:
        print(f"\nReal readings not found at {RESOLVER}: part 1 skipped")

    if args.sweep and not args.no_real and (RESOLVER / "expected.json").exists():
        print(f"\nLight sweep over the real 3x3x3 readings ({args.sweep} perturbations of each known-answer scan per "
              "row; clean: of the scans decoded exactly as read)")
        print("| row | exact | refused | wrong | clean exact | refusals by rule |")
        print("|---|---|---|---|---|---|")
        for row in light_sweep(args.sweep, args.seed):
            rules = ", ".join(f"{k} {v}" for k, v in sorted(row["reasons"].items(), key=lambda kv: -kv[1]))
            total = row["exact"] + row["refused"] + row["wrong"]
            print(f"| {row['name']} | {row['exact']} ({row['exact'] / total:.1%}) | {row['refused']} | {row['wrong']}"
                  f"{' ' + ', '.join(row['wrong_cases']) if row['wrong_cases'] else ''} | "
                  f"{row['clean'].get('exact', 0)} of {row['clean_total']} | {rules} |")

    if args.synthetic:
        names = [n.strip() for n in args.rows.split(";")] if args.rows else None
        print(f"\nSynthetic 3x3x3 scans (SIMULATED readings, {args.synthetic} cubes per condition, seed {args.seed}; "
              "CPU ms per decode)")
        print("| condition | exact | refused | wrong | refusals by rule | median ms | p90 ms | max ms | wall s | load |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for row in synthetic(args.synthetic, args.seed, names):
            rules = ", ".join(f"{k} {v}" for k, v in sorted(row["reasons"].items(), key=lambda kv: -kv[1]))
            print(f"| {row['name']} | {row['exact']} | {row['refused']} | {row['wrong']} | {rules} | "
                  f"{row['median_ms']:.1f} | {row['p90_ms']:.1f} | {row['max_ms']:.1f} | {row['wall_s']:.0f} | "
                  f"{row['load']:.1f} |")

    if args.rendered:
        names = [n.strip() for n in args.settings.split(";")] if args.settings else None
        print(f"\nRendered 3x3x3 scans (SIMULATED pictures: config scan3's views through render3 with the arms drawn, "
              f"the run's regions, sampling and decode3; cubes {args.first}..{args.first + args.rendered - 1} of seed "
              f"{args.seed})")
        print("| setting | exact | refused | wrong | refusals by rule | washed looks per scan | wall s | load |")
        print("|---|---|---|---|---|---|---|---|")
        for row in (found for name in (names or RENDERED)  # each setting's row as soon as it is done
                    for found in rendered(args.rendered, args.seed, [name], args.first, progress=args.progress)):
            rules = ", ".join(f"{k} {v}" for k, v in sorted(row["reasons"].items(), key=lambda kv: -kv[1]))
            wrong = f" (cubes {', '.join(map(str, row['wrong_cubes']))})" if row["wrong_cubes"] else ""
            print(f"| {row['name']} | {row['exact']} | {row['refused']} | {row['wrong']}{wrong} | {rules} | "
                  f"{row['washed']:.1f} | {row['wall_s']:.0f} | {row['load'][0]:.1f}-{row['load'][1]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
