"""Plan arm time: the mean optimal plan over every state, and from the state the scan leaves the robot in.

    python bench/plan_arm_time.py [--cubes 2000] [--seed 1] [--views 2] [--grid coarse|full|none]

No robot: the solver alone.  A scan that stops after `--views` views (the adaptive scan
usually stops after 2: U+F, then D+B after R2+L2) leaves the cube in a fixed robot state,
held by the pair that did the scan's last grip (RL for the default views).  The plan must
start from that pair; a plan free to choose its first pair ('any') is what the solver's
headline mean measures (target with the default settings: at most 1.90 s).  The table gives both:

  - exact: every state of the cost table (3,674,160; a random cube is uniform over them,
    and a whole-cube rotation does not change a plan's cost);
  - sampled: `--cubes` seeded random cubes (as the simulation makes them: a random state in a
    random orientation), put through the scan's motions and solved;
  - the seeds bench/e2e.py uses (0..19 and 0..49): the same cubes the end-to-end bench scans,
    so a difference between its mean and the exact one is the sample's luck, not the pipeline.

Then the regrip's overlap (robot/regrip.py): the exact mean without it (each regrip closes
fully, then opens fully: regrip_ms_without_overlap), and the exact mean against the jaws'
clear and contact points (motion.jaw_clear_pct, motion.jaw_contact_pct; each point's cost
table is built in memory, 15 s to 90 s each with the machine's load; settings whose regrips between
turns cost the same share one).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import config as config_module  # noqa: E402
from robot import cube  # noqa: E402
from robot.scan_sequence import ScanSequence  # noqa: E402
from robot.motion import regrip_without_overlap  # noqa: E402
from robot.plan import RobotProfile  # noqa: E402
from robot.solver import Solver  # noqa: E402
from robot.solver import tables as tables_module  # noqa: E402

GRIDS = {"none": ((), ()), "coarse": ((30, 50, 70), (50, 70, 90)),
         "full": ((30, 40, 50, 60, 70), (50, 60, 70, 80, 90))}


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


def exact_costs(coords, config) -> tuple[np.ndarray, RobotProfile]:
    """int64[n_pairs, states]: the optimal cost from the start, every pair and state, for `config`
    (its cost table built in memory)."""
    profile = RobotProfile.from_config(config)
    table = tables_module.build_cost_table(coords, profile)
    return tables_module.SolverTables(coords, table, profile, Path("."), {}).start_costs(), profile


def between_turns(profile: RobotProfile):
    """What the mean from the better start pair depends on: the turns and the regrips between turns."""
    return (profile.quarter_turn_ms, profile.half_turn_ms, profile.regrip_ms if not profile.regrips else None,
            tuple((key, ms) for key, ms in profile.regrips if key[2] is not None and key[3] is not None))


def regrip_summary(profile: RobotProfile) -> str:
    """The regrip costs between turns (and from the plan's start) of a profile, e.g. '126 (start 171)'."""
    between = sorted({ms for (_, _, before, after), ms in profile.regrips if before and after})
    start = sorted({ms for (_, _, before, after), ms in profile.regrips if before is None and after})
    if not profile.regrips:
        return f"{profile.regrip_ms} (every regrip)"
    return f"{'/'.join(map(str, between))} (start {'/'.join(map(str, start))})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cubes", type=int, default=2000, help="seeded random cubes to solve")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--views", type=int, default=2, help="views the scan takes before it stops")
    parser.add_argument("--grid", choices=sorted(GRIDS), default="coarse",
                        help="clear x contact points to build tables for (full: 25, coarse: 9)")
    args = parser.parse_args()
    config = config_module.load()
    solver = Solver(config)
    taken = ScanSequence.from_config(config).prefix(args.views)
    pair = taken.final_grip
    profile = solver.profile
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the start ({os.cpu_count()} cores)")
    print(f"scan: {args.views} view(s) ({', '.join(v.name for v in taken.views)}), motions "
          f"{' '.join(taken.moves) or '-'}; the plan starts held by {pair}. Turns "
          f"{profile.quarter_turn_ms}/{profile.half_turn_ms} ms, regrips {regrip_summary(profile)} ms.")
    print(f"{'cubes':<34}{'n':>9}{'from ' + pair:>10}{'+-':>8}{'p90':>8}{'any pair':>10}{'cost':>9}")
    names = profile.pair_names
    start = solver.tables.start_costs().astype(np.float64)
    exact_fixed, exact_free = start[names.index(pair)], start.min(axis=0)
    print(f"{'exact (every state)':<34}{start.shape[1]:>9}{exact_fixed.mean():>10.1f}{0:>8.1f}"
          f"{np.percentile(exact_fixed, 90):>8.0f}{exact_free.mean():>10.1f}"
          f"{exact_fixed.mean() - exact_free.mean():>9.1f}")
    rng = np.random.default_rng(args.seed)
    sampled = [cube.random_placed_state(rng) for _ in range(args.cubes)]
    print(row(f"sampled (seed {args.seed})", *plan_costs(solver, sampled, taken)))
    for count in (20, 50):
        print(row(f"bench/e2e.py seeds 0..{count - 1}", *plan_costs(solver, [e2e_cube(s) for s in range(count)],
                                                                      taken)))
    print("(ms of arm time; +- = standard error of the mean; cost = the fixed start pair's cost on average)")

    coords = solver.tables.coords
    faces = dict(profile.pairs)
    without = max(regrip_without_overlap(config.motion, faces[a], faces[b]) for a in names for b in names if a != b)
    rows = [("regrips without overlap", {"robot.timing.regrip_ms": without})]
    clears, contacts = GRIDS[args.grid]
    rows += [(f"clear {clear} %, contact {contact} %", {"motion.jaw_clear_pct": clear, "motion.jaw_contact_pct": contact})
             for clear in clears for contact in contacts]
    print()
    print(f"exact mean over every state (any start pair), other settings (the defaults' is {exact_free.mean():.1f} ms)")
    print(f"{'settings':<34}{'regrip ms':>22}{'mean ms':>10}{'p90':>8}{'vs defaults':>13}{'build s':>9}")
    # The mean from the better start pair never starts with a regrip (it would start with the other
    # pair), so it depends on the regrips between turns only: settings that share those share a table.
    seen: dict = {between_turns(profile): (exact_free, profile)}
    for label, changes in rows:
        changed = config_module.with_settings(config, changes)
        changed_profile = RobotProfile.from_config(changed)
        key = between_turns(changed_profile)
        started = time.perf_counter()
        if key not in seen:
            costs, _ = exact_costs(coords, changed)
            seen[key] = (costs.min(axis=0).astype(np.float64), changed_profile)
        free, _ = seen[key]
        print(f"{label:<34}{regrip_summary(changed_profile):>22}{free.mean():>10.1f}{np.percentile(free, 90):>8.0f}"
              f"{free.mean() - exact_free.mean():>+13.1f}{time.perf_counter() - started:>9.1f}", flush=True)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")


if __name__ == "__main__":
    main()
