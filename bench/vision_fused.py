"""Fused second look benchmark (SIMULATED readings, no rendering): prints a table.

    python bench/vision_fused.py [--cubes 1000] [--seed 1] [--mixes 0.4 0.5 0.6 0.7] [--places U2]

Seeded random cubes (any colour scheme) scanned with the default scan sequence under moderate light
(exposure 0.6-1.2, per-channel cast 0.8-1.2, sensor noise sd 4, sticker shading 0-15 %) and a lamp
fixed in the camera's frame: the stickers at the same camera places (--places, robot frame at each
view, e.g. U2) are blended toward the lamp's white by the mix in every view, as a glossy cube under
a fixed lamp is.  Per mix, the same cubes are read two ways:

* single look: the 24 readings decoded as today (robot.vision.decode);
* fused: when that is refused and the best cube sees washed-out stickers, a second look from the view
  robot/scan_sequence.py choose_second_look picks for them (the same lamp on the same places, so other
  stickers are washed there), the looks fused (robot.vision.fused.decode_fused).

Counts exact / refused / wrong (wrong must stay 0) and how many second looks were taken.
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
from robot.cube import FACELET_COUNT, apply_moves, facelet_index, random_state  # noqa: E402
from robot.scan_sequence import ScanSequence, choose_second_looks  # noqa: E402
from robot.vision import VisionError, decode  # noqa: E402
from robot.vision.fused import decode_fused, second_looks, washed_places  # noqa: E402

PALETTE = np.array([
    (235, 235, 230), (235, 215, 40), (185, 25, 35), (245, 110, 25), (25, 155, 70), (25, 75, 185),
], dtype=float)


def same_partition(a: str, b: str) -> bool:
    return len(a) == len(b) and len(set(zip(a, b))) == len(set(a)) == len(set(b))


class Lamp:
    """One cube's light: exposure x cast, noise, and the glare at fixed camera places."""

    def __init__(self, rng, mix: float, places, noise: float = 4.0):
        self.rng, self.mix, self.places, self.noise = rng, mix, set(places), noise
        self.light = rng.uniform(0.6, 1.2) * rng.uniform(0.8, 1.2, 3)

    def view(self, state: str, facelets) -> list:
        """The readings of one view's regions (state: the facelets in the robot frame at that view)."""
        rgb = []
        for place in facelets:
            colour = PALETTE[int(state[facelet_index(place)])] * self.light * self.rng.uniform(0.85, 1.0)
            if place in self.places:
                colour = (1 - self.mix) * colour + self.mix * 255.0 * self.light
            rgb.append(np.clip(np.round(colour + self.rng.normal(0, self.noise, 3)), 0, 255))
        return rgb


def one_cube(sequence: ScanSequence, rng, mix: float, places, most: int = 2) -> dict:
    """Single-look and fused outcomes of one seeded cube."""
    start = random_state(rng).to_facelets("".join(str(d) for d in rng.permutation(6)))
    lamp = Lamp(rng, mix, places)
    states = sequence.states_at_views(start)
    view_rgb = [lamp.view(state, view.facelets) for state, view in zip(states, sequence.views)]
    readings = np.zeros((FACELET_COUNT, 3))
    for v in range(len(sequence.views)):
        for r, final in enumerate(sequence.final_positions(v)):
            readings[final] = view_rgb[v][r]
    truth = sequence.final_state(start)
    try:
        result = decode(readings)
        single = "exact" if same_partition(result.facelets, truth) else "wrong"
        return {"single": single, "fused": single, "looks": 0}
    except VisionError as exc:
        error = exc
    out = {"single": "refused", "fused": "refused", "looks": 0}
    if error.result is None:
        return out
    doubtful = washed_places(sequence, readings, error.result)
    views = choose_second_looks(sequence, doubtful, most) if doubtful else []
    if not views:
        return out
    after = truth
    for view in views:  # the robot frame at a second look is the frame after it
        after = apply_moves(after, view.moves)
        view_rgb.append(lamp.view(after, view.facelets))
    looks = second_looks(sequence, views, view_rgb, error.result)
    out["looks"] = len(views)
    try:
        fused = decode_fused(looks)
        out["fused"] = "exact" if same_partition(fused.facelets, after) else "wrong"
    except VisionError as exc:
        out["reason"] = exc.reason
    return out


def sweep(cubes: int, seed: int, mixes, places, most: int = 2) -> list[dict]:
    sequence = ScanSequence.from_config(config_module.defaults())
    rows = []
    for mix in mixes:
        counts = {f"{way} {outcome}": 0 for way in ("single", "fused") for outcome in ("exact", "refused", "wrong")}
        looks, reasons = 0, {}
        for n in range(cubes):  # each cube its own draws: the same cubes and light for every setting
            out = one_cube(sequence, np.random.default_rng([seed, int(round(mix * 100)), n]), mix, places, most)
            counts[f"single {out['single']}"] += 1
            counts[f"fused {out['fused']}"] += 1
            looks += out["looks"]
            if "reason" in out:
                reasons[out["reason"]] = reasons.get(out["reason"], 0) + 1
        rows.append({"mix": mix, **counts, "second looks": looks, "fused refusals": reasons})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cubes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mixes", type=float, nargs="+", default=[0.4, 0.5, 0.6, 0.7])
    parser.add_argument("--places", nargs="+", default=["U2"])
    parser.add_argument("--most", type=int, default=2, help="second looks at most per scan (0: single look only)")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = sweep(args.cubes, args.seed, args.mixes, args.places, args.most)
    print(f"fused second look, SIMULATED readings: {args.cubes} cubes per mix, glare at {' '.join(args.places)} "
          f"in every view, at most {args.most} second looks, seed {args.seed}")
    print(f"{'mix':>4} | {'single exact':>12} {'refused':>7} {'wrong':>5} | {'fused exact':>11} {'refused':>7} "
          f"{'wrong':>5} | {'2nd looks':>9} | fused refusals by rule")
    for row in rows:
        print(f"{row['mix']:>4.2f} | {row['single exact']:>12} {row['single refused']:>7} {row['single wrong']:>5} | "
              f"{row['fused exact']:>11} {row['fused refused']:>7} {row['fused wrong']:>5} | {row['second looks']:>9} | "
              + ", ".join(f"{k} {v}" for k, v in sorted(row["fused refusals"].items(), key=lambda kv: -kv[1])))
    load = os.getloadavg()
    print(f"{time.perf_counter() - started:.0f} s; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} "
          f"({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
