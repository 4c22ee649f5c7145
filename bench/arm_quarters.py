"""How often optimal plans turn a pair while an arm of the other pair stands a quarter round.

docs/hardware.md's reference gripper: an arm turned a quarter puts its jaws on the sides of its
layer that face the perpendicular arms, and two perpendicular arms both a quarter round meet at
the cube's vertical edges (robot/sim/render_arms.py meeting_arms).  A turning pair passes a quarter
position during (or at the end of) every turn, so a turn while an arm of the other pair stands a
quarter round would make them meet on a robot built so.  The 2x2x2 model leaves each arm where
its last turn put it; this counts the plans that would clash.  With --square the plans are
robot.square_released_arms' (a released pair's arms turned back square in the air before the
other pair turns; its cost table built in memory, the tables folder untouched): none should.
SIMULATED: plans only, no robot.

    .venv/bin/python bench/arm_quarters.py [--cubes 300] [--seed 1] [--square]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import config as config_module  # noqa: E402
from robot import cube  # noqa: E402
from robot.plan import Plan, RobotProfile, Turn  # noqa: E402
from robot.solver import Solver  # noqa: E402
from robot.solver import tables as tables_module  # noqa: E402
from robot.solver.coords import CoordTables  # noqa: E402
from robot.tables_store import TableStore, tables_dir  # noqa: E402
from robot.solver.coords import cubie_coords  # noqa: E402
from robot.solver.search import RobotSearch  # noqa: E402

PAIR_OF = {"R": "RL", "L": "RL", "F": "FB", "B": "FB"}


def clashing_turns(plan) -> int:
    """Turns in `plan` made while an arm of the other pair stands a quarter round (a restore in the
    air included: its arms pass the others' too)."""
    angle = {arm: 0 for arm in PAIR_OF}
    clashes = 0
    for action in plan.actions:
        if not isinstance(action, Turn):
            continue
        pair = PAIR_OF[next(iter(action.arms))]
        if any(angle[arm] % 180 for arm in PAIR_OF if PAIR_OF[arm] != pair):
            clashes += 1
        for arm, degrees in action.arms.items():
            angle[arm] = (angle[arm] + degrees) % 360
    return clashes


def coordinate_tables(config) -> CoordTables:
    """The coordinate tables alone (the cost tables on disk are neither read nor rebuilt)."""
    store = TableStore(tables_dir(config))
    return CoordTables(store.load_or_build("coords.npz", None, lambda progress: CoordTables.build().arrays(),
                                           "coordinate tables", 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--config", default=None)
    parser.add_argument("--square", action="store_true", help="plans with robot.square_released_arms on")
    args = parser.parse_args()
    config = config_module.load(args.config)
    rng = np.random.default_rng(args.seed)
    states = [cube.random_state(rng) for _ in range(args.cubes)]
    if args.square:
        square = config_module.with_settings(config, {"robot.square_released_arms": True})
        profile = RobotProfile.from_config(square)
        coords = coordinate_tables(config)
        search = RobotSearch(coords, tables_module.build_cost_table(coords, profile), profile)
        plans = []
        for state in states:
            cost, actions = search.solve(*cubie_coords(state), range(len(profile.pairs)))
            plans.append(Plan(state.to_facelets(), actions, cost))
    else:
        solver = Solver(config)
        plans = [solver.solve(state=s) for s in states]
    per_plan = [clashing_turns(plan) for plan in plans]
    turns = sum(plan.turn_count for plan in plans)
    restores = sum(plan.restore_count for plan in plans)
    clashing = sum(1 for n in per_plan if n)
    print("| model | cubes (seed) | plans with a clashing turn | clashing turns per plan | turns per plan "
          "| restores per plan | mean ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(f"| {'square_released_arms' if args.square else 'arms stay'} | {args.cubes} ({args.seed}) "
          f"| {clashing} ({100 * clashing / args.cubes:.1f} %) | {sum(per_plan) / args.cubes:.2f} "
          f"| {turns / args.cubes:.2f} | {restores / args.cubes:.2f} "
          f"| {sum(p.cost_ms for p in plans) / args.cubes:.1f} |")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
