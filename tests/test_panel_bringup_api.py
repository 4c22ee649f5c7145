"""The panel's bring-up API (robot/panel/bringup_api.py) against the mock firmware on a pty: each action
does what its command does, on the simulated arms; the refusals are the commands' own (an alarm latched,
a jog in the air while the arm's pair holds the cube) as 409s naming them; a bad field is a 400 naming
it and sends nothing; trims move the gripper now and are saved through `tune grippers --save`'s writer.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

import pytest

from robot import config as config_module
from robot.bringup.connection import SIM_HAND_OFFSETS, ConnectedRobot
from robot.link import protocol as P
from robot.link.errors import CommandRejectedError
from robot.panel import bringup_api as api
from robot.panel.errors import RequestError
from robot.sim import emulator

ROOT = config_module.PROJECT_ROOT
OK, REASON = emulator.available()
BACKENDS = [pytest.param("emulator", marks=[pytest.mark.firmware,
                                            pytest.mark.skipif(not OK, reason=f"emulator unavailable: {REASON}")]),
            "mock"]


@dataclass
class Target:
    """What the panel's session hands the API: the link, the config, whether it is simulated, and
    (simulation) each arm's true angle."""

    robot: ConnectedRobot
    simulated: bool = True

    @property
    def link(self):
        return self.robot.link

    @property
    def config(self):
        return self.robot.config

    def arm_angle(self, arm: str) -> int | None:
        return self.robot.arm_angle(arm)


def _config_copy(tmp_path, *replacements):
    text = (ROOT / "config.yaml").read_text()
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


@pytest.fixture
def robot():
    with ConnectedRobot(config_module.load(), sim=True, firmware="mock") as connected:
        yield connected


@pytest.fixture(params=BACKENDS)
def either_robot(request):
    """The real firmware in simavr, and the mock."""
    with ConnectedRobot(config_module.load(), sim=True, firmware=request.param) as connected:
        yield connected


def _angles(robot) -> dict:
    return {arm: robot.arm_angle(arm) for arm in P.ARMS}


def _refused(action, body, target, status):
    with pytest.raises(RequestError) as refusal:
        api.perform(action, body, target)
    assert refusal.value.status == status, refusal.value.to_json()
    return refusal.value


def test_where_reads_the_board_as_the_commands_describe_it(robot):
    where = api.where(robot.link, robot.config)
    assert where["state"] == "IDLE" and where["alarm"] is None and where["drivers_on"] is False
    # A board that has just started knows no position and has set no gripper: null, never a guess.
    assert where["arms"]["R"] == {"steps": None, "degrees": None, "straight": None}
    assert where["grippers"] == {arm: None for arm in P.ARMS}
    assert where["widths"]["R"] == dict(zip(("open", "closed"), P.gripper_widths(robot.config.motion, "R")))
    assert "drivers off" in where["summary"] and "R never set" in where["summary"]


def test_jog_r_90_turns_the_simulated_arm_a_quarter(either_robot):
    robot = either_robot
    target = Target(robot)
    rev = robot.config.motion.steps_per_rev
    before = robot.arm_angle("R")
    answer = api.perform("jog", {"arm": "R", "degrees": 90}, target)
    assert robot.arm_angle("R") == before + rev // 4
    assert answer["ok"] is True and answer["steps"] == rev // 4 and answer["simulated"] is True
    assert any("Arm R turned +" in text for text in answer["messages"])
    assert all(text.startswith("SIMULATED | ") for text in answer["messages"])
    # The drivers were switched on and R's gripper opened first, as `cube-robot jog` does.
    assert answer["where"]["drivers_on"] is True and answer["where"]["grippers"]["R"] == "open"


def test_a_jog_with_an_alarm_latched_is_refused_409_naming_the_alarm(either_robot):
    robot = either_robot
    target = Target(robot)
    robot.link.estop()
    assert robot.link.status().alarm == P.AlarmCode.ESTOP_BYTE
    before = _angles(robot)
    refusal = _refused("jog", {"arm": "R", "degrees": 90}, target, 409)
    assert "ESTOP_BYTE" in refusal.message and "/api/alarm/clear" in refusal.message
    assert refusal.to_json()["where"]["alarm"] == "ESTOP_BYTE"
    assert refusal.message.startswith("SIMULATED | ")
    assert _angles(robot) == before


@pytest.mark.parametrize("body, field", [
    ({"arm": "X", "degrees": 90}, "arm"),
    ({"degrees": 90}, "arm"),
    ({"arm": "R"}, "degrees"),
    ({"arm": "R", "degrees": 90, "steps": 5}, "degrees"),
    ({"arm": "R", "degrees": "ninety"}, "degrees"),
    ({"arm": "R", "steps": 1.5}, "steps"),
    ({"arm": "R", "steps": 0}, "steps"),
    ({"arm": "R", "steps": api.JOG_STEPS_MAX + 1}, "steps"),
    ({"arm": "R", "degrees": 90, "with_cube": "yes"}, "with_cube"),
    ({"arm": "R", "degree": 90}, "degree"),
])
def test_a_bad_jog_field_is_a_400_naming_it_and_nothing_moves(robot, body, field):
    before = _angles(robot)
    refusal = _refused("jog", body, Target(robot), 400)
    assert refusal.field == field and refusal.to_json()["field"] == field
    assert field in refusal.message
    assert _angles(robot) == before
    assert api.where(robot.link, robot.config)["drivers_on"] is False  # nothing was sent that changes anything


def test_unknown_action_and_a_body_that_is_not_an_object_are_refused(robot):
    assert "jog" in _refused("dance", {}, Target(robot), 404).message
    assert "JSON object" in _refused("jog", ["R", 90], Target(robot), 400).message


def test_grip_load_and_the_jog_refused_while_the_pair_holds_the_cube(robot):
    target = Target(robot)
    assert _refused("grip", {"target": "RF", "close": True}, target, 400).field == "target"
    _square_straight(robot, target, "RL")  # a pair closes on the cube only where its arms are known
    api.perform("load", {}, target)
    answer = api.perform("load", {"pair": "RL", "cube_in": True}, target)
    assert answer["where"]["grippers"] == {"R": "closed", "L": "closed", "F": "open", "B": "open"}
    before = robot.arm_angle("R")
    refusal = _refused("jog", {"arm": "R", "steps": 100}, target, 409)
    assert "pair RL holds the cube" in refusal.message and refusal.field is None
    assert robot.arm_angle("R") == before
    api.perform("jog", {"arm": "R", "steps": 100, "with_cube": True}, target)  # the layer turn is allowed
    assert robot.arm_angle("R") == before + 100
    released = api.perform("release", {}, target)
    assert released["where"]["grippers"] == {arm: "open" for arm in P.ARMS}
    closed = api.perform("grip", {"target": "FB", "close": True}, target)
    assert closed["arms"] == "FB" and closed["where"]["grippers"]["F"] == "closed"


def _square_straight(robot, target, arms: str) -> None:
    for arm in arms:
        if robot.arm_angle(arm):  # where the simulated hand left it
            api.perform("square", {"arm": arm, "steps": -robot.arm_angle(arm)}, target)
        api.perform("square", {"arm": arm, "straight": True}, target)
        assert robot.arm_angle(arm) == 0


def test_a_jog_with_the_cube_is_refused_while_its_pairs_arm_positions_are_unknown(robot):
    """Just after Motors off nobody knows where the arms stand: closing the pair there could jam the cube."""
    target = Target(robot)
    _square_straight(robot, target, "RL")
    api.perform("motors", {"on": False}, target)
    before = _angles(robot)
    refusal = _refused("jog", {"arm": "R", "steps": 50, "with_cube": True}, target, 409)
    assert "the position of arm(s) R, L is unknown" in refusal.message and refusal.message.startswith("SIMULATED")
    assert "Home" in refusal.message, refusal.message  # the fix
    assert _angles(robot) == before and refusal.details["where"]["grippers"]["R"] != "closed"  # nothing moved
    _square_straight(robot, target, "RL")
    done = api.perform("jog", {"arm": "R", "steps": 50, "with_cube": True}, target)
    assert done["where"]["grippers"]["R"] == "closed" and robot.arm_angle("R") == 50


def test_load_opens_all_grippers_then_closes_the_pair_once_the_cube_is_in(robot):
    target = Target(robot)
    refusal = _refused("load", {"cube_in": True}, target, 409)  # never opened: a held cube would drop
    assert refusal.field == "cube_in" and "\"Load: open the grippers\" first (load {})" in refusal.message
    assert api.where(robot.link, robot.config)["grippers"] == {arm: None for arm in P.ARMS}
    opened = api.perform("load", {}, target)
    assert opened["where"]["grippers"] == {arm: "open" for arm in P.ARMS}
    assert any("\"cube_in\": true" in text for text in opened["messages"])
    assert not any("Enter" in text for text in opened["messages"])
    # the board does not know where F and B stand (a fresh robot): closing them on the cube could jam it
    unknown = _refused("load", {"pair": "FB", "cube_in": True}, target, 409)
    assert "F, B is unknown" in unknown.message, unknown.message
    assert api.where(robot.link, robot.config)["grippers"] == {arm: "open" for arm in P.ARMS}  # nothing closed
    for arm in "FB":  # squared by eye, as the page's +/- and Straight do
        api.perform("square", {"arm": arm, "steps": -SIM_HAND_OFFSETS[arm]}, target)
        api.perform("square", {"arm": arm, "straight": True}, target)
    loaded = api.perform("load", {"pair": "FB", "cube_in": True}, target)
    assert loaded["where"]["grippers"] == {"R": "open", "L": "open", "F": "closed", "B": "closed"}
    assert any("Cube held by pair FB" in text for text in loaded["messages"])


def test_motors_on_and_off(robot):
    target = Target(robot)
    assert api.perform("motors", {"on": True}, target)["where"]["drivers_on"] is True
    off = api.perform("motors", {"on": False}, target)
    assert off["where"]["drivers_on"] is False and "positions are now unknown" in off["messages"][0]
    assert _refused("motors", {"on": "off"}, target, 400).field == "on"


def test_squaring_by_eye_step_by_step_then_declared_straight(robot):
    target = Target(robot)
    offset = SIM_HAND_OFFSETS["F"]
    stepped = api.perform("square", {"arm": "F", "steps": -offset}, target)
    assert robot.arm_angle("F") == 0
    assert stepped["where"]["arms"]["F"]["steps"] is None  # not declared straight yet: still unknown
    assert not any("Enter" in text for text in stepped["messages"])  # the terminal's keys are not the page's
    assert any("simulation: straight" in text for text in stepped["messages"])
    declared = api.perform("square", {"arm": "F", "straight": True}, target)
    assert declared["where"]["arms"]["F"] == {"steps": 0, "degrees": 0.0, "straight": True}
    assert any("the simulated arms are exactly straight" in text for text in declared["messages"])
    plus = api.perform("square", {"arm": "F", "steps": "+"}, target)
    assert robot.arm_angle("F") > 0 and plus["where"]["arms"]["F"]["steps"] == robot.arm_angle("F")
    assert _refused("square", {"arm": "F"}, target, 400).field == "steps"
    assert _refused("square", {"arm": "F", "steps": "++"}, target, 400).field == "steps"


def test_home_without_sensors_says_to_square_by_eye(robot):
    before = _angles(robot)
    refusal = _refused("home", {}, Target(robot), 409)
    assert "motion.homing.sensors" in refusal.message and "square" in refusal.message
    assert _angles(robot) == before


def test_home_with_sensors_ends_straight(tmp_path):
    # Each magnet a little clockwise of its arm's zero (docs/hardware.md): an arm parked on its sensor would
    # keep the shared input active.
    config = config_module.load(_config_copy(tmp_path, ("sensors: false", "sensors: true"),
                                             ("zero_offset_steps: 0 ", "zero_offset_steps: -20 ")))
    with ConnectedRobot(config, sim=True, firmware="mock") as robot:
        assert _refused("home", {"arms": "RX"}, Target(robot), 400).field == "arms"
        answer = api.perform("home", {"arms": "RL"}, Target(robot))
        assert [robot.arm_angle(arm) for arm in "RL"] == [0, 0]
        assert "Simulated arms now at (steps from straight): R 0, L 0." in answer["messages"][-1]
        assert answer["where"]["arms"]["R"]["straight"] is True and answer["method"] == "sensors"


def test_trim_moves_the_gripper_and_save_trims_writes_the_config_copy(tmp_path):
    path = _config_copy(tmp_path)
    config = config_module.load(path)
    with ConnectedRobot(config, sim=True, firmware="mock") as robot:
        target = Target(robot, simulated=False)  # the mock on a pty stands for a robot on a port
        low, high = api.SERVO_RANGE
        refusal = _refused("trim", {"arm": "R", "which": "open", "us": high + 1}, target, 400)
        assert refusal.field == "us" and f"{low}..{high}" in refusal.message
        answer = api.perform("trim", {"arm": "R", "which": "open", "us": 1100}, target)
        assert answer["where"]["grippers"]["R"] == "open" and answer["where"]["widths"]["R"]["open"] == 1100
        answer = api.perform("trim", {"arm": "R", "which": "closed", "us": 1900}, target)
        # The closed trim keeps the open one just made (both widths go to the board together).
        assert answer["where"]["widths"]["R"] == {"open": 1100, "closed": 1900}
        assert answer["where"]["grippers"]["R"] == "closed"
        assert path.read_text() == (ROOT / "config.yaml").read_text()  # nothing saved yet
        saved = api.perform("save-trims", {"widths": {"R": {"open": 1100, "closed": 1900}}}, target)
        assert saved["saved"] == ["R.closed", "R.open"] and saved["config"] == str(path)
    reloaded = config_module.load(path)
    assert P.gripper_widths(reloaded.motion, "R") == (1100, 1900)
    assert [P.gripper_widths(reloaded.motion, arm) for arm in "LFB"] == [
        P.gripper_widths(config.motion, arm) for arm in "LFB"]
    assert reloaded.motion.arms["L"] == config.motion.arms["L"] and reloaded.link == config.link


def test_save_trims_is_refused_on_the_simulated_robot_and_on_a_read_only_config(tmp_path):
    path = _config_copy(tmp_path)
    original = path.read_text()
    body = {"widths": {"L": {"open": 1050}}}
    with ConnectedRobot(config_module.load(path), sim=True, firmware="mock") as robot:
        simulated = _refused("save-trims", body, Target(robot), 409)
        assert "emulated robot" in simulated.message and str(path) in simulated.message
        assert _refused("save-trims", {"widths": {"L": {"opened": 1050}}}, Target(robot), 400).field == "widths.L.opened"
        assert _refused("save-trims", {"widths": {"X": {"open": 1050}}}, Target(robot), 400).field == "widths.X"
        os.chmod(path, stat.S_IRUSR)
        try:
            read_only = _refused("save-trims", body, Target(robot, simulated=False), 409)
        finally:
            os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
        assert "read-only" in read_only.message
    assert path.read_text() == original


def test_a_firmware_refusal_names_its_code_and_what_to_do():
    text = api.refused(CommandRejectedError("JOG R 10", P.ErrorCode.MOTORS_OFF))
    assert "MOTORS_OFF" in text and "motors" in text and "\"on\": true" in text


def test_every_answer_names_the_pages_controls_not_a_terminals_commands(robot):
    """What each action really says (robot/arms/actions.py is shared with the commands), rewritten in one
    place (robot/panel/words.py) into the page's words: no `cube-robot ...`, no flags, no prompts."""
    target = Target(robot)
    said: list[str] = []

    def ok(action, body):
        said.extend(api.perform(action, body, target)["messages"])

    def no(action, body, status=409):
        refusal = _refused(action, body, target, status)
        said.extend(refusal.details.get("messages", []))
        said.append(refusal.message)
        return refusal.message

    ok("motors", {"on": True})
    ok("motors", {"on": False})
    assert "finds them again" in said[-1] and "Straight" in said[-1] and "Home with the sensors" in said[-1]
    unknown = no("jog", {"arm": "L", "steps": 10, "with_cube": True})
    assert "Home them first: Home with the sensors, or without sensors square each by eye" in unknown, unknown
    assert "no homing sensors" in no("home", {}) and "its +/- buttons" in said[-1]
    _square_straight(robot, target, "RL")
    ok("jog", {"arm": "R", "steps": 10})  # in the air: R now stands between quarter positions
    crooked = no("jog", {"arm": "R", "steps": 10, "with_cube": True})
    assert "(Jog with \"With the cube\" unticked, or square each by eye" in crooked, crooked
    ok("jog", {"arm": "R", "steps": -10})
    ok("load", {})
    assert "press \"Load: the cube is in\" (load {\"cube_in\": true})" in said[-1], said[-1]
    ok("load", {"pair": "RL", "cube_in": True})
    assert said[-1].endswith("Release opens all grippers."), said[-1]
    holding = no("jog", {"arm": "R", "steps": 10})
    assert "Jog with \"With the cube\" ticked (jog {\"with_cube\": true}) turns that layer" in holding, holding
    assert "take the cube out first (Release)" in holding
    assert "\"Load: open the grippers\" first" in no("load", {"cube_in": True})
    ok("release", {})
    ok("square", {"arm": "F", "steps": "+"})
    ok("trim", {"arm": "F", "which": "open", "us": 1100})
    assert "with the panel started with --port instead of --sim" in no("save-trims", {"widths": {"F": {"open": 1100}}})
    for text in said:
        assert "cube-robot" not in text and "`" not in text and "--arms-straight" not in text, text
    assert "Motors on" in api.refused(CommandRejectedError("JOG R 10", P.ErrorCode.MOTORS_OFF))
