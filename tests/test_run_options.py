"""`cube-robot run` options that cannot work are said, not silently ignored."""

import pytest

from robot import config as config_module
from robot.cli import build_parser
from robot.run.options import RunOptions
from robot.run.simulated import run_simulated
from conftest import scratch_config




@pytest.mark.parametrize("value", ["2", "-0.1", "lots"])
def test_fault_rate_must_be_a_probability(value, capsys):
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(["run", "--sim", "--fault-rate", value])
    assert stop.value.code == 2 and "--fault-rate" in capsys.readouterr().err
    assert build_parser().parse_args(["run", "--fault-rate", "0.01"]).fault_rate == 0.01


def test_estop_at_beyond_the_plan_is_said(tmp_path):
    config = config_module.load(scratch_config(tmp_path))
    messages = []
    options = RunOptions(sim=True, firmware="mock", scramble="R U", estop_at=99, verify=False)
    report = run_simulated(config, options, messages.append)
    actions = len(report["plan"]["plan"])
    expected = f"--estop-at 99 is outside this plan's actions 1..{actions}: that fault is not made in this run"
    assert expected in messages and expected in report["warnings"]
    assert f"warning     {expected}" in report.format() and report["solved"] is True


def test_doubtful_scan_attempts_pictures_are_in_the_report(tmp_path):
    config = config_module.load(scratch_config(tmp_path, lambda text: text.replace("save_images: false",
                                                                                   "save_images: true")))
    report = run_simulated(config, RunOptions(sim=True, firmware="mock", scramble="R U", bad_scan="dark",
                                              verify=False), lambda m: None)
    [failed] = report["failed_scan_images"]
    assert failed["attempt"] == 1 and failed["images"] and all(
        str(tmp_path / "scans") in p for p in failed["images"])
    assert failed["images"][0] not in report["scan_images"]  # the doubtful attempt's own pictures
    assert f"doubtful    attempt 1: {failed['images'][0]}" in report.format()


def test_no_port_named_and_nothing_answering_is_a_simulation_said_everywhere(tmp_path, monkeypatch, capsys):
    import json

    from robot import cli
    from robot.link import ports

    scratch_config(tmp_path)
    monkeypatch.setattr(ports, "list_ports", lambda: [])  # no serial port on this machine
    code = cli.main(["run", "--firmware", "mock", "--no-verify", "--config", str(tmp_path / "config.yaml")])
    out = capsys.readouterr().out
    assert code == 0
    body = [line for line in out.splitlines() if line and not line.startswith("=")]
    assert body and all(line.startswith("SIMULATED | ") for line in body)
    assert "RESULT      SIMULATED SOLVED" in out
    [logged] = [json.loads(line) for line in (tmp_path / "data" / "solve-log.jsonl").read_text().splitlines()]
    assert logged["simulated"] is True and logged["mode"] == "simulated" and logged["outcome"] == "SOLVED"


def test_simulated_run_has_its_tables_before_the_start_button(tmp_path, monkeypatch):
    # As on the real robot (its pre-flight), a first run builds the solver tables before waiting for
    # start, so the build is never counted in button->solved.
    from robot.solver import tables

    config = config_module.load(scratch_config(tmp_path))
    messages = []
    real_load = tables.load

    def load(*args, **kwargs):
        messages.append("tables loaded")
        return real_load(*args, **kwargs)
    monkeypatch.setattr(tables, "load", load)
    report = run_simulated(config, RunOptions(sim=True, firmware="mock", scramble="R U", verify=False),
                           messages.append)
    waiting = next(i for i, m in enumerate(messages) if m.startswith("Pressing the emulated start button"))
    assert "tables loaded" in messages[:waiting] and report["execute_ok"] is True


@pytest.mark.parametrize("flags, said", [
    (["--scramble", "R X"], "move 2 'X' is not a move"),
    (["--disconnect-at", "-3"], "-3: plan actions are numbered from 1"),  # it used to pull the cable at action 1
    (["--estop-at", "0"], "0: plan actions are numbered from 1"),
])
def test_impossible_simulation_flags_are_refused_before_anything_runs(flags, said, capsys):
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(["run", "--sim", *flags])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and said in err and "Traceback" not in err
    assert build_parser().parse_args(["run", "--sim", "--scramble", "R U2 F'", "--estop-at", "1"]).estop_at == 1


def test_a_stop_part_way_names_the_action_in_plan_notation_with_advice_that_fits_it():
    from robot.plan import Grip, Turn
    from robot.run.stop_words import interrupted_note

    grip = interrupted_note(10, Grip("RL"), "may have been")
    assert grip.startswith("action 11 (grip RL) may have been stopped part-way") and "turns no layer" in grip
    assert "turn that layer" not in grip and "Grip(" not in grip
    turn = interrupted_note(3, Turn({"R": 90, "L": -90}), "was")
    assert turn.startswith("action 4 (R+L') was stopped part-way") and "turn that layer by hand" in turn


def test_a_stop_before_the_start_press_says_so():
    from robot.run.pipeline import Pipeline

    pipeline = Pipeline(config_module.defaults(), None, print, RunOptions(sim=True))
    assert "before the start button was pressed" in pipeline.cube_state_now()
    pipeline.started = True
    assert "before the scan finished" in pipeline.cube_state_now()


def test_a_simulated_run_at_the_wrong_baud_fails_as_a_real_board_would(tmp_path):
    def slow_baud(text):
        assert "\n  baud: " in text
        return "\n".join("  baud: 9600" if line.startswith("  baud: ") else line for line in text.splitlines())
    config = config_module.load(scratch_config(tmp_path, slow_baud))
    report = run_simulated(config, RunOptions(sim=True, firmware="mock", scramble="R U"), lambda text: None)
    assert report.exit_status() != 0 and report.execute_ok is None
    assert "link.baud is 9600 but the firmware talks at 115200" in " ".join(report.errors)


@pytest.mark.parametrize("flags", [["--sim"], ["--scramble", "R U"], ["--sim", "--estop-at", "2"]])
def test_a_port_with_simulation_flags_is_refused_not_ignored(flags, capsys):
    # A maker who names the robot's port and a simulation flag gets neither the simulation (with the port
    # silently ignored) nor the robot: the command says which flags disagree, and nothing moves.
    from robot.run.commands import run_command

    code = run_command(build_parser().parse_args(["run", "--port", "/dev/ttyACM7", *flags]))
    err = capsys.readouterr().err
    assert code == 2 and "--port /dev/ttyACM7 names a real robot" in err and flags[0] in err
    assert "nothing moved" in err and "run(s)" not in err
    assert (" is for the simulated one" in err) == (len([f for f in flags if f.startswith("--")]) == 1)
