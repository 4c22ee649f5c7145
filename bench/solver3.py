"""3x3x3 two-phase solver benchmark: prints a table.

    python bench/solver3.py [--cubes 1000] [--limited-cubes N] [--seed 3] [--tables DIR] [--compare]

Builds the tables from scratch in a temporary directory, in a child process (build time,
peak memory of the build), unless --tables DIR names built ones; loads them (load time:
files, checksums and conversion to the search's lists; memory: resident growth), then
solves seeded random cubes: first solution (no time limit), then with a 1 s time limit
(--limited-cubes of them; default all).  Wall and CPU times are both shown: the machine
is shared, and CPU time is what the solver itself used.  --compare also times the
`kociemba` package (C, GPL) installed into a temporary venv (never into the project).
Targets: every solution <= 20 moves HTM, median <= 50 ms, p99 <= 500 ms; with
a 1 s limit mean length <= 19.0; build <= 300 s, load <= 1 s, tables <= 400 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot.solver3 import api, cube3, tables  # noqa: E402
from robot.solver3.search import Search  # noqa: E402


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def build_child(directory: str) -> None:
    started = time.perf_counter()
    tables.load(Path(directory), build=True, log=lambda m: None, show_progress=False)
    print(json.dumps({"seconds": time.perf_counter() - started,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def percentile(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(round(p / 100 * (len(sorted_values) - 1))))]


def run(search, cubes, time_limit=None):
    wall, cpu, lengths = [], [], []
    for facelets in cubes:
        c0 = time.process_time()
        solution = api.solve(facelets, time_limit=time_limit, search=search)
        cpu.append((time.process_time() - c0) * 1000)
        state, _ = cube3.parse_facelets(facelets)
        assert cube3.to_facelets(cube3.apply(state, cube3.parse_moves(solution.moves))) == cube3.SOLVED_FACELETS
        wall.append(solution.solve_ms)
        lengths.append(solution.length)
    return sorted(wall), sorted(cpu), lengths


def row(name, n, wall, cpu, lengths):
    cpu_text = f"{statistics.median(cpu):7.1f} | {percentile(cpu, 99):7.1f}" if cpu else f"{'-':>7} | {'-':>7}"
    return (f"| {name:32} | {n:5} | {max(lengths):3} | {statistics.mean(lengths):5.2f} | "
            f"{statistics.median(wall):7.1f} | {percentile(wall, 90):7.1f} | {percentile(wall, 99):7.1f} | "
            f"{wall[-1]:7.1f} | {cpu_text} |")


def compare_kociemba(cubes):
    """Time the published C two-phase package in a throwaway venv (GPL: bench only)."""
    with tempfile.TemporaryDirectory() as venv:
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        pip = subprocess.run([f"{venv}/bin/pip", "install", "-q", "kociemba"], capture_output=True, text=True)
        if pip.returncode:
            return f"kociemba: not installed ({pip.stderr.strip().splitlines()[-1:]})"
        script = ("import json,sys,time,kociemba\nkociemba.solve('DRLUUBFBRBLURRLRUBLRDDFDLFUFUFFDBRDUBRUFLLFDDBFLUBLRBD')\n"
                  "out=[]\nfor f in json.load(sys.stdin):\n t=time.perf_counter(); s=kociemba.solve(f)\n"
                  " out.append(((time.perf_counter()-t)*1000, len(s.split())))\nprint(json.dumps(out))")
        done = subprocess.run([f"{venv}/bin/python", "-c", script], input=json.dumps(cubes),
                              capture_output=True, text=True)
        if done.returncode:
            return f"kociemba: failed ({done.stderr.strip()[-200:]})"
        results = json.loads(done.stdout)
        wall = sorted(r[0] for r in results)
        lengths = [r[1] for r in results]
        return row("kociemba package (C), default", len(cubes), wall, None, lengths)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cubes", type=int, default=1000)
    parser.add_argument("--limited-cubes", type=int, default=None, help="cubes for the 1 s run (default: --cubes)")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--tables", type=Path, help="use these built tables instead of building")
    parser.add_argument("--compare", action="store_true", help="also time the kociemba package (temporary venv)")
    parser.add_argument("--build-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_child:
        return build_child(args.build_child)
    limited = args.cubes if args.limited_cubes is None else args.limited_cubes
    rng = np.random.default_rng(args.seed)
    cubes = [cube3.to_facelets(cube3.random_state(rng)) for _ in range(max(args.cubes, limited))]
    with tempfile.TemporaryDirectory() as scratch:
        if args.tables:
            directory, build = args.tables, None
        else:
            directory = Path(scratch) / "3x3x3"
            child = subprocess.run([sys.executable, __file__, "--build-child", str(directory)],
                                   capture_output=True, text=True, check=True)
            build = json.loads(child.stdout.splitlines()[-1])
        before = rss_mb()
        started = time.perf_counter()
        search = Search(tables.load(directory))
        load_s = time.perf_counter() - started
        memory_mb = rss_mb() - before
        default = run(search, cubes[:args.cubes])
        one_second = run(search, cubes[:limited], time_limit=1.0)
    print(f"3x3x3 two-phase solver, {os.cpu_count()} cores, load average at the end "
          f"{os.getloadavg()[0]:.1f} (shared machine), seed {args.seed}")
    print()
    print(f"| {'run':32} | cubes | max | mean  | med ms  | p90 ms  | p99 ms  | max ms  | med cpu | p99 cpu |")
    print(f"|{'-' * 34}|-------|-----|-------|---------|---------|---------|---------|---------|---------|")
    print(row("first solution (htm)", args.cubes, *default))
    print(row("--time-limit 1 (htm)", limited, *one_second))
    if args.compare:
        print(compare_kociemba(cubes[:args.cubes]))
    print("(ms: wall time until the solution returned was found; with --time-limit 1 the call itself "
          "lasts 1 s; cpu: CPU ms of the whole call)")
    print()
    if build:
        print(f"build {build['seconds']:.1f} s (peak {build['peak_mb']:.0f} MB, fresh directory); ", end="")
    else:
        print(f"build: not measured (--tables {args.tables}); ", end="")
    print(f"load {load_s:.2f} s (files + checksums + conversion); in memory {memory_mb:.0f} MB resident")
    print("targets: max <= 20, median <= 50 ms, p99 <= 500 ms; 1 s limit mean <= 19.0; "
          "build <= 300 s, load <= 1 s, <= 400 MB")


if __name__ == "__main__":
    main()
