"""The four-arm 3x3x3 robot: profile from config, exact converter, robot-aware search, plan checker."""

from __future__ import annotations

import heapq
import itertools
import time

import numpy as np
import pytest

from robot import config as config_module
from robot.plan3 import Robot3Profile
from robot.solver3 import cube3
from robot.solver3 import robot_search
from robot.solver3.convert import axial_groups, convert, model
from robot3_checker import IllegalPlan, RobotReplay, _turn_stickers, check_plan


@pytest.fixture(scope="module")
def profile():
    return Robot3Profile.from_config(config_module.defaults())


def scrambled(moves_text):
    state = cube3.apply(cube3.solved(), cube3.parse_moves(moves_text))
    return state, cube3.to_facelets(state)


def inverse_text(moves_text):
    return cube3.format_moves(3 * (m // 3) + 2 - m % 3 for m in reversed(cube3.parse_moves(moves_text)))


def random_moves(rng, n):
    return " ".join(cube3.MOVE_NAMES[m] for m in rng.integers(0, 18, n))


# -- config ------------------------------------------------------------------------------


def test_profile_defaults_are_the_firmwares_durations(profile):
    assert profile.arms == ("R", "L", "F", "B")
    # The 2x2x2's turns (the same arms and ramp); a gripper: a servo frame, the new width's pulse, 400 us at 4.7 us/ms.
    assert (profile.quarter_turn_ms, profile.half_turn_ms, profile.open_ms, profile.close_ms) == (80, 130, 107, 107)
    assert profile.grippers == ()  # every arm has the common widths
    assert Robot3Profile.from_config(config_module.load()) == profile  # config.yaml says the same


def test_profile_takes_its_times_from_robot_timing_and_motion(tmp_path):
    from robot import regrip
    from robot.motion import arm_jaws, robot_timing

    path = tmp_path / "config.yaml"
    path.write_text("robot:\n  timing:\n    quarter_turn_ms: 90\n"
                    "motion:\n  servo_speed_us_per_ms: 3.0\n  arms:\n    B:\n      servo_closed_us: 1500\n")
    config = config_module.load(path)
    other = Robot3Profile.from_config(config)
    assert (other.quarter_turn_ms, other.half_turn_ms) == (90, robot_timing(config)["half_turn_ms"])  # measured wins
    assert (other.open_ms, other.close_ms) == (155, 156)  # 21.3 + 400 / 3.0 and 21.7 + 400 / 3.0, rounded up
    b = arm_jaws(config.motion, "B")
    assert other.grippers == (("B", regrip.opening_ms(b), regrip.closing_ms(b)),)
    assert other.op_cost({"op": "open", "arms": ["F", "B"]}) == 155 > other.op_cost({"op": "open", "arms": ["B"]})
    assert other.close_ms_of(["B"]) == 89  # 21.5 + 200 / 3.0, rounded up
    assert other.tilt_ms(90, "RL") == other.open_ms_of(["F", "B"]) + 90 + other.close_ms_of(["F", "B"])


def test_an_old_robot3_timing_section_is_ignored_with_a_note(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("robot3:\n  timing:\n    open_ms: 95\n    close_ms: 95\n  search_budget_s: 1.0\n")
    config = config_module.load(path)
    assert config.robot3.search_budget_s == 1.0
    assert Robot3Profile.from_config(config).open_ms == 107
    assert len(config.notes) == 1 and "robot3.timing is no longer used" in config.notes[0]
    assert f"{path}:2:" in config.notes[0] and "robot.timing" in config.notes[0]


@pytest.mark.parametrize("text, key, words", [
    ("robot3:\n  pairs:\n    RL: [R, F]\n    UD: [U, D]\n", "robot3.pairs", "not opposite"),
    ("robot3:\n  pairs:\n    RL: [R, L]\n    LR: [L, R]\n", "robot3.pairs", "same axis"),
    ("robot3:\n  pairs:\n    RL: [R, L]\n", "robot3.pairs", "exactly two"),
    ("robot3:\n  pairs:\n    RL: [R, L]\n    FB: [F, X]\n", "robot3.pairs", "two opposite faces"),
    ("robot3:\n  tilt_angles: [45]\n", "robot3.tilt_angles", "90"),
    ("robot3:\n  twist_ms: 5\n", "robot3.twist_ms", "unknown setting"),
])
def test_bad_robot3_settings_are_named(tmp_path, text, key, words):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(config_module.ConfigError) as info:
        config_module.load(path)
    assert info.value.key_path == key and info.value.line is not None
    assert words in str(info.value)


# -- converter: hand-checked small cases ---------------------------------------------------


def test_single_moves_cost_what_the_model_says(profile):
    quarter, half = profile.quarter_turn_ms, profile.half_turn_ms
    tilt, restore = profile.open_ms + quarter + profile.close_ms, profile.open_ms + quarter + profile.close_ms
    assert convert("R", profile)[0] == quarter
    assert convert("B2", profile)[0] == half
    assert convert("R L'", profile)[0] == quarter  # both arms of a pair at once
    assert convert("R2 L", profile)[0] == half
    assert convert("R F", profile)[0] == quarter + restore + quarter  # R's gripper at 90 blocks F
    assert convert("R2 F", profile)[0] == half + quarter  # a half turn leaves the gripper at 0
    # U: tilt (RL or FB grippers end at 90, blocking the other pair), restore them, turn.
    assert convert("U", profile)[0] == tilt + restore + quarter
    assert convert("", profile)[0] == 0


def test_axial_groups_merge_and_cancel():
    assert axial_groups(cube3.parse_moves("R L R U U' R")) == [{1: 3, 4: 1}]
    assert axial_groups(cube3.parse_moves("R R'")) == []
    assert axial_groups(cube3.parse_moves("U D2 F")) == [{0: 1, 3: 2}, {2: 1}]


# -- converter: exact, against an independent Dijkstra on the sticker model ----------------


def brute_force_cost(moves_text, profile):
    """Cheapest legal macro-action schedule doing the face moves in order (adjacent opposite faces
    in either order or at once), searched on the checker's sticker model."""
    moves = [(cube3.MOVE_NAMES[m][0], {0: 90, 1: 180, 2: -90}[m % 3]) for m in cube3.parse_moves(moves_text)]
    start = RobotReplay(cube3.SOLVED_FACELETS, profile)
    arms = list(start.closed)
    pairs = dict(profile.pairs)

    def key(j, robot):
        return j, robot.colours.tobytes(), tuple(robot.angle.values())

    def options(j, robot):
        centre = {arm: "URFDLB"[robot.colours[9 * "URFDLB".index(arm) + 4]] for arm in arms}
        arm_of = {face: arm for arm, face in centre.items()}
        for take in (1, 2):  # the next move, or the next two when they are on one axis
            batch = moves[j:j + take]
            if len(batch) < take or not all(face in arm_of for face, _ in batch):
                continue
            turn = {arm_of[face]: angle for face, angle in batch}
            if len(turn) == take and len({profile.pair_of(a) for a in turn}) == 1:
                yield take, [{"op": "turn", "arms": turn}]
        for pair, angle in itertools.product(pairs, profile.tilt_angles):
            yield 0, profile.tilt_ops(pair, angle)
        for pair, faces in pairs.items():
            for subset in ([faces[0]], [faces[1]], list(faces)):
                if all(robot.angle[a] for a in subset):
                    yield 0, profile.restore_ops(subset)

    best = {}
    queue = [(0, 0, 0, start)]
    counter = itertools.count(1)
    while queue:
        cost, _, j, robot = heapq.heappop(queue)
        if j == len(moves):
            return cost
        if best.get(key(j, robot), float("inf")) < cost:
            continue
        for advance, ops in options(j, robot):
            nxt = RobotReplay.__new__(RobotReplay)
            nxt.__dict__ = {**robot.__dict__, "closed": dict(robot.closed), "angle": dict(robot.angle),
                            "elapsed": 0}
            try:
                for i, op in enumerate(ops):
                    nxt.step(i, op)
            except IllegalPlan:
                continue
            k = key(j + advance, nxt)
            if cost + nxt.elapsed < best.get(k, float("inf")):
                best[k] = cost + nxt.elapsed
                heapq.heappush(queue, (cost + nxt.elapsed, next(counter), j + advance, nxt))
    raise AssertionError("no schedule")


def canonical_random_moves(rng, n):
    """Random moves with no face twice in a row and no three on one axis (the brute force keeps order)."""
    out = []
    while len(out) < n:
        m = int(rng.integers(0, 18))
        if out and (m // 3 == out[-1] // 3 or (len(out) > 1 and m // 3 % 3 == out[-1] // 3 % 3 == out[-2] // 3 % 3)):
            continue
        out.append(m)
    return cube3.format_moves(out)


def orders(moves_text):
    """Every order of the sequence's moves that swaps adjacent opposite-face moves (they commute)."""
    moves = moves_text.split()
    out = {tuple(moves)}
    for i in range(len(moves) - 1):
        if "URFDLB".index(moves[i][0]) % 3 == "URFDLB".index(moves[i + 1][0]) % 3:
            out |= {o[:i] + (o[i + 1], o[i]) + o[i + 2:] for o in out}
    return [" ".join(o) for o in out]


def test_converter_equals_independent_brute_force(profile):
    rng = np.random.default_rng(3)
    cases = ["U", "U D'", "R U F", "U2 R", "F U R' D", "U R U' R'"] + [canonical_random_moves(rng, 4) for _ in range(6)]
    for moves in cases:
        assert convert(moves, profile)[0] == min(brute_force_cost(o, profile) for o in orders(moves)), moves


def test_converter_follows_the_profile(tmp_path):
    """Other durations, grippers of their own widths and half-turn tilts change the schedules; still exact."""
    path = tmp_path / "config.yaml"
    path.write_text("robot3:\n  tilt_angles: [90, -90, 180]\nrobot:\n  timing:\n    half_turn_ms: 150\n"
                    "motion:\n  servo_open_us: 1600\n  arms:\n    F:\n      servo_open_us: 1200\n")
    other = Robot3Profile.from_config(config_module.load(path))
    rng = np.random.default_rng(9)
    for moves in ["U2", "U D2 R'", "F2 U' L"] + [canonical_random_moves(rng, 4) for _ in range(3)]:
        assert convert(moves, other)[0] == min(brute_force_cost(o, other) for o in orders(moves)), moves
    assert convert("R2", other)[0] == 150


# -- the checker accepts the converter's schedules and rejects illegal plans ---------------


def test_converter_schedules_pass_the_checker(profile):
    rng = np.random.default_rng(5)
    for _ in range(20):
        scramble = random_moves(rng, 25)
        _, facelets = scrambled(scramble)
        cost, ops = convert(inverse_text(scramble), profile)
        assert check_plan(facelets, ops, cost, profile) == cost
        assert cost == model(profile).costs([cube3.parse_moves(inverse_text(scramble))])[0]


def test_checker_turn_sticker_model_matches_cube3_moves():
    colours = np.repeat(np.arange(6), 9)
    for m, name in enumerate(cube3.MOVE_NAMES):
        face, angle = name[0], {0: 90, 1: 180, 2: -90}[m % 3]
        mine = _turn_stickers(np.arange(54), face, angle, whole_cube=False)
        expected = cube3.to_facelets(cube3.apply(cube3.solved(), [m]))
        assert "".join("URFDLB"[colours[i]] for i in mine) == expected, name


@pytest.mark.parametrize("ops, words", [
    ([{"op": "open", "arms": ["F", "B"]}, {"op": "turn", "arms": {"R": 90}}], "holding pair is open"),
    ([{"op": "open", "arms": ["F"]}, {"op": "turn", "arms": {"L": -90}}], "holding pair is open"),
    ([{"op": "turn", "arms": {"F": 90}}, {"op": "turn", "arms": {"R": 90}}], "blocks"),
    ([{"op": "tilt", "arms": {"R": 90, "L": -90}}], "other pair is closed"),
    ([{"op": "open", "arms": ["F"]}, {"op": "tilt", "arms": {"R": 90, "L": -90}}], "other pair is closed"),
    ([{"op": "open", "arms": ["R", "L"]}, {"op": "open", "arms": ["F"]}], "fall"),
    ([{"op": "open", "arms": ["F", "B"]}, {"op": "tilt", "arms": {"R": 90, "L": 90}}], "same way"),
    ([{"op": "close", "arms": ["R"]}], "not open"),
])
def test_checker_rejects_illegal_actions(profile, ops, words):
    with pytest.raises(IllegalPlan, match=words):
        check_plan(cube3.SOLVED_FACELETS, ops, 0, profile)


def test_checker_rejects_unsolved_end_and_false_cost(profile):
    _, facelets = scrambled("R U")
    cost, ops = convert("U' R'", profile)
    with pytest.raises(IllegalPlan, match="does not solve"):
        check_plan(facelets, ops[:-1], cost, profile)
    with pytest.raises(IllegalPlan, match="claims"):
        check_plan(facelets, ops, cost - 1, profile)
    with pytest.raises(IllegalPlan, match="left open"):
        check_plan(cube3.SOLVED_FACELETS, [{"op": "open", "arms": ["R"]}], profile.open_ms, profile)


# -- robot-aware search, with a stand-in solver that knows only short solutions ------------


def short_solver(depth=2):
    """A `solutions` stand-in: meet-in-the-middle over facelet permutations (cubes within 2*depth moves)."""
    perms = [_turn_stickers(np.arange(54), name[0], {0: 90, 1: 180, 2: -90}[m % 3], whole_cube=False)
             for m, name in enumerate(cube3.MOVE_NAMES)]
    solved = np.repeat(np.arange(6), 9)

    def ball(start):
        seen = {start.tobytes(): []}
        frontier = [(start, [])]
        for _ in range(depth):
            nxt = []
            for colours, path in frontier:
                for m, p in enumerate(perms):
                    c = colours[p]
                    if c.tobytes() not in seen:
                        seen[c.tobytes()] = path + [m]
                        nxt.append((c, path + [m]))
            frontier = nxt
        return seen

    from_solved = ball(solved)
    calls = []

    def solutions(facelets, metric=None, max_length=None, time_limit=None):
        calls.append(metric)
        centres = [facelets[9 * f + 4] for f in range(6)]
        for colours_bytes, path in ball(np.array([centres.index(c) for c in facelets])).items():
            if colours_bytes in from_solved:
                back = [3 * (m // 3) + 2 - m % 3 for m in reversed(from_solved[colours_bytes])]
                yield cube3.format_moves(path + back)
                return

    solutions.calls = calls
    return solutions


def test_search_is_never_worse_than_plain_and_plans_check(profile):
    solver = short_solver()
    for scramble in ("U R", "F U' L", "D B2 R U"):
        state, facelets = scrambled(scramble)
        report = robot_search.search(state, profile, solver, time_limit=30, use_premoves=False)
        assert report.variants_tried == 96 and report.candidates == 96
        assert report.best_cost_ms <= report.plain_cost_ms
        plan = robot_search.plan(facelets, profile, solver, time_limit=1.5)
        assert plan.cost_ms == report.best_cost_ms
        assert check_plan(facelets, plan.ops, plan.cost_ms, profile) == plan.cost_ms
        assert convert(plan.moves, profile)[0] == plan.cost_ms  # the floor: its own sequence converted
    assert set(solver.calls) == {"axial"}


def test_premove_variants_solve_the_cube(profile):
    state, facelets = scrambled("F R'")
    solver = short_solver()
    premove_variants = [v for v in robot_search.all_variants(state, profile) if v.premove is not None]
    assert len(premove_variants) == 12 * 96
    for variant in premove_variants[::97]:
        moves = variant.back(cube3.parse_moves(next(solver(variant.facelets))))
        assert moves[0] == variant.premove
        cost, ops = convert(cube3.format_moves(moves), profile)
        assert check_plan(facelets, ops, cost, profile) == cost


def test_plan_json_is_the_2x2x2_form_and_names_bad_input(profile):
    _, facelets = scrambled("R F'")
    answer = robot_search.plan_json(facelets, config_module.defaults(), solutions=short_solver())
    assert answer["ok"] is True and answer["metric"] == "robot"
    assert {op["op"] for op in answer["plan"]} <= {"open", "close", "turn", "tilt"}
    assert check_plan(facelets, answer["plan"], answer["cost_ms"], profile) == answer["cost_ms"]
    assert answer["length"] == len(answer["moves"].split())
    bad = robot_search.plan_json(facelets[:-1], config_module.defaults(), solutions=short_solver())
    assert bad["ok"] is False and "54" in bad["error"]


# -- docs/robot3.svg is what scripts/robot3_diagram.py draws from config today ---------------


def test_robot3_figure_is_up_to_date(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    script = root / "scripts" / "robot3_diagram.py"
    check = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr
    slower = tmp_path / "config.yaml"
    slower.write_text("motion:\n  servo_speed_us_per_ms: 3.0\n")  # slower jaws: 155 ms a gripper
    out = tmp_path / "robot3.svg"
    subprocess.run([sys.executable, str(script), "--config", str(slower), "--output", str(out)], check=True,
                   capture_output=True, timeout=60)
    assert "open_ms" not in out.read_text() and "155 ms" in out.read_text()
    assert out.read_text() != (root / "docs" / "robot3.svg").read_text()
    assert "robot3.svg" in (root / "docs" / "robot3.md").read_text()


def test_text_listing_ends_at_the_plan_cost(profile):
    from robot.plan3 import describe

    _, facelets = scrambled("U F")
    plan = robot_search.solve_robot(facelets, config_module.defaults(), time_limit=0.5, solutions=short_solver())
    text = describe(plan, profile)
    assert f"{plan.cost_ms} ms machine time" in text and "SIMULATED" in text
    assert text.splitlines()[-2].split()[0] == str(plan.cost_ms)  # the clock of the last op


# -- cube-robot solve --puzzle 3x3x3 --metric robot ------------------------------------------


def test_cli_robot_metric_json_and_text(monkeypatch, capsys, profile):
    import io
    import json

    from robot import cli

    monkeypatch.setattr(robot_search, "default_solutions", lambda config=None: short_solver())
    _, good = scrambled("L U2")
    bad = good[:53]
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{good}\n{bad}\n"))
    code = cli.main(["solve", "--puzzle", "3x3x3", "--metric", "robot", "--json", "--time-limit", "0.3", "-"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 2 and [line["ok"] for line in lines] == [True, False]
    assert check_plan(good, lines[0]["plan"], lines[0]["cost_ms"], profile) == lines[0]["cost_ms"]
    assert lines[1]["error_type"] == "LengthError"
    code = cli.main(["solve", "--puzzle", "3x3x3", "--metric", "robot", "--time-limit", "0.3", "--scramble", "F' D"])
    out = capsys.readouterr().out
    assert code == 0 and "machine time" in out and "tilt" in out  # D needs a tilt
    assert cli.main(["solve", "--puzzle", "3x3x3", "--metric", "robot", "--max-length", "20", "--scramble", "R"]) == 2
    assert "does not apply" in capsys.readouterr().err


def test_cli_robot_metric_without_tables_says_how_to_build(tmp_path, capsys):
    from robot import cli

    config = tmp_path / "config.yaml"
    config.write_text(f"tables:\n  dir: {tmp_path / 'tables'}\n")
    args = ["solve", "--puzzle", "3x3x3", "--metric", "robot", "--config", str(config), "--scramble", "R"]
    assert cli.main(args) == 2
    assert "cube-robot tables build --puzzle 3x3x3" in capsys.readouterr().err
    assert not (tmp_path / "tables" / "3x3x3").exists()


@pytest.mark.slow
def test_robot_plans_with_the_real_two_phase_search(profile, session_tables3):
    from robot.solver3 import api, tables

    api.load_search(tables.directory_for(config_module.load()), build=True)
    rng = np.random.default_rng(44)
    for _ in range(3):
        state = cube3.random_state(rng)
        facelets = cube3.to_facelets(state)
        plain = api.solve(facelets, metric="htm", max_length=20)
        report = robot_search.SearchReport()
        plan = robot_search.plan(facelets, profile, robot_search.default_solutions(), 1.0,
                                 seeds=[plain.moves], report=report)
        assert check_plan(facelets, plan.ops, plan.cost_ms, profile) == plan.cost_ms
        assert plan.cost_ms <= convert(plain.moves, profile)[0] and report.candidates > 1


@pytest.mark.slow
def test_the_two_phase_search_choosing_by_robot_time_keeps_only_cheaper_plans(profile, session_tables3):
    from robot.solver3 import api, tables
    from robot.solver3.convert import model

    api.load_search(tables.directory_for(config_module.load()), build=True)
    state = cube3.random_state(np.random.default_rng(45))
    facelets = cube3.to_facelets(state)
    rate = model(profile)
    seen = []
    report = robot_search.SearchReport()
    rated = robot_search._rate

    def spy(report, state, moves, rate, where):
        seen.append(rate.cost(moves))
        rated(report, state, moves, rate, where)

    robot_search._rate = spy
    try:
        robot_search.robot_cost_stage(report, state, robot_search.default_solutions().engine, rate,
                                      deadline=time.perf_counter() + 1.0)
    finally:
        robot_search._rate = rated
    assert report.robot_cost_found == len(seen) >= 1
    assert seen == sorted(seen, reverse=True) and len(set(seen)) == len(seen)  # each one cheaper
    assert cube3.to_facelets(cube3.apply(state, report.best_moves)) == cube3.SOLVED_FACELETS
    assert len(report.best_moves) <= 20 and report.best_cost_ms == seen[-1]
    plan = robot_search.plan(facelets, profile, robot_search.default_solutions(), 1.0)
    assert check_plan(facelets, plan.ops, plan.cost_ms, profile) == plan.cost_ms


@pytest.mark.slow
def test_the_budget_holds_on_a_short_scramble_no_candidate_rated_past_it(profile, session_tables3):
    """README's example: a short scramble's phase-2 levels hold hundreds of finishes, each rated by
    the converter; past the deadline (on a fake clock that a rating advances) none may be rated."""
    from robot.solver3 import api, tables

    api.load_search(tables.directory_for(config_module.load()), build=True)
    state, facelets = scrambled("R U F' D2 L B'")
    now = [0.0]
    rate = model(profile)
    rated_at = []
    real_cost = rate.cost

    def slow_cost(moves):  # a converter that takes 50 ms of the fake clock a call
        rated_at.append(now[0])
        now[0] += 0.05
        return real_cost(moves)

    rate.cost = slow_cost
    try:
        report = robot_search.search(state, profile, robot_search.default_solutions(), time_limit=2.0,
                                     use_premoves=False, clock=lambda: now[0])
    finally:
        del rate.cost
    assert report.best_cost_ms is not None and rated_at and rated_at[0] <= 2.0
    assert [t for t in rated_at if t > 2.0] == []  # none rated past the budget once one is in hand
    assert cube3.to_facelets(cube3.apply(state, report.best_moves)) == cube3.SOLVED_FACELETS
