"""`cube-robot doctor` and `cube-robot link` against the mock firmware."""

import json
import re
from pathlib import Path

import pytest

from robot import checks, cli, doctor
from robot.link import protocol as P
from robot.sim.mock_firmware import MockFirmware


def _fast_config(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("link:\n  handshake_timeout_ms: 300\n  ack_timeout_ms: 50\n  silence_timeout_ms: 300\n")
    return str(path)


def test_doctor_reports_firmware_on_given_port(tmp_path, capsys):
    with MockFirmware("tcp") as mock:
        code = cli.main(["doctor", "--port", mock.url, "--config", _fast_config(tmp_path)])
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if mock.url in l)
    assert " ok " in line and f"cube-robot-fw mock, protocol {P.PROTOCOL_VERSION}" in line
    # docs/hardware.md (first-day checklist, step 2) shows this answer: its shape must match.
    hardware_md = (Path(__file__).resolve().parents[1] / "docs" / "hardware.md").read_text()
    documented = re.search(r"`ok  cube-robot-fw VERSION, protocol N, board (\w+), \.\.\.`", hardware_md)
    assert documented, "docs/hardware.md no longer shows the doctor's answer"
    assert re.search(r" ok\s+cube-robot-fw \S+, protocol \d+, board \S+, ", line), line
    # The serial rows pass; this machine has no camera or regions file, which the doctor now fails.
    assert not [l for l in out.splitlines() if l.startswith("firmware handshake") and " FAIL " in l]
    assert code == (1 if " FAIL " in out else 0)


def test_doctor_fails_clearly_when_port_has_no_firmware(tmp_path, capsys):
    code = cli.main(["doctor", "--port", "/dev/does-not-exist", "--config", _fast_config(tmp_path)])
    out = capsys.readouterr().out
    assert code == 4  # no robot answers: NOT STARTED, as `run` says it
    assert "cannot open serial port '/dev/does-not-exist': no such port" in out
    assert "--port or link.port" in out  # the fix for a port that is not there...
    assert "PORT=/dev/does-not-exist" not in out  # ...is not flashing it


def test_port_open_failures_name_the_cause_and_the_fix(monkeypatch):
    import errno

    import serial

    from robot.link import ports

    cases = {errno.ENOENT: "no such port", errno.EACCES: "dialout group", errno.EBUSY: "Serial Monitor"}
    for code, fix in cases.items():
        def refuse(url, **kwargs):
            raise serial.SerialException(code, f"could not open port {url}: [Errno {code}] {url}")
        monkeypatch.setattr(serial, "serial_for_url", refuse)
        with pytest.raises(ports.PortError) as caught:
            ports.open_port("/dev/ttyACM7", 115200)
        assert "'/dev/ttyACM7'" in str(caught.value) and fix in str(caught.value), code


def test_doctor_table_lists_every_check_row():
    rows = [("serial", checks.Result("/dev/x", checks.OK, "fine")), ("camera", checks.Result("0", checks.FAIL, "gone"))]
    table = doctor.format_table(rows).splitlines()
    assert table[0].split() == ["check", "item", "status", "detail"]
    assert "camera" in table[3] and "gone" in table[3]


def test_link_run_streams_a_solver_plan(tmp_path, capsys):
    plan = {"plan": [{"op": "grip", "pair": "RL"}, {"op": "turn", "arms": {"R": 90}},
                     {"op": "grip", "pair": "FB"}, {"op": "turn", "arms": {"F": 180, "B": -90}}]}
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    with MockFirmware("tcp", time_scale=0.02) as mock:
        code = cli.main(["link", "run", str(plan_file), "--port", mock.url, "--config", _fast_config(tmp_path)])
    assert code == 0
    assert [c.strip() for _, c in mock.executed] == ["GRIP RL", "TURN R90", "GRIP FB", "TURN F180 B-90"]
    assert "R " in capsys.readouterr().out


@pytest.mark.parametrize("content, expected", [
    (None, "cannot read"),
    ("{not json", "not valid JSON"),
    ('[{"op": "grip", "pair": "RL"}]', 'expected a JSON object with a "plan" list'),
    ('{"plan": [{"op": "grip", "pair": "XX"}]}', "plan action 1 {\"op\": \"grip\", \"pair\": \"XX\"}: no arm pair 'XX'"),
    ('{"plan": [{"op": "grip", "pair": "RL"}, {"op": "turn", "arms": {"F": 45}}]}',
     "plan action 2 {\"op\": \"turn\", \"arms\": {\"F\": 45}}: arm F: 45 degrees is not a multiple of 90"),
    ('{"plan": [{"op": "spin"}]}', "plan action 1"),
])
def test_link_run_bad_plan_files_are_clear_errors(tmp_path, capsys, content, expected):
    path = tmp_path / "plan.json"
    if content is not None:
        path.write_text(content)
    code = cli.main(["link", "run", str(path), "--port", "/dev/not-opened", "--config", _fast_config(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and expected in err and "Traceback" not in err, err
    assert str(path) in err


def test_reset_alarm_while_the_estop_is_held_says_to_release_it(tmp_path, capsys):
    with MockFirmware("tcp") as mock:
        mock.estop_input()
        code = cli.main(["link", "reset-alarm", "--port", mock.url, "--config", _fast_config(tmp_path)])
        err = capsys.readouterr().err
        assert code == 1 and "ESTOP_INPUT" in err and "release it" in err  # the board refused: not done
        assert "clear the alarm with" not in err  # not "run reset-alarm" as the only advice
        mock.release_estop_input()
        assert cli.main(["link", "reset-alarm", "--port", mock.url, "--config", _fast_config(tmp_path)]) == 0
        assert "alarm cleared" in capsys.readouterr().out


def test_mock_idle_off_is_not_sped_up_with_the_motions(monkeypatch):
    # time_scale speeds up the mock's motions; the idle-off timer measures the host's pauses (a scan,
    # a plan), which are not faster: 300 s must stay 300 s, not 6 s at time_scale 0.02.
    from robot.sim import mock_arms

    mock = MockFirmware("tcp", time_scale=0.02)
    mock.arms.set_motors(True)
    now = mock.arms._idle_since
    monkeypatch.setattr(mock_arms.time, "monotonic", lambda: now + 10.0)
    mock.arms.poll_idle()
    assert mock.arms.motors_on, "drivers switched off after 10 s of a 300 s idle-off"
    monkeypatch.setattr(mock_arms.time, "monotonic", lambda: now + mock.arms.idle_off_s + 1)
    mock.arms.poll_idle()
    assert not mock.arms.motors_on


def test_a_second_program_on_the_robots_port_is_refused_by_name(tmp_path, capsys):
    """Two commands at once on one port (a run and a jog, or doctor during a run) would each read
    the other's replies and fail as a 'noisy link' or 'silent board': the second one is refused,
    naming the port, and sends the board nothing."""
    from robot.link import ports

    with MockFirmware("pty") as mock:
        held = ports.open_port(mock.url, P.BAUD)  # the first program
        try:
            code = cli.main(["link", "info", "--port", mock.url, "--config", _fast_config(tmp_path)])
        finally:
            held.close()
        received = list(mock.received_lines)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert code != 0
    assert f"'{mock.url}'" in text and "busy" in text, text
    assert received == []


def test_no_robot_found_names_each_port_once_without_stuttering(monkeypatch):
    """'/dev/ttyS0: no answer: no answer on /dev/ttyS0 ...' said the same thing twice."""
    from robot.link import ports
    from robot.link.driver import LinkSettings
    from robot.link.errors import PortError
    from robot.sim.mock_firmware import ForeignDevice

    with ForeignDevice("silent") as device:
        monkeypatch.setattr(ports, "list_ports", lambda: [(device.url, "a silent device")])
        with pytest.raises(PortError) as caught:
            ports.find_robot(LinkSettings(handshake_timeout_s=0.3))
    message = str(caught.value)
    assert f"{device.url}: no answer on {device.url} within 0.3 s" in message, message
    assert "no answer: no answer" not in message
