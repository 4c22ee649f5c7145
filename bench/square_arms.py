"""What squaring the released arms costs: the mean optimal arm time over every state, both models.

docs/hardware.md's reference gripper: two perpendicular arms both a quarter round (mod 180) meet at
the cube's vertical edges.  Today's model (robot.square_released_arms false) leaves each arm where
its last turn put it; the safe model (true) turns a released pair's off-square arms back a quarter
in the air before the taking pair's first turn (docs/solver.md, "Square released arms").  For each
model this builds the exact cost table in memory (the tables folder is not touched) and gives:

  - the mean, median, p90 and max of the optimal plan over all 3,674,160 states, the better start
    pair, every arm square at the start (the solver's headline number: 1768.5 ms today);
  - from the default scans' ends: 2 views (RL holds, arms square) and 4 views (FB holds, F and B
    a quarter round);
  - the distribution of the extra time per state (safe - today);
  - `--cubes` seeded random cubes solved under both models: turns, regrips and restores per plan,
    turns made while an arm of the other pair stands a quarter round (bench/arm_quarters.py's
    count), and that every safe plan replays under the rule (robot/plan.py replay).

SIMULATED: plans and tables only, no robot.

    .venv/bin/python bench/square_arms.py [--cubes 300] [--seed 1]
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

from arm_quarters import clashing_turns  # noqa: E402

from robot import config as config_module  # noqa: E402
from robot import cube  # noqa: E402
from robot.plan import Plan, RobotProfile, replay  # noqa: E402
from robot.scan_sequence import ScanSequence  # noqa: E402
from robot.solver import tables as tables_module  # noqa: E402
from robot.solver.coords import CoordTables  # noqa: E402
from robot.tables_store import TableStore, tables_dir  # noqa: E402
from robot.solver.coords import cubie_coords  # noqa: E402
from robot.solver.search import RobotSearch  # noqa: E402

MODELS = (("today (arms stay where they turned)", False), ("safe (released arms squared)", True))


def load_text() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def scan_end(config, views: int) -> tuple[str, dict]:
    """The pair holding at the end of the first `views` scan views, and where each arm stands then."""
    taken = ScanSequence.from_config(config).prefix(views)
    angles: dict = {}
    for view in taken.views:
        for action in view.actions:
            for face, degrees in getattr(action, "arms", {}).items():
                angles[face] = (angles.get(face, 0) + degrees) % 360
    return taken.final_grip, angles


def coordinate_tables(config) -> CoordTables:
    """The coordinate tables alone (the cost tables on disk are neither read nor rebuilt)."""
    store = TableStore(tables_dir(config))
    return CoordTables(store.load_or_build("coords.npz", None, lambda progress: CoordTables.build().arrays(),
                                           "coordinate tables", 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cubes", type=int, default=300, help="seeded random cubes solved under both models")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"load average {load_text()} at the start ({os.cpu_count()} cores)")
    base = config_module.load()
    coords = coordinate_tables(base)
    ends = [(views, *scan_end(base, views)) for views in (2, 4)]
    results = []
    for label, square in MODELS:
        config = config_module.with_settings(base, {"robot.square_released_arms": square})
        profile = RobotProfile.from_config(config)
        started = time.perf_counter()
        table = tables_module.build_cost_table(coords, profile)
        build_s = time.perf_counter() - started
        tables = tables_module.SolverTables(coords, table, profile, Path("."), {})
        search = RobotSearch(coords, table, profile)
        free = tables.start_costs().min(axis=0).astype(np.float64)
        from_scan = []
        for views, pair, angles in ends:
            index = profile.pair_names.index(pair)
            parity = search.start_parity(index, angles)
            from_scan.append(tables.start_costs(parity)[index].astype(np.float64).mean())
        results.append((label, square, profile, table, search, free, from_scan, build_s))
        print(f"  built {label}: {table.shape[0]} rows, {table.nbytes / 1e6:.1f} MB, {build_s:.1f} s "
              f"(load {load_text()})", flush=True)

    print()
    print("Optimal arm time over all 3,674,160 states (ms; the better start pair, arms square at the start)")
    print(f"| model | mean | median | p90 | max | from the 2-view scan ({ends[0][1]} holds) "
          f"| from the 4-view scan ({ends[1][1]} holds, {' '.join(f'{f}{a}' for f, a in sorted(ends[1][2].items()))}) "
          "| table rows | build s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, _, _, table, _, free, from_scan, build_s in results:
        print(f"| {label} | **{free.mean():.1f}** | {np.median(free):.0f} | {np.percentile(free, 90):.0f} "
              f"| {free.max():.0f} | {from_scan[0]:.1f} | {from_scan[1]:.1f} | {table.shape[0]} | {build_s:.1f} |")
    table, n_parities = results[1][3], 4
    off_rows = table.reshape(-1, n_parities, table.shape[1])[:, 1:]
    same = bool((off_rows == off_rows[:, :1]).all())
    print(f"safe table: the rows of (pair, class) with one arm, the other or both a quarter round are "
          f"{'equal' if same else 'not all equal'} with these settings"
          + (" (one bit, any arm off, would give the same costs here)" if same else ""))
    extra = results[1][5] - results[0][5]
    print()
    print(f"Extra time per state, safe - today: mean {extra.mean():.1f} ms ({100 * extra.mean() / results[0][5].mean():.2f} %)")
    print("| extra ms | states | share |")
    print("| --- | ---: | ---: |")
    edges = [(0, 0), (1, 40), (41, 80), (81, 120), (121, 160), (161, 240), (241, 10**6)]
    assert extra.min() >= 0, "the safe model can only cost more"
    for low, high in edges:
        count = int(((extra >= low) & (extra <= high)).sum())
        name = f"{low}" if low == high else (f"{low}-{high}" if high < 10**6 else f"> {low - 1}")
        print(f"| {name} | {count} | {100 * count / len(extra):.2f} % |")

    print()
    print(f"{args.cubes} random cubes (seed {args.seed}), the better start pair, arms square at the start")
    print("| model | mean ms | turns | regrips | restores | plans with a clashing turn | clashing turns "
          "| replays under the rule |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    rng = np.random.default_rng(args.seed)
    states = [cube.random_state(rng) for _ in range(args.cubes)]
    for label, square, profile, _, search, free, _, _ in results:
        plans = []
        for state in states:
            cost, actions = search.solve(*cubie_coords(state), range(len(profile.pairs)))
            plans.append(Plan(state.to_facelets(), actions, cost))
        clashes = [clashing_turns(plan) for plan in plans]
        ruled = dataclasses.replace(profile, square_released=True)
        valid = 0
        for state, plan in zip(states, plans):
            try:
                final, cost = replay(state, plan.actions, ruled)
            except ValueError:
                continue
            valid += final.is_solved() and cost == plan.cost_ms
        n = len(plans)
        print(f"| {label} | {np.mean([p.cost_ms for p in plans]):.1f} | {np.mean([p.turn_count for p in plans]):.2f} "
              f"| {np.mean([p.regrip_count for p in plans]):.2f} | {np.mean([p.restore_count for p in plans]):.2f} "
              f"| {sum(1 for c in clashes if c)} | {np.mean(clashes):.2f} | {valid} of {n} |")
    print(f"load average {load_text()} at the end")


if __name__ == "__main__":
    main()
