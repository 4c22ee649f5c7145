"""Plan arm time from the state the scan leaves the robot in: prints a table.

    python bench/plan_arm_time.py [--cubes 2000] [--seed 1] [--views 2]

No robot: the solver alone.  A scan that stops after `--views` views (the adaptive scan
usually stops after 2: U+F, then D+B after R2+L2) leaves the cube in a fixed robot state,
held by the pair that did the scan's last grip (RL for the default views).  The plan must
start from that pair; a plan free to choose its first pair ('any') is what the solver's
headline mean (about 2.27 s) measures.  The table gives both:

  - exact: every state of the cost table (3,674,160; a random cube is uniform over them,
    and a whole-cube rotation does not change a plan's cost);
  - sampled: `--cubes` seeded random cubes (as the simulation makes them: a random state in a
    random orientation), put through the scan's motions and solved;
  - the seeds bench/e2e.py uses (0..19 and 0..49): the same cubes the end-to-end bench scans,
    so a difference between its mean and the exact one is the sample's luck, not the pipeline.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import config as config_module  # noqa: E402
from robot import cube  # noqa: E402
from robot.scan_sequence import ScanSequence  # noqa: E402
from robot.solver import Solver  # noqa: E402


def e2e_cube(seed: int) -> cube.CubieCube:
    """The cube bench/e2e.py's run with this seed scrambles (robot/run/simulated.py's draw)."""
    return cube.random_placed_state(np.random.default_rng(seed))


def plan_costs(solver: Solver, states, taken: ScanSequence) -> tuple[np.ndarray, np.ndarray]:
    """(cost from the scan's final pair, cost from the cheaper pair) of each state, after the scan's motions."""
    fixed, free = [], []
    for state in states:
        scanned = cube.apply_moves(state.to_facelets(), taken.moves)
        fixed.append(solver.solve(scanned, start_grip=taken.final_grip).cost_ms)
        free.append(solver.solve(scanned, start_grip="any").cost_ms)
    return np.array(fixed, float), np.array(free, float)


def row(label: str, fixed: np.ndarray, free: np.ndarray) -> str:
    error = fixed.std(ddof=1) / np.sqrt(len(fixed)) if len(fixed) > 1 else float("nan")
    return (f"{label:<34}{len(fixed):>9}{fixed.mean():>10.1f}{error:>8.1f}{np.percentile(fixed, 90):>8.0f}"
            f"{free.mean():>10.1f}{fixed.mean() - free.mean():>9.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cubes", type=int, default=2000, help="seeded random cubes to solve")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--views", type=int, default=2, help="views the scan takes before it stops")
    args = parser.parse_args()
    config = config_module.load()
    solver = Solver(config)
    taken = ScanSequence.from_config(config).prefix(args.views)
    pair = taken.final_grip
    print(f"scan: {args.views} view(s) ({', '.join(v.name for v in taken.views)}), motions "
          f"{' '.join(taken.moves) or '-'}; the plan starts held by {pair}. Timings "
          f"{solver.profile.quarter_turn_ms}/{solver.profile.half_turn_ms}/{solver.profile.regrip_ms} ms.")
    print(f"{'cubes':<34}{'n':>9}{'from ' + pair:>10}{'+-':>8}{'p90':>8}{'any pair':>10}{'cost':>9}")
    names = solver.profile.pair_names
    table = solver.tables.robot_cost.astype(np.float64)
    exact_fixed, exact_free = table[names.index(pair)], table.min(axis=0)
    print(f"{'exact (every state)':<34}{table.shape[1]:>9}{exact_fixed.mean():>10.1f}{0:>8.1f}"
          f"{np.percentile(exact_fixed, 90):>8.0f}{exact_free.mean():>10.1f}"
          f"{exact_fixed.mean() - exact_free.mean():>9.1f}")
    rng = np.random.default_rng(args.seed)
    sampled = [cube.random_placed_state(rng) for _ in range(args.cubes)]
    print(row(f"sampled (seed {args.seed})", *plan_costs(solver, sampled, taken)))
    for count in (20, 50):
        print(row(f"bench/e2e.py seeds 0..{count - 1}", *plan_costs(solver, [e2e_cube(s) for s in range(count)],
                                                                      taken)))
    print("(ms of arm time; +- = standard error of the mean; cost = the fixed start pair's cost on average)")


if __name__ == "__main__":
    main()
