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

    python bench/vision_fused.py --rendered 200 [--light glare] [--strengths 0.4 0.55 0.7]

Rendered runs instead (SIMULATED, robot/sim/render.py with robot/sim/lamp.py's lamp at each strength,
moderate random room light): the adaptive scan (robot/vision/adaptive.py) of each cube with
`scan.second_look` off and on, the cube turned between views as the robot would.  Counts exact /
refused / wrong, the mean number of views and the extra robot time of the second looks (the plan
cost of their actions: arm time) and their read time.
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


def rendered(cubes: int, seed: int, light: str, strengths) -> list[dict]:
    """Adaptive scans of rendered cubes under the lamp, second look off and on (SIMULATED)."""
    import cv2  # noqa: F401  (the renderer's)

    from robot.plan import RobotProfile
    from robot.sim import render
    from robot.sim.lamp import lit, preset_lamp
    from robot.vision import camera_geometry
    from robot.vision.adaptive import scan as adaptive_scan
    from robot.vision.camera import MemoryCamera
    from robot.vision.scan import Scanner

    base = config_module.with_settings(config_module.defaults(), {"scan.save_images": False})
    profile = RobotProfile.from_config(base)
    pose = camera_geometry.Pose.from_config(base)
    sequence = ScanSequence.from_config(base)
    regions = camera_geometry.scan_regions(pose, sequence)

    class Camera(MemoryCamera):  # renders the cube where the mover left it; one picture per state and seed
        def __init__(self, start, lighting, cache, n):
            super().__init__({})
            self.state, self.lighting, self.cache, self.n, self.taken = start, lighting, cache, n, 0

        def capture(self, view, still_since=None):
            key = (self.state, self.taken)
            if key not in self.cache:
                self.cache[key] = render.render_state(self.state, pose, self.lighting,
                                                      np.random.default_rng([seed, self.n, self.taken]))
            self.taken += 1
            return self.cache[key]

    class Mover:
        def __init__(self, camera):
            self.camera = camera

        def move_to(self, view):
            self.camera.state = apply_moves(self.camera.state, view.moves)

    rows = []
    for strength in strengths:
        lamp, brightness = preset_lamp(pose, light, strength)
        row = {"strength": strength}
        for way in ("single", "fused"):
            row.update({f"{way} {o}": 0 for o in ("exact", "refused", "wrong")})
            row[f"{way} views"] = 0
        row.update({"extra arm ms": 0.0, "extra read ms": 0.0, "second looks": 0, "runs looked": 0})
        for n in range(cubes):
            rng = np.random.default_rng([seed, int(round(strength * 100)), n])
            start = random_state(rng).to_facelets()
            lighting = lit(render.Lighting.random(rng, {"glare_spots": (0, 0)}), lamp, brightness)
            cache: dict = {}
            read_ms = {}
            for way in ("single", "fused"):
                config = config_module.with_settings(base, {"scan.second_look": way == "fused"})
                camera = Camera(start, lighting, cache, n)
                scanner = Scanner(config, camera=camera, view_mover=Mover(camera), calibration=None, regions=regions)
                result = adaptive_scan(scanner)
                views = (result.sequence or sequence).views
                row[f"{way} views"] += len(views)
                if result.decoded is None:
                    row[f"{way} refused"] += 1
                else:
                    right = same_partition(result.decoded.facelets, camera.state)
                    row[f"{way} {'exact' if right else 'wrong'}"] += 1
                    row[f"{way} wrong early"] = row.get(f"{way} wrong early", 0) + (not right and len(views) < 4)
                read_ms[way] = result.read_ms
                extra = views[len(sequence.views):]
                if way == "fused" and extra:
                    row["second looks"] += len(extra)
                    row["runs looked"] += 1
                    row["extra arm ms"] += sum(profile.plan_cost(list(v.actions)) for v in extra)
                    row["extra read ms"] += read_ms["fused"] - read_ms["single"]
        rows.append(row)
    return rows


def print_rendered(rows, cubes: int, light: str) -> None:
    print(f"fused second look, RENDERED runs (SIMULATED lamp '{light}'): {cubes} cubes per strength, adaptive scan "
          "with scan.second_look off (single) and on (fused)")
    print(f"{'mix':>4} | {'single exact':>12} {'refused':>7} {'wrong':>5} {'views':>5} | {'fused exact':>11} "
          f"{'refused':>7} {'wrong':>5} {'views':>5} | {'runs looked':>11} {'2nd looks':>9} {'arm ms/run':>10} "
          f"{'extra read ms/looked run':>24}")
    for row in rows:
        looked = max(1, row["runs looked"])
        print(f"{row['strength']:>4.2f} | {row['single exact']:>12} {row['single refused']:>7} {row['single wrong']:>5} "
              f"{row['single views'] / cubes:>5.2f} | {row['fused exact']:>11} {row['fused refused']:>7} "
              f"{row['fused wrong']:>5} {row['fused views'] / cubes:>5.2f} | {row['runs looked']:>11} {row['second looks']:>9} "
              f"{row['extra arm ms'] / cubes:>10.1f} {row['extra read ms'] / looked:>24.1f}")
    for row in rows:
        print(f"  {row['strength']:.2f}: of the wrong cubes, stopped before the last view (the adaptive scan's "
              f"partial decode): single {row.get('single wrong early', 0)}, fused {row.get('fused wrong early', 0)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cubes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mixes", type=float, nargs="+", default=[0.4, 0.5, 0.6, 0.7])
    parser.add_argument("--places", nargs="+", default=["U2"])
    parser.add_argument("--most", type=int, default=2, help="second looks at most per scan (0: single look only)")
    parser.add_argument("--rendered", type=int, default=0, help="rendered runs per strength instead (SIMULATED)")
    parser.add_argument("--light", default="glare", help="the simulated lamp's preset (robot/sim/lamp.py)")
    parser.add_argument("--strengths", type=float, nargs="+", default=[0.4, 0.55, 0.7])
    args = parser.parse_args()
    started = time.perf_counter()
    if args.rendered:
        print_rendered(rendered(args.rendered, args.seed, args.light, args.strengths), args.rendered, args.light)
        load = os.getloadavg()
        print(f"{time.perf_counter() - started:.0f} s; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} "
              f"({os.cpu_count()} cores)")
        return
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
