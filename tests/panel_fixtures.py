"""The panel's test fixtures: a real `cube-robot panel --sim` in a subprocess, plain HTTP and websocket
helpers, and a real browser (Debian's chromium driven by Playwright).

    panel_server          a fresh panel on 127.0.0.1 for one test (`@pytest.mark.panel_args("--seed", "3")`
                          adds arguments)
    panel_server_module   one panel on 127.0.0.1 shared by a test file's tests
    panel_server_public   one panel bound to 0.0.0.0 (so every request needs the token), per test file
    browser               chromium (headless), one per session; skipped when chromium or Playwright is
                          missing, except when the environment variable CI is set (CI runs the browser tests)
    page                  a new browser page (desktop-sized; `@pytest.mark.viewport("phone")` for a phone's);
                          an uncaught JavaScript error in it fails the test

Test files import what they use: `from panel_fixtures import panel_server, browser, page  # noqa: F401`.
`start_panel(folder, *args)` starts one for a test or script that needs its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import ipaddress
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
PANEL_LINE = re.compile(r"Panel: (https?://\S+)")
CLIENT_HEADER = "X-Cube-Robot-Client"
TOKEN_HEADER = "X-Cube-Robot-Token"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
# Guards against a hang, not a speed requirement: a panel that prints no URL by then is reported with
# its output, and one that does not end after Ctrl-C is killed.
STARTUP_GUARD_S = 300.0
SHUTDOWN_GUARD_S = 60.0
# Playwright's waits (a run's result under a loaded CI machine comes late; these only end a hang).
BROWSER_GUARD_MS = 180_000


def cube_robot_command() -> list[str]:
    """The installed `cube-robot` beside this interpreter (the venv's), else `python -m robot`."""
    script = Path(sys.executable).parent / "cube-robot"
    return [str(script)] if script.exists() else [sys.executable, "-m", "robot"]


@dataclass
class Panel:
    """A running `cube-robot panel`: the URL it printed, and its process."""

    url: str                   # as printed, with ?token=... when one is needed
    base: str                  # scheme://host:port, reachable from here (a wildcard bind: 127.0.0.1)
    token: str | None
    process: subprocess.Popen
    folder: Path               # its scratch config, solve log and scan pictures are here
    output: list[str] = field(default_factory=list)   # its stdout lines so far
    stderr_path: Path | None = None
    stopped_by_test: bool = False

    @property
    def port(self) -> int:
        return int(urlsplit(self.base).port or 80)

    @property
    def host(self) -> str:
        """The host of the printed URL."""
        return urlsplit(self.url).hostname or ""

    @property
    def loopback_base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def images_dir(self) -> Path:
        """Where its scan pictures go (`scan.images_dir` of its config): the folder `/runs/` serves."""
        return self.folder / "scans"

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path and self.stderr_path.exists() else ""

    def describe(self) -> str:
        """Its output so far, for a failure's message."""
        return "stdout:\n" + "".join(self.output)[-4000:] + "\nstderr:\n" + self.stderr()[-4000:]

    def stop(self) -> int:
        """Ctrl-C, as in its terminal; its exit status."""
        self.stopped_by_test = True
        return _stop(self.process)


def _stop(process: subprocess.Popen) -> int:
    """SIGINT to its process group (a terminal's Ctrl-C: a run is stopped first), SIGKILL if it hangs."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(SHUTDOWN_GUARD_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    else:
        # It ended by itself; what it started in its group (the emulator) goes too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    return process.returncode


def _ctrl_c_ends_it() -> None:
    """In the child before it starts: SIGINT as a terminal's Ctrl-C (a shell's background job, such as a
    CI step run with &, would hand on an ignored SIGINT, and Python keeps it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _drain(stream: IO[str], lines: queue.Queue, output: list[str]) -> None:
    """Reads its stdout to the end (a full pipe would block the panel); each line goes to both."""
    for line in stream:
        output.append(line)
        lines.put(line)
    lines.put(None)


def panel_config(folder: Path) -> Path:
    """config.yaml for a panel of the tests: pictures, previews and the solve log in folder, and the
    session's solver tables (tests/conftest.py scratch_config)."""
    from conftest import scratch_config  # imported here: conftest may import this module

    folder.mkdir(parents=True, exist_ok=True)
    return scratch_config(folder, lambda text: text.replace(
        "preview_dir: runs/preview", f"preview_dir: {folder / 'preview'}").replace(  # a calibration saves here
        "regions_file: calibration/regions.yaml", f"regions_file: {folder / 'regions.yaml'}").replace(
        "colours_file: calibration/colors.yaml", f"colours_file: {folder / 'colors.yaml'}"))


@contextlib.contextmanager
def start_panel(folder: Path, *args: str, env: dict | None = None) -> Iterator[Panel]:
    """`cube-robot panel --sim --http-port 0 --config <scratch config in folder> ARGS` in its own process
    group, until the block ends (Ctrl-C then, killed if it hangs; also when the block fails).  Fails the
    test, with the panel's output, if it ended by itself before that (unless the test stopped it)."""
    folder.mkdir(parents=True, exist_ok=True)
    config = panel_config(folder)
    stderr_path = folder / "panel-stderr.txt"
    command = [*cube_robot_command(), "panel", "--sim", "--http-port", "0", "--config", str(config), *args]
    with open(stderr_path, "w") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=folder,
                                   start_new_session=True, env=env, preexec_fn=_ctrl_c_ends_it)
    try:
        lines: queue.Queue = queue.Queue()
        output: list[str] = []
        assert process.stdout is not None
        threading.Thread(target=_drain, args=(process.stdout, lines, output), daemon=True).start()
        url = _wait_for_url(lines)
        panel = Panel(url=url, base="", token=None, process=process, folder=folder, output=output,
                      stderr_path=stderr_path)
        if url is None:
            pytest.fail(f"`{' '.join(command)}` printed no 'Panel: URL' line (exit status {process.poll()})\n"
                        + panel.describe())
        parts = urlsplit(url)
        host = parts.hostname or ""
        # A wildcard bind prints the machine's name, which need not resolve here: loopback reaches it.
        reachable = host if _is_address(host) and host not in ("0.0.0.0", "::") else "127.0.0.1"
        panel.base = f"{parts.scheme}://{reachable}:{parts.port}"
        panel.token = (parse_qs(parts.query).get("token") or [None])[0]
        yield panel
        if process.poll() is not None and not panel.stopped_by_test:
            pytest.fail(f"the panel ended by itself with status {process.returncode} during the test\n"
                        + panel.describe())
    finally:
        _stop(process)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost"
    return True


def _wait_for_url(lines: queue.Queue) -> str | None:
    while True:
        try:
            line = lines.get(timeout=STARTUP_GUARD_S)
        except queue.Empty:
            return None
        if line is None:
            return None
        found = PANEL_LINE.search(line)
        if found:
            return found.group(1)


def _panel_args(request) -> tuple[str, ...]:
    marker = request.node.get_closest_marker("panel_args")
    return tuple(marker.args) if marker else ()


@pytest.fixture
def panel_server(request, tmp_path) -> Iterator[Panel]:
    with start_panel(tmp_path / "panel", *_panel_args(request)) as panel:
        yield panel


@pytest.fixture(scope="module")
def panel_server_module(tmp_path_factory) -> Iterator[Panel]:
    with start_panel(tmp_path_factory.mktemp("panel")) as panel:
        yield panel


@pytest.fixture(scope="module")
def panel_server_public(tmp_path_factory) -> Iterator[Panel]:
    """Bound to every address: each request needs the token, from loopback too."""
    with start_panel(tmp_path_factory.mktemp("panel-public"), "--host", "0.0.0.0") as panel:
        yield panel


# -- plain HTTP, exactly the bytes given (urllib would add and normalise) -------------------------------

@dataclass
class Response:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self):
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def request(base: str, method: str, path: str, body: bytes | str | dict | None = None,
            headers: dict | None = None) -> Response:
    """One HTTP request to base (scheme://host:port) with path sent as written (no normalisation); a dict
    body is sent as JSON.  For endless responses (the MJPEG stream) use open_stream."""
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=STARTUP_GUARD_S)
    try:
        sent_headers = dict(headers or {})
        if isinstance(body, dict):
            body = json.dumps(body)
            sent_headers.setdefault("Content-Type", "application/json")
        if isinstance(body, str):
            body = body.encode()
        connection.request(method, path, body=body, headers=sent_headers)
        answer = connection.getresponse()
        return Response(answer.status, answer.headers, answer.read())
    finally:
        connection.close()


def post(panel: Panel, path: str, body: dict | None = None, client: str = "tests", **headers: str) -> Response:
    """A POST as a script sends it: JSON, the client header, and the token when the panel has one."""
    sent = {CLIENT_HEADER: client, **headers}
    if panel.token:
        sent.setdefault(TOKEN_HEADER, panel.token)
    return request(panel.base, "POST", path, {} if body is None else body, sent)


def get(panel: Panel, path: str, **headers: str) -> Response:
    sent = dict(headers)
    if panel.token:
        sent.setdefault(TOKEN_HEADER, panel.token)
    return request(panel.base, "GET", path, headers=sent)


@contextlib.contextmanager
def open_stream(base: str, path: str, headers: dict | None = None) -> Iterator[http.client.HTTPResponse]:
    """A GET whose answer is read as it comes (the camera stream); closed when the block ends."""
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=STARTUP_GUARD_S)
    try:
        connection.request("GET", path, headers=headers or {})
        yield connection.getresponse()
    finally:
        connection.close()


# -- the browser ---------------------------------------------------------------------------------------

def run_async(coroutine):
    """asyncio.run on a thread of its own: a test worker that has run Playwright's sync API (which keeps
    an event loop running in the main thread) cannot asyncio.run there."""
    result: list = []
    error: list = []

    def run() -> None:
        try:
            result.append(asyncio.run(coroutine))
        except BaseException as exc:  # handed to the test's thread
            error.append(exc)
    thread = threading.Thread(target=run, name="test asyncio")
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]


def browser_missing() -> str:
    """Why the browser tests cannot run here, or ""."""
    if not Path(CHROMIUM).exists():
        return f"no {CHROMIUM} (Debian's chromium package: scripts/setup.sh installs it as root)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is missing (pip install -e '.[test]')"
    return ""


_CHROMIUM: list = []  # the one browser of this test process (each test file imports the fixture anew)


@pytest.fixture(scope="session")
def browser(request):
    reason = browser_missing()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI runs the browser tests, but: {reason}")
        pytest.skip(reason)
    if not _CHROMIUM:  # Playwright's sync API runs once per process: a second start fails
        from playwright.sync_api import expect, sync_playwright

        expect.set_options(timeout=BROWSER_GUARD_MS)
        playwright = sync_playwright().start()
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        _CHROMIUM.append(chromium)

        def stop() -> None:
            chromium.close()
            playwright.stop()
        request.config.add_cleanup(stop)
    return _CHROMIUM[0]


@pytest.fixture
def page(browser, request):
    marker = request.node.get_closest_marker("viewport")
    phone = bool(marker and marker.args and marker.args[0] == "phone")
    context = browser.new_context(viewport=PHONE if phone else DESKTOP, is_mobile=phone, has_touch=phone)
    context.set_default_timeout(BROWSER_GUARD_MS)
    errors: list[str] = []
    new_page = context.new_page()
    new_page.on("pageerror", lambda error: errors.append(str(error)))
    yield new_page
    context.close()
    assert not errors, f"uncaught JavaScript errors in the page: {errors}"

