"""The panel's web server (Tornado): the page, its JSON API, the run's events on a websocket and the
camera as MJPEG (docs/panel.md).

    app = make_app(PanelApp(session, guard, config))
    server = tornado.httpserver.HTTPServer(app, max_body_size=MAX_BODY_BYTES)

Handlers run on the IOLoop's thread; anything that waits on the robot (a bring-up action, a new
simulated cube, the doctor's checks) runs on a worker thread so the page, the stream and the
emergency stop never wait behind it.  The emergency stop is written from the IOLoop's thread itself.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

import tornado.web
import tornado.websocket
from tornado.ioloop import IOLoop
from tornado.iostream import StreamClosedError

from ..config_types import Config
from .errors import RequestError, boolean, fields, only, require
from .security import CLIENT_HEADER, MAX_BODY_BYTES, TOKEN_COOKIE, TOKEN_HEADER, Guard
from .session import PanelSession

STATIC_DIR = Path(__file__).parent / "static"

__all__ = ["MAX_BODY_BYTES", "PanelApp", "make_app", "STATIC_DIR"]


@dataclass
class PanelApp:
    session: PanelSession
    guard: Guard
    config: Config
    runs_dir: Path  # served under /runs/: the scans' pictures and readings (scan.images_dir)


def access_refusal(handler: tornado.web.RequestHandler, guard: Guard) -> tuple[int, str, str] | None:
    """(status, message, field) when a request (a page, the API or the websocket) may not be served: its
    Host on a loopback bind, or the token (query, header or cookie) where one is needed; None: served."""
    refusal = guard.host_refusal(handler.request.headers.get("Host"))
    if refusal:
        return 403, refusal, "Host"
    token = (handler.get_query_argument("token", None) or handler.request.headers.get(TOKEN_HEADER)
             or handler.get_cookie(TOKEN_COOKIE))
    if not guard.token_ok(token):
        return 401, ("a token is needed: open the URL the panel printed (it carries ?token=...), or send the "
                     f"{TOKEN_HEADER} header"), "token"
    return None


class Base(tornado.web.RequestHandler):
    """Every request: the Host and the token; a POST also its client, Origin and JSON body."""

    panel: PanelApp
    body: dict

    def initialize(self, panel: PanelApp) -> None:
        self.panel = panel

    def prepare(self) -> None:
        guard = self.panel.guard
        refused = access_refusal(self, guard)
        if refused:
            self._stop(*refused)
        if self.request.method not in ("GET", "HEAD"):
            headers = self.request.headers
            refusal = guard.client_refusal(headers.get(CLIENT_HEADER)) or guard.origin_refusal(
                headers.get("Origin"), headers.get("Host"))
            if refusal:
                self._stop(403, refusal, CLIENT_HEADER if "header" in refusal else "Origin")
            self.body = self._json_body()

    def _json_body(self) -> dict:
        raw = self.request.body
        if not raw:
            return {}
        kind = self.request.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            self._stop(415, f"the body must be JSON (Content-Type: application/json), not {kind or 'untyped'}",
                       "Content-Type")
        try:
            return fields(json.loads(raw))
        except RequestError as exc:
            self._stop(exc.status, exc.message, exc.field)
        except (ValueError, UnicodeDecodeError) as exc:
            self._stop(400, f"the body is not valid JSON: {exc}", "body")
        return {}

    def _stop(self, status: int, message: str, field: str | None = None) -> None:
        self.answer(RequestError(status, message, field).to_json(), status)
        raise tornado.web.Finish()

    @property
    def client(self) -> str:
        return self.request.headers.get(CLIENT_HEADER) or ""

    def answer(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(data))

    def write_error(self, status_code: int, **kwargs) -> None:
        self.set_header("Content-Type", "application/json; charset=utf-8")
        reason = self._reason
        if status_code == 405:
            reason = f"{self.request.method} is not allowed here (nothing moves on a GET: changes are POSTs)"
        self.finish(json.dumps({"error": reason, "field": None}))

    async def call(self, work: Callable[[], Any], blocking: bool = True) -> None:
        """Answer with work()'s result; a RequestError with its status.  blocking: on a worker thread."""
        try:
            if blocking:
                result = await IOLoop.current().run_in_executor(None, work)
            else:
                result = work()
        except RequestError as exc:
            self.answer(exc.to_json(), exc.status)
            return
        self.answer(result)


class IndexHandler(Base):
    def get(self) -> None:
        token = self.get_query_argument("token", None)
        if token is not None and self.panel.guard.token is not None:  # checked in prepare: keep it for the page
            self.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="Strict")
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish((STATIC_DIR / "index.html").read_bytes())


class StaticHandler(Base, tornado.web.StaticFileHandler):
    """Files of one folder only: the resolved path (symlinks followed) must lie inside the resolved root."""

    def initialize(self, panel: PanelApp, path: str, default_filename: str | None = None) -> None:  # type: ignore[override]
        Base.initialize(self, panel)
        tornado.web.StaticFileHandler.initialize(self, path, default_filename)

    def validate_absolute_path(self, root: str, absolute_path: str) -> str | None:
        real_root, real = os.path.realpath(root), os.path.realpath(absolute_path)
        if os.path.commonpath([real_root, real]) != real_root:
            raise tornado.web.HTTPError(403, "outside the served folder")
        return super().validate_absolute_path(root, absolute_path)

    def set_extra_headers(self, path: str) -> None:
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Content-Type-Options", "nosniff")


class StateHandler(Base):
    def get(self) -> None:
        self.answer(self.panel.session.state(self.client or self.get_query_argument("client", None)))


class ControlHandler(Base):
    async def post(self) -> None:
        def take() -> dict:
            only(self.body, ("take",))
            self.panel.session.take_control(self.client, boolean(self.body, "take", default=False))
            return self.panel.session.state(self.client)
        await self.call(take, blocking=False)


class RunStartHandler(Base):
    async def post(self) -> None:
        def start() -> dict:
            only(self.body, ("review",))
            return {"run": self.panel.session.start_run(self.client, review=boolean(self.body, "review", default=False))}
        await self.call(start)


class RunConfirmHandler(Base):
    async def post(self) -> None:
        def confirm() -> dict:
            only(self.body, ("facelets",))
            self.panel.session.confirm_cube(self.client, require(self.body, "facelets"))
            return {"ok": True}
        await self.call(confirm, blocking=False)


class RunStopHandler(Base):
    async def post(self) -> None:
        def stop() -> dict:
            self.panel.session.stop(self.client)
            return {"ok": True}
        await self.call(stop, blocking=False)


class EstopHandler(Base):
    def post(self) -> None:
        # Here, on the IOLoop's thread, at once: no lock, no worker queue (the stop byte goes past both).
        try:
            self.answer(self.panel.session.emergency_stop())
        except RequestError as exc:
            self.answer(exc.to_json(), exc.status)


class AlarmClearHandler(Base):
    async def post(self) -> None:
        await self.call(lambda: self.panel.session.clear_alarm(self.client))


class ReportHandler(Base):
    def get(self) -> None:
        report = self.panel.session.last_report
        if report is None:
            return self.answer({"error": "no run has ended yet in this panel", "field": None}, 404)
        self.answer(report.to_json())


class CubeCheckHandler(Base):
    async def post(self) -> None:
        from .cube_check import check_facelets

        def check() -> dict:
            only(self.body, ("facelets",))
            return check_facelets(require(self.body, "facelets"))
        await self.call(check, blocking=False)


class HistoryHandler(Base):
    async def get(self) -> None:
        from .history_api import history

        await self.call(lambda: history(self.panel.config))


class DoctorHandler(Base):
    async def get(self) -> None:
        await self.call(lambda: self.panel.session.doctor())


class WhereHandler(Base):
    async def get(self) -> None:
        session = self.panel.session

        def read() -> dict:
            session.refresh_board()
            return {"board": session.board, "running": session.run_state != "idle"}
        await self.call(read)


class BringupHandler(Base):
    async def post(self, action: str) -> None:
        await self.call(lambda: self.panel.session.bringup(self.client, action, self.body))


class NewCubeHandler(Base):
    async def post(self) -> None:
        from .errors import integer

        def new_cube() -> dict:
            only(self.body, ("scramble", "seed"))
            return self.panel.session.new_cube(self.client, require(self.body, "scramble", default=None),
                                               integer(self.body, "seed", 0, 2**31 - 1, default=None))
        await self.call(new_cube)


class SnapshotHandler(Base):
    async def get(self) -> None:
        live = self.panel.session.live
        frame = await IOLoop.current().run_in_executor(None, live.next_frame) if live is not None else None
        if frame is None:
            return self.answer({"error": "the camera gave no frame", "field": None}, 503)
        self.set_header("Content-Type", "image/jpeg")
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Frame-Index", str(frame.index))
        self.set_header("X-Exposure-End", f"{frame.exposure_end_epoch_ms:.1f}")
        self.finish(frame.jpeg)


class MjpegHandler(Base):
    """The live camera: each newly encoded frame as one part; a slow reader gets the newest, never a backlog."""

    async def get(self) -> None:
        from .live import MJPEG_CONTENT_TYPE, mjpeg_part

        live = self.panel.session.live
        if live is None:
            return self.answer({"error": "the panel has no camera", "field": None}, 503)
        loop = IOLoop.current()
        newest: list = [None]
        ready = asyncio.Event()

        def arrived(frame) -> None:  # the encoder's thread
            def keep() -> None:
                newest[0] = frame
                ready.set()
            loop.add_callback(keep)

        self.set_header("Content-Type", MJPEG_CONTENT_TYPE)
        self.set_header("Cache-Control", "no-store")
        handle = live.subscribe(arrived)
        try:
            while True:
                await ready.wait()
                ready.clear()
                frame, newest[0] = newest[0], None
                if frame is None:
                    continue
                self.write(mjpeg_part(frame))
                await self.flush()
        except StreamClosedError:
            pass
        finally:
            live.unsubscribe(handle)


class EventsSocket(tornado.websocket.WebSocketHandler):
    """The run's events and the panel's state, as JSON messages; the Origin must be the panel's own."""

    panel: PanelApp

    def initialize(self, panel: PanelApp) -> None:
        self.panel = panel
        self.client_name: str | None = None
        self.listener: Callable[[dict], None] | None = None

    def prepare(self) -> Awaitable[None] | None:
        refused = access_refusal(self, self.panel.guard)
        if refused:
            status, message, field = refused
            self.set_status(status)
            self.finish(json.dumps({"error": message, "field": field}))
            raise tornado.web.Finish()
        return None

    def check_origin(self, origin: str) -> bool:
        return Guard.origin_refusal(origin, self.request.headers.get("Host")) is None

    def open(self, *args: str, **kwargs: str) -> None:
        self.set_nodelay(True)  # each event as it happens (Nagle would hold small messages back)
        self.client_name = self.get_query_argument("client", None)
        loop = IOLoop.current()
        session = self.panel.session

        def send(message: dict) -> None:  # any thread: hop to the IOLoop's
            loop.add_callback(self._send, message)
        self.listener = send
        earlier = session.listen_from_start(send)
        self._send({"type": "State"} | session.state(self.client_name))
        for message in earlier:  # the latest run's events so far, then the live ones (queued behind these)
            self._send(message | {"replayed": True})

    def _send(self, message: dict) -> None:
        if self.ws_connection is None:
            return
        if message.get("type") == "State":
            message = message | {"you_control": self.client_name is not None
                                 and self.client_name == self.panel.session.controller}
        try:
            self.write_message(json.dumps(message, default=str))
        except tornado.websocket.WebSocketClosedError:
            pass

    def on_message(self, message: str | bytes) -> None:
        pass  # the page talks over the JSON API; the socket only listens

    def on_close(self) -> None:
        session = self.panel.session
        if self.listener is not None:
            session.unlisten(self.listener)
        if self.client_name is not None and self.client_name == session.controller:
            session.release_control(self.client_name)


class NotFoundHandler(Base):
    """Any other path: 404 in JSON (after the token check, like every request)."""

    def prepare(self) -> None:
        super().prepare()
        self.answer({"error": f"no such page or API: {self.request.path} (docs/panel.md lists the API)",
                     "field": None}, 404)
        raise tornado.web.Finish()


def make_app(panel: PanelApp) -> tornado.web.Application:
    from .calibrate_routes import routes as calibrate_routes

    args = {"panel": panel}
    return tornado.web.Application([
        (r"/", IndexHandler, args),
        (r"/static/(.*)", StaticHandler, args | {"path": str(STATIC_DIR)}),
        (r"/runs/(.*)", StaticHandler, args | {"path": str(panel.runs_dir)}),
        (r"/api/state", StateHandler, args),
        (r"/api/control", ControlHandler, args),
        (r"/api/run/start", RunStartHandler, args),
        (r"/api/run/confirm", RunConfirmHandler, args),
        (r"/api/run/stop", RunStopHandler, args),
        (r"/api/estop", EstopHandler, args),
        (r"/api/alarm/clear", AlarmClearHandler, args),
        (r"/api/report", ReportHandler, args),
        (r"/api/cube/check", CubeCheckHandler, args),
        (r"/api/history", HistoryHandler, args),
        (r"/api/doctor", DoctorHandler, args),
        (r"/api/bringup/where", WhereHandler, args),
        (r"/api/bringup/([a-z-]+)", BringupHandler, args),
        (r"/api/sim/new-cube", NewCubeHandler, args),
        *calibrate_routes(args, Base),
        (r"/api/camera\.jpg", SnapshotHandler, args),
        (r"/api/camera\.mjpeg", MjpegHandler, args),
        (r"/api/events", EventsSocket, args),
    ], websocket_max_message_size=MAX_BODY_BYTES, compress_response=False, default_handler_class=NotFoundHandler,
        default_handler_args=args)
