"""`cube-robot panel` as a program and its API over HTTP and the websocket (docs/panel.md), no browser: the
controlling client's websocket closing lets another take control; a run goes on to its end when the only
browser watching it goes away; the URL line, Ctrl-C, the refusals of bad arguments and a busy web port; and
the robot's port held by a panel, which other commands find busy with the panel named.  The security rules
are tests/test_panel_security.py's."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import re
import signal
import socket
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Callable, Iterator

import pytest

from conftest import scratch_config
from panel_fixtures import PANEL_LINE, Panel, cube_robot_command, get, panel_server, post, run_async  # noqa: F401

HANG_GUARD_S = 300.0  # ends a test the panel leaves waiting; not a speed requirement
SOLVED = "UUUURRRRFFFFDDDDLLLLBBBB"


# -- the websocket, as a page's script holds it ---------------------------------------------------------------

def ws_url(panel: Panel, client: str) -> str:
    return panel.base.replace("http", "ws", 1) + f"/api/events?client={client}"


async def listen(panel: Panel, client: str):
    from tornado.websocket import websocket_connect

    return await websocket_connect(ws_url(panel, client))


async def until(connection, predicate: Callable[[dict], bool], what: str) -> dict:
    """The first message from now on that predicate accepts (the socket's messages are read in order)."""
    while True:
        text = await asyncio.wait_for(connection.read_message(), HANG_GUARD_S)
        assert text is not None, f"the websocket closed before {what}"
        message = json.loads(text)
        if predicate(message):
            return message


def state_of_run(run: int, state: str) -> Callable[[dict], bool]:
    return lambda m: m["type"] == "State" and m["run"]["id"] == run and m["run"]["state"] == state


# -- control ----------------------------------------------------------------------------------------------------

@pytest.mark.panel_args("--firmware", "mock")
def test_the_controllers_websocket_closing_lets_another_client_take_control(panel_server):
    panel = panel_server

    async def scenario() -> None:
        controller = await listen(panel, "tab-a")
        watcher = await listen(panel, "tab-b")
        assert post(panel, "/api/control", {"take": False}, client="tab-a").status == 200
        await until(watcher, lambda m: m["type"] == "State" and m["controller"] == "tab-a", "tab-a in control")
        for path, body in (("/api/run/stop", {}), ("/api/run/confirm", {"facelets": SOLVED}),
                           ("/api/control", {"take": False})):
            answer = post(panel, path, body, client="tab-b")
            assert answer.status == 409 and "'tab-a'" in answer.json()["error"], (path, answer.text)

        controller.close()  # the tab is closed
        seen = await until(watcher, lambda m: m["type"] == "State" and m["controller"] is None, "control released")
        assert seen["you_control"] is False
        answer = post(panel, "/api/control", {"take": False}, client="tab-b")
        assert answer.status == 200 and answer.json()["controller"] == "tab-b", answer.text
        watcher.close()

    run_async(scenario())


# -- losing the browser -------------------------------------------------------------------------------------------

@pytest.mark.panel_args("--firmware", "mock", "--seed", "5")
def test_a_run_goes_on_to_simulated_solved_when_its_only_browser_goes_away(panel_server):
    panel = panel_server

    async def scenario() -> dict:
        page = await listen(panel, "tab-a")
        assert post(panel, "/api/control", {"take": False}, client="tab-a").status == 200
        started = post(panel, "/api/run/start", client="tab-a")
        assert started.status == 200 and started.json() == {"run": 1}, started.text
        done = await until(page, lambda m: m["type"] == "ActionDone" and m["run"] == 1, "the plan's first action")
        assert done["completed"] < done["total"]
        page.close()  # nobody watches now; the run is not told

        # A page opened later learns the run's end from the state it is sent (at once if it has ended).
        later = await listen(panel, "later")
        ended = await until(later, state_of_run(1, "idle"), "run 1's end")
        later.close()
        return ended

    ended = run_async(scenario())
    assert ended["run"]["result_line"].startswith("SIMULATED SOLVED"), ended["run"]
    assert ended["controller"] is None  # the closed tab let go of control, and the run went on
    report = get(panel, "/api/report")
    assert report.status == 200, report.text
    body = report.json()
    assert body["outcome"] == "SOLVED" and body["simulated"] is True and "stopped_at_action" not in body, body
    assert body["plan"]["moves"] and body["execute_ok"] is True


# -- the program: its URL line, Ctrl-C, refusals --------------------------------------------------------------------

class Spawned:
    """A `cube-robot panel ...` in its own process group, its stdout read line by line as it comes."""

    def __init__(self, args: list[str], folder: Path):
        self.stderr_path = folder / "panel-stderr.txt"
        with open(self.stderr_path, "w") as stderr:
            self.process = subprocess.Popen([*cube_robot_command(), "panel", *args], stdout=subprocess.PIPE,
                                            stderr=stderr, text=True, cwd=folder, start_new_session=True,
                                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.stdout: list[str] = []
        self._lines: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.stdout.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def said(self) -> str:
        return "stdout:\n" + "".join(self.stdout) + "\nstderr:\n" + self.stderr_path.read_text(errors="replace")

    def url(self) -> str:
        while True:
            try:
                line = self._lines.get(timeout=HANG_GUARD_S)
            except queue.Empty:
                line = None
            assert line is not None, f"the panel printed no 'Panel: URL' line\n{self.said()}"
            found = PANEL_LINE.search(line)
            if found:
                return found.group(1)

    def ctrl_c(self) -> int:
        """SIGINT to its process group, as a terminal's Ctrl-C; its exit status once it and its stdout end."""
        os.killpg(self.process.pid, signal.SIGINT)
        status = self.process.wait(HANG_GUARD_S)
        self._reader.join(HANG_GUARD_S)
        return status

    def kill(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@contextlib.contextmanager
def spawned(args: list[str], folder: Path) -> Iterator[Spawned]:
    panel = Spawned(args, folder)
    try:
        yield panel
    finally:
        panel.kill()


def children_of(pid: int) -> list[int]:
    """The processes whose parent is pid (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


def emulator_folders_of(pid: int) -> list[Path]:
    """The emulator's working folders a process made (robot/sim/emulator.py marks each with its owner's pid)."""
    from robot.sim.emulator import FOLDER_PREFIX, OWNER_FILE

    return [folder for folder in Path(tempfile.gettempdir()).glob(FOLDER_PREFIX + "*")
            if (folder / OWNER_FILE).is_file() and (folder / OWNER_FILE).read_text().strip() == str(pid)]


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.firmware
def test_the_panel_prints_one_url_line_and_ctrl_c_ends_it_leaving_no_emulator_or_process(tmp_path):
    from robot.sim import emulator

    ok, why = emulator.available()
    if not ok:
        pytest.skip(f"firmware emulator unavailable: {why}")
    config = scratch_config(tmp_path)
    with spawned(["--sim", "--firmware", "emulator", "--http-port", "0", "--config", str(config)], tmp_path) as panel:
        url = panel.url()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url), url
        port = int(url.rsplit(":", 1)[1].strip("/"))
        assert get(Panel(url, f"http://127.0.0.1:{port}", None, panel.process, tmp_path), "/api/state").json()[
            "backend"] == "real firmware (.elf) in simavr"
        folders = emulator_folders_of(panel.process.pid)
        helpers = children_of(panel.process.pid)
        assert folders and helpers, f"the panel's emulator was not found ({folders}, {helpers})"
        status = panel.ctrl_c()
        assert status == 0, panel.said()
    assert [line for line in panel.stdout if line.startswith("Panel:")] == [f"Panel: {url}\n"], panel.stdout
    assert panel.stdout == [f"Panel: {url}\n"], "the URL line is all it prints on stdout (the rest is stderr)"
    assert not any(folder.exists() for folder in folders), folders
    assert not [pid for pid in helpers if alive(pid)], "a process the panel started outlived it"
    with contextlib.suppress(ProcessLookupError):  # its process group is gone with it
        os.killpg(panel.process.pid, 0)
        pytest.fail("a process of the panel's group outlived it")


def run_panel(args: list[str], folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*cube_robot_command(), "panel", *args], capture_output=True, text=True, cwd=folder,
                          timeout=HANG_GUARD_S)


def test_port_and_sim_together_are_refused_with_exit_2(tmp_path):
    done = run_panel(["--sim", "--port", "/dev/ttyACM9", "--http-port", "0", "--config", str(scratch_config(tmp_path))],
                     tmp_path)
    assert done.returncode == 2, done
    assert "--port /dev/ttyACM9" in done.stderr and "--sim" in done.stderr and "nothing moved" in done.stderr
    assert "Panel:" not in done.stdout


def test_a_busy_http_port_is_said_with_exit_2(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_panel(["--sim", "--firmware", "mock", "--http-port", str(port), "--config",
                          str(scratch_config(tmp_path))], tmp_path)
    assert done.returncode == 2, done
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--http-port 0" in done.stderr, done.stderr
    assert "Panel:" not in done.stdout


# -- the port is held -------------------------------------------------------------------------------------------

def test_a_panel_on_a_robots_port_holds_it_and_other_commands_name_the_panel(tmp_path):
    """A panel on the mock firmware's pty (a robot's port; a folder of pictures as its camera): while it runs,
    `cube-robot link info` on that port is refused as busy naming `cube-robot panel`; after Ctrl-C the port
    opens again."""
    from robot import config as config_module
    from robot.link import ports
    from robot.link.errors import PortError
    from robot.sim.mock_firmware import MockFirmware

    pictures = tmp_path / "pictures"
    pictures.mkdir()

    def camera_is_the_folder(text: str) -> str:
        changed = re.sub(r"(\ncamera:\n(?:[ #].*\n|\n)*?  device: )\S+", lambda m: m.group(1) + str(pictures), text,
                         count=1)
        assert changed != text, "config.yaml's camera.device was not found"
        return changed

    config = scratch_config(tmp_path, camera_is_the_folder)
    assert config_module.load(config).camera.device == str(pictures)
    mock = MockFirmware(transport="pty").start()
    try:
        with spawned(["--port", mock.url, "--http-port", "0", "--config", str(config)], tmp_path) as panel:
            panel.url()
            other = subprocess.run([*cube_robot_command(), "link", "info", "--port", mock.url, "--config", str(config)],
                                   capture_output=True, text=True, timeout=HANG_GUARD_S)
            assert other.returncode != 0, other
            assert "busy" in other.stderr and "`cube-robot panel`" in other.stderr, other.stderr
            with pytest.raises(PortError, match="cube-robot panel"):
                ports.open_port(mock.url, config_module.load(config).link.baud)
            assert panel.ctrl_c() == 0, panel.said()
        ports.open_port(mock.url, config_module.load(config).link.baud).close()  # let go: it opens again
    finally:
        mock.stop()
