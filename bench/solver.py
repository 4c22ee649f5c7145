"""Solver benchmark: prints a table.

    python bench/solver.py [--states 1000] [--seed 1]

Builds the tables from scratch in a temporary directory (build time), loads
them again (load time, resident memory), then solves seeded random states.
Targets (2-core machine): median <= 1 ms, p99 <= 10 ms, load <= 0.3 s,
tables in memory <= 64 MB, build <= 60 s.
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
from robot import cube  # noqa: E402
from robot.solver import Solver  # noqa: E402


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--states", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    config = config_module.load()
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        started = time.perf_counter()
        Solver(config, log=lambda m: None, show_progress=False, tables_directory=Path(directory))
        build_s = time.perf_counter() - started
        before = rss_mb()
        solver = Solver(config, log=lambda m: None, tables_directory=Path(directory))
        after = rss_mb()
        rng = np.random.default_rng(args.seed)
        states = [cube.random_state(rng).to_facelets() for _ in range(args.states)]
        times, costs, turns, regrips = [], [], [], []
        for facelets in states:
            plan = solver.solve(facelets)
            times.append(plan.solve_ms)
            costs.append(plan.cost_ms)
            turns.append(plan.turn_count)
            regrips.append(plan.regrip_count)
    times = np.array(times)
    rows = [
        ("states solved", f"{args.states}", ""),
        ("solve time median", f"{np.median(times):.3f} ms", "<= 1 ms"),
        ("solve time p99", f"{np.percentile(times, 99):.3f} ms", "<= 10 ms"),
        ("solve time max", f"{times.max():.3f} ms", ""),
        ("mean plan cost", f"{np.mean(costs):.1f} ms", ""),
        ("max plan cost", f"{np.max(costs)} ms", ""),
        ("mean turns / regrips", f"{np.mean(turns):.2f} / {np.mean(regrips):.2f}", ""),
        ("table build (all robot tables)", f"{build_s:.1f} s", "<= 60 s"),
        ("table load (incl. SHA-256 check)", f"{solver.load_seconds:.3f} s", "<= 0.3 s"),
        ("tables in memory", f"{solver.tables.nbytes / 1e6:.1f} MB", "<= 64 MB"),
        ("resident memory added by load", f"{after - before:.1f} MB", ""),
        ("optimal plans", "100% (tests/test_solver_optimality.py)", ""),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':<40} target")
    print("-" * (width + 50))
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:<40} {target}")


if __name__ == "__main__":
    main()
