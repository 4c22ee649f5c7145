"""The calibration's routes (robot/panel/calibrate_api.py): /api/calibrate/... on the panel's server.

    GET  /api/calibrate                     the walk-through's state
    GET  /api/calibrate/picture.jpg?view=V  the picture a confirmed view's stickers were sampled from
    POST /api/calibrate/start               {} a solved cube is in
    POST /api/calibrate/present             {"view": optional, the next one}
    POST /api/calibrate/adjust              {"view", "sticker"?, "offset": [dx, dy] | "quad": [[x, y] x 4]}
    POST /api/calibrate/confirm             {"view": optional, the presented one}
    POST /api/calibrate/detect              {"view"} a confirmed view's regions snapped to the stickers seen
    POST /api/calibrate/learn               {"names": optional {"U": "white", ...}}
    POST /api/calibrate/check               {} a scrambled cube is in (simulated: put in by the panel)
    POST /api/calibrate/verify              {"matches": true | false}
    POST /api/calibrate/save                {"anyway": optional, after a check that could not be read}
    POST /api/calibrate/cancel              {}

After each step the state goes to every page over the websocket: {"type": "Calibration", ...state}.
"""

from __future__ import annotations

from typing import Any, Callable

from .calibrate_api import PanelCalibration
from .errors import RequestError, boolean, integer, only, optional, require


def _sticker(body: dict) -> Any:
    sticker = body.get("sticker")
    if sticker is None or isinstance(sticker, str):
        return require(body, "sticker", default=None)
    return integer(body, "sticker", 0, 63)


STEPS: dict[str, tuple[tuple[str, ...], Callable[[PanelCalibration, str, dict], dict]]] = {
    "start": ((), lambda c, client, body: c.start(client)),
    "present": (("view",), lambda c, client, body: c.present(client, require(body, "view", default=None))),
    "adjust": (("view", "sticker", "offset", "quad"),
               lambda c, client, body: c.adjust(client, require(body, "view"), _sticker(body),
                                                quad=body.get("quad"), offset=body.get("offset"))),
    "detect": (("view",), lambda c, client, body: c.detect(client, require(body, "view"))),
    "confirm": (("view",), lambda c, client, body: c.confirm(client, require(body, "view", default=None))),
    "learn": (("names",), lambda c, client, body: c.learn(client, body.get("names") if optional(body, "names") else None)),
    "check": ((), lambda c, client, body: c.check(client)),
    "verify": (("matches",), lambda c, client, body: c.verify(client, boolean(body, "matches"))),
    "save": (("anyway",), lambda c, client, body: c.save(client, boolean(body, "anyway", default=False))),
    "cancel": ((), lambda c, client, body: c.cancel(client)),
}


def routes(args: dict, base: Any) -> list:
    """The calibration's handlers for make_app.  args: make_app's handler arguments ({"panel": PanelApp});
    base: server.Base (handed in: this module importing server, which lists these routes, would be a cycle)."""
    calibration = PanelCalibration(args["panel"].session)
    given = args | {"calibration": calibration}

    class CalibrateBase(base):
        def initialize(self, panel, calibration: PanelCalibration) -> None:
            base.initialize(self, panel)
            self.calibration = calibration

    class StateHandler(CalibrateBase):
        def get(self) -> None:
            self.answer(self.calibration.state())

    class PictureHandler(CalibrateBase):
        def get(self) -> None:
            view = self.get_query_argument("view", None)
            if not view:
                return self.answer(RequestError(400, "view: missing (?view=NAME)", "view").to_json(), 400)
            data = self.calibration.picture(view)
            if data is None:
                return self.answer({"error": f"view {view!r} has no confirmed picture", "field": "view"}, 404)
            self.set_header("Content-Type", "image/jpeg")
            self.set_header("Cache-Control", "no-store")
            self.finish(data)

    class StepHandler(CalibrateBase):
        async def post(self, step: str) -> None:
            known = STEPS.get(step)
            if known is None:
                return self.answer(RequestError(404, f"no calibration step {step!r} (steps: "
                                                     f"{', '.join(STEPS)})").to_json(), 404)
            allowed, action = known

            def work() -> dict:
                only(self.body, allowed)
                try:
                    return action(self.calibration, self.client, self.body)
                finally:  # the other tabs see each step (a refused one may have said something too)
                    self.calibration.publish()
            await self.call(work)  # on a worker thread: a step may move the robot and wait for the camera

    return [
        (r"/api/calibrate", StateHandler, given),
        (r"/api/calibrate/picture\.jpg", PictureHandler, given),
        (r"/api/calibrate/([a-z]+)", StepHandler, given),
    ]
