"""End-to-end benchmark: button-to-solved and every stage of the run's waterfall (prints a table).

    python bench/e2e.py --realtime [--runs 20] [--firmware emulator|mock] [--scan all|full|adaptive|two-cameras]
                        [--verify] [--save-images] [-- RUN FLAGS...]

--scan (default all): `full` is the default 4-view scan with the adaptive scan off
(scan.adaptive_from 0), `adaptive` the shipped config (scan.adaptive_from 2), `two-cameras`
the adaptive scan with a second camera (robot/scan_sequence.py TWO_CAMERA_VIEWS: U+F and
D+B at once, no scan motion for them); `all` runs the three and ends with one summary table.

Each run: a seeded random scramble on the virtual cube, start button, scan (the
simulated webcam: camera.fps, exposure, driver queue; frames picked by time as on a
real camera), decode, tables, solve, stream the plan to the firmware (the real .elf
in simavr by default).  With --realtime the arms take their real time and the
times predict the real robot's; without it the robot runs 50x faster
and only the host's own stages (decode, solve) mean anything.

The table: mean and p90 of button_to_solved_ms and of each stage (from the run
report's waterfall, robot/run/waterfall.py), and how far each stage's mean is from
its floor: a view's motion from its arm time, a view's frame wait from settle +
exposure + delivery (the frame period adds up to one more period: half on average),
execute from the firmware's arm time; host stages (camera open, decode, save, tables,
solve) have floor 0 (they could run before the start press or overlap the arms).
button -> solved's floor is the sum: the scan's motions, each moment's frame wait
(two cameras' views of one moment wait together) and the plan's arm time.

Extension point: everything after `--` goes to `cube-robot run` unchanged, so a run
option added later is benchmarked without changing this file; the stages come from the report.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import config as config_module  # noqa: E402
from robot.cli import build_parser  # noqa: E402
from robot.run.options import RunOptions  # noqa: E402
from robot.run.simulated import run_simulated  # noqa: E402



def inner_stage(name: str) -> bool:
    """Drawn within another stage (not added when button-to-solved is split up): a frame's exposure
    (inside its wait) and the first action (inside execute)."""
    return name.endswith(": frame") or name == "execute: first action"


def stage_kind(name: str) -> str:
    """How a stage's floor is known: 'motion', 'wait', 'execute' or 'host' (floor 0)."""
    if name.endswith(": motion"):
        return "motion"
    if name.endswith(": frame wait"):
        return "wait"
    if name == "execute":
        return "execute"
    return "host"


SCANS = ("full", "adaptive", "two-cameras")


def bench_config(tmp: str, save_images: bool = False, scan: str = "adaptive"):
    text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    text = text.replace("images_dir: runs/scans", f"images_dir: {tmp}/scans")
    if not save_images:  # pictures are a debugging aid (config scan.save_images; on by default)
        text = text.replace("save_images: true", "save_images: false")
    text = text.replace("data_dir: data", f"data_dir: {tmp}/data")
    path = Path(tmp) / "config.yaml"
    path.write_text(text)
    config = config_module.load(path)
    if scan == "full":
        config = config_module.with_settings(config, {"scan.adaptive_from": 0})  # every view, always
    elif scan == "two-cameras":
        from robot.scan_sequence import TWO_CAMERA_VIEWS

        config = config_module.with_settings(config, {"scan.views": TWO_CAMERA_VIEWS})
    return config


def run_all(options, run_flags: list[str], scan: str) -> tuple[list[dict], dict]:
    with tempfile.TemporaryDirectory() as tmp:
        config = bench_config(tmp, options.save_images, scan)
        rows = []
        for seed in range(options.runs):
            argv = ["run", "--sim", "--firmware", options.firmware, "--seed", str(seed)]
            argv += (["--realtime"] if options.realtime else []) + ([] if options.verify else ["--no-verify"])
            args = build_parser().parse_args(argv + run_flags)
            started = time.perf_counter()
            report = run_simulated(config, RunOptions.from_args(args), lambda message: None).to_json()
            report["wall_s"] = time.perf_counter() - started
            # checked only on the emulator's pin log (robot/sim/robot_sim.py says so in the backend)
            report["jaws_checked"] = config.simulated_robot.gripper.true_jaws and \
                "jaws are not checked" not in str(report.get("firmware"))
            rows.append(report)
            print(f"  {scan} run {seed + 1}/{options.runs}: {report.get('button_to_solved_ms', 'failed')} ms "
                  f"({report['outcome']})", file=sys.stderr, flush=True)
            if not report["solved"]:  # what to look at: the scan (read as what?), the errors, where the cube ended
                print(f"    seed {seed}: scanned {report.get('facelets')} in {report.get('scan_views')} view(s); "
                      f"scrambled {report.get('true_state')}; virtual cube after {report.get('virtual_cube')}; "
                      f"errors {report.get('errors')}", file=sys.stderr, flush=True)
        return rows, config.camera


def stage_table(runs: list[dict], camera: dict) -> list[tuple]:
    """(label, values, floors) per row, in the order the stages happen."""
    order, durations, floors = [], {}, {}
    period_ms = 1000.0 / camera.fps
    for run in runs:
        for stage in run.get("waterfall", []):
            name = stage["stage"]
            if name.startswith("verify") or name.endswith(": frame"):
                continue  # after the last `done` (not in button-to-solved); a frame's exposure (inside its wait)
            if name not in durations:
                order.append(name)
                durations[name], floors[name] = [], []
            durations[name].append(stage["end_ms"] - stage["start_ms"])
            floor = stage.get("floor_ms", 0.0) if stage_kind(name) != "host" else 0.0
            floors[name].append(floor + (period_ms / 2 if stage_kind(name) == "wait" else 0.0))
    rows = [("button -> solved", [r["button_to_solved_ms"] for r in runs],
             [scan_floor(r, period_ms) + r["measured_machine_ms"] for r in runs])]
    for name in order:
        rows.append((name, durations[name], floors[name]))
    # What no stage accounts for: the host's bookkeeping between stages.
    gaps = []
    for run in runs:
        counted = covered_ms([(s["start_ms"], s["end_ms"]) for s in run["waterfall"]
                              if not s["stage"].startswith("verify") and not inner_stage(s["stage"])])
        gaps.append(run["button_to_solved_ms"] - counted)
    rows.append(("between stages", gaps, [0.0] * len(gaps)))
    return rows


def covered_ms(spans: list[tuple]) -> float:
    """The time covered by the spans (two cameras' frame waits of one moment overlap: counted once)."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def scan_floor(run: dict, period_ms: float) -> float:
    """The scan's least time in one run: its motions' arm time plus, per moment (views taken at
    once by two cameras wait together: overlapping waits count once), settle + exposure + delivery
    and half a frame period (the wait for the next frame's start, on average)."""
    stages = [s for s in run["waterfall"] if not s["stage"].startswith("verify")]
    motions = sum(s.get("floor_ms", 0.0) for s in stages if s["stage"].endswith(": motion"))
    waits, last_end = 0.0, None
    for s in sorted((s for s in stages if s["stage"].endswith(": frame wait")), key=lambda s: s["start_ms"]):
        if last_end is None or s["start_ms"] >= last_end:  # not overlapping the moment before
            waits += s.get("floor_ms", 0.0) + period_ms / 2
        last_end = s["end_ms"] if last_end is None else max(last_end, s["end_ms"])
    return motions + waits


def main() -> None:
    argv = sys.argv[1:]
    if "--puzzle" in argv and argv[argv.index("--puzzle") + 1:][:1] == ["3x3x3"]:  # the 3x3x3's own bench
        import e2e3

        e2e3.main(argv)
        return
    run_flags = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20, help="seeded scrambles (seeds 0..runs-1)")
    parser.add_argument("--firmware", choices=("emulator", "mock"), default="emulator")
    parser.add_argument("--realtime", action="store_true", help="arms and camera in real time (a prediction)")
    parser.add_argument("--verify", action="store_true", help="rescan after the solve (not in button-to-solved)")
    parser.add_argument("--save-images", action="store_true",
                        help="save each scan's annotated pictures as the shipped config does (off: not timed)")
    parser.add_argument("--scan", choices=("all",) + SCANS, default="all",
                        help="full: 4 views always; adaptive: the shipped config; two-cameras; all: the three")
    options = parser.parse_args(argv)
    summary = []
    for scan in SCANS if options.scan == "all" else (options.scan,):
        runs, camera = run_all(options, run_flags, scan)
        summary.append((scan, runs, print_table(options, run_flags, scan, runs, camera)))
    if len(summary) > 1:
        print_summary(summary, 1000.0 / camera.fps)


def print_table(options, run_flags, scan: str, runs: list[dict], camera: dict) -> list[dict]:
    """The stage table of one scan configuration; returns the solved runs."""
    solved = [r for r in runs if r["solved"] and r.get("measured_machine_ms") is not None]
    mode = "REAL TIME" if options.realtime else "SPED UP 50x (times are not the robot's; use --realtime)"
    print(f"\n== scan: {scan} ==  SIMULATED, {mode}: {len(solved)}/{len(runs)} runs solved; firmware: "
          f"{runs[0]['firmware']}; camera {camera.fps:g} fps, exposure {camera.exposure_ms:g} ms, settle "
          f"{camera.settle_ms:g} ms, queue {camera.buffer_frames}, average {camera.average_frames}; scan pictures "
          f"{'saved' if options.save_images else 'not saved'}; run flags: {' '.join(run_flags) or '-'}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not solved:
        return solved
    print(f"{'stage (ms)':<30}{'n':>4}{'mean':>9}{'p90':>9}{'floor':>9}{'above floor':>13}")
    for label, values, floors in stage_table(solved, camera):
        values, floors = np.array(values, float), np.array(floors, float)
        print(f"{label:<30}{len(values):>4}{values.mean():>9.1f}{np.percentile(values, 90):>9.1f}"
              f"{floors.mean():>9.1f}{values.mean() - floors.mean():>13.1f}")
    machine = np.array([r["measured_machine_ms"] for r in solved], float)
    print(f"{'plan arm time (firmware)':<30}{len(machine):>4}{machine.mean():>9.1f}{np.percentile(machine, 90):>9.1f}")
    timed = [r for r in solved if r.get("predicted_machine_ms")]
    if timed:  # the solver's model (robot/regrip.py, robot/motion.py) against the firmware's `done` times
        predicted = np.array([r["predicted_machine_ms"] for r in timed], float)
        off = np.array([r["measured_machine_ms"] / r["predicted_machine_ms"] - 1 for r in timed]) * 100
        print(f"{'plan arm time (model)':<30}{len(predicted):>4}{predicted.mean():>9.1f}"
              f"{np.percentile(predicted, 90):>9.1f}")
        print(f"{'firmware vs model (%)':<30}{len(off):>4}{off.mean():>9.2f}{np.percentile(np.abs(off), 90):>9.2f}"
              f"   (mean; p90 and worst of |off|: {np.abs(off).max():.2f})")
    jammed = [r for r in runs if any("jam" in str(e) for e in r.get("errors") or ())]
    checked = sum(1 for r in runs if r.get("jaws_checked"))
    print(f"{'runs that jammed':<30}{len(runs):>4}{len(jammed):>9}   (true jaws checked moment by moment in "
          f"{checked} of {len(runs)} runs: simulated_robot.gripper.true_jaws on the emulator)")
    views = np.array([r.get("scan_views") or 0 for r in solved], float)
    print(f"{'views taken':<30}{len(views):>4}{views.mean():>9.2f}{views.max():>9.0f}")
    return solved


def print_summary(summary, period_ms: float) -> None:
    """One row per scan configuration: button -> solved and its floor (scan_floor + plan arm time)."""
    print("\n== button -> solved (ms), SIMULATED; floor = scan motions' arm time + each moment's frame wait "
          "(settle + exposure + delivery + half a period) + plan arm time ==")
    print(f"{'scan':<14}{'solved':>8}{'views':>7}{'mean':>9}{'p90':>9}{'floor':>9}{'above floor':>13}")
    for scan, runs, solved in summary:
        if not solved:
            print(f"{scan:<14}{f'0/{len(runs)}':>8}")
            continue
        total = np.array([r["button_to_solved_ms"] for r in solved], float)
        floor = np.array([scan_floor(r, period_ms) + r["measured_machine_ms"] for r in solved], float)
        views = np.mean([r.get("scan_views") or 0 for r in solved])
        print(f"{scan:<14}{f'{len(solved)}/{len(runs)}':>8}{views:>7.2f}{total.mean():>9.1f}"
              f"{np.percentile(total, 90):>9.1f}{floor.mean():>9.1f}{total.mean() - floor.mean():>13.1f}")

if __name__ == "__main__":
    main()
