"""Shared test fixtures: the `device` every protocol conformance case runs against.

    device     parametrised over
                 mock-pty   the Python mock firmware on a pty            (always)
                 mock-tcp   the same mock over TCP (socket://)           (always)
                 firmware   the real firmware in simavr (marker `firmware`; needs the AVR toolchain)
                 robot      a real robot on --robot-port (opt-in: skipped unless given)

A Device opens a fresh connection (`device.connect()` -> Board, a minimal host
that speaks robot.link.protocol one line at a time) and offers the board's
physical inputs where the device has them (`press_estop`, `reset`, ...);
cases that need an input a device lacks skip on that device only.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

import robot.config as _config_module

READ_TIMEOUT_S = 10.0

# Folders the program writes into, as config.yaml's relative defaults name them (scan pictures, jams,
# calibration previews: runs/; the solve log: data/).
_WRITTEN_DIRS = ("runs", "data")
# Where relative settings go while tests run: the running test's own folder for runs/ and data/
# (made on first use), and the session's shared solver tables for tables/ (see _session_tables).
_redirect = {"factory": None, "folder": None, "tables": None}
_real_project_path = _config_module.project_path


def _test_project_path(value):
    """config.project_path while tests run: runs/... and data/... resolve into the running test's
    temporary folder, tables/... into the session's tables; anything else as the program says."""
    path = Path(value)
    if not path.is_absolute() and path.parts:
        if path.parts[0] in _WRITTEN_DIRS and _redirect["factory"] is not None:
            if _redirect["folder"] is None:
                _redirect["folder"] = _redirect["factory"].mktemp("project")
            return _redirect["folder"] / path
        if path.parts[0] == "tables" and _redirect["tables"] is not None:
            return _redirect["tables"].joinpath(*path.parts[1:])
    return _real_project_path(value)


# Installed once, before the tests import the rest of robot: a module that binds project_path at its
# import (`from ..config import project_path`) gets this one function whenever it is imported, and the
# function asks which test is running; a per-test patch would stay bound in such a module to the test
# that first imported it.
_config_module.project_path = _test_project_path

import serial  # noqa: E402

from robot.link import protocol as P  # noqa: E402
from robot.config import PROJECT_ROOT  # noqa: E402


def scratch_config(folder, edit=lambda text: text):
    """config.yaml copied into folder with the run's pictures and solve log there too, and the
    session's solver tables (edit: more changes to the text); returns its path.  A subprocess given
    it builds no tables.  Tests import it: `from conftest import scratch_config`."""
    text = (PROJECT_ROOT / "config.yaml").read_text()
    text = text.replace("images_dir: runs/scans", f"images_dir: {folder / 'scans'}")
    text = text.replace("data_dir: data", f"data_dir: {folder / 'data'}")
    if _redirect["tables"] is not None:
        text = text.replace("\n  dir: tables\n", f"\n  dir: {_redirect['tables']}\n", 1)
    path = folder / "config.yaml"
    path.write_text(edit(text))
    return path


@pytest.fixture(autouse=True)
def _writes_stay_out_of_the_repo(tmp_path_factory):
    """A relative runs/... or data/... setting resolves into a temporary folder for every test, so a
    test that runs with the shipped config.yaml never writes into the repository."""
    _redirect["factory"], _redirect["folder"] = tmp_path_factory, None
    yield
    _redirect["factory"], _redirect["folder"] = None, None


# -- the solver tables: built once per session -------------------------------------------------------

def _shared_temp(tmp_path_factory) -> Path:
    """A folder every pytest-xdist worker of this run sees (the run's own basetemp without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def _session_tables(tmp_path_factory):
    """The 2x2x2 solver tables of config.yaml (coords, robot cost, htm, qtm), built once per run
    (by the first xdist worker, under a file lock; the others wait and use them) in a temporary
    folder that the shipped config's `tables.dir: tables` resolves to while tests run.  Seeded
    from the checkout's tables/ when those are there (loading checks every checksum and rebuilds
    what does not match).  Shared read-only: a test that changes the robot's timings or writes
    tables uses its own folder (`copy_tables`); the manifest is compared at the end to catch one
    that did not."""
    from robot.solver import tables

    shared = _shared_temp(tmp_path_factory)
    folder = shared / "tables"
    with open(shared / "tables.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (shared / "tables.ready").exists():
            folder.mkdir(exist_ok=True)
            repo_tables = _real_project_path("tables")
            if repo_tables.is_dir():
                for path in repo_tables.iterdir():
                    if path.is_file() and (path.suffix in (".npy", ".npz") or path.name == "manifest.json"):
                        shutil.copyfile(path, folder / path.name)
            config = _config_module.with_settings(_config_module.load(), {"tables.dir": str(folder)})
            built = tables.load(config, log=lambda text: None, show_progress=False)
            for metric in ("htm", "qtm"):
                built.metric(metric)
            (shared / "tables.ready").touch()
    manifest = (folder / "manifest.json").read_text()
    _redirect["tables"] = folder
    yield folder
    _redirect["tables"] = None
    assert (folder / "manifest.json").read_text() == manifest, (
        f"a test rewrote the session's shared solver tables in {folder}: give it its own folder (copy_tables)")


@pytest.fixture(scope="session")
def session_tables3(_session_tables, tmp_path_factory):
    """The 3x3x3 tables in the session's tables folder (where config.yaml's tables/3x3x3 resolves),
    built once per run under the same lock; seeded from the checkout's tables/3x3x3 when there."""
    from robot.solver3 import tables as tables3

    shared = _shared_temp(tmp_path_factory)
    folder = _session_tables / tables3.SUBDIR
    with open(shared / "tables.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "tables3.ready").exists():
            folder.mkdir(exist_ok=True)
            repo_tables = _real_project_path("tables") / tables3.SUBDIR
            if repo_tables.is_dir():
                for path in repo_tables.iterdir():
                    if path.is_file() and (path.suffix in (".npy", ".npz") or path.name == "manifest.json"):
                        shutil.copyfile(path, folder / path.name)
            tables3.load(folder, build=True, log=lambda text: None, show_progress=False)
            (shared / "tables3.ready").touch()
    return folder


def copy_tables(folder: Path, names=("coords.npz", "robot-cost.npy")) -> Path:
    """The session's tables `names` (for config.yaml's robot) copied into folder (made), with a manifest
    listing only them: a tables folder of the test's own, as a first use would have left it, without
    building.  Returns folder.  Tests import it: `from conftest import copy_tables`."""
    source = _redirect["tables"]
    assert source is not None, "copy_tables needs the session's tables (the _session_tables fixture)"
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((source / "manifest.json").read_text())
    manifest["files"] = {name: manifest["files"][name] for name in names}
    for name in names:
        shutil.copyfile(source / name, folder / name)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return folder


def pytest_configure(config):
    config.addinivalue_line("markers", "robot: runs against a real robot (needs --robot-port)")


def pytest_addoption(parser):
    parser.addoption(
        "--robot-port", metavar="PORT", default=None,
        help="also run the device-conformance suite against a real robot on PORT (e.g. /dev/ttyACM0); "
             "the arms move: take the cube out",
    )


class Board:
    """A minimal host: one command at a time, every line parsed (no driver logic)."""

    def __init__(self, port: str, read_timeout_s: float = READ_TIMEOUT_S, banner: bool = True):
        self.serial = serial.serial_for_url(port, P.BAUD, timeout=read_timeout_s)
        self.read_timeout_s = read_timeout_s
        self.events = []  # lines that were not the answer being waited for
        self.identity, self.seq = None, 0
        if banner:
            self.read_banner()

    def read_banner(self) -> P.Identity:
        self.identity = self.read_reply()
        assert isinstance(self.identity, P.Identity), f"expected the banner, got {self.identity}"
        self.seq = self.identity.last  # after a reset any seq above `last` is accepted
        return self.identity

    def close(self):
        self.serial.close()

    def read_payload(self) -> str:
        raw = self.serial.readline()
        assert raw.endswith(b"\n"), f"no line from the device within {self.read_timeout_s} s (got {raw!r})"
        assert len(raw) <= P.MAX_REPLY, f"line longer than MAX_REPLY: {raw!r}"
        return P.unframe(raw.rstrip(b"\r\n"))

    def read_reply(self):
        return P.parse_reply(self.read_payload())

    def send_raw(self, data: bytes):
        self.serial.write(data)

    def send(self, command: str, seq: int | None = None) -> int:
        if seq is None:
            self.seq += 1
            seq = self.seq
        self.serial.write(P.command_line(seq, command))
        return seq

    def answer(self, seq: int | None = None):
        """Lines up to the answer (ok/err/rs) to `seq`; returns (answer, lines before it)."""
        before = []
        while True:
            reply = self.read_reply()
            if isinstance(reply, P.LINE_ANSWERS) and (seq is None or getattr(reply, "seq", None) in (seq, None)
                                                      or isinstance(reply, P.Resend)):
                return reply, before
            before.append(reply)
            self.events.append(reply)

    def request(self, command: str):
        seq = self.send(command)
        reply, before = self.answer(seq)
        for _ in range(3):  # the device lost part of the line (a loaded machine splits writes): as a host does
            if not (isinstance(reply, P.Resend) and reply.seq == seq):
                break
            self.send(command, seq)
            reply, more = self.answer(seq)
            before += more
        return reply, before

    def ok(self, command: str) -> int:
        seq = self.send(command)
        reply, _ = self.answer(seq)
        assert reply == P.Ok(seq), f"{command}: expected ok {seq}, got {reply}"
        return seq

    def error(self, command: str) -> P.ErrorCode:
        seq = self.send(command)
        reply, _ = self.answer(seq)
        assert isinstance(reply, P.Err) and reply.seq == seq, f"{command}: expected err {seq}, got {reply}"
        return reply.code

    def wait_for(self, kind, predicate=lambda r: True):
        for r in list(self.events):
            if isinstance(r, kind) and predicate(r):
                self.events.remove(r)
                return r
        while True:
            reply = self.read_reply()
            if isinstance(reply, kind) and predicate(reply):
                return reply
            self.events.append(reply)

    def done(self, seq: int) -> P.Done:
        return self.wait_for(P.Done, lambda d: d.seq == seq)

    def status(self) -> P.Status:
        _, before = self.request("STATUS")
        assert isinstance(before[-1], P.Status)
        self.events.remove(before[-1])
        return before[-1]


class Device:
    """One kind of device under test.  Subclasses say how to connect and what inputs exist."""

    name = "?"
    power_up = True  # connect() gives a board fresh from power-up (last = cut = 0)
    has_inputs = True  # press_estop / release_estop / press_start / release_start / reset exist

    def __init__(self, port: str):
        self.port = port
        self._boards: list[Board] = []

    def connect(self) -> Board:
        """Open the port (the board resets, as an Uno does) and read its banner."""
        board = Board(self.port)
        self._boards.append(board)
        return board

    def close(self):
        for board in self._boards:
            board.close()

    fuzz_lines = 2000

    def mark(self):
        """A point in time for assert_moved_since."""
        return None

    def assert_moved_since(self, mark, net_steps: dict, grippers: bool = True) -> None:
        """The arms moved exactly `net_steps` (signed, per arm) since `mark`; with grippers=False, no
        gripper moved either.  Only devices that can see their motors check (not a real robot)."""

    def require_inputs(self):
        """Skip (before anything moves) on a device whose buttons the test cannot press."""
        if not self.has_inputs:
            pytest.skip(f"{self.name}: the test needs to press the board's buttons")

    def press_estop(self):
        self.require_inputs()

    def release_estop(self):
        self.require_inputs()

    def press_start(self):
        self.require_inputs()

    def release_start(self):
        self.require_inputs()

    def reset(self):
        """The board's reset button: RAM (last/cut) kept, a new banner."""
        self.require_inputs()

    # The arms' mechanics (homing sensors on the shared input, the arm's angle): emulated devices only.
    def set_sensor(self, arm: str, start: int, width: int):
        self.require_inputs()

    def stick_sensor(self, arm: str):
        self.require_inputs()

    def arm_position(self, arm: str) -> int:
        self.require_inputs()


class MockDevice(Device):
    def __init__(self, transport: str):
        from robot.sim.mock_firmware import MockFirmware

        # time_scale: the mock runs 5x faster than real time; `done` still reports the modelled ms.
        # Over TCP it resets when a client connects and sends its banner after a short "bootloader"
        # wait (pyserial empties its input buffer right after connecting, as a real Uno's 1.6 s allow).
        self.mock = MockFirmware(transport, time_scale=0.2, reset_on_connect=transport == "tcp",
                                 boot_delay_s=0.2).start()
        self.name = f"mock-{transport}"
        super().__init__(self.mock.url)

    def connect(self) -> Board:
        if self.mock.device.endpoint.transport == "tcp":
            return super().connect()  # the mock resets when a client connects (the Uno's DTR reset)
        board = Board(self.port, banner=False)
        self._boards.append(board)
        self.mock.reset()  # a pty has no "opened" event: reset it as the open would
        board.read_banner()
        return board

    def close(self):
        super().close()
        self.mock.stop()

    def mark(self):
        return len(self.mock.executed), len(self.mock.step_log)

    def assert_moved_since(self, mark, net_steps: dict, grippers: bool = True) -> None:
        executed = [command.split() for _, command in self.mock.executed[mark[0]:]]
        moved = {arm: 0 for arm in "RLFB"}
        for arm, steps in self.mock.step_log[mark[1]:]:  # every TURN, JOG and HOME move, in signed steps
            moved[arm] += steps
        assert moved == net_steps, f"the mock moved {moved}, expected {net_steps}"
        if not grippers:
            assert not [c for c in executed if c[0] in ("GRIP", "OPEN", "CLOSE")], "a gripper moved"

    def press_estop(self):
        self.mock.estop_input()

    def release_estop(self):
        self.mock.release_estop_input()

    def press_start(self):
        self.mock.press_start()

    def release_start(self):
        pass  # the mock reports a press at once (the firmware after its debounce)

    def reset(self):
        self.mock.reset()

    def set_sensor(self, arm, start, width):
        self.mock.set_sensor(arm, start, width)

    def stick_sensor(self, arm):
        self.mock.stick_sensor(arm)

    def arm_position(self, arm):
        return self.mock.arm_position(arm)


class FirmwareDevice(Device):
    name = "firmware"

    def __init__(self):
        from robot.sim import emulator

        self.emu = emulator.Emulator().__enter__()
        super().__init__(self.emu.port)

    def close(self):
        super().close()
        self.emu.__exit__(None, None, None)

    def mark(self):
        return self.emu.cycle()

    def assert_moved_since(self, mark, net_steps: dict, grippers: bool = True) -> None:
        from robot.sim import pinlog

        events = self.emu.pin_events()
        moved = pinlog.net_steps(events, start_cycle=mark)
        assert moved == net_steps, f"the pins show {moved}, expected {net_steps}"
        if not grippers:
            pulses = {arm: [p for p in ps if p.start_cycle >= mark] for arm, ps in pinlog.servo_pulses(events).items()}
            assert all(not p for p in pulses.values()), "a gripper moved"

    def press_estop(self):
        self.emu.press("estop")

    def release_estop(self):
        self.emu.release("estop")

    def press_start(self):
        self.emu.press("start")

    def release_start(self):
        self.emu.release("start")

    def reset(self):
        self.emu.reset()

    def set_sensor(self, arm, start, width):
        from robot import config as config_module

        self.emu.set_sensor(arm, start, width, config_module.defaults().motion.steps_per_rev)

    def stick_sensor(self, arm):
        self.emu.stick_sensor(arm)

    def arm_position(self, arm):
        return self.emu.arm_position(arm)


class RobotDevice(Device):
    name = "robot"
    power_up = False  # its RAM may remember an earlier run
    has_inputs = False


def _firmware_param():
    from robot.sim import emulator

    ok, reason = emulator.available()
    marks = [pytest.mark.firmware]
    if not ok:
        marks.append(pytest.mark.skip(reason=f"firmware emulator unavailable: {reason}"))
    return pytest.param("firmware", marks=marks)


DEVICE_PARAMS = ["mock-pty", "mock-tcp", _firmware_param(), pytest.param("robot", marks=pytest.mark.robot)]


@pytest.fixture(params=DEVICE_PARAMS)
def device(request):
    kind = request.param
    if kind == "robot":
        port = request.config.getoption("--robot-port")
        if not port:
            pytest.skip("no real robot: give --robot-port /dev/ttyACM0 to run the suite against one")
        dev = RobotDevice(port)
    elif kind == "firmware":
        dev = FirmwareDevice()
    else:
        dev = MockDevice(kind.split("-")[1])
    try:
        yield dev
    finally:
        dev.close()


def calibrate_colours_sim(tmp_path, monkeypatch, capsys) -> str:
    """`calibrate colours --sim` on the mock with every answer yes, its files pointed into tmp_path/cal
    (which it must not write); returns what it printed (exit 0 asserted)."""
    import io

    from robot import cli

    def edit(text):
        text = text.replace("colours_file: calibration/colors.yaml", f"colours_file: {tmp_path / 'cal' / 'c.yaml'}")
        text = text.replace("regions_file: calibration/regions.yaml", f"regions_file: {tmp_path / 'cal' / 'r.yaml'}")
        return text.replace("preview_dir: runs/preview", f"preview_dir: {tmp_path / 'preview'}")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code = cli.main(["calibrate", "colours", "--sim", "--firmware", "mock", "--yes", "--no-window", "--seed", "4",
                     "--config", str(scratch_config(tmp_path, edit))])
    out = capsys.readouterr().out
    assert code == 0, out
    return out
