"""The emulated robot is the robot config.yaml describes (robot/sim/mechanics.py).

A maker sets `motion.arms.<arm>.invert` because that motor is wired the other way round; an
emulated robot made from such a config (`run --sim`, a bring-up command's --sim) must be wired
the same way, or its inverted arms turn backwards: a run with a bring-up config then misread its
own scans (tests/test_first_day.py, the B arm inverted).
"""

from __future__ import annotations

import json

import pytest

from robot import cli
from robot import config as config_module
from robot.arms import actions
from robot.bringup.connection import ConnectedRobot
from robot.sim import emulator, mechanics

OK, REASON = emulator.available()
needs_emulator = pytest.mark.skipif(not OK, reason=f"firmware emulator unavailable: {REASON}")
ROOT = config_module.PROJECT_ROOT
INVERTED = "RB"


def inverted_config(tmp_path) -> str:
    """The shipped config with arms R and B inverted, and the run's log in tmp_path."""
    lines = (ROOT / "config.yaml").read_text().splitlines(keepends=True)
    arm = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if line.startswith("    ") and not line.startswith("      ") and stripped[:-1] in "RLFB" and stripped.endswith(":"):
            arm = stripped[0]
        if stripped.startswith("invert:") and arm in INVERTED:
            lines[i] = line.replace("invert: false", "invert: true")
        if stripped.startswith("data_dir:"):
            lines[i] = f"  data_dir: {tmp_path / 'data'}\n"
    path = tmp_path / "config.yaml"
    path.write_text("".join(lines))
    assert [a for a, flag in mechanics.reversed_motors(config_module.load(path)).items() if flag] == list(INVERTED)
    return str(path)


@pytest.mark.parametrize("firmware", [pytest.param("emulator", marks=[pytest.mark.firmware, needs_emulator]), "mock"])
def test_an_inverted_arm_of_the_emulated_robot_turns_as_asked(tmp_path, firmware):
    config = config_module.load(inverted_config(tmp_path))
    with ConnectedRobot(config, sim=True, firmware=firmware) as robot:
        for arm in "RLB":
            before = robot.arm_angle(arm)
            actions.jog(robot.link, arm, 100, lambda text: None)
            assert robot.arm_angle(arm) - before == 100, f"arm {arm} (inverted: {arm in INVERTED}) turned clockwise"


@pytest.mark.firmware
@needs_emulator
def test_a_simulated_run_with_inverted_arms_solves(tmp_path, capsys):
    config = inverted_config(tmp_path)
    code = cli.main(["run", "--sim", "--firmware", "emulator", "--scramble", "B R' U F2", "--config", config, "--json"])
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert code == 0 and report["solved"] is True and report["scan_attempts"] == 1, err


# ---------------------------------------------------------------------------
# A simulated run's arms: homed or confirmed straight, as a real run's pre-flight does


def sensors_config(tmp_path, zero_offset: int) -> str:
    text = (ROOT / "config.yaml").read_text().replace("sensors: false", "sensors: true", 1)
    text = text.replace("zero_offset_steps: 0 ", f"zero_offset_steps: {zero_offset} ")
    text = text.replace("  data_dir: data ", f"  data_dir: {tmp_path / 'data'} ")
    path = tmp_path / "sensors.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.firmware
@needs_emulator
def test_the_simulated_robot_homes_its_arms_at_the_configured_offset(tmp_path):
    from robot import cube
    from robot.sim import pinlog
    from robot.sim.robot_sim import SimulatedRobot

    config = config_module.load(sensors_config(tmp_path, -15))
    rev = config.motion.steps_per_rev
    with SimulatedRobot(config, cube.SOLVED, firmware="emulator") as robot:
        assert robot.link.where().positions == {a: 0 for a in "RLFB"}
        events = robot.emulator.pin_events()
        for arm in "RLFB":
            # From straight: the sensor's edge is 15 steps clockwise: seek, back off, approach, offset.
            moves = [m.steps for m in pinlog.arm_motions(events)[arm]]
            assert moves == [15, -(1 + rev // 16), rev // 16 + 1, -15], (arm, moves)
            assert robot.emulator.arm_position(arm) == 0
        assert robot.virtual.off_quarter == {a: 0 for a in "RLFB"} and robot.virtual.is_solved()


def test_the_simulated_robot_on_the_mock_homes_or_zeroes(tmp_path):
    from robot import cube
    from robot.sim.robot_sim import SimulatedRobot

    config = config_module.load(sensors_config(tmp_path, -15))
    with SimulatedRobot(config, cube.SOLVED, firmware="mock") as robot:
        assert [c for _, c in robot.mock.executed if c.startswith("HOME")] == [f"HOME {a}" for a in "RLFB"]
        assert robot.link.where().positions == {a: 0 for a in "RLFB"}
    with SimulatedRobot(config_module.load(), cube.SOLVED, firmware="mock") as robot:  # no sensors
        assert not [c for _, c in robot.mock.executed if c.startswith("HOME")]
        assert robot.link.where().positions == {a: 0 for a in "RLFB"}, "confirmed straight (ZERO)"


@pytest.mark.firmware
@needs_emulator
def test_a_simulated_run_with_arms_parked_on_their_sensors_is_not_started_as_on_the_bench(tmp_path, capsys):
    """Offset 0: each arm's zero is at its sensor's edge, so the shared input never releases."""
    code = cli.main(["run", "--sim", "--firmware", "emulator", "--scramble", "R", "--json",
                     "--config", sensors_config(tmp_path, 0)])
    report = json.loads(capsys.readouterr().out)
    assert code == 4 and report["solved"] is False
    assert any("HOME_STUCK" in e and "zero_offset_steps is negative" in e for e in report["errors"]), report["errors"]


def test_the_virtual_robot_lets_an_open_arm_stop_anywhere_but_never_closes_on_a_crooked_one():
    from robot import cube
    from robot.plan import RobotProfile
    from robot.sim.virtual_robot import MechanicalError, VirtualRobot

    robot = VirtualRobot(RobotProfile.from_config(config_module.defaults()), cube.SOLVED)
    robot.turn_arm("R", 7)  # in the air, as homing does
    with pytest.raises(MechanicalError, match="gripper R closed on the cube with its arm 7 steps past"):
        robot.set_gripper("R", True)
    robot.turn_arm("R", -7)
    robot.set_gripper("R", True)
    robot.set_gripper("L", True)
    with pytest.raises(MechanicalError, match="not a whole number of quarter turns"):
        robot.turn_arm("R", 50)
    robot.turn_arm("R", 100)
    assert robot.history == ["R"]


@pytest.mark.firmware
@needs_emulator
def test_a_jam_in_the_emulated_robot_keeps_the_pin_events_around_it(tmp_path):
    """The rare "arm turned while another pair held" flake (docs/known-problems.md): when it happens, the error names a
    folder with the decoded timeline around the jam and the whole pin log, for whoever looks next."""
    from robot import cube
    from robot.link.protocol import gripper_widths
    from robot.sim.robot_sim import SimulatedRobot
    from robot.sim.virtual_robot import MechanicalError

    config = config_module.with_settings(config_module.defaults(), {"scan.images_dir": str(tmp_path / "scans")})
    with SimulatedRobot(config, cube.SOLVED, firmware="emulator") as robot:
        assert robot.virtual.holding_pair() == "RL"  # loaded: RL holds the cube
        # A decoding slip: the virtual robot reads F's open pulses as closed (its widths swapped), so
        # F "holds" too when R turns.  (Each sync re-reads the grippers from their pulses, so setting
        # the virtual gripper by hand would be undone.)
        open_us, closed_us = gripper_widths(robot.motion, "F")
        robot.motion = config_module.with_settings(
            config, {"motion.arms.F.servo_open_us": closed_us, "motion.arms.F.servo_closed_us": open_us}).motion
        robot.link.run(["TURN R90"])
        with pytest.raises(MechanicalError, match="pin events around it") as info:
            robot.sync()
    folder = tmp_path / "jams"
    [saved] = list(folder.iterdir())
    assert str(saved) in str(info.value)
    timeline = (saved / "timeline.txt").read_text()
    assert ">>" in timeline and " turn R " in timeline.split(">>")[1].splitlines()[0]
    assert (saved / "pins.log").stat().st_size > 0


def test_a_growing_pin_log_is_read_incrementally_as_the_whole_file_would_be(tmp_path):
    """robot/sim/pinlog.py LogReader: only complete lines, appended lines parsed once, a new log restarts."""
    from robot.sim import pinlog

    path = tmp_path / "pins.log"
    path.write_text("# harness\n100 B1 1\n150 B1 0\n")
    reader = pinlog.LogReader(path)
    assert reader.events() == pinlog.read_log(path)
    with open(path, "a") as log:
        log.write("200 reset\n300 D4 1\n310 D")  # the last line is still being written
    assert reader.events() == [pinlog.PinEvent(100, "B1", 1), pinlog.PinEvent(150, "B1", 0),
                               pinlog.PinEvent(200, pinlog.RESET, -1), pinlog.PinEvent(300, "D4", 1)]
    with open(path, "a") as log:
        log.write("4 0\n")
    assert reader.events() == pinlog.read_log(path)  # the finished line, once
    path.write_text("5 C2 1\n")  # the harness restarted: a new, shorter log
    assert reader.events() == [pinlog.PinEvent(5, "C2", 1)]


def _syncs_agree(events, cuts) -> int:
    """Decode `events` as the simulated robot's syncs do, the log cut at each of `cuts`: MotionDecoder
    (reading only the new part of the log) against arm_motions over the whole log so far from the
    last move's end on; returns how many moves were decoded."""
    from robot.sim import pinlog

    decoder, cursor, moves = pinlog.MotionDecoder(), 0, 0
    for n in cuts:
        windowed = decoder.new_moves(events[:n])
        assert windowed == pinlog.arm_motions(events[:n], start_cycle=cursor + 1), n
        for arm_moves in windowed.values():
            moves += len(arm_moves)
            cursor = max([cursor] + [m.end_cycle for m in arm_moves])
    return moves


def test_the_windowed_arm_decode_carries_the_dir_levels_and_resets_from_before_its_window():
    from robot.sim import pinlog

    pins = pinlog.load_pin_map()
    step, direction = pins["STEP_R"].label, pins["DIR_R"].label
    events = [pinlog.PinEvent(100, direction, 1)]
    cycle = 1000

    def steps(count, interval=8000):
        nonlocal cycle
        for _ in range(count):
            events.extend([pinlog.PinEvent(cycle, step, 1), pinlog.PinEvent(cycle + 32, step, 0)])
            cycle += interval

    steps(5)  # R +5 (DIR high since cycle 100)
    cycle += 10 ** 6
    steps(4)  # R +4: DIR was set long before
    events.append(pinlog.PinEvent(cycle, pinlog.RESET, -1))  # DIR low again
    cycle += 8000
    steps(3)  # R -3
    events.append(pinlog.PinEvent(cycle, direction, 1))
    steps(2)
    events.append(pinlog.PinEvent(cycle - 4000, pinlog.RESET, -1))  # splits a move with steps on both sides
    events.append(pinlog.PinEvent(cycle - 3900, direction, 1))
    steps(2)
    cycle += 10 ** 5
    events.append(pinlog.PinEvent(cycle, direction, 0))  # a step at the cycle of the last event read
    steps(1)
    assert [e.cycle for e in events] == sorted(e.cycle for e in events)  # as in a real log
    assert pinlog.arm_motions(events)["R"] == [
        pinlog.Move(1000, 33000, 5), pinlog.Move(1041000, 1065000, 4), pinlog.Move(1081000, 1097000, -3),
        pinlog.Move(1105000, 1113000, 2), pinlog.Move(1121000, 1129000, 2), pinlog.Move(1237000, 1237000, -1)]
    assert _syncs_agree(events, range(1, len(events) + 1)) >= 6  # moves cut by a sync count twice
    # Decoded from the window alone (no levels carried), the +4 would read -4: the carry matters.
    window = events[next(i for i, e in enumerate(events) if e.cycle >= 1041000):]
    assert pinlog.arm_motions(window, start_cycle=1041000)["R"][0].steps == -4


@pytest.mark.firmware
@needs_emulator
def test_the_windowed_arm_decode_equals_the_whole_log_decode_on_a_recorded_log():
    """A pin log of the firmware in simavr (turns both ways, two arms at once, regrips, a reset in a
    turn), decoded as the syncs do with the log cut every 25 events and at every move's end."""
    from conftest import Board

    from robot.link import protocol as P
    from robot.sim import pinlog

    with emulator.Emulator() as emu:
        board = Board(emu.port)
        board.ok("MOTORS ON")
        for command in ("GRIP RL", "TURN R90", "TURN R-180 L90", "GRIP FB", "TURN F-90 B90", "TURN B180"):
            board.done(board.ok(command))
        board.ok("TURN F180 B-90")
        emu.reset()  # in the turn, or just after it: the log is what it is either way
        board.wait_for(P.Identity)
        board.ok("RESET")
        board.ok("MOTORS ON")
        for command in ("GRIP FB", "TURN F90", "GRIP RL", "TURN L-90 R90"):
            board.done(board.ok(command))
        board.close()
        events = emu.pin_events()
    assert any(e.pin == pinlog.RESET for e in events)
    whole = pinlog.arm_motions(events)
    ends = sorted({m.end_cycle for moves in whole.values() for m in moves})
    cuts = sorted({n for n in range(1, len(events) + 1, 25)} | {len(events)}
                  | {next(i for i, e in enumerate(events) if e.cycle > end) for end in ends if end < events[-1].cycle})
    assert _syncs_agree(events, cuts) >= sum(len(m) for m in whole.values())


def test_a_servo_pulse_a_timer_wrap_too_long_commands_no_gripper():
    """simavr now and then loses the compare that ends a gripper pulse (robot_sim.py _servo_commands):
    seen as an open gripper's pulse 33.8 ms wide at the start of the other pair's turn.  No servo takes
    a position from it, so the virtual robot does not jam; the pulse is counted."""
    from robot import cube
    from robot.sim import pinlog
    from robot.sim.robot_sim import SimulatedRobot

    pins = pinlog.load_pin_map()
    ms = pinlog.CYCLES_PER_SECOND // 1000
    widths = {"R": 1000, "L": 1000, "F": 2000, "B": 2000}  # FB holds the cube
    events, start = [], 0
    for frame in range(10):  # one pulse after the other, then the rest of the 20 ms frame (grippers.cpp)
        frame_start = start
        for arm in "RLFB":
            late = 32768 if (frame, arm) == (5, "L") else 0  # the lost compare: one timer wrap late
            end = start + (widths[arm] + late) * ms // 1000
            events += [(start, pins[f"SERVO_{arm}"].label, 1), (end, pins[f"SERVO_{arm}"].label, 0)]
            start = end
        start = max(start, frame_start + 20 * ms)
    for arm in "FB":  # F and B turn 100 steps (a quarter) while L's long pulse is high
        events.append((101 * ms, pins[f"DIR_{arm}"].label, 1))
        for k in range(100):
            step = 105 * ms + k * ms // 4
            events += [(step, pins[f"STEP_{arm}"].label, 1), (step + 32, pins[f"STEP_{arm}"].label, 0)]
    events = [pinlog.PinEvent(*e) for e in sorted(events)]

    class PinLog:
        def pin_events(self):
            return events

    robot = SimulatedRobot(config_module.defaults(), cube.SOLVED, firmware="mock")
    robot.emulator = PinLog()
    robot.sync()
    assert sorted(robot.virtual.history) == ["B", "F"]  # DIR high: clockwise seen from outside each face
    assert [(arm, round(p.width_us)) for arm, p in robot.ignored_servo_pulses] == [("L", 33768)]
    assert robot.virtual.closed == {"R": False, "L": False, "F": True, "B": True}
