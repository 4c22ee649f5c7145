"""Solver: table contents, plan replay, table management, the solve command."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import copy_tables, scratch_config
from robot import config as config_module
from robot import cube, tables_store
from robot.plan import Grip, RobotProfile, Turn, replay
from robot.solver import Solver, tables
from robot.solver.coords import N_STATES

# OEIS A079761 (half-turn) and A079762 (quarter-turn): optimal distance counts, DBL fixed.
HTM_COUNTS = [1, 9, 54, 321, 1847, 9992, 50136, 227536, 870072, 1887748, 623800, 2644]
QTM_COUNTS = [1, 6, 27, 120, 534, 2256, 8969, 33058, 114149, 360508, 930588, 1350852, 782536, 90280, 276]


@pytest.fixture(scope="module")
def solver():
    return Solver(config_module.load())


def test_metric_tables_reproduce_published_counts(solver):
    assert np.bincount(solver.tables.metric("htm")).tolist() == HTM_COUNTS
    assert np.bincount(solver.tables.metric("qtm")).tolist() == QTM_COUNTS


def test_face_turn_tables_move_coordinates_as_robot_cube_moves_cubies():
    from robot.solver.coords import FACE_TURNS, cubie_coords, face_turn_tables

    cp_move, co_move = face_turn_tables()
    rng = np.random.default_rng(3)
    for _ in range(300):
        state = cube.random_state(rng)
        t = int(rng.integers(len(FACE_TURNS)))
        cp8, co8 = cubie_coords(state)
        assert (cp_move[t, cp8], co_move[t, co8]) == cubie_coords(state * cube.MOVES[FACE_TURNS[t]])


def test_coordinates_are_numbered_as_the_built_tables_expect():
    """Built tables are valid only for this numbering: changing it needs a new tables_store.FORMAT_VERSION."""
    import hashlib

    from robot.solver.coords import cubie_coords, face_turn_tables

    cp_move, co_move = face_turn_tables()
    assert cp_move.dtype == co_move.dtype == np.uint16
    assert hashlib.sha256(cp_move.tobytes()).hexdigest().startswith("01252822f53ad90f")
    assert hashlib.sha256(co_move.tobytes()).hexdigest().startswith("5efcf6435eb23081")
    assert cubie_coords(cube.SOLVED) == (0, 0)
    assert cubie_coords(cube.SOLVED.apply("R U F' D2 L B'")) == (36331, 1958)


def test_robot_cost_table_is_complete(solver):
    cost = solver.tables.robot_cost
    assert cost.shape == (2, N_STATES)
    assert (cost < tables.UNREACHABLE).all()
    assert cost[:, 0].tolist() == [0, 0]
    # Solved states are only the solved coset (index 0).
    assert (cost[:, 1:] > 0).all()


def test_start_costs_are_the_plans_costs(solver):
    """SolverTables.start_costs (bench/plan_arm_time.py's exact means) is what each plan costs from the start."""
    from robot.solver.coords import cubie_coords

    start = solver.tables.start_costs()
    assert start.shape == (2, N_STATES) and start[:, 0].tolist() == [0, 0]
    index = solver.tables.coords.scalar_indexer()
    rng = np.random.default_rng(8)
    for _ in range(40):
        state = cube.random_state(rng)
        at = index(*cubie_coords(state))
        for p, name in enumerate(solver.profile.pair_names):
            assert start[p, at] == solver.solve(state=state, start_grip=name).cost_ms


@pytest.mark.parametrize("start", ["any", "RL", "FB"])
def test_every_plan_replays_to_solved_with_its_cost(solver, start):
    rng = np.random.default_rng(5)
    profile = solver.profile
    for _ in range(200):
        state = cube.random_state(rng)
        # Any robot-frame orientation, and any colour symbols.
        state = state * cube.ROTATIONS[rng.integers(24)]
        colours = "".join(rng.permutation(list("WYROGB")))
        plan = solver.solve(state.to_facelets(colours), start_grip=start)
        assert isinstance(plan.actions[0], Grip)
        if start != "any":
            assert plan.start_pair == start
        parsed = cube.parse_facelets(plan.facelets).cubie
        final, cost = replay(parsed, plan.actions, profile)
        assert final.is_solved()
        assert cost == plan.cost_ms
        # Never two regrips in a row; the moves string lists exactly the turns.
        kinds = [type(a) for a in plan.actions[1:]]
        assert all(not (a is Grip and b is Grip) for a, b in zip(kinds, kinds[1:]))
        assert plan.moves.split() == [a.notation() for a in plan.actions if isinstance(a, Turn)]


def test_metric_plans_are_optimal_and_solve(solver):
    rng = np.random.default_rng(6)
    htm, qtm = solver.tables.metric("htm"), solver.tables.metric("qtm")
    index = solver.tables.coords.scalar_indexer()
    from robot.solver.coords import cubie_coords
    for _ in range(100):
        state = cube.random_state(rng)
        for metric, table in (("htm", htm), ("qtm", qtm)):
            plan = solver.solve(state=state, metric=metric)
            assert plan.length == table[index(*cubie_coords(state))]
            assert set(m[0] for m in plan.metric_moves) <= set("URF")
            assert state.apply(plan.metric_moves).is_solved()


def test_known_plans(solver):
    # From solved nothing to do; one R turn is undone by one arm turn while RL holds.
    plan = solver.solve(cube.SOLVED_FACELETS)
    assert plan.cost_ms == 0 and plan.actions == [Grip("RL")]
    plan = solver.solve(scramble="R", start_grip="RL")
    assert plan.cost_ms == 80 and len(plan.actions) == 2
    plan = solver.solve(scramble="R", start_grip="FB")
    # A regrip first: nothing before it to overlap with, a quarter turn after it.
    assert plan.cost_ms == 80 + solver.profile.regrip_kind_cost("RL", "FB", None, (90,))
    assert plan.cost_ms == solver.profile.plan_cost(plan.actions)


def test_invalid_cube_never_becomes_a_plan(solver):
    with pytest.raises(cube.TwistedCornerError):
        solver.solve(cube.CubieCube(tuple(range(8)), (1, 0, 0, 0, 0, 0, 0, 0)).to_facelets())
    with pytest.raises(ValueError, match="start grip 'XY'"):
        solver.solve(cube.SOLVED_FACELETS, start_grip="XY")


# -- table management --------------------------------------------------------------------------

def _config_with(tmp_path, **timing):
    text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    for key, value in timing.items():
        text = re.sub(rf"(\b{key}: *)\S+", rf"\g<1>{value}", text)
    text = text.replace("dir: tables", f"dir: {tmp_path / 'tables'}")
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return config_module.load(path)


@pytest.fixture(scope="module")
def built_tables(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("tables")
    config = _config_with(tmp_path)
    messages = []
    tables.load(config, log=messages.append)
    return tmp_path, config, messages


def test_first_use_builds_with_message_and_manifest(built_tables):
    tmp_path, config, messages = built_tables
    assert any("building the robot cost table" in m for m in messages)
    manifest = json.loads((tmp_path / "tables" / "manifest.json").read_text())
    assert manifest["format_version"] == tables_store.FORMAT_VERSION
    entry = manifest["files"]["robot-cost.npy"]
    assert entry["profile"] == RobotProfile.from_config(config).describe()
    assert len(entry["sha256"]) == 64


def test_up_to_date_tables_load_without_rebuilding(built_tables):
    tmp_path, config, _ = built_tables
    messages = []
    tables.load(config, log=messages.append)
    assert messages == []


def test_corrupt_and_truncated_tables_are_rebuilt(built_tables):
    tmp_path, config, _ = built_tables
    path = tmp_path / "tables" / "robot-cost.npy"
    reference = path.read_bytes()
    data = bytearray(reference)
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    messages = []
    loaded = tables.load(config, log=messages.append)
    assert any("corrupt" in m and "rebuilding" in m for m in messages)
    assert path.read_bytes() == reference
    path.write_bytes(reference[: len(reference) // 3])
    messages = []
    loaded = tables.load(config, log=messages.append)
    assert any("truncated" in m for m in messages)
    assert loaded.robot_cost.shape == (2, N_STATES)


def test_other_timings_rebuild_the_cost_table(built_tables):
    tmp_path, _, _ = built_tables
    config = _config_with(tmp_path, regrip_ms=400)
    messages = []
    solver = Solver(config, log=messages.append)
    assert any("was built for robot profile" in m and "rebuilding" in m for m in messages)
    # The new regrip time is what the plan now pays for its one regrip.
    assert solver.solve(scramble="R", start_grip="FB").cost_ms == 400 + 80


def test_jaw_settings_rebuild_the_cost_table(built_tables):
    """The regrip's overlap follows the jaws' settings: a change of one is a new profile, so a rebuilt
    table, whose plans pay the new regrip costs."""
    tmp_path, config, _ = built_tables
    before = RobotProfile.from_config(config)
    for key, value in (("motion.jaw_clear_pct", 70), ("motion.arms.R.servo_open_us", 1200)):
        changed = config_module.with_settings(config, {key: value})
        messages = []
        solver = Solver(changed, log=messages.append)
        assert any("was built for robot profile" in m and "rebuilding" in m for m in messages), key
        assert solver.profile.regrip_ms > before.regrip_ms, key  # a later clear, a longer travel: slower
        plan = solver.solve(scramble="R U F2 R'", start_grip="FB")
        assert plan.regrip_count and plan.cost_ms == solver.profile.plan_cost(plan.actions), key


def test_another_arm_layout_needs_no_code_change(tmp_path):
    # A three-arm robot whose arms grip U, R and F, one arm per "pair".  The solver takes any
    # layout; config.load rejects it (the firmware only drives RL/FB), so the settings are set here.
    config = config_module.with_settings(config_module.defaults(), {
        "robot.pairs": {"U": ["U"], "R": ["R"], "F": ["F"]}, "tables.dir": str(tmp_path / "tables")})
    copy_tables(tmp_path / "tables", names=("coords.npz",))  # the same for every layout: built once per run
    solver = Solver(config, log=lambda m: None)
    profile = solver.profile
    rng = np.random.default_rng(9)
    for _ in range(30):
        state = cube.random_state(rng)
        plan = solver.solve(state=state)
        final, cost = replay(state, plan.actions, profile)
        assert final.is_solved() and cost == plan.cost_ms
        assert all(set(a.arms) <= {"U", "R", "F"} for a in plan.actions if isinstance(a, Turn))


# -- command line -------------------------------------------------------------------------------

def _cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "robot", *args], input=stdin, capture_output=True,
                          text=True, cwd=config_module.PROJECT_ROOT, timeout=300)


def test_solve_json_lines_from_stdin_and_exit_status(solver, tmp_path):
    good = cube.apply_moves(cube.SOLVED_FACELETS, "R U2 F'")
    bad = good[:-1] + ("U" if good[-1] != "U" else "R")
    result = _cli("solve", "--json", "-", "--config", str(scratch_config(tmp_path)), stdin=f"{good}\n{bad}\n")
    assert result.returncode == 2
    first, second = [json.loads(line) for line in result.stdout.splitlines()]
    assert first["ok"] and first["facelets"] == good
    assert first["plan"][0]["op"] == "grip" and first["cost_ms"] > 0
    actions = [Grip(a["pair"]) if a["op"] == "grip" else Turn({k: int(v) for k, v in a["arms"].items()})
               for a in first["plan"]]
    final, cost = replay(cube.parse_facelets(good).cubie, actions, solver.profile)
    assert final.is_solved() and cost == first["cost_ms"]
    assert second["ok"] is False and second["error"].startswith("ColourCountError: ")


def test_solve_human_output_and_metrics(tmp_path):
    config = str(scratch_config(tmp_path))  # config.yaml with the session's tables
    result = _cli("solve", "--scramble", "R U2 F'", "--start-grip", "FB", "--config", config)
    assert result.returncode == 0, result.stderr
    assert "ms machine time" in result.stdout and "FB holds the cube" in result.stdout
    result = _cli("solve", "--scramble", "R U2 F'", "--metric", "qtm", "--json", "--config", config)
    obj = json.loads(result.stdout)
    assert "plan" not in obj and "cost_ms" not in obj and obj["length"] == 4


def test_solve_reports_bad_config_with_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("robot:\n  timing:\n    quarter_turn_ms: fast\n")
    result = _cli("solve", "--config", str(path), "--scramble", "R")
    assert result.returncode == 2
    assert f"{path}:3: robot.timing.quarter_turn_ms: expected a whole number, got 'fast'" in result.stderr
