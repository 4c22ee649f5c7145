"""Start press -> solved, per seeded scramble, with `cube-robot run --sim --realtime` (prints a table).

    python bench/button_to_solved.py [--seeds 0-5] [--firmware emulator|mock] [--config PATH] [--two-cameras]

Each row is one simulated run in real time (the firmware in simavr by default):
the report's views taken, recognition (scan), tables (loaded before the start
press, so not in button->solved), solve, predicted arm time, execute and button->solved times.  Used to
measure the start-to-solved cuts before and after (bench/e2e.py has the full table).
SIMULATED: the camera is the sim's, not a real webcam.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import config as config_module  # noqa: E402
from robot.cli import build_parser  # noqa: E402
from robot.run.options import RunOptions  # noqa: E402
from robot.run.simulated import run_simulated  # noqa: E402
from robot.scan_sequence import TWO_CAMERA_VIEWS  # noqa: E402

COLUMNS = (("scan_views", "views"), ("recognition_ms", "scan"), ("tables_load_ms", "tables"), ("solve_ms", "solve"),
           ("predicted_machine_ms", "arm pred."), ("execute_ms", "execute"), ("button_to_solved_ms", "button->solved"))


# --two-cameras: U+F from above and D+B from below at once, then L and R (after z) at once.


def seeds(text: str) -> list[int]:
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=seeds, default=seeds("0-5"))
    parser.add_argument("--firmware", choices=("emulator", "mock"), default="emulator")
    parser.add_argument("--config", type=Path, default=config_module.PROJECT_ROOT / "config.yaml")
    parser.add_argument("--two-cameras", action="store_true", help="the scan of TWO_CAMERA_VIEWS (simulated)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text = options.config.read_text()
        text = text.replace("images_dir: runs/scans", f"images_dir: {tmp}/scans")
        # Pictures are saved as `cube-robot run` saves them (into the temporary folder).
        text = text.replace("data_dir: data", f"data_dir: {tmp}/data")
        path = Path(tmp) / "config.yaml"
        path.write_text(text)
        config = config_module.load(path)
        if options.two_cameras:
            config = config_module.with_settings(config, {"scan.views": TWO_CAMERA_VIEWS})
        rows = []
        for seed in options.seeds:
            args = build_parser().parse_args(["run", "--sim", "--realtime", "--firmware", options.firmware,
                                              "--seed", str(seed)])
            rows.append((seed, run_simulated(config, RunOptions.from_args(args), lambda message: None).to_json()))
    print(f"SIMULATED, --realtime, firmware: {rows[0][1].get('firmware')}  (ms)")
    print(f"{'seed':>5}{'solved':>8}" + "".join(f"{label:>16}" for _, label in COLUMNS))
    for seed, r in rows:
        cells = "".join(f"{r.get(key) if r.get(key) is not None else '-':>16}" for key, _ in COLUMNS)
        print(f"{seed:>5}{str(r['solved']):>8}{cells}")
    values = {key: np.array([r[key] for _, r in rows if r.get(key) is not None], dtype=float) for key, _ in COLUMNS}
    print(f"{'mean':>13}" + "".join(f"{values[k].mean() if len(values[k]) else float('nan'):>16.1f}"
                                    for k, _ in COLUMNS))


if __name__ == "__main__":
    main()
