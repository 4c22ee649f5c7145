"""The panel's safety and security rules (docs/panel.md, "Safety and security"), checked over HTTP and the
websocket against a real `cube-robot panel --sim`: where it listens, the token on a non-loopback bind,
cross-site requests, the body limit, files outside the served folders, and that a GET moves nothing."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
from pathlib import Path

import pytest

from robot.panel.security import TOKEN_COOKIE
from panel_fixtures import (CLIENT_HEADER, DESKTOP, TOKEN_HEADER, Panel, browser, get, open_stream,  # noqa: F401
                            panel_server, panel_server_module, panel_server_public, post, request, run_async)

POST_ROUTES = ["/api/control", "/api/run/start", "/api/run/confirm", "/api/run/stop", "/api/estop", "/api/alarm/clear",
               "/api/cube/check", "/api/sim/new-cube"] + [
    f"/api/bringup/{action}" for action in ("motors", "jog", "grip", "home", "square", "load", "release", "trim",
                                            "save-trims")]
GET_ROUTES = ["/", "/api/state", "/api/report", "/api/history", "/api/doctor", "/api/bringup/where",
              "/api/camera.jpg"]
SOLVED = "UUUURRRRFFFFDDDDLLLLBBBB"
WRONG_TOKEN = "0" * 32
LIMIT = 64 * 1024
HANG_GUARD_S = 120.0  # ends a test the panel leaves waiting; not a speed requirement


def snapshot(panel: Panel) -> dict:
    """What a request must not change: the board (arms, grippers, drivers, alarm), the run, the controller."""
    state = get(panel, "/api/state")
    where = get(panel, "/api/bringup/where")
    assert state.status == 200 and where.status == 200, (state.text, where.text)
    body = state.json()
    return {"where": where.json(), **{key: body.get(key) for key in ("run", "controller", "board")}}


def websocket_answer(url: str, headers: dict | None = None) -> int | str:
    """Opens the events websocket: "open" when it is accepted (and closes it), else the HTTP status that
    refused it."""
    from tornado.httpclient import HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    async def attempt():
        try:
            connection = await websocket_connect(HTTPRequest(url, headers=headers or {}))
        except HTTPClientError as refused:
            return refused.code
        connection.close()
        return "open"

    return run_async(attempt())


def ws_url(panel: Panel, query: str = "") -> str:
    return panel.base.replace("http", "ws", 1) + "/api/events" + query


def origin_of(panel: Panel) -> str:
    return panel.base


# -- where it listens ---------------------------------------------------------------------------------------

def listening_addresses(port: int) -> set[str]:
    """The local addresses of the listening TCP sockets on port, from /proc/net/tcp{,6}."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


def test_listens_on_loopback_only_by_default(panel_server_module):
    panel = panel_server_module
    assert panel.host == "127.0.0.1", f"the printed URL is {panel.url}"
    assert panel.token is None, "a loopback panel needs no token, and its URL carries none"
    if not os.path.exists("/proc/net/tcp"):
        pytest.skip("no /proc/net/tcp to read the listening sockets from")
    # 0100007F is 127.0.0.1 as the kernel writes it; a wildcard bind would show 00000000 (or :: in tcp6).
    assert listening_addresses(panel.port) == {"0100007F"}
    assert get(panel, "/api/state").status == 200


def test_a_wildcard_bind_prints_a_url_with_the_token(panel_server_public):
    panel = panel_server_public
    assert panel.token and len(panel.token) >= 16, f"the printed URL {panel.url} carries no usable token"
    if os.path.exists("/proc/net/tcp"):
        assert "00000000" in listening_addresses(panel.port)


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "192.168.1.20:{port}"])
def test_on_loopback_a_request_naming_another_host_is_refused(panel_server_module, host):
    # A page elsewhere could rebind its own DNS name to 127.0.0.1: the Host header still names it.
    panel = panel_server_module
    named = host.format(port=panel.port)
    before = snapshot(panel)
    for method, path in (("GET", "/"), ("GET", "/api/state"), ("POST", "/api/run/start")):
        answer = request(panel.base, method, path, {} if method == "POST" else None,
                         {"Host": named, CLIENT_HEADER: "tests", "Origin": f"http://{named}"})
        assert answer.status in (400, 403), f"{method} {path} with Host {named}: {answer.status} {answer.text}"
    assert websocket_answer(ws_url(panel), {"Host": named, "Origin": f"http://{named}"}) in (400, 403)
    assert snapshot(panel) == before


# -- the token on a non-loopback bind ---------------------------------------------------------------------

@pytest.mark.parametrize("path", GET_ROUTES + ["/api/camera.mjpeg", "/static/"])
@pytest.mark.parametrize("token", ["missing", "wrong query", "wrong header", "wrong cookie"])
def test_without_the_right_token_everything_is_401_from_loopback_too(panel_server_public, path, token):
    panel = panel_server_public
    headers = {"wrong header": {TOKEN_HEADER: WRONG_TOKEN}, "wrong cookie": {"Cookie": f"{TOKEN_COOKIE}={WRONG_TOKEN}"}}
    query = f"?token={WRONG_TOKEN}" if token == "wrong query" else ""
    with open_stream(panel.loopback_base, path + query, headers.get(token, {})) as answer:
        assert answer.status == 401, f"GET {path} with the token {token}: {answer.status}"
        body = answer.read(4096)
        kind = answer.headers.get_content_type()
    assert kind == "application/json" and b"<html" not in body.lower(), f"a 401 that says more than no: {kind} {body[:300]!r}"
    assert panel.token.encode() not in body


@pytest.mark.parametrize("token", ["missing", "wrong"])
def test_without_the_right_token_a_post_is_refused_and_nothing_changes(panel_server_public, token):
    panel = panel_server_public
    before = snapshot(panel)
    headers = {CLIENT_HEADER: "tests"} | ({TOKEN_HEADER: WRONG_TOKEN} if token == "wrong" else {})
    for path in POST_ROUTES:
        answer = request(panel.loopback_base, "POST", path, {}, headers)
        assert answer.status in (401, 403), f"POST {path} with the token {token}: {answer.status} {answer.text}"
    assert snapshot(panel) == before


@pytest.mark.parametrize("token", ["missing", "wrong"])
def test_without_the_right_token_the_websocket_is_refused(panel_server_public, token):
    panel = panel_server_public
    query = f"?token={WRONG_TOKEN}" if token == "wrong" else ""
    assert websocket_answer(ws_url(panel, query)) == 401


def test_the_right_token_works_in_the_query_the_header_and_the_cookie_the_page_gets(panel_server_public):
    panel = panel_server_public
    page = request(panel.base, "GET", f"/?token={panel.token}")
    assert page.status == 200 and b"<html" in page.body.lower()
    cookie = page.headers.get("Set-Cookie", "")
    assert panel.token in cookie, f"the page's answer sets no cookie with the token: {cookie!r}"
    assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower(), cookie
    name_value = cookie.split(";")[0]
    for headers in ({TOKEN_HEADER: panel.token}, {"Cookie": name_value}):
        assert request(panel.base, "GET", "/api/state", headers=headers).status == 200, headers
        assert request(panel.base, "GET", "/", headers=headers).status == 200, headers
        check = request(panel.base, "POST", "/api/cube/check", {"facelets": SOLVED}, {CLIENT_HEADER: "tests", **headers})
        assert check.status == 200, check.text
    assert request(panel.base, "GET", f"/api/state?token={panel.token}").status == 200
    with open_stream(panel.base, f"/api/camera.mjpeg?token={panel.token}") as stream:
        assert stream.status == 200
        assert stream.headers.get_content_type() == "multipart/x-mixed-replace"
    assert websocket_answer(ws_url(panel, f"?token={panel.token}")) == "open"
    assert websocket_answer(ws_url(panel), {"Cookie": name_value, "Origin": origin_of(panel)}) == "open"


# -- cross-site requests ------------------------------------------------------------------------------------

def test_a_post_without_the_client_header_is_403_and_does_nothing(panel_server_module):
    panel = panel_server_module
    before = snapshot(panel)
    for path in POST_ROUTES:
        answer = request(panel.base, "POST", path, {}, {"Origin": origin_of(panel)})
        assert answer.status == 403, f"POST {path} without {CLIENT_HEADER}: {answer.status} {answer.text}"
        assert "error" in answer.json()
    assert snapshot(panel) == before


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:1", "https://127.0.0.1"])
def test_a_post_from_a_foreign_origin_is_403_and_does_nothing(panel_server_module, origin):
    panel = panel_server_module
    before = snapshot(panel)
    for path in POST_ROUTES:
        answer = request(panel.base, "POST", path, {}, {"Origin": origin, CLIENT_HEADER: "tests"})
        assert answer.status == 403, f"POST {path} from {origin}: {answer.status} {answer.text}"
    assert snapshot(panel) == before


def test_a_post_from_the_panels_own_origin_or_a_script_is_answered(panel_server_module):
    # The refusals above are about the origin and the header, not every POST.
    panel = panel_server_module
    for headers in ({"Origin": origin_of(panel)}, {}):
        answer = post(panel, "/api/cube/check", {"facelets": SOLVED}, **headers)
        assert answer.status == 200, (headers, answer.status, answer.text)


def test_a_websocket_from_a_foreign_origin_is_refused(panel_server_module):
    panel = panel_server_module
    assert websocket_answer(ws_url(panel), {"Origin": "http://evil.example"}) == 403
    assert websocket_answer(ws_url(panel), {"Origin": origin_of(panel)}) == "open"


def raw_post(panel: Panel, path: str, body: bytes, chunked: bool = False) -> tuple[bytes, bool]:
    """A POST written on a plain socket, the body whole or in 8 KiB chunks: (what the panel answered,
    whether it then closed the connection).  A panel that closes while the body is still being sent may
    answer nothing."""
    framing = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: %d" % len(body)
    head = (b"POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n%s: tests\r\n%s\r\n\r\n"
            % (path.encode(), panel.port, CLIENT_HEADER.encode(), framing))
    if chunked:
        pieces = [body[i:i + 8192] for i in range(0, len(body), 8192)]
        body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"
    with socket.create_connection(("127.0.0.1", panel.port)) as raw:
        try:
            raw.sendall(head + body)
        except (BrokenPipeError, ConnectionResetError):
            pass
        raw.settimeout(HANG_GUARD_S)
        answer, closed = b"", True
        try:
            while chunk := raw.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
        except socket.timeout:
            closed = False  # it kept the connection open, waiting for more
    return answer, closed


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_body_over_64_kib_is_refused_and_does_nothing(panel_server_module, chunked):
    panel = panel_server_module
    before = snapshot(panel)
    body = json.dumps({"take": True, "facelets": SOLVED, "padding": "x" * LIMIT}).encode()
    for path in ("/api/control", "/api/run/start", "/api/bringup/motors", "/api/cube/check"):
        answer, closed = raw_post(panel, path, body, chunked)
        status = answer.split(b"\r\n", 1)[0]
        # Tornado's limit answers a bare 400 and closes (docs/panel.md says 413): either refuses it unread.
        assert status in (b"", b"HTTP/1.1 413 Request Entity Too Large", b"HTTP/1.1 400 Bad Request"), (path, answer[:300])
        assert closed
    assert snapshot(panel) == before
    # Just under the limit is read, and judged on its content.
    answer = post(panel, "/api/cube/check", {"facelets": SOLVED, "padding": "x" * (LIMIT - 200)})
    assert answer.status == 400 and answer.json()["field"] == "padding", answer.text


# -- files outside the served folders -------------------------------------------------------------------------

# Lines of the files they reach: the checkout's robot/cli.py and config.yaml (static is robot/panel/static),
# the panel's scratch config beside its runs folder, /etc/passwd, this file.
FILE_MARKS = [b"COMMAND_MODULES", b"images_dir", b"root:x:", b"FILE_MARKS"]
TRAVERSALS = [
    "/static/../robot/cli.py", "/static/../../cli.py", "/static/../../../config.yaml", "/static/%2e%2e/%2e%2e/cli.py",
    "/static/%2e%2e%2f%2e%2e%2f%2e%2e%2fconfig.yaml", "/static/%2E%2E/%2E%2E/%2E%2E/config.yaml",
    "/static/..%2f..%2f..%2fconfig.yaml", "/static/....//....//....//config.yaml", "/static/..\\..\\cli.py",
    "/runs/../config.yaml", "/runs/%2e%2e/config.yaml", "/runs/..%2fconfig.yaml", "/runs/%2e%2e%2fconfig.yaml",
    "/static//etc/passwd", "/static/%2fetc%2fpasswd", "/runs//etc/passwd", "/runs/%2fetc%2fpasswd",
    f"/static/{Path(__file__).resolve()}", f"/runs/{Path(__file__).resolve()}"]


def test_the_served_folders_serve(panel_server_module):
    # So the refusals below are refusals, not a missing route.
    panel = panel_server_module
    page = get(panel, "/")
    scripts = re.findall(r'(?:src|href)="(/static/[^"?#]+)', page.text)
    assert scripts, f"the page names nothing under /static/: {page.text[:500]}"
    assert all(get(panel, path).status == 200 for path in scripts), scripts
    shown = panel.images_dir / "served-check" / "readings.json"
    shown.parent.mkdir(parents=True, exist_ok=True)
    shown.write_text('{"served": true}')
    answer = get(panel, "/runs/served-check/readings.json")
    assert answer.status == 200 and answer.json() == {"served": True}


@pytest.mark.parametrize("path", TRAVERSALS)
def test_a_path_outside_the_served_folders_is_refused(panel_server_module, path):
    panel = panel_server_module
    answer = get(panel, path)
    assert answer.status in (400, 403, 404), f"GET {path}: {answer.status}"
    assert not any(mark in answer.body for mark in FILE_MARKS), f"GET {path} answered with a file: {answer.body[:200]!r}"


def test_a_symlink_in_the_runs_folder_to_a_file_outside_is_refused(panel_server_module, tmp_path):
    panel = panel_server_module
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret outside the runs folder")
    folder = panel.images_dir / "linked"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "link.txt").symlink_to(secret)
    (folder / "outside").symlink_to(tmp_path, target_is_directory=True)
    for path in ("/runs/linked/link.txt", "/runs/linked/outside/secret.txt"):
        answer = get(panel, path)
        assert answer.status in (403, 404), f"GET {path}: {answer.status}"
        assert b"secret" not in answer.body


# -- nothing moves on a GET -----------------------------------------------------------------------------------

def test_a_get_on_a_post_route_is_405_and_moves_nothing(panel_server_module):
    panel = panel_server_module
    before = snapshot(panel)
    for path in POST_ROUTES:
        for query in ("", "?on=1&arm=R&steps=100&take=true&confirm=true"):
            answer = get(panel, path + query)
            assert answer.status == 405, f"GET {path}{query}: {answer.status} {answer.text}"
    assert snapshot(panel) == before


def test_the_limit_and_the_refusals_leave_the_panel_serving(panel_server_module):
    # After everything above in this file, it still answers (a refusal is not a crash).
    panel = panel_server_module
    assert panel.process.poll() is None, panel.describe()
    assert get(panel, "/api/state").status == 200
    with socket.create_connection(("127.0.0.1", panel.port)) as raw:
        raw.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert raw.recv(12).startswith(b"HTTP/1.1 200")


# -- one client controls; the emergency stop is everyone's ----------------------------------------------------

def test_a_watching_client_moves_nothing_until_it_takes_control_but_can_always_emergency_stop(panel_server):
    panel = panel_server
    assert post(panel, "/api/control", {"take": False}, client="first").status == 200
    before = snapshot(panel)
    assert before["controller"] == "first"
    for path, body in (("/api/control", {"take": False}), ("/api/run/start", {}), ("/api/bringup/motors", {"on": True}),
                       ("/api/bringup/jog", {"arm": "R", "steps": 10}), ("/api/sim/new-cube", {})):
        answer = post(panel, path, body, client="second")
        assert answer.status == 409, f"POST {path} from a watching client: {answer.status} {answer.text}"
    assert snapshot(panel) == before
    stop = post(panel, "/api/estop", client="second")
    assert stop.status == 200 and stop.json()["sent"] is True, stop.text
    assert get(panel, "/api/bringup/where").json()["board"]["alarm"] == "ESTOP_BYTE"  # the board got the byte
    assert post(panel, "/api/control", {"take": True}, client="second").status == 200
    assert get(panel, "/api/state").json()["controller"] == "second"


# -- the same rules in a real browser ------------------------------------------------------------------------

@pytest.fixture
def foreign_site():
    """Another site (another origin: another port) serving a page, as a web page the person visits would."""
    import http.server
    import threading

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"<!doctype html><title>another site</title><p>another site</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join()


CROSS_SITE_ATTEMPTS = """async (panel) => {
    const said = {};
    try {  // with the client header: the browser asks first (CORS), and the panel does not say yes
        const answer = await fetch(panel + '/api/estop', {method: 'POST', body: '{}',
            headers: {'X-Cube-Robot-Client': 'another-site', 'Content-Type': 'application/json'}});
        said.withHeader = 'answered ' + answer.status;
    } catch (error) { said.withHeader = 'blocked'; }
    // A "simple" request needs no asking: it reaches the panel (without the header, from another Origin).
    await fetch(panel + '/api/estop', {method: 'POST', mode: 'no-cors', body: '{}'}).catch(() => null);
    await fetch(panel + '/api/control', {method: 'POST', mode: 'no-cors', body: '{"take": true}',
                                         headers: {'Content-Type': 'text/plain'}}).catch(() => null);
    said.websocket = await new Promise((resolve) => {
        const socket = new WebSocket(panel.replace('http', 'ws') + '/api/events');
        socket.onopen = () => { socket.close(); resolve('open'); };
        socket.onerror = () => resolve('refused');
    });
    return said;
}"""


def test_a_page_of_another_site_cannot_post_or_listen(panel_server, browser, foreign_site):
    panel = panel_server
    before = snapshot(panel)
    context = browser.new_context(viewport=DESKTOP)
    try:
        page = context.new_page()
        page.goto(foreign_site)
        said = page.evaluate(CROSS_SITE_ATTEMPTS, panel.base)
    finally:
        context.close()
    assert said == {"withHeader": "blocked", "websocket": "refused"}, said
    after = snapshot(panel)
    assert after == before and after["where"]["board"]["alarm"] is None, "a request of another site changed the panel"


def test_in_a_browser_a_wildcard_bind_needs_the_token_once_then_keeps_it_in_a_cookie(panel_server_public, browser):
    panel = panel_server_public
    context = browser.new_context(viewport=DESKTOP)
    try:
        page = context.new_page()
        refused = page.goto(panel.base + "/")
        assert refused is not None and refused.status == 401
        assert "token" in page.content() and page.locator("#estop").count() == 0
        opened = page.goto(f"{panel.base}/?token={panel.token}")
        assert opened is not None and opened.status == 200
        cookies = {cookie["name"]: cookie for cookie in context.cookies()}
        assert cookies[TOKEN_COOKIE]["httpOnly"] and cookies[TOKEN_COOKIE]["sameSite"] == "Strict", cookies
        again = page.goto(panel.base + "/")  # no token in the URL: the cookie carries it
        assert again is not None and again.status == 200 and page.locator("#estop").count() == 1
    finally:
        context.close()
