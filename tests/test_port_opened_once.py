"""A real Uno resets each time its port is opened (about 2 s of bootloader): the robot's port is opened
once per command, the probe that finds or checks it hands its connection on.

The board is the mock firmware over TCP with reset_on_connect (it resets on every client connection,
as an Uno does on every open); `boots` counts the resets.
"""

import contextlib
import io
import json
import re

import pytest
from conftest import scratch_config

from robot import cli
from robot.link import ports
from robot.sim.mock_firmware import MockFirmware


@pytest.fixture
def board():
    mock = MockFirmware("tcp", reset_on_connect=True, time_scale=0.02).start()
    yield mock
    mock.stop()


@pytest.fixture
def config(tmp_path):
    empty = tmp_path / "camera"
    empty.mkdir()  # no pictures: the pre-flight's camera check fails after the port has opened; nothing moves

    def edit(text):
        assert 'device: "0"' in text
        return text.replace('device: "0"', f'device: "{empty}"', 1)
    return scratch_config(tmp_path, edit)


def _cube_robot(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _counting_opens(monkeypatch) -> list:
    opened = []
    real = ports.open_port

    def open_port(url, baud):
        opened.append(url)
        return real(url, baud)
    monkeypatch.setattr(ports, "open_port", open_port)
    return opened


@pytest.mark.parametrize("named", [True, False], ids=["--port", "auto-detected"])
def test_run_opens_the_robots_port_once(board, config, monkeypatch, named):
    opened = _counting_opens(monkeypatch)
    monkeypatch.setattr(ports, "list_ports", lambda: [(board.url, "USB serial")])
    port = ["--port", board.url] if named else []
    code, out, err = _cube_robot("run", *port, "--json", "--config", str(config))
    report = json.loads(out)
    # The run went past the handshake to the pre-flight (the camera gives no frame): NOT STARTED.
    assert code == 4 and any(e.startswith("camera:") for e in report["errors"]), report["errors"]
    assert board.url in report["firmware"]
    assert opened == [board.url] and board.boots == 1, (opened, board.boots)
    assert not board.executed


@pytest.mark.parametrize("named", [True, False], ids=["--port", "auto-detected"])
def test_bring_up_opens_the_robots_port_once(board, config, monkeypatch, named):
    opened = _counting_opens(monkeypatch)
    monkeypatch.setattr(ports, "list_ports", lambda: [(board.url, "USB serial")])
    port = ["--port", board.url] if named else []
    code, out, err = _cube_robot("motors", "on", *port, "--json", "--config", str(config))
    assert code == 0 and json.loads(out)["where"]["motors_on"] is True, err
    assert opened == [board.url] and board.boots == 1, (opened, board.boots)


def test_a_probe_that_finds_nothing_leaves_no_port_open(config, monkeypatch):
    from robot.link.driver import Link, LinkSettings

    silent = MockFirmware("pty", time_scale=0.02).start()
    silent.silent = True
    try:
        result = ports.probe(silent.url, LinkSettings(handshake_timeout_s=0.2), keep=Link)
        assert not result.ok and result.connection is None
        # Closed: the port can be opened again (it is opened exclusively).
        ports.open_port(silent.url, 115200).close()
    finally:
        silent.stop()


def test_calibrate_colours_opens_an_auto_detected_robot_once(board, config, monkeypatch):
    from types import SimpleNamespace

    from robot import config as config_module
    from robot.calibrate import colours as calibrate_colours

    opened = _counting_opens(monkeypatch)
    monkeypatch.setattr(ports, "list_ports", lambda: [(board.url, "USB serial")])
    args = SimpleNamespace(no_robot=False, port=None, solved_images=None)
    view_mover, link = calibrate_colours._robot_view_mover(config_module.load(config), args, lambda text: None)
    try:
        assert view_mover is not None and link.url == board.url
    finally:
        link.close()
    assert opened == [board.url] and board.boots == 1, (opened, board.boots)


@pytest.mark.parametrize("named_by", ["--port", "link.port"])
def test_doctor_with_a_named_port_opens_no_other_port(board, tmp_path, monkeypatch, named_by):
    opened = _counting_opens(monkeypatch)
    other = "/dev/ttyS0"  # an Uno on it would reset when opened
    monkeypatch.setattr(ports, "list_ports", lambda: [(other, "n/a"), (board.url, "USB serial")])

    def edit(text):
        assert "\n  port: null" in text
        return text.replace("\n  port: null", f"\n  port: {board.url}", 1) if named_by == "link.port" else text
    config = scratch_config(tmp_path, edit)
    port = ["--port", board.url] if named_by == "--port" else []
    code, out, err = _cube_robot("doctor", *port, "--config", str(config))
    assert other not in opened and opened == [board.url] and board.boots == 1, (opened, board.boots)
    assert re.search(rf"motors and homing .* {re.escape(board.url)}: drivers off", out), out  # read on that connection
    [row] = [line for line in out.splitlines() if other in line]
    assert "not opened" in row and f"{named_by}" in row, row
    assert re.search(rf"{re.escape(board.url)} .* ok +cube-robot-fw", out), out
