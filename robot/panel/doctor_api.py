"""The panel's doctor (GET /api/doctor): the rows of `cube-robot doctor`, from the same checks
(robot/doctor/commands.py CHECKS, run by robot/doctor/preflight.py run_checks), on what the panel holds.

Nothing here moves the robot or opens its port again (opening resets an Uno):
- the firmware handshake is read from the panel's open link (the run's pre-flight does the same);
- the camera check reads a frame from the panel's held camera (a HeldCamera: `with camera:` leaves it
  open), as the run's pre-flight does;
- the arms check gets no `link`, so it only reads the board (WHERE, on the panel's link as the doctor's
  `named_robot`) and says what a run will do (home with sensors, or need the arms confirmed straight);
  the run's own pre-flight, at Start, is what moves them.
On the simulated robot every row says SIMULATED, and the rows whose file a simulated run does not use say
so, as `cube-robot doctor --sim` does.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from .. import cli_common
from ..checks import INFO, Result
from ..config_types import Config
from ..doctor import preflight
from ..doctor.commands import CHECKS
from ..doctor.simulated import SIM_NOTES
from ..run.ready import HeldCamera
from .words import panel_words

HANDSHAKE = "firmware handshake"
CAMERA = "camera"
ARMS = "motors and homing"


@dataclass
class DoctorContext:
    """What the panel holds: `link` (its open robot.link.driver.Link; None: no robot connected),
    `camera` (its held camera, a robot.run.ready.HeldCamera; None: none), whether the robot is
    simulated, and the --config the panel was started with (None: the default file)."""

    link: Any = None
    camera: Any = None
    simulated: bool = False
    config_arg: str | None = None


def _context(context: DoctorContext, **findings) -> SimpleNamespace:
    """A check's context: the doctor's arguments as the panel has them (no --port: the held link's url)."""
    link = context.link
    return SimpleNamespace(port=None if link is None else str(link.url), config=context.config_arg,
                           sim=context.simulated, firmware="auto", **findings)


def _rows(config: Config, context: DoctorContext) -> list[tuple[str, Result]]:
    link, camera = context.link, context.camera
    found = _context(context)  # what one check leaves for a later one (the camera's frame size)
    rows: list[tuple[str, Result]] = []
    for title, target in CHECKS:
        check = [(title, target)]
        if title == HANDSHAKE:
            if link is None:  # probing the ports would open (and reset) them: the panel does not
                rows.append((title, Result("robot", INFO, "the panel holds no link to the robot: not read "
                                                          "(`cube-robot doctor`, with the panel closed, probes the ports)")))
                continue
            rows += preflight.run_checks(config, SimpleNamespace(link=link), check)
        elif title == CAMERA:
            if not isinstance(camera, HeldCamera):  # check_camera would open and close any other camera
                rows.append((title, Result(f"camera.device {config.camera.device}", INFO,
                                           "the panel holds no camera: not read")))
                continue
            found.camera = camera
            rows += preflight.run_checks(config, found, check)
            del found.camera
        elif title == ARMS:
            if link is None:  # the doctor's report would open link.port itself
                rows.append((title, Result("drivers and arms", INFO, "the panel holds no link to the robot: not read")))
                continue
            # No `link`: the check reads the board and says what a run will do, moving nothing.
            found.named_robot = link
            rows += preflight.run_checks(config, found, check)
            del found.named_robot
        else:
            rows += preflight.run_checks(config, found, check)
    return rows


def checks(config: Config, context: DoctorContext) -> list[dict]:
    """The doctor's rows, in its order: {title, item, status ("ok", "warn", "FAIL", "info"), detail,
    fix, simulated}.  A check's detail says what it found and what to do; `fix` is null, as the checks
    give the fix within the detail, in the page's words (robot/panel/words.py).  Reads only."""
    answer = []
    for title, result in _rows(config, context):
        if context.simulated:
            if title == CAMERA:
                result = dataclasses.replace(result, item="simulated webcam")
            if title in SIM_NOTES:
                result = dataclasses.replace(result, detail=f"{result.detail} ({SIM_NOTES[title]})")
            result = dataclasses.replace(result, detail=cli_common.simulated(result.detail))
        answer.append({"title": title, "item": result.item, "status": result.status, "detail": panel_words(result.detail),
                       "fix": None, "simulated": context.simulated})
    return answer
