"""How often optimal plans turn a pair while an arm of the other pair stands a quarter round.

docs/hardware.md's reference gripper: an arm turned a quarter puts its jaws on the sides of its
layer that face the perpendicular arms, and two perpendicular arms both a quarter round meet at
the cube's vertical edges (robot/sim/render_arms.py meeting_arms).  A turning pair passes a quarter
position during (or at the end of) every turn, so a turn while an arm of the other pair stands a
quarter round would make them meet on a robot built so.  The 2x2x2 model leaves each arm where
its last turn put it; this counts the plans that would clash.  SIMULATED: plans only, no robot.

    .venv/bin/python bench/arm_quarters.py [--cubes 300] [--seed 1]
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
from robot.plan import Turn  # noqa: E402
from robot.solver import Solver  # noqa: E402

PAIR_OF = {"R": "RL", "L": "RL", "F": "FB", "B": "FB"}


def clashing_turns(plan) -> int:
    """Turns in `plan` made while an arm of the other pair stands a quarter round."""
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--config", default=None)
    args = parser.parse_args()
    solver = Solver(config_module.load(args.config))
    rng = np.random.default_rng(args.seed)
    plans = [solver.solve(state=cube.random_state(rng)) for _ in range(args.cubes)]
    per_plan = [clashing_turns(plan) for plan in plans]
    turns = sum(sum(isinstance(a, Turn) for a in plan.actions) for plan in plans)
    clashing = sum(1 for n in per_plan if n)
    print("| cubes (seed) | plans with a clashing turn | clashing turns per plan | turns per plan |")
    print("| ---: | ---: | ---: | ---: |")
    print(f"| {args.cubes} ({args.seed}) | {clashing} ({100 * clashing / args.cubes:.1f} %) | "
          f"{sum(per_plan) / args.cubes:.2f} | {turns / args.cubes:.2f} |")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
