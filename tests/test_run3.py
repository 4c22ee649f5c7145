"""run --puzzle 3x3x3 --sim (robot/run/puzzle3.py on robot/sim/robot_sim3.py): SIMULATED SOLVED only when the
rescan saw it solved, every stop names the 54-facelet state, a refused scan is rescanned, never guessed.

The simulated robot is a firmware in 3x3x3 mode behind the host's link: the mock firmware here (its reported actions
move the virtual cube), or (tests marked firmware) the real firmware in simavr, whose pins move it."""

from __future__ import annotations

import pytest

from robot import config as config_module
from robot.cli import build_parser
from robot.plan3 import Plan3
from robot.run import puzzle3
from robot.run.options import RunOptions
from robot.sim import emulator
from robot.sim.robot_sim3 import SimulatedRobot3

BUDGET_S = 0.2  # the search's budget here: any plan will do, the tests check the run, not the plan's speed


@pytest.fixture(scope="module")
def config():
    return config_module.load()


def run(config, tables, **options):
    options.setdefault("firmware", "mock")
    said: list[str] = []
    report = puzzle3.run_puzzle3(config, RunOptions(sim=True, **options), said.append, budget_s=BUDGET_S)
    return report, said


def test_seeded_run_ends_solved_verified_by_the_rescan(config, session_tables3):
    report, said = run(config, session_tables3, seed=7)
    assert report.outcome == puzzle3.SOLVED, report.format()
    assert report.checked == "rescan shows solved"
    assert puzzle3.is_solved3(report.final_true)  # the virtual cube, moved only by the actions the mock reported done
    assert "Python mock firmware, 3x3x3 mode" in report.backend
    assert report.scanned == puzzle3.by_centres(report.plan_start_true, report.plan_start_true)
    assert report.ops_done == report.ops > 0
    assert report.exit_status() == 0
    assert "SIMULATED" in report.backend and "SIMULATED" in said[0]


@pytest.mark.firmware
@pytest.mark.skipif(not emulator.available()[0], reason="the firmware emulator is not available")
def test_seeded_run_on_the_real_firmware_in_simavr_ends_solved_verified_by_the_rescan(config, session_tables3):
    """The plan streamed as lines by the link to the firmware's 3x3x3 mode; the virtual cube moved by its pins."""
    report, _ = run(config, session_tables3, seed=7, firmware="emulator")
    assert "real firmware (.elf) in simavr" in report.backend
    assert report.outcome == puzzle3.SOLVED, report.format()
    assert report.checked == "rescan shows solved" and puzzle3.is_solved3(report.final_true)
    assert report.ops_done == report.ops > 0
    # Predicted vs measured, as the 2x2x2's report: the measured time is the board's `done` lines'.
    assert report.measured_ms is not None and report.measured_ms > 0
    assert f"plan arm time: predicted {report.predicted_ms} ms, measured {report.measured_ms:.0f} ms" in report.format()


def test_the_mock_claims_no_measured_arm_time(config, session_tables3):
    """A mock's `done` times are its own model, not a measurement."""
    report, _ = run(config, session_tables3, seed=7)
    assert report.measured_ms is None and "measured" not in report.format()


def test_a_scrambled_cube_the_scan_misread_is_not_called_solved(config, session_tables3):
    """SOLVED comes from the rescan alone: a plan for the wrong cube ends NOT SOLVED, naming what it saw."""
    def wrong_plan(facelets, budget):  # one quarter turn: it cannot solve a scrambled cube
        return Plan3(facelets, "R", [{"op": "turn", "arms": {"R": 90}}], 80)

    report = puzzle3.run_puzzle3(config, RunOptions(sim=True, seed=3, firmware="mock"), lambda text: None,
                                 solve=wrong_plan)
    assert report.outcome == puzzle3.NOT_SOLVED
    assert report.checked.startswith("rescan shows NOT solved")
    assert not puzzle3.is_solved3(report.final_true)


def test_an_emergency_stop_names_the_54_facelet_state(config, session_tables3):
    report, _ = run(config, session_tables3, seed=11, estop_at=9)
    assert report.outcome == puzzle3.STOPPED == "EMERGENCY STOP" and report.ops_done == 8 and report.stopped
    named = report.cube_state.split()[0]
    assert len(named) == 54
    assert named == puzzle3.by_centres(report.final_true, report.plan_start_true)  # the truth, as the scan named it
    assert "after plan op 8 of" in report.cube_state


def blocked(facelets, budget):
    return Plan3(facelets, "R F", [{"op": "turn", "arms": {"R": 90}}, {"op": "turn", "arms": {"F": 90}}], 160)


def test_a_jam_names_the_state_it_cannot_be_sure_of(config, session_tables3):
    """R left at 90 blocks F's layer: a board without the 3x3x3 rules runs it, the virtual robot jams with its
    evidence, and the stop names the last state the host is sure of."""
    robot = SimulatedRobot3(config, puzzle3.start_state(RunOptions(seed=5), __import__("numpy").random.default_rng(5)),
                            seed=5, firmware="mock").start()
    robot.mock.puzzle3.check_turn = lambda args: None  # a board that lets a blocked layer turn

    report = puzzle3.run_puzzle3(config, RunOptions(sim=True, seed=5), lambda text: None, solve=blocked, robot=robot)
    assert report.outcome == puzzle3.NOT_SOLVED and report.stopped, report.format()
    assert report.cube_state.startswith("NOT KNOWN: ")
    named = report.cube_state.split()[2]
    truth = puzzle3.by_centres(report.final_true, report.plan_start_true)
    assert named == truth and truth in report.possible_states
    assert "jammed (blocked) in plan op 1 of 2 .. plan op 2 of 2" in report.cube_state \
        or "jammed (blocked) in plan op 2 of 2" in report.cube_state, report.cube_state
    assert any("gripper R" in e for e in report.errors)


@pytest.mark.parametrize("firmware", [
    "mock",
    pytest.param("emulator", marks=[pytest.mark.firmware, pytest.mark.skipif(
        not emulator.available()[0], reason="the firmware emulator is not available")]),
])
def test_an_op_the_board_refuses_stops_naming_the_exact_state(config, session_tables3, firmware):
    """The board in 3x3x3 mode (mock or firmware) refuses F's turn while R stands at 90 (GRIPPER_ACROSS):
    the line did nothing, the state is exact."""
    report = puzzle3.run_puzzle3(config, RunOptions(sim=True, seed=5, firmware=firmware), lambda text: None,
                                 solve=blocked)
    assert report.outcome == puzzle3.NOT_SOLVED and report.stopped and report.ops_done == 1, report.format()
    assert report.cube_state.split()[0] == puzzle3.by_centres(report.final_true, report.plan_start_true)
    assert "was refused by the board and did nothing" in report.cube_state
    assert any("GRIPPER_ACROSS" in e for e in report.errors), report.errors


def test_a_refused_scan_is_rescanned_never_guessed(config, session_tables3):
    report, said = run(config, session_tables3, seed=2, bad_scan="dark")
    assert report.scan_attempts == 2 and len(report.refusals) == 1
    assert any("refused" in line and "rescanning" in line for line in said)
    assert report.outcome == puzzle3.SOLVED


def test_every_scan_refused_stops_before_any_plan_op(config, session_tables3):
    robot = SimulatedRobot3(config, puzzle3.start_state(RunOptions(seed=4), __import__("numpy").random.default_rng(4)),
                            seed=4, bad_scan="dark", firmware="mock")
    robot.before_scan = lambda attempt: SimulatedRobot3.before_scan(robot, 1)  # every scan as dark as the first

    def never(facelets, budget):
        raise AssertionError("a refused scan was solved")

    report = puzzle3.run_puzzle3(config, RunOptions(sim=True), lambda text: None, solve=never, robot=robot)
    assert report.outcome == puzzle3.NOT_SOLVED and report.stopped and report.scanned is None
    assert report.scan_attempts == config.run.scan_attempts == len(report.refusals)
    assert report.cube_state.startswith("not read")
    assert report.ops_done == 0


@pytest.mark.parametrize("flags, named", [(["--resume"], "--resume"),
                                          (["--arms-straight"], "--arms-straight"),
                                          ([], "add --sim")])
def test_the_cli_refuses_what_the_3x3x3_run_cannot_do_by_name(flags, named, capsys):
    args = build_parser().parse_args(["run", "--puzzle", "3x3x3", *flags])
    assert args.handler(args) == 2
    err = capsys.readouterr().err
    assert named in err and "nothing moved" in err


def test_the_2x2x2_is_the_default_puzzle():
    assert build_parser().parse_args(["run", "--sim"]).puzzle == "2x2x2"


def test_the_net_draws_54_facelets():
    net = puzzle3.net3("U" * 9 + "R" * 9 + "F" * 9 + "D" * 9 + "L" * 9 + "B" * 9).splitlines()
    assert net[3] == "L L L F F F R R R B B B" and net[0].strip() == "U U U" and len(net) == 9


def cli_run(flags, capsys):
    args = build_parser().parse_args(["run", "--puzzle", "3x3x3", "--sim", "--firmware", "mock", *flags])
    status = args.handler(args)
    return status, capsys.readouterr().out.splitlines()


def test_no_verify_reads_the_virtual_cube_and_exits_0_as_the_2x2x2(session_tables3, capsys):
    """Exit 3 (EXECUTED (NOT VERIFIED)) is a real robot's: a simulation's truth is its virtual cube."""
    status, out = cli_run(["--seed", "9", "--bad-scan", "dark", "--no-verify"], capsys)
    assert out[-1] == "SIMULATED | RESULT SIMULATED SOLVED (read from the virtual cube; no rescan: --no-verify)"
    assert status == 0


def test_an_estop_ends_with_the_2x2x2_words_on_a_result_line_and_is_in_the_solve_log(config, session_tables3,
                                                                                      capsys):
    from robot.run import log

    old = {"time": "2026-01-01T00:00:00", "mode": "simulated", "simulated": True, "outcome": "SOLVED",
           "button_to_solved_ms": 2500.0}  # a 2x2x2 line logged before runs named their puzzle
    path = log.log_path(config)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(__import__("json").dumps(old) + "\n")
    status, out = cli_run(["--seed", "11", "--estop-at", "9"], capsys)
    assert status == 130 and "SIMULATED | 3x3x3 run: EMERGENCY STOP" in out
    assert out[-1].startswith("SIMULATED | RESULT SIMULATED EMERGENCY STOP: emergency stop during plan op 9 of ")
    runs = log.read(path, warn=pytest.fail)
    assert [r.get("puzzle") for r in runs] == [None, "3x3x3"] and runs[1]["outcome"] == "EMERGENCY STOP"
    lines = log.summary(runs, path, 5)
    assert "SIMULATED realtime: 1 run; solved 1 of 1 (100%)" in lines  # the 2x2x2's rate, without the 3x3x3
    assert "SIMULATED 3x3x3 sped up (times compressed, not the robot's): 1 run; solved 0 of 1 (0%)" in lines
    assert "  2026-01-01T00:00:00  2x2x2  SIMULATED    2500 ms" in "\n".join(lines)
    assert any(" 3x3x3  SIM fast " in line and "EMERGENCY STOP: emergency stop during plan op 9" in line
               for line in lines), lines


def test_auto_names_the_backend_it_picked(config, monkeypatch):
    """--firmware auto: the real firmware in simavr when the toolchain is there, else the mock, saying why."""
    monkeypatch.setattr(emulator, "available", lambda: (False, "simavr is not installed"))
    robot = SimulatedRobot3(config, "U" * 9 + "R" * 9 + "F" * 9 + "D" * 9 + "L" * 9 + "B" * 9, firmware="auto")
    try:
        assert robot.backend.endswith("(simavr is not installed)") and "Python mock firmware" in robot.backend
        assert not robot.uses_emulator
    finally:
        robot.close()
    monkeypatch.setattr(emulator, "available", lambda: (True, ""))
    robot = SimulatedRobot3(config, "U" * 9 + "R" * 9 + "F" * 9 + "D" * 9 + "L" * 9 + "B" * 9, firmware="auto")
    assert robot.uses_emulator and "real firmware (.elf) in simavr" in robot.backend
    robot.close()  # never started: nothing to stop


def test_the_report_says_the_scanned_string_is_the_same_cube_turned(config, session_tables3):
    report, _ = run(config, session_tables3, seed=7)
    text = report.format()
    assert f"scanned (attempt 1): {report.scanned} (the same cube after the scan's whole-cube turns" in text


def test_a_lamp_preset_lights_every_scan_and_the_report_says_so(config, session_tables3):
    """--light glare on the 3x3x3: the lamp is on the pictures of every view (the camera's lamp), the report
    names it, and the run ends right: solved when the rescan saw it, else a refusal, never a guess."""
    report, said = run(config, session_tables3, seed=3, light="glare")
    assert report.light and report.light.startswith("SIMULATED lamp on every scan"), report.light
    assert f"light: {report.light}" in report.format()
    truth_solved = puzzle3.is_solved3(report.final_true)
    assert (report.outcome == puzzle3.SOLVED) == truth_solved, report.format()
