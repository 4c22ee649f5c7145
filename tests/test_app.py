"""`cube-robot run`: whole simulated solves, with the real firmware in simavr.

The virtual cube is moved only by step and servo pulses decoded from the
emulator's pin log, so a run that ends solved proves scan -> decode -> solve
-> stream -> firmware -> motors all worked.
"""

import json
import subprocess
import sys

import pytest

from robot import config as config_module
from robot import cube
from robot.cli import build_parser
from robot.run.options import RunOptions
from robot.run.simulated import run_simulated
from robot.sim import emulator
from robot.vision.scan import ScanSequence
from conftest import scratch_config

pytestmark = pytest.mark.skipif(not emulator.available()[0], reason=f"emulator: {emulator.available()[1]}")
pytestmark = [pytest.mark.firmware, pytestmark]  # every test here starts the firmware in simavr


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    # Keep pictures and the solve log out of the project folder.
    tmp = tmp_path_factory.mktemp("app")
    return config_module.load(scratch_config(tmp))


def _run(config, *flags):
    args = build_parser().parse_args(["run", "--sim", "--firmware", "emulator", *flags])
    messages = []
    report = run_simulated(config, RunOptions.from_args(args), messages.append)
    return report, messages


def _expected_quarters(config, report):
    """Quarter turns the arms must make: the scan's views taken (adaptive: it may stop early), the plan,
    and the verifying rescan (every view), each exactly once."""
    sequence = ScanSequence.from_config(config)
    read_moves = sequence.prefix(report["scan_views"]).moves
    plan_moves = report["plan"]["moves"].replace("+", " ").split()
    quarters = {"": 1, "2": 2, "'": 1}
    return sum(quarters[m[1:]] for m in read_moves + sequence.moves + plan_moves)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(20))
def test_random_scramble_ends_solved(config, seed):
    report, _ = _run(config, "--seed", str(seed))
    assert report["errors"] == []
    assert report["firmware"].startswith("real firmware")
    assert report["solved"] is True and report["verified_solved"] is True
    assert cube.parse_facelets(report["final_state"]).cubie.is_solved()
    # The measured machine time (firmware `done` durations) is close to the prediction.
    assert abs(report["measured_machine_ms"] - report["predicted_machine_ms"]) <= 0.05 * report["predicted_machine_ms"] + 20


@pytest.mark.slow
def test_faults_and_a_disconnect_still_solve_exactly_once(config):
    """20 runs at 1% serial faults with one pulled cable each end solved, each action done once.

    The fault proxy is honest: now and then a corrupted byte becomes the real-time e-stop byte
    `!`.  The firmware must then stop safely and the report name the cube state; such a run is
    checked for that and does not count towards the 20 (at most 5 are allowed).
    """
    solved, safe_stops = 0, 0
    for seed in range(100, 125):
        report, _ = _run(config, "--seed", str(seed), "--fault-rate", "0.01", "--disconnect-at", "4")
        assert report["serial_faults"] > 0
        if report["faults_made_estop_byte"] and not report["solved"]:
            assert any("ESTOP_BYTE" in e for e in report["errors"]), report["errors"]
            assert "cube_state_after_stop" in report
            safe_stops += 1
            continue
        assert report["solved"] is True, (seed, report["errors"])
        assert any("recovered: DisconnectedError" in e for e in report["errors"])
        assert report["turned_quarters"] == _expected_quarters(config, report), seed
        solved += 1
        if solved == 20:
            break
    assert solved == 20, f"only {solved} solved ({safe_stops} safe stops from a corrupted '!')"


def test_estop_stops_safely_and_names_the_state(config):
    report, _ = _run(config, "--seed", "7", "--estop-at", "3")
    assert report["solved"] is False
    assert any("ESTOP_INPUT" in e for e in report["errors"])
    state = report["cube_state_after_stop"]
    assert "after plan action 2 of" in state
    cube.parse_facelets(state.split()[0])  # a legal cube, the one the robot holds


def test_doubtful_scan_is_retried(config):
    report, messages = _run(config, "--seed", "8", "--bad-scan", "dark", "--no-verify")
    assert report["solved"] is True
    assert report["scan_attempts"] >= 2
    assert any("scan attempt 1" in e for e in report["errors"])


def test_scramble_flag_and_readme_command_shape(config, tmp_path):
    report, _ = _run(config, "--scramble", "R U2 F' L", "--no-verify")
    assert report["solved"] is True and report["scramble"] == "R U2 F' L"
    scrambled = cube.SOLVED.apply("R U2 F' L")
    assert report["true_state"] == scrambled.to_facelets()


def test_cli_run_json_and_history(config):
    result = subprocess.run([sys.executable, "-m", "robot", "run", "--sim", "--seed", "9", "--json",
                             "--config", str(config.path)], capture_output=True, text=True, timeout=300,
                            cwd=config_module.PROJECT_ROOT)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["solved"] is True and report["facelets"] and report["plan"]["plan"][0]["op"] == "grip"
    for key in ("recognition_ms", "solve_ms", "predicted_machine_ms", "measured_machine_ms"):
        assert isinstance(report[key], (int, float))
    history = subprocess.run([sys.executable, "-m", "robot", "history", "--config", str(config.path)],
                             capture_output=True, text=True, timeout=60, cwd=config_module.PROJECT_ROOT)
    assert history.returncode == 0 and "solved" in history.stdout


def test_an_inverted_arm_is_simulated_as_wired_the_other_way(config, tmp_path):
    # config.yaml's `invert: true` says that motor is wired the other way round: the simulated robot is
    # the robot the config describes, so the firmware's reversed DIR pulses still turn B the right way.
    path = tmp_path / "inverted.yaml"
    text = config.path.read_text()
    b_section = text.index("    B:\n      invert: false")
    path.write_text(text[:b_section] + text[b_section:].replace("invert: false", "invert: true", 1))
    inverted = config_module.load(path)
    assert inverted.motion.arms["B"].invert is True
    report, _ = _run(inverted, "--scramble", "R U F' U2")
    assert report["errors"] == [] and report["solved"] is True
    assert "B" in report["plan"]["moves"]  # B turned, and turned the right way
