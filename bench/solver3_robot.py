"""Machine time of four-arm 3x3x3 robot plans: plain two-phase + exact converter vs robot-aware search.

    .venv/bin/python bench/solver3_robot.py                       # 1000 seeded random cubes
    .venv/bin/python bench/solver3_robot.py --cubes 200 --budget 2

For each seeded random cube:
  plain   a <= 20-move HTM two-phase solution, converted exactly (robot/solver3/convert.py);
  robot   the robot-aware search (robot/solver3/robot_search.py) within --budget seconds,
          seeded with the plain solution: with this project's search, the two-phase search
          itself choosing by robot time (robot_cost_stage), then symmetric variants if time is left.
Every robot plan is replayed by the independent checker (tests/robot3_checker.py: sticker
model, legality, solved end, claimed cost) and compared with converting its own face
sequence (the floor).  Machine times are the model's (robot/plan3.py: the firmware's op times):
SIMULATED, no robot was moved.

Two-phase source: this project's search (robot.solver3; tables: cube-robot tables build
--puzzle 3x3x3); with --source kociemba (or auto without the tables) the GPL `kociemba`
package instead, installed in the bench venv only (pip install kociemba), for comparison:
one solution per variant, HTM.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from robot import config as config_module  # noqa: E402
from robot.plan3 import Robot3Profile  # noqa: E402
from robot.progress import ProgressBar  # noqa: E402
from robot.solver3 import cube3, robot_search  # noqa: E402
from robot.solver3.convert import model  # noqa: E402
from robot.solver3.robot_commands import DEFAULT_TIME_LIMIT_S  # noqa: E402
from robot3_checker import check_plan  # noqa: E402


def project_source():
    from robot.solver3 import api

    solutions = robot_search.default_solutions()  # raises tables.NotBuilt: build them first
    return ("robot.solver3 (this project's two-phase search)",
            (lambda f: api.solve(f, metric="htm", max_length=20).moves), solutions)


def kociemba_source():
    import kociemba  # GPL: bench only, never imported by robot/

    def solutions(facelets, metric=None, max_length=None, time_limit=None):
        yield kociemba.solve(facelets)

    return "kociemba (pip, stand-in)", (lambda f: kociemba.solve(f, max_depth=20)), solutions


def pick_source(name):
    from robot.solver3.tables import NotBuilt

    if name in ("auto", "search"):
        try:
            return project_source()
        except NotBuilt as exc:
            if name == "search":
                raise
            print(f"bench: {exc}; using the kociemba stand-in", file=sys.stderr)
    return kociemba_source()


def as_text(moves) -> str:
    return moves if isinstance(moves, str) else cube3.format_moves(moves)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--budget", type=float, default=DEFAULT_TIME_LIMIT_S,
                        help="robot-aware search time per cube (s; default: solve --metric robot's)")
    parser.add_argument("--source", choices=("auto", "search", "kociemba"), default="auto")
    args = parser.parse_args(argv)

    profile = Robot3Profile.from_config(config_module.load())
    rate = model(profile)
    source, solve20, solutions = pick_source(args.source)
    rng = np.random.default_rng(args.seed)
    rows = []
    progress = ProgressBar(args.cubes, "cubes")
    for done in range(args.cubes):
        state = cube3.random_state(rng)
        facelets = cube3.to_facelets(state)
        started = time.perf_counter()
        plain = cube3.parse_moves(as_text(solve20(facelets)))
        plain_s = time.perf_counter() - started
        assert len(plain) <= 20
        plain_cost = rate.cost(plain)
        report = robot_search.SearchReport()
        plan = robot_search.plan(facelets, profile, solutions, args.budget, seeds=[plain], report=report)
        check_plan(facelets, plan.ops, plan.cost_ms, profile)  # raises on any illegal op / wrong claim
        own = rate.cost(cube3.parse_moves(plan.moves))
        rows.append(dict(plain=plain_cost, robot=plan.cost_ms, own=own, plain_len=len(plain), length=plan.length,
                         plain_s=plain_s, robot_s=plan.solve_ms / 1000, candidates=report.candidates,
                         variants=report.variants_tried, kept=report.robot_cost_found))
        progress.update(done + 1)
    progress.finish()

    def mean(key):
        return statistics.fmean(r[key] for r in rows)

    n = len(rows)
    plain_ms, robot_ms = mean("plain"), mean("robot")
    times = sorted(r["robot_s"] for r in rows)
    print(f"\n3x3x3 four-arm robot plans: {n} seeded random cubes (seed {args.seed})"
          f"{'' if n >= 1000 else f', fewer than 1000: --cubes {n}'}; two-phase source: {source}")
    print(f"robot3 durations: quarter {profile.quarter_turn_ms}, half {profile.half_turn_ms}, open {profile.open_ms}, "
          f"close {profile.close_ms} ms. Machine times SIMULATED (model), no robot moved.\n")
    print(f"{'plan':42} {'mean machine ms':>16} {'mean moves':>11} {'vs plain':>9}")
    print(f"{'plain two-phase (<= 20 HTM) + exact converter':42} {plain_ms:16.0f} {mean('plain_len'):11.2f} {'':>9}")
    print(f"{f'robot-aware search ({args.budget:g} s budget)':42} {robot_ms:16.0f} {mean('length'):11.2f} "
          f"{100 * (robot_ms / plain_ms - 1):+8.1f}%")
    print()
    print(f"robot-aware faster than plain on average by    {100 * (1 - robot_ms / plain_ms):.1f}% (target >= 20%)")
    print(f"cubes where robot-aware is slower than plain    {sum(r['robot'] > r['plain'] for r in rows)}")
    print(f"plans slower than converting their own moves    {sum(r['robot'] > r['own'] for r in rows)} (floor)")
    print(f"plans passing the independent checker           {n} of {n}")
    print(f"candidates rated per cube (mean)                {mean('candidates'):.1f} "
          f"({mean('variants'):.1f} variants asked: 96 symmetries/inverses, then premoves)")
    print(f"robot-cost two-phase: cheaper solutions kept    {mean('kept'):.1f} per cube (each one cheaper than the last)")
    print(f"plain two-phase solve time (mean)               {1000 * mean('plain_s'):.0f} ms")
    print(f"robot-aware search time: median / p99 / max    {1000 * times[n // 2]:.0f} / "
          f"{1000 * times[min(n - 1, int(0.99 * n))]:.0f} / {1000 * times[-1]:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
