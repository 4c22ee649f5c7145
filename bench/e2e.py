"""End-to-end benchmark: per-stage timings over simulated solves (prints a table).

    python bench/e2e.py [--runs 50] [--firmware emulator|mock]

Each run: a random scramble on the virtual cube, start button, scan (rendered
camera frames), decode, solve, stream the plan to the firmware (the real .elf
in simavr by default, free-running), rescan to confirm.  Machine time is
predicted by the solver and measured from the firmware's `done` durations.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--firmware", choices=("emulator", "mock"), default="emulator")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
        text = text.replace("images_dir: runs/scans", f"images_dir: {tmp}/scans")
        text = text.replace("save_images: true", "save_images: false")
        text = text.replace("data_dir: data", f"data_dir: {tmp}/data")
        path = Path(tmp) / "config.yaml"
        path.write_text(text)
        config = config_module.load(path)
        rows = []
        for seed in range(options.runs):
            args = build_parser().parse_args(["run", "--sim", "--firmware", options.firmware, "--seed", str(seed)])
            started = time.perf_counter()
            report = run_simulated(config, RunOptions.from_args(args), lambda message: None).to_json()
            report["wall_s"] = time.perf_counter() - started
            rows.append(report)
    solved = [r for r in rows if r["solved"]]
    print(f"{len(solved)}/{len(rows)} runs solved (firmware: {rows[0]['firmware']})")
    print(f"{'stage':<34}{'median':>10}{'p90':>10}{'max':>10}")
    for key, label in (("recognition_ms", "recognition (4 views, ms)"), ("scan_read_ms", "  frames -> state (ms)"),
                       ("solve_ms", "solve (ms)"), ("predicted_machine_ms", "machine time predicted (ms)"),
                       ("measured_machine_ms", "machine time emulated (ms)"), ("execute_ms", "execute wall time (ms)"),
                       ("wall_s", "whole run wall time (s)")):
        values = np.array([r[key] for r in solved if key in r], dtype=float)
        if len(values):
            print(f"{label:<34}{np.median(values):>10.1f}{np.percentile(values, 90):>10.1f}{values.max():>10.1f}")
    diffs = np.array([r["measured_machine_ms"] - r["predicted_machine_ms"] for r in solved])
    if len(diffs):
        print(f"{'emulated - predicted (ms)':<34}{np.median(diffs):>10.1f}{np.percentile(diffs, 90):>10.1f}{diffs.max():>10.1f}")


if __name__ == "__main__":
    main()
