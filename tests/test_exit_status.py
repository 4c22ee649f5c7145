"""Exit statuses: one number per condition in every command (robot/exit_status.py), as README's table says.

Every command that talks to the robot is run against a port where no robot answers (a pty with nothing
behind it, and a TCP port nobody listens on) and with a bad config.
"""

import contextlib
import io
import os
import re
import socket
import sys

import pytest
from conftest import scratch_config

from robot import cli
from robot.config import PROJECT_ROOT
from robot.exit_status import ExitStatus
from robot.run.report import EXIT_STATUS, EXECUTED, INTERRUPTED, NOT_SOLVED, NOT_STARTED, SOLVED, STOPPED

COMMANDS = {  # every command that talks to the robot; the arguments make each one valid
    "jog": ["jog", "R", "90"],
    "grip": ["grip", "R", "open"],
    "motors": ["motors", "on"],
    "link info": ["link", "info"],
    "link reset-alarm": ["link", "reset-alarm"],
    "calibrate timing": ["calibrate", "timing"],
    "calibrate overlap": ["calibrate", "overlap"],
    "home": ["home"],
    "load": ["load"],
    "release": ["release"],
    "tune grippers": ["tune", "grippers", "--set", "R.open=1100"],
    "doctor": ["doctor"],
    "run": ["run", "--no-verify"],
}


def readme_exit_table() -> dict:
    """{exit: name} from the rows of README.md's "Exit statuses" table."""
    text = (PROJECT_ROOT / "README.md").read_text()
    section = text.split("### Exit statuses", 1)
    assert len(section) == 2, "README.md has no '### Exit statuses' section"
    body = section[1].split("\n#", 1)[0]  # up to the next heading
    rows = [re.match(r"\|\s*(\d+)\s*\|\s*(\w+)\s*\|", line) for line in body.splitlines()]
    numbers = [int(row[1]) for row in rows if row]
    assert len(numbers) == len(set(numbers)), f"a number is in the table twice: {numbers}"
    return {int(row[1]): row[2] for row in rows if row}


def test_readme_table_lists_every_exit_status_by_number_and_name():
    assert readme_exit_table() == {status.value: status.name for status in ExitStatus}


def test_run_outcomes_keep_their_numbers():
    assert EXIT_STATUS == {SOLVED: 0, NOT_SOLVED: 1, EXECUTED: 3, NOT_STARTED: 4, STOPPED: 130, INTERRUPTED: 130}
    assert {SOLVED: ExitStatus.OK, NOT_SOLVED: ExitStatus.NOT_DONE, EXECUTED: ExitStatus.NOT_VERIFIED,
            NOT_STARTED: ExitStatus.NOT_STARTED, STOPPED: ExitStatus.INTERRUPTED,
            INTERRUPTED: ExitStatus.INTERRUPTED} == EXIT_STATUS


@pytest.fixture(params=["silent pty", "closed tcp port"])
def no_robot(request):
    """A port where no robot answers: a pty nobody reads or writes, or a TCP port nobody listens on."""
    if request.param == "silent pty":
        master, slave = os.openpty()
        yield os.ttyname(slave)
        os.close(slave)
        os.close(master)
    else:
        with socket.socket() as probe:  # a free port, closed again: connecting is refused
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        yield f"socket://127.0.0.1:{port}"


@pytest.fixture
def config(tmp_path):
    def quick(text):  # a silent port is given up on after 0.2 s (the default waits 3 s for an Uno's boot)
        assert "handshake_timeout_ms: 3000" in text
        return text.replace("handshake_timeout_ms: 3000", "handshake_timeout_ms: 200", 1)
    return scratch_config(tmp_path, quick)


class Terminal(io.StringIO):
    """A person's terminal (`home` squares by eye only with one), where nobody types."""

    def isatty(self):
        return True


def cube_robot(monkeypatch, *argv):
    monkeypatch.setattr(sys, "stdin", Terminal(""))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("command", COMMANDS)
def test_no_robot_answering_is_not_started_in_every_command(command, no_robot, config, monkeypatch):
    from robot.link import ports

    monkeypatch.setattr(ports, "list_ports", lambda: [])  # only the named port: no real serial port is asked
    code, out, err = cube_robot(monkeypatch, *COMMANDS[command], "--port", no_robot, "--config", str(config))
    assert code == ExitStatus.NOT_STARTED == 4, (code, out, err)
    assert no_robot in out + err  # the port is named
    assert "Traceback" not in out + err


@pytest.mark.parametrize("command", COMMANDS)
def test_a_bad_config_is_exit_2_in_every_command(command, tmp_path, monkeypatch):
    bad = tmp_path / "bad.yaml"
    bad.write_text("link:\n  baud: fast\n")
    code, out, err = cube_robot(monkeypatch, *COMMANDS[command], "--port", "/dev/never-opened",
                                "--config", str(bad))
    assert code == ExitStatus.BAD_CONFIG == 2, (code, out, err)
    assert str(bad) in err and "baud" in err and "never-opened" not in out + err  # refused before connecting


def test_commands_take_their_exit_statuses_from_one_place():
    """No command returns a bare number: each status is an ExitStatus (robot/exit_status.py)."""
    import ast

    from robot.cli import CALIBRATE_MODULES, COMMAND_MODULES

    modules = {name for name in COMMAND_MODULES + CALIBRATE_MODULES if name.startswith("robot.")}
    modules |= {"robot.cli", "robot.solver3.commands", "robot.solver3.robot_commands"}  # solve --puzzle 3x3x3
    bare = []
    for name in sorted(modules):
        path = PROJECT_ROOT / (name.replace(".", "/") + ".py")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Return) and node.value is not None:
                values = [node.value.body, node.value.orelse] if isinstance(node.value, ast.IfExp) else [node.value]
                if any(isinstance(v, ast.Constant) and type(v.value) is int for v in values):
                    bare.append(f"{path.relative_to(PROJECT_ROOT)}:{node.lineno}")
    assert not bare, f"exit statuses written as numbers (use robot.exit_status.ExitStatus): {bare}"
