"""Protocol facts: framing, reply round trips, command builders, and agreement with the firmware headers."""

import functools
import operator
import re
from pathlib import Path

import pytest

from robot import config as config_module
from robot import motion
from robot.link import protocol as P
from robot.plan import Grip, Turn

FIRMWARE = Path(__file__).resolve().parents[1] / "firmware" / "cube_robot"


def _crc32c_bitwise(data: bytes) -> int:
    """A plain bitwise CRC-32C (reflected), independent of protocol.py's table."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def test_checksum_is_crc32c_with_its_catalogue_check_value():
    assert P.checksum(b"123456789") == P.CRC32_CHECK == 0xE3069283  # CRC-32/ISCSI (CRC-32C) in the catalogue
    assert P.checksum(b"") == 0x00000000
    for payload in [b"ok 1", b"N1 HELLO", b"N2147483647 TURN R-90 L180", bytes(range(256))]:
        assert P.checksum(payload) == _crc32c_bitwise(payload)


def test_frame_appends_crc32c_in_upper_hex():
    assert P.frame("N1 HELLO") == b"N1 HELLO*%08X\n" % _crc32c_bitwise(b"N1 HELLO")
    assert re.fullmatch(rb"ok 1\*[0-9A-F]{8}\n", P.frame("ok 1"))


@pytest.mark.parametrize("payload", ["ok 1", "N2147483647 TURN R-90 L180", "status IDLE q 0 run 0 done 0 acc 0 alarm NONE", ""])
def test_unframe_inverts_frame(payload):
    assert P.unframe(P.frame(payload)[:-1]) == payload


def test_every_single_byte_corruption_is_detected():
    line = P.frame("N12 TURN R90 L-90")[:-1]
    for i in range(len(line)):
        for flip in (1, 0x20, 0x7F):
            damaged = bytearray(line)
            damaged[i] ^= flip
            with pytest.raises(P.FrameError):
                P.unframe(bytes(damaged))


# Commands the host really sends, at seqs with repeated digits (the pair errors need
# two identical bytes in one line).
PAIR_SAMPLE_COMMANDS = ["GRIP RL", "GRIP FB", "TURN R90 L-90", "TURN R-90 L-90", "TURN F180 B180", "TURN L-180",
                        "DWELL 1000", "DWELL 60000", "MOTION S400 V2500 A62500", "MOTION S6400 V8000 A200000",
                        "SERVO O1300 C1700 S47", "SERVO O2500 C2500 S200", "JAWS C50 T70 G12 E50",
                        "JAWS C95 T95 G60 E120", "HELLO", "STATUS", "RESET"]
PAIR_SAMPLE_SEQS = [1, 9, 11, 100, 101, 1000, 1234, 22222, 90909, 123456, 1000000, 2147483647]


def _pair_errors(line: bytes) -> set:
    """Every line made by dropping, or doubling, two identical bytes of `line` (the XOR blind spot)."""
    out = set()
    for i in range(len(line)):
        for j in range(i + 1, len(line)):
            if line[i] == line[j]:
                out.add(line[:i] + line[i + 1:j] + line[j + 1:])
                out.add(line[:i + 1] + line[i:j + 1] + line[j:])
    out.discard(line)
    return out


def test_pair_drops_and_duplicates_are_caught_where_xor_missed_them():
    # The two field cases: XOR accepts them, the CRC rejects them.
    for good, bad in [(b"N7 SERVO O1000 C2000 G95", b"N7 SERVO O10000 C20000 G95"),
                      (b"N8 TURN R-90 L-90", b"N8 TURN R90 L90")]:
        framed = P.frame(good.decode())[:-1]
        assert functools.reduce(operator.xor, bad) == functools.reduce(operator.xor, good)  # XOR passes it
        with pytest.raises(P.FrameError, match="checksum"):
            P.unframe(bad + framed[len(good):])
    # Across the whole sample: every pair error in every line (deduplicated).  XOR misses
    # all of them by construction; CRC-32C catches every one of them in this sample
    # (CRC-8/SAE-J1850, protocol 2, missed about 1 in 300).
    total = missed = 0
    for command in PAIR_SAMPLE_COMMANDS:
        for seq in PAIR_SAMPLE_SEQS:
            line = f"N{seq} {command}".encode()
            for damaged in _pair_errors(line):
                total += 1
                missed += P.checksum(damaged) == P.checksum(line)
    assert total > 3000
    assert missed == 0, f"{missed} of {total} pair errors undetected"


def test_unframe_rejects_unframed_text():
    with pytest.raises(P.FrameError, match="not a framed line"):
        P.unframe(b"Grbl 1.1h ['$' for help]")


REPLIES = [
    P.Ok(5), P.Ok(7, dup=True), P.Err(3, P.ErrorCode.NOT_HOLDING), P.Err(None, P.ErrorCode.LINE_TOO_LONG),
    P.Resend(9), P.Done(12, 80),
    P.Identity(P.FIRMWARE_NAME, "0.1.0", 1, "uno", 16, 64, P.MAX_SEQ, P.MAX_SEQ),
    P.Status(P.State.ALARM, 16, P.MAX_SEQ, P.MAX_SEQ, P.MAX_SEQ, P.AlarmCode.RESET_DURING_MOTION),
    P.Alarm(P.AlarmCode.ESTOP_BYTE, 40000), P.Button("start"),
]


@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: type(r).__name__)
def test_reply_round_trip_and_length_limit(reply):
    line = P.frame(P.format_reply(reply))
    assert len(line) <= P.MAX_REPLY
    assert P.parse_reply(P.unframe(line[:-1])) == reply


def test_status_alarm_accepts_number_or_name():
    assert P.parse_reply("status IDLE q 0 run 0 done 0 acc 0 alarm 0").alarm == P.AlarmCode.NONE


def test_unknown_reply_is_typed():
    with pytest.raises(P.UnknownReply):
        P.parse_reply("hello world")


def test_command_builders():
    assert P.action_command(Grip("FB")) == "GRIP FB"
    assert P.action_command(Turn({"R": 90, "L": -90})) == "TURN R90 L-90"
    assert P.turn_command({"R": 270, "L": -180}) == "TURN R-90 L180"
    assert P.motion_command(config_module.defaults().motion) == "MOTION S400 V2000 A66667"
    assert P.servo_command(config_module.defaults().motion) == "SERVO O1300 C1700 S47"
    assert P.jaws_command(config_module.defaults().motion) == "JAWS C50 T70 G12 E50"
    with pytest.raises(ValueError, match="angle 45"):
        P.turn_command({"R": 45})
    with pytest.raises(ValueError, match="pair"):
        P.grip_command("RF")


def test_longest_commands_fit_max_line():
    for command in ["TURN R-90 L-90", "TURN F180 B180", "MOTION S6400 V8000 A200000", "SERVO O2500 C2500 S200",
                    "JAWS C95 T95 G60 E120",
                    "DWELL 60000"]:
        assert len(P.command_line(P.MAX_SEQ, command)) <= P.MAX_LINE
    with pytest.raises(ValueError, match="limit"):
        P.command_line(1, "DWELL " + "1" * 40)


def test_parse_command():
    assert P.parse_command("N5 TURN R90 L-90") == (5, "TURN", ["R90", "L-90"])
    with pytest.raises(ValueError):
        P.parse_command("5 TURN")


def test_default_motion_gives_the_documented_timings():
    """config.yaml and docs promise 80/130/128 ms with the default motion (a regrip between two quarter turns,
    overlapped: robot/regrip.py); robot.timing null derives them."""
    m = config_module.defaults().motion
    assert round(motion.turn_ms([90], m)) == 80
    assert round(motion.turn_ms([180, -90], m)) == 130
    config = config_module.load()
    assert config.motion == config_module.defaults().motion, "config.yaml's motion is the firmware's default"
    assert all(getattr(config.robot.timing, key) is None for key in motion.TIMING_KEYS), "config.yaml: derived"
    assert motion.robot_timing(config) == {"quarter_turn_ms": 80, "half_turn_ms": 130, "regrip_ms": 128}


def test_robot_timing_follows_motion_unless_set(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("robot:\n  timing:\n    regrip_ms: 250\nmotion:\n  max_speed_steps_per_s: 1000\n")
    timing = motion.robot_timing(config_module.load(path))
    # 100 steps at 1000 steps/s with 66667 steps/s^2: 15 ms of ramps + 85 ms of cruise.
    assert timing == {"quarter_turn_ms": 115, "half_turn_ms": 215, "regrip_ms": 250}
    from robot.plan import RobotProfile

    profile = RobotProfile.from_config(config_module.load(path))
    assert (profile.quarter_turn_ms, profile.half_turn_ms, profile.regrip_ms) == (115, 215, 250)


# ---------------------------------------------------------------------------
# The firmware headers and this side agree.


def _defines(path: Path) -> dict:
    """An independent reading of the headers' plain #defines (not robot/firmware_header.py)."""
    values = {}
    for match in re.finditer(r"^[ \t]*#define[ \t]+(\w+)[ \t]+(\S+)", path.read_text(), re.M):
        text = match.group(2)
        if re.fullmatch(r"-?\d+L?", text):
            values[match.group(1)] = int(text.rstrip("L"))
        elif re.fullmatch(r"0x[0-9A-Fa-f]+U?L?", text):
            values[match.group(1)] = int(text.rstrip("UL"), 16)
        elif re.fullmatch(r"'.'", text):
            values[match.group(1)] = text[1]
        elif text.startswith('"'):
            values[match.group(1)] = text.strip('"')
    return values


def test_protocol_h_matches_protocol_py():
    h = _defines(FIRMWARE / "protocol.h")
    assert h["PROTOCOL_VERSION"] == P.PROTOCOL_VERSION
    assert h["MAX_LINE"] == P.MAX_LINE
    assert h["MAX_REPLY"] == P.MAX_REPLY
    assert (h["CRC32_POLY"], h["CRC32_INIT"], h["CRC32_XOROUT"], h["CRC32_CHECK"], h["CRC_HEX_DIGITS"]) == (
        P.CRC32_POLY, P.CRC32_INIT, P.CRC32_XOROUT, P.CRC32_CHECK, P.CRC_HEX_DIGITS)
    assert h["RT_ESTOP"].encode() == P.RT_ESTOP
    assert h["RT_STATUS"].encode() == P.RT_STATUS
    assert _defines(FIRMWARE / "defaults.h")["SERIAL_BAUD"] == P.BAUD


def test_codes_are_read_from_the_x_macro_lists():
    text = (FIRMWARE / "protocol.h").read_text()
    assert not re.search(r"#define\s+(ERR|ALARM)_[A-Z_]+\s+\d", text), "codes must only be in the X-macro lists"
    errors = re.findall(r"X\((\w+), (\d+), \"", text.split("#define ALARM_CODES")[0])
    assert [(c.name, c.value) for c in P.ErrorCode] == [(n, int(v)) for n, v in errors]
    assert P.ErrorCode.QUEUE_FULL == 10 and P.AlarmCode.RESET_DURING_MOTION == 3
    assert P.ERROR_TEXT[P.ErrorCode.LINE_TOO_LONG] == f"the line was longer than {P.MAX_LINE} bytes"
    # The firmware sends names from the same list (report.cpp), not its own copy.
    report = (FIRMWARE / "report.cpp").read_text()
    assert "ERROR_CODES(CODE_NAME)" in report and "ALARM_CODES(CODE_NAME)" in report
    assert "BAD_CHECKSUM" not in report


def test_docs_protocol_md_lists_the_firmware_codes():
    docs = (FIRMWARE.parents[1] / "docs" / "protocol.md").read_text()
    section = docs.split("## Codes", 1)[1].split("\n## ", 1)[0]
    errors = section.split("Error codes:", 1)[1].split("On the wire", 1)[0]
    alarms = section.split("Alarm codes:", 1)[1]
    listed_errors = [(name, int(n)) for n, name in re.findall(r"(\d+) `([A-Z_]+)`", errors)]
    listed_alarms = [(name, int(n)) for n, name in re.findall(r"(\d+) `([A-Z_]+)`", alarms)]
    assert listed_errors == [(c.name, c.value) for c in P.ErrorCode if c.value], "docs/protocol.md error codes"
    assert listed_alarms == [(c.name, c.value) for c in P.AlarmCode], "docs/protocol.md alarm codes"


def test_arm_layout_is_the_firmwares():
    command_cpp = (FIRMWARE / "command.cpp").read_text()
    for pair in P.GRIP_PAIRS:
        assert f'"{pair}"' in command_cpp, pair
    for arm in P.ARMS:
        assert f"case '{arm}': return ARM_{arm};" in command_cpp, arm


def test_cpu_clock_is_defined_once():
    from robot.sim import pinlog

    hz = _defines(FIRMWARE / "defaults.h")["CPU_HZ"]
    assert pinlog.CYCLES_PER_SECOND == hz == 16_000_000
    makefile = (FIRMWARE.parent / "Makefile").read_text()
    harness = (FIRMWARE.parent / "harness" / "harness.c").read_text()
    assert "16000000" not in makefile and "16000000" not in harness
    assert "CPU_HZ" in makefile and "#define FREQUENCY CPU_HZ" in harness


def test_another_arm_layout_is_rejected_on_load_with_its_line(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("# two arms\nrobot:\n  pairs:\n    R: [R]\n    F: [F]\n")
    with pytest.raises(config_module.ConfigError) as info:
        config_module.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}:4: robot.pairs: the firmware supports only the four-arm layout")
    assert "RL: [R, L], FB: [F, B]" in message
    path.write_text("robot:\n  pairs:\n    FB: [B, F]\n    RL: [R, L]\n")  # same layout, other order
    assert set(config_module.load(path).robot.pairs) == {"RL", "FB"}
