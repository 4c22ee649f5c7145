"""End-to-end 3x3x3 benchmark (bench/e2e.py --puzzle 3x3x3 runs this; prints tables with the load average).

    python bench/e2e.py --puzzle 3x3x3 [--runs 100] [--estop-every 5]   # seeded sped-up runs: solved / stopped / wrong
    python bench/e2e.py --puzzle 3x3x3 --realtime --runs 20               # mean and p90 of each stage, the floor
    python bench/e2e.py --puzzle 3x3x3 --realtime --budgets 0.25,0.5,1,2 --runs 10
    python bench/e2e.py --puzzle 3x3x3 --faults 30 [--firmware mock]      # 1 % byte faults + a resetting disconnect

SIMULATED: robot/run/puzzle3.py on robot/sim/robot_sim3.py: the plan3 ops streamed by the host's link to a
firmware in 3x3x3 mode, picked as the run picks it (--firmware auto: the real firmware in simavr when the
toolchain is there, else the mock firmware; mock is the fast one).  --faults N: N seeded runs with
--fault-rate 0.01 and one resetting disconnect (--disconnect-at a seeded plan op, 1..45).

A run is *wrong* when what it claims is false: SOLVED (or NOT SOLVED) against the virtual cube, or a
stop's named 54 facelets against the virtual cube renamed by the centres the scan saw (a NOT KNOWN
stop's facelets are checked too: they are what it claims as the state before the jammed op).

The floor of button -> solved: the robot's own time as the model predicts it: the scan's arm time (scan3's
ops at robot/plan3.py's op times, the firmware's) + per view settle + exposure + delivery + half a frame
period + the search budget + the plan's arm time.  --realtime also splits the time above the floor by part
(the scan, the decode, the solve past its budget, the plan past its arm time, host gaps between stages), the
plan's arm time as the firmware's own `done` lines measured it (the emulator only), and the emulator's lag:
how far its emulated clock fell behind the host's from the start press to the end (simavr --realtime runs
flat out to catch up when the host starves it: the host's slowness, not the robot's time).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot import config as config_module  # noqa: E402
from robot.run import puzzle3  # noqa: E402
from robot.run.options import RunOptions  # noqa: E402


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def judge(report: puzzle3.Run3Report) -> str:
    """'solved', 'not solved', 'stopped', 'stopped, NOT KNOWN' (each true) or 'wrong: why'.

    A stop is judged by the state it names against the virtual cube renamed by the centres the scan saw; a
    NOT KNOWN stop by all it claims: the state it names is the one after the ops the board reported done, and
    the truth is one of the states its words allow (report.possible_states: after each op that may have run)."""
    truth_solved = puzzle3.is_solved3(report.final_true or "")
    if report.outcome == puzzle3.SOLVED:
        return "solved" if truth_solved else "wrong: SOLVED but the virtual cube is not"
    if report.outcome == puzzle3.NOT_SOLVED and not report.stopped:
        return "not solved" if not truth_solved else "wrong: NOT SOLVED but the virtual cube is solved"
    if report.stopped:  # an e-stop (EMERGENCY STOP) or any other stop (NOT SOLVED): judged by the state named
        state = report.cube_state or ""
        if state.startswith("not read"):
            return "stopped" if report.ops_done == 0 else "wrong: 'not read' after plan ops ran"
        words = state.split()
        unsure = state.startswith("NOT KNOWN")
        named = words[2] if unsure else words[0]
        truth = puzzle3.by_centres(report.final_true or "", report.plan_start_true or "")
        possible = report.possible_states or [named]
        if named not in possible[:1]:
            return f"wrong: named {named}, but its claim starts from {possible[0]}"
        if not unsure:
            return "stopped" if named == truth and len(possible) == 1 else f"wrong: named {named}, the virtual cube is {truth}"
        return "stopped, NOT KNOWN (all it claims true)" if truth in possible else \
            f"wrong: NOT KNOWN {named} and {len(possible) - 1} op(s) that may have run; the virtual cube is {truth}"
    return f"{report.outcome}"


def counts(config, runs: int, estop_every: int, firmware: str = "auto", faults: bool = False) -> None:
    """Seeded sped-up runs, judged; faults: each at 1 % byte faults with a resetting disconnect at a seeded op."""
    tally: dict = {}
    rng = np.random.default_rng(2026)
    backend, resumed, replanned, made = "", 0, 0, 0
    for seed in range(runs):
        estop = int(rng.integers(1, 40)) if estop_every and seed % estop_every == estop_every - 1 else None
        disconnect = int(rng.integers(1, 46)) if faults else None
        options = RunOptions(sim=True, seed=seed, estop_at=estop, firmware=firmware, fault_rate=0.01 if faults else 0.0,
                             disconnect_at=disconnect)
        report = puzzle3.run_puzzle3(config, options, lambda text: None)
        backend, resumed, replanned = report.backend, resumed + report.link_resumes, replanned + len(report.replans)
        made += report.serial_faults or 0
        verdict = judge(report)
        tally[verdict] = tally.get(verdict, 0) + 1
        if verdict.startswith("wrong") or (report.stopped and report.outcome != puzzle3.STOPPED):  # not an e-stop
            print(f"seed {seed} (disconnect at op {disconnect}): {verdict}: {report.errors[-1][:160] if report.errors else ''}")
    wrong = sum(n for k, n in tally.items() if k.startswith("wrong"))
    what = (f"{runs} seeded runs at 1 % byte faults, one resetting disconnect each (a seeded plan op 1..45)" if faults
            else f"{runs} seeded runs (every {estop_every or '-'}th with --estop-at)")
    print(f"\n== 3x3x3, SIMULATED, sped up: {what}; load average {load()} ==\n{backend}")
    for verdict, n in sorted(tally.items()):
        print(f"{verdict:<50}{n:>5}")
    print(f"{'wrong':<50}{wrong:>5}")
    if faults:
        print(f"{'streams resumed after a lost link':<50}{resumed:>5}\n"
              f"{'planned again after a reset (a gripper at 90)':<50}{replanned:>5}\n"
              f"{'serial byte faults made':<50}{made:>5}")


def stage_groups(report: puzzle3.Run3Report) -> dict:
    out = {"scan motions": 0.0, "frame waits": 0.0, "decode": 0.0, "solve": 0.0, "execute": 0.0}
    for name, start, end in report.stages:
        if name.startswith("verify"):
            continue
        key = ("scan motions" if name.endswith(": motion") else "frame waits" if name.endswith(": frame wait")
               else "decode" if name.endswith("decode") else name)
        if key in out:
            out[key] += end - start
    return out


def timed(config, seeds, budget: float | None, firmware: str = "auto") -> list[tuple[puzzle3.Run3Report, float]]:
    camera = config.camera
    per_view = camera.settle_ms + camera.exposure_ms + camera.delivery_ms + 500.0 / camera.fps
    out = []
    for seed in seeds:
        report = puzzle3.run_puzzle3(config, RunOptions(sim=True, seed=seed, realtime=True, verify=False,
                                                                firmware=firmware),
                                     lambda text: None, budget_s=budget)
        if report.button_to_solved_ms is None:
            print(f"seed {seed}: {report.outcome}: {report.errors}")
            continue
        views = len(config.scan3.views) * report.scan_attempts
        floor = (report.floor["scan_arm_ms"] + views * per_view + report.floor["search_budget_ms"]
                 + report.floor["plan_arm_ms"])
        out.append((report, floor))
    return out


def realtime_table(config, runs: int, firmware: str = "auto") -> None:
    before = load()
    results = timed(config, range(runs), None, firmware)
    print(f"\n== 3x3x3, SIMULATED, REAL TIME: {len(results)}/{runs} runs timed; search budget "
          f"{config.robot3.search_budget_s} s; load average {before} before, {load()} after ==\n"
          f"{results[0][0].backend if results else ''}")
    print(f"{'stage (ms)':<24}{'mean':>9}{'p90':>9}")
    groups = [stage_groups(r) for r, _ in results]
    for key in groups[0]:
        values = np.array([g[key] for g in groups])
        print(f"{key:<24}{values.mean():>9.1f}{np.percentile(values, 90):>9.1f}")
    total = np.array([r.button_to_solved_ms for r, _ in results], float)
    floor = np.array([f for _, f in results], float)
    plan = np.array([r.predicted_ms for r, _ in results], float)
    print(f"{'plan arm time':<24}{plan.mean():>9.1f}{np.percentile(plan, 90):>9.1f}")
    print(f"{'button -> solved':<24}{total.mean():>9.1f}{np.percentile(total, 90):>9.1f}")
    print(f"{'floor':<24}{floor.mean():>9.1f}{np.percentile(floor, 90):>9.1f}")
    above = total - floor
    print(f"{'above the floor':<24}{above.mean():>9.1f}{np.percentile(above, 90):>9.1f}")
    measured = [r.measured_ms for r, _ in results if r.measured_ms is not None]
    if measured:
        print(f"{'plan: `done` lines sum':<24}{np.mean(measured):>9.1f}{np.percentile(measured, 90):>9.1f}"
              f"   (the firmware's own op times, {len(measured)} runs)")
    lags = [r.emulator_lag_ms for r, _ in results if r.emulator_lag_ms is not None]
    if lags:
        print(f"{'emulator lag':<24}{np.mean(lags):>9.1f}{np.percentile(lags, 90):>9.1f}"
              "   (host clock minus the emulated board's, start press -> end)")
    print(f"\n{'above the floor, by part (ms, mean)':<40}{'measured':>10}{'floor':>10}{'above':>9}")
    camera = config.camera
    per_view = camera.settle_ms + camera.exposure_ms + camera.delivery_ms + 500.0 / camera.fps
    parts = {"scan (motions + frame waits)": [], "decode": [], "solve (past the budget)": [],
             "execute (past the plan's arm time)": [], "host gaps between stages": []}
    for (report, _), group in zip(results, groups):
        views = len(config.scan3.views) * report.scan_attempts
        scan_floor = report.floor["scan_arm_ms"] + views * per_view
        staged = sum(group.values())
        parts["scan (motions + frame waits)"].append((group["scan motions"] + group["frame waits"], scan_floor))
        parts["decode"].append((group["decode"], 0.0))
        parts["solve (past the budget)"].append((group["solve"], report.floor["search_budget_ms"]))
        parts["execute (past the plan's arm time)"].append((group["execute"], report.floor["plan_arm_ms"]))
        parts["host gaps between stages"].append((report.button_to_solved_ms - staged, 0.0))
    for name, pairs in parts.items():
        got, want = np.mean([a for a, _ in pairs]), np.mean([b for _, b in pairs])
        print(f"{name:<40}{got:>10.1f}{want:>10.1f}{got - want:>9.1f}")


def budget_table(config, budgets, runs: int, firmware: str = "auto") -> None:
    print(f"\n== 3x3x3, SIMULATED, REAL TIME: button -> solved by search budget, seeds 0..{runs - 1} ==")
    print(f"{'budget s':>9}{'runs':>6}{'plan arm ms':>13}{'solve ms':>10}{'button->solved':>16}{'p90':>9}  load")
    for budget in budgets:
        results = timed(config, range(runs), budget, firmware)
        total = np.array([r.button_to_solved_ms for r, _ in results], float)
        plan = np.mean([r.predicted_ms for r, _ in results])
        solve = np.mean([r.stage_ms()["solve"] for r, _ in results])
        print(f"{budget:>9g}{len(results):>6}{plan:>13.1f}{solve:>10.1f}{total.mean():>16.1f}"
              f"{np.percentile(total, 90):>9.1f}  {load()}")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--puzzle", choices=("3x3x3",), default="3x3x3")
    parser.add_argument("--runs", type=int, default=None, help="seeds 0..runs-1 (default 100, 20 with --realtime)")
    parser.add_argument("--realtime", action="store_true")
    parser.add_argument("--budgets", help="comma-separated search budgets, s (with --realtime)")
    parser.add_argument("--firmware", choices=("auto", "emulator", "mock"), default="auto",
                        help="auto: the firmware in simavr if the toolchain is there, else the mock")
    parser.add_argument("--faults", type=int, default=0, help="N runs at 1 %% byte faults with a resetting disconnect")
    parser.add_argument("--estop-every", type=int, default=0, help="every Nth sped-up run gets --estop-at")
    options = parser.parse_args(argv)
    config = config_module.load()
    if options.budgets:
        budget_table(config, [float(b) for b in options.budgets.split(",")], options.runs or 10, options.firmware)
    elif options.realtime:
        realtime_table(config, options.runs or 20, options.firmware)
    elif options.faults:
        counts(config, options.faults, 0, options.firmware, faults=True)
    else:
        counts(config, options.runs or 100, options.estop_every, options.firmware)


if __name__ == "__main__":
    main(sys.argv[1:])
