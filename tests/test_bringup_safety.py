"""Bring-up safety, against the real firmware in simavr and the mock alike.

- Nothing that moves anything is accepted while an alarm is latched: SERVO and MOTION lines are
  refused with ALARM_ACTIVE like GRIP/TURN/DWELL, and the pin log shows no servo width change and
  no step.
- Open jaws inside a turning layer's reach (motion.jaw_open_gap_mm at most cube_mm/2 x (sqrt 2 - 1)):
  the config, the firmware and the mock refuse them (JAWS_IN_REACH); the pin-log checks of the
  regrip's schedule are in tests/test_firmware_regrip.py.
- Flashing: `make -n flash PORT=...` shows the exact avrdude command; no PORT is a clear error; every
  `make -C firmware <target>` the program or the docs advise exists.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import serial

from robot import config as config_module
from robot import firmware_header
from robot.config import ConfigError
from robot.link import protocol as P
from robot.sim import emulator, pinlog
from robot.sim.mock_firmware import MockFirmware

ROOT = config_module.PROJECT_ROOT
DEFAULTS = config_module.defaults().motion
OPEN_US, CLOSED_US = DEFAULTS.servo_open_us, DEFAULTS.servo_closed_us
SPEED_MIN = firmware_header.limits()["SERVO_SPEED_MIN"]
READ_TIMEOUT_S = 10.0
# Servo edges can be late by other interrupts (see SERVO_JITTER_US in test_firmware_emulator.py).
SERVO_JITTER_US = 8

EMULATOR_OK, EMULATOR_WHY = emulator.available()


def needs_emulator(test):
    skip = pytest.mark.skipif(not EMULATOR_OK, reason=f"firmware emulator unavailable: {EMULATOR_WHY}")
    return pytest.mark.firmware(skip(test))


# Lines that would move something (or change how it moves): all refused while latched.  The first
# is the line that moved closed grippers to 1800 us while latched.
MOVING_LINES = ["SERVO O1000 C1800 S47", "MOTION S800 V2000 A66667", "JAWS C40 T60 G15 E50", "GRIP FB", "TURN R90",
                "DWELL 10"]


class Wire:
    """A minimal host on a pty: one command at a time; events are kept in `events`."""

    def __init__(self, port: str, banner: bool):
        self.serial = serial.Serial(port, P.BAUD, timeout=READ_TIMEOUT_S)
        self.events = []
        self.seq = 0
        if banner:  # the emulator, like an Uno, boots when the port is opened
            identity = self.read()
            assert isinstance(identity, P.Identity), f"expected the banner, got {identity}"
            self.seq = identity.last

    def close(self):
        self.serial.close()

    def read(self):
        raw = self.serial.readline()
        assert raw.endswith(b"\n"), f"no line within {READ_TIMEOUT_S} s (got {raw!r})"
        return P.parse_reply(P.unframe(raw.rstrip(b"\r\n")))

    def answer(self, command: str):
        self.seq += 1
        self.serial.write(P.command_line(self.seq, command))
        while True:
            reply = self.read()
            if isinstance(reply, P.LINE_ANSWERS):
                assert getattr(reply, "seq", None) == self.seq, f"{command}: unexpected answer {reply}"
                return reply
            self.events.append(reply)

    def ok(self, command: str) -> int:
        reply = self.answer(command)
        assert reply == P.Ok(self.seq), f"{command}: expected ok {self.seq}, got {reply}"
        return self.seq

    def refused(self, command: str) -> P.ErrorCode:
        reply = self.answer(command)
        assert isinstance(reply, P.Err), f"{command}: expected err, got {reply}"
        return reply.code

    def wait_for(self, kind, predicate=lambda r: True):
        for r in list(self.events):
            if isinstance(r, kind) and predicate(r):
                self.events.remove(r)
                return r
        while True:
            reply = self.read()
            if isinstance(reply, kind) and predicate(reply):
                return reply
            self.events.append(reply)

    def done(self, seq: int) -> P.Done:
        return self.wait_for(P.Done, lambda d: d.seq == seq)


def assert_refuses_while_latched(wire: Wire):
    """The conformance part: the same answers from the firmware and the mock."""
    answers = {line: wire.refused(line) for line in MOVING_LINES}
    assert answers == {line: P.ErrorCode.ALARM_ACTIVE for line in MOVING_LINES}
    # Arguments are checked first (as for every command): a bad value is named as such.
    assert wire.refused(f"SERVO O1000 C2000 S{SPEED_MIN - 1}") == P.ErrorCode.OUT_OF_RANGE
    assert wire.refused("JAWS C50 T70 G10 E50") == P.ErrorCode.JAWS_IN_REACH


def assert_jaws_inside_the_reach_refused(wire: Wire):
    """A 50 mm cube's turning layer reaches 10.36 mm past its faces: open jaws 10 mm off are hit."""
    for gap, cube in ((10, 50), (1, 20), (24, 120)):
        assert wire.refused(f"JAWS C50 T70 G{gap} E{cube}") == P.ErrorCode.JAWS_IN_REACH, (gap, cube)
    wire.ok("JAWS C50 T70 G11 E50")


# ---------------------------------------------------------------------------
# The real firmware in simavr


@pytest.fixture
def emu():
    with emulator.Emulator() as e:
        yield e


@pytest.fixture
def wire(emu):
    w = Wire(emu.port, banner=True)
    w.ok("MOTORS ON")  # the drivers are off at power-up
    yield w
    w.close()


def wait_for_frames(emu, after_cycle: int, frames: int = 3):
    """Poll the pin log until every gripper has had `frames` pulses after `after_cycle`."""
    deadline = time.monotonic() + READ_TIMEOUT_S
    while time.monotonic() < deadline:
        pulses = pinlog.servo_pulses(emu.pin_events())
        if all(len([p for p in ps if p.start_cycle > after_cycle]) >= frames for ps in pulses.values()):
            return
        time.sleep(0.005)
    raise AssertionError(f"fewer than {frames} servo frames within {READ_TIMEOUT_S} s")


def widths_off(events, cycle: int, expected: dict[str, int]) -> dict[str, list[float]]:
    """Pulses after `cycle` whose width is not the expected one (beyond the jitter), per gripper."""
    off = {}
    for arm, pulses in pinlog.servo_pulses(events).items():
        after = [p.width_us for p in pulses if p.start_cycle > cycle]
        assert after, f"{arm}: no pulses after cycle {cycle}"
        bad = [round(w, 1) for w in after if abs(w - expected[arm]) > SERVO_JITTER_US]
        if bad:
            off[arm] = bad
    return off


LATCHES = {"estop byte": P.AlarmCode.ESTOP_BYTE, "estop input": P.AlarmCode.ESTOP_INPUT}


@needs_emulator
@pytest.mark.parametrize("how", LATCHES)
def test_firmware_moves_nothing_while_latched(emu, wire, how):
    wire.done(wire.ok("GRIP RL"))  # R, L closed; F, B open (the default widths)
    if how == "estop byte":
        wire.serial.write(P.RT_ESTOP)
    else:
        emu.press("estop")
    assert wire.wait_for(P.Alarm).code == LATCHES[how]
    t = emu.cycle()
    assert_refuses_while_latched(wire)
    wait_for_frames(emu, emu.cycle())
    events = emu.pin_events()
    moved = widths_off(events, t, {"R": CLOSED_US, "L": CLOSED_US, "F": OPEN_US, "B": OPEN_US})
    assert not moved, f"gripper pulse widths changed while the alarm was latched: {moved}"
    assert all(s == [] for s in pinlog.step_events(events, start_cycle=t).values()), "an arm stepped while latched"

    if how == "estop input":
        emu.release("estop")
    wire.ok("RESET")
    # The refused MOTION S800 changed nothing: a quarter turn is still 100 steps.
    t2 = emu.cycle()
    wire.done(wire.ok("TURN R90"))
    assert pinlog.net_steps(emu.pin_events(), start_cycle=t2) == {"R": 100, "L": 0, "F": 0, "B": 0}
    # Once cleared, the same SERVO line does move the closed grippers (so the check above can fail).
    wire.ok(MOVING_LINES[0])
    t3 = emu.cycle()
    wait_for_frames(emu, t3)
    assert widths_off(emu.pin_events(), t3, {"R": 1800, "L": 1800, "F": 1000, "B": 1000}) == {}


@needs_emulator
def test_firmware_refuses_open_jaws_inside_the_reach(wire):
    assert_jaws_inside_the_reach_refused(wire)


# ---------------------------------------------------------------------------
# The mock firmware: the same answers


@pytest.fixture
def mock():
    with MockFirmware("pty", time_scale=0.05) as device:
        yield device


@pytest.fixture
def mock_wire(mock):
    w = Wire(mock.url, banner=False)
    w.ok("HELLO")
    w.ok("MOTORS ON")
    yield w
    w.close()


@pytest.mark.parametrize("how", LATCHES)
def test_mock_moves_nothing_while_latched(mock, mock_wire, how):
    mock_wire.done(mock_wire.ok("GRIP RL"))
    motion, executed = mock.motion, list(mock.executed)
    if how == "estop byte":
        mock_wire.serial.write(P.RT_ESTOP)
    else:
        mock.estop_input()
    assert mock_wire.wait_for(P.Alarm).code == LATCHES[how]
    assert_refuses_while_latched(mock_wire)
    assert mock.motion == motion and mock.executed == executed
    if how != "estop byte":
        mock.release_estop_input()  # RESET is refused while the e-stop is still held
    mock_wire.ok("RESET")
    mock_wire.ok(MOVING_LINES[0])
    assert mock.motion.servo_closed_us == 1800


def test_mock_refuses_open_jaws_inside_the_reach(mock, mock_wire):
    assert_jaws_inside_the_reach_refused(mock_wire)
    assert (mock.motion.jaw_open_gap_mm, mock.motion.cube_mm) == (11, 50)


# ---------------------------------------------------------------------------
# Config


def test_config_rejects_open_jaws_inside_the_reach_naming_the_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("# bench robot\nmotion:\n  cube_mm: 57\n  jaw_open_gap_mm: 11\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}:4: motion.jaw_open_gap_mm: 11 mm is inside a "
                                          r"turning layer's reach: its corners sweep 11.8 mm past the faces of a 57 mm"):
        config_module.load(path)
    path.write_text("motion:\n  cube_mm: 57\n  jaw_open_gap_mm: 12\n")
    assert config_module.load(path).motion.jaw_open_gap_mm == 12


def test_config_takes_the_servo_speed_in_tenths_only(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("motion:\n  servo_speed_us_per_ms: 4.75\n")
    with pytest.raises(ConfigError, match=r":2: motion.servo_speed_us_per_ms: 4.75 has more than one decimal"):
        config_module.load(path)


# ---------------------------------------------------------------------------
# Flashing

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _make(*args, env_drop=("PORT",)):
    env = {k: v for k, v in os.environ.items() if k not in env_drop}
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT / "firmware"), *args],
                          capture_output=True, text=True, env=env, timeout=60)


@needs_make
def test_make_n_flash_shows_the_exact_avrdude_command(tmp_path):
    build = tmp_path / "build"  # an empty build dir: the whole chain is shown, nothing is written
    result = _make("-n", "flash", "PORT=/dev/ttyACM7", f"BUILD={build}")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert f"avr-objcopy -O ihex -R .eeprom {build}/cube_robot.elf {build}/cube_robot.hex" in lines
    assert f"avrdude -p m328p -c arduino -P /dev/ttyACM7 -b 115200 -U flash:w:{build}/cube_robot.hex:i" in lines
    assert lines.index(f"avrdude -p m328p -c arduino -P /dev/ttyACM7 -b 115200 -U flash:w:{build}/cube_robot.hex:i") \
        == len(lines) - 1, "avrdude runs last, after the .hex is built"
    assert not build.exists(), "make -n must not build anything"


@needs_make
def test_make_flash_without_port_is_a_clear_error():
    result = _make("-n", "flash")
    assert result.returncode != 0
    assert "PORT is not set" in result.stderr and "flash PORT=/dev/ttyACM0" in result.stderr
    assert "avrdude" not in result.stdout, "nothing may be flashed without a port"


def test_every_advised_make_target_exists():
    """doctor and the docs tell users to run `make -C firmware <target>`: each target must exist."""
    makefile = (ROOT / "firmware" / "Makefile").read_text()
    targets = set(re.findall(r"^([A-Za-z][\w.-]*)\s*:(?!=)", makefile, re.M))
    sources = [*ROOT.glob("robot/**/*.py"), *ROOT.glob("docs/*.md"), ROOT / "README.md", ROOT / "firmware" / "README.md"]
    advised = {}
    for path in sources:
        for target in re.findall(r"make -C firmware ([a-z][\w-]*)", path.read_text()):
            advised.setdefault(target, []).append(str(path.relative_to(ROOT)))
    assert "flash" in advised, "no advice names the flash target"
    missing = {t: where for t, where in advised.items() if t not in targets}
    assert not missing, f"advised make targets that firmware/Makefile does not have: {missing}"
