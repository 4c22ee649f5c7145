"""The bring-up commands with --puzzle 3x3x3 on both emulated robots (the real firmware in simavr, and
the Python mock): the host sets PUZZLE 3 at the handshake and each command does what it says under the
board's 3x3x3 rules (checked on the board's WHERE); a move the board refuses is said by its error's
name with what to do, and nothing moved.  The pins of the same commands: tests/test_bringup3_pins.py.
"""

from __future__ import annotations

import json

import pytest

from robot import config as config_module
from robot.arms.actions import BringupError
from robot.bringup import puzzle3
from robot.bringup.connection import SIM_HAND_OFFSETS, ConnectedRobot
from robot.sim import emulator

from test_bringup_sim import BACKENDS, ROOT, cube_robot, sim

CLOSED = {a: "closed" for a in "RLFB"}
OPEN = {a: "open" for a in "RLFB"}
NEVER = {a: None for a in "RLFB"}


def sim3(capsys, monkeypatch, backend, *args, **kwargs):
    code, result, err = sim(capsys, monkeypatch, backend, *args, "--puzzle", "3x3x3", **kwargs)
    assert result["puzzle"] == "3x3x3"
    return code, result, err


def sensors_config(tmp_path) -> str:
    text = (ROOT / "config.yaml").read_text().replace("sensors: false", "sensors: true", 1)
    text = text.replace("zero_offset_steps: 0 ", "zero_offset_steps: -20 ")  # straight arms stand off the shared input
    config = tmp_path / "config.yaml"
    config.write_text(text)
    return str(config)


def quiet(text: str) -> None:
    pass


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_board_is_set_to_3x3x3_at_the_handshake_and_2x2x2_stays_the_default(backend, capsys, monkeypatch):
    code, result, err = sim3(capsys, monkeypatch, backend, "motors", "on")
    assert code == 0 and "its 3x3x3 mode (PUZZLE 3, its id line says pz 3)" in err, err
    code, result, err = sim(capsys, monkeypatch, backend, "motors", "on")
    assert code == 0 and result["puzzle"] == "2x2x2" and "PUZZLE" not in err
    with ConnectedRobot(config_module.load(), sim=True, firmware=backend, puzzle="3x3x3") as robot:
        assert robot.link.request("HELLO")[0].puzzle == "3x3x3"


@pytest.mark.parametrize("backend", BACKENDS)
def test_load_opens_all_four_waits_and_closes_all_four_at_0(backend, capsys, monkeypatch):
    code, result, err = sim3(capsys, monkeypatch, backend, "load", "--arms-straight")
    assert code == 0 and result["where"]["grippers"] == CLOSED, err
    assert result["where"]["positions"] == {a: 0 for a in "RLFB"}
    said = err.index("All grippers open"), err.index("pressing the emulated start button"), err.index("Cube held by all four")
    assert list(said) == sorted(said), err
    assert "the simulated arms really stand off straight by R +7" in err  # the word given, and what it hid


@pytest.mark.parametrize("backend", BACKENDS)
def test_load_with_homing_sensors_homes_each_arm_before_the_cube_goes_in(backend, tmp_path, capsys, monkeypatch):
    code, result, err = sim3(capsys, monkeypatch, backend, "load", config=sensors_config(tmp_path))
    assert code == 0 and result["where"]["grippers"] == CLOSED, err
    assert result["where"]["positions"] == {a: 0 for a in "RLFB"}
    assert err.index("Homing arm B") < err.index("put the 3x3x3 between them")


@pytest.mark.parametrize("backend", BACKENDS)
def test_load_without_known_positions_is_refused_by_name_before_anything_moves(backend, capsys, monkeypatch):
    code, result, err = sim3(capsys, monkeypatch, backend, "load")
    assert code == 1 and "POSITION_UNKNOWN" in result["error"] and "--arms-straight" in result["error"]
    assert "nothing moved" in result["error"]
    assert result["where"]["grippers"] == NEVER and result["where"]["motors_on"] is False  # no line went out
    assert "put the 3x3x3" not in err


@pytest.mark.parametrize("backend", BACKENDS)
def test_release_opens_all_four(backend, capsys, monkeypatch):
    code, result, err = sim3(capsys, monkeypatch, backend, "release")
    assert code == 0 and result["where"]["grippers"] == OPEN and "take the cube out" in err


@pytest.mark.parametrize("backend", BACKENDS)
def test_grip_one_arm_a_pair_or_all(backend, capsys, monkeypatch):
    code, result, err = sim3(capsys, monkeypatch, backend, "grip", "FB", "close", "--arms-straight")
    assert code == 0 and result["where"]["grippers"] == {"R": None, "L": None, "F": "closed", "B": "closed"}, err
    assert "Pair FB holds the cube" in err
    code, result, err = sim3(capsys, monkeypatch, backend, "grip", "L", "open")
    assert code == 0 and result["where"]["grippers"] == {"R": None, "L": "open", "F": None, "B": None}, err
    code, result, err = sim3(capsys, monkeypatch, backend, "grip", "all", "close", "--arms-straight")
    assert code == 0 and result["where"]["grippers"] == CLOSED and "Every gripper is closed" in err


@pytest.mark.parametrize("backend", BACKENDS)
def test_closing_on_arms_of_unknown_position_is_refused_by_the_board_by_name(backend, capsys, monkeypatch):
    code, result, err = sim3(capsys, monkeypatch, backend, "grip", "R", "close")
    assert code == 1, err
    assert "the board refused `CLOSE R`: POSITION_UNKNOWN" in result["error"]
    assert "that line did nothing" in result["error"] and "--arms-straight" in result["error"]
    assert result["where"]["grippers"]["R"] is None  # not closed


@pytest.mark.parametrize("backend", BACKENDS)
def test_jog_in_the_air_opens_a_gripper_never_set_and_turns_the_arm(backend, capsys, monkeypatch):
    config = config_module.load()
    with ConnectedRobot(config, sim=True, firmware=backend, puzzle="3x3x3") as robot:
        told: list[str] = []
        where = puzzle3.jog(robot.link, "R", 25, told.append)
        assert where.grippers["R"] == "open" and any("Opened gripper R first" in t for t in told)
        assert robot.arm_angle("R") == SIM_HAND_OFFSETS["R"] + 25
        assert any("between quarter positions" in t for t in told) is False  # its position is not known


@pytest.mark.parametrize("backend", BACKENDS)
def test_jog_of_a_closed_arm_is_refused_by_name_with_what_to_do_and_nothing_moves(backend):
    with ConnectedRobot(config_module.load(), sim=True, firmware=backend, puzzle="3x3x3") as robot:
        puzzle3.grip(robot.link, "RLFB", True, quiet, arms_straight=True)
        before = robot.link.where()
        angles = {a: robot.arm_angle(a) for a in "RLFB"}
        with pytest.raises(BringupError) as refused:
            puzzle3.jog(robot.link, "R", 100, quiet)
        text = str(refused.value)
        assert "the board refused `JOG R 100`: ARM_BLOCKED" in text and "that line did nothing" in text
        assert "open R's gripper first: cube-robot grip R open --puzzle 3x3x3" in text
        assert robot.link.where() == before
        assert {a: robot.arm_angle(a) for a in "RLFB"} == angles


@pytest.mark.parametrize("backend", BACKENDS)
def test_jog_with_the_cube_turns_a_layer_while_the_other_pair_holds_it_at_0(backend, capsys, monkeypatch):
    code, result, err = sim3(capsys, monkeypatch, backend, "jog", "R", "90", "--with-cube", "--arms-straight")
    assert code == 0, err
    where = result["where"]
    assert where["positions"]["R"] == 100 and where["positions"]["F"] == 0 and where["positions"]["B"] == 0
    assert {a: where["grippers"][a] for a in "RFB"} == {"R": "closed", "F": "closed", "B": "closed"}
    assert "Gripper R now stands at 90, across the F and B layers" in err


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_layer_turn_across_a_gripper_at_90_is_refused_by_name_and_nothing_moves(backend):
    with ConnectedRobot(config_module.load(), sim=True, firmware=backend, puzzle="3x3x3") as robot:
        puzzle3.jog(robot.link, "R", 100, quiet, with_cube=True, arms_straight=True)
        puzzle3.grip(robot.link, "L", True, quiet, arms_straight=True)  # every gripper closed; R at 90
        before = robot.link.where()
        angles = {a: robot.arm_angle(a) for a in "RLFB"}
        with pytest.raises(BringupError) as refused:
            puzzle3.jog(robot.link, "F", 100, quiet, with_cube=True)
        text = str(refused.value)
        assert "the board refused `TURN F90`: GRIPPER_ACROSS" in text and "gripper R stands at 90" in text
        assert "cube-robot grip R open --puzzle 3x3x3" in text
        assert robot.link.where() == before and {a: robot.arm_angle(a) for a in "RLFB"} == angles


@pytest.mark.parametrize("backend", BACKENDS)
def test_home_with_sensors_goes_pair_by_pair_and_closes_the_closed_grippers_again(backend, tmp_path):
    config = config_module.load(sensors_config(tmp_path))
    with ConnectedRobot(config, sim=True, firmware=backend, puzzle="3x3x3") as robot:
        puzzle3.grip(robot.link, "RLFB", True, quiet, arms_straight=True)  # the cube held by all four
        told: list[str] = []
        where = puzzle3.home(robot.link, "RLFB", told.append)
        assert where.grippers == CLOSED and where.positions == {a: 0 for a in "RLFB"}
        assert {a: robot.arm_angle(a) for a in "RLFB"} == {a: 0 for a in "RLFB"}
        assert [t for t in told if t.startswith("Opened")] == [
            "Opened gripper(s) R, L: homing turns each arm in the air; pair FB holds the cube meanwhile.",
            "Opened gripper(s) F, B: homing turns each arm in the air; pair RL holds the cube meanwhile."]


@pytest.mark.parametrize("backend", BACKENDS)
def test_home_by_eye_in_3x3x3_mode(backend, capsys, monkeypatch):
    answers = "".join(f"{-off}\n\n" for off in SIM_HAND_OFFSETS.values())
    code, result, err = sim3(capsys, monkeypatch, backend, "home", stdin=answers, terminal=True)
    assert code == 0 and result["method"] == "by eye", err
    assert "Simulated arms now at (steps from straight): R 0, L 0, F 0, B 0." in err
    assert result["where"]["positions"] == {a: 0 for a in "RLFB"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_tune_closes_a_3x3x3_gripper_only_on_a_known_arm(backend, capsys, monkeypatch):
    code, result, err = sim3(capsys, monkeypatch, backend, "tune", "grippers", "--set", "R.closed=1750")
    assert code == 1 and "POSITION_UNKNOWN" in result["error"] and "nothing moved" in result["error"], err
    assert result["where"]["grippers"]["R"] is None
    code, result, err = sim3(capsys, monkeypatch, backend, "tune", "grippers", "--set", "R.closed=1750",
                             "--arms-straight")
    assert code == 0 and result["where"]["grippers"]["R"] == "closed" and result["widths"]["R"]["closed_us"] == 1750
    code, result, err = sim3(capsys, monkeypatch, backend, "tune", "grippers", "--set", "F.open=1050")
    assert code == 0 and result["where"]["grippers"]["F"] == "open", err  # opening needs no position


@pytest.mark.parametrize("args, message", [
    (["load", "--pair", "FB", "--puzzle", "3x3x3"], "--pair is for the 2x2x2"),
    (["jog", "R", "45", "--with-cube", "--puzzle", "3x3x3"], "a layer turns by quarter or half turns only"),
    (["grip", "R", "close", "--arms-straight"], "--arms-straight is for --puzzle 3x3x3"),
])
def test_options_that_do_not_fit_the_puzzle_are_refused_before_the_robot_starts(args, message, capsys, monkeypatch):
    code, out, err = cube_robot(capsys, monkeypatch, *args, "--sim", "--firmware", "mock")
    assert code == 2 and message in err, err
    assert "Robot:" not in out + err


@pytest.fixture(params=BACKENDS)
def board_port(request):
    """A board that keeps its state between commands (--port: no restart on open, as a real Uno has)."""
    if request.param == "emulator":
        with emulator.Emulator() as emu:
            yield emu.port, emu.arm_position
    else:
        from robot.sim.mock_firmware import MockFirmware

        mock = MockFirmware("pty", motion=config_module.load().motion, time_scale=0.05).start()
        try:
            yield mock.url, mock.arm_position
        finally:
            mock.stop()


def test_the_command_line_says_a_refusal_by_name_and_what_to_do(board_port, capsys, monkeypatch):
    port, arm_position = board_port
    code, out, err = cube_robot(capsys, monkeypatch, "grip", "all", "close", "--arms-straight", "--puzzle", "3x3x3",
                                "--port", port)
    assert code == 0 and "Every gripper is closed" in out, out + err
    angles = {a: arm_position(a) for a in "RLFB"}
    code, out, err = cube_robot(capsys, monkeypatch, "jog", "R", "90", "--puzzle", "3x3x3", "--port", port, "--json")
    result = json.loads(out)
    assert code == 1 and result["ok"] is False
    assert ("cube-robot jog: the board refused `JOG R 100`: ARM_BLOCKED" in err
            and "open R's gripper first: cube-robot grip R open --puzzle 3x3x3" in err), err
    assert result["where"]["grippers"] == CLOSED and {a: arm_position(a) for a in "RLFB"} == angles
    code, out, err = cube_robot(capsys, monkeypatch, "grip", "R", "open", "--puzzle", "3x3x3", "--port", port)
    assert code == 0 and "Pair FB holds the cube" in out
    code, out, err = cube_robot(capsys, monkeypatch, "jog", "R", "90", "--puzzle", "3x3x3", "--port", port)
    assert code == 0 and arm_position("R") == angles["R"] + 100, out + err
