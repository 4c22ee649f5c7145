"""The panel's bring-up: what `cube-robot jog | grip | motors | home | load | release | tune grippers`
do, as one JSON request each (docs/panel.md, POST /api/bringup/ACTION).

    where(link, config) -> dict                  # GET /api/bringup/where: reads only
    perform(action, body, target) -> dict        # `target` has .link, .config and .simulated

Each action calls the same functions as its command (robot/arms/actions.py, robot/bringup/tune.py), so
every refusal comes from the same place: the firmware's (a turn against a closed gripper of the other
pair, anything that moves while an alarm is latched) as a 409 naming the code and what to do, and the
bring-up's own (a jog in the air while the arm's pair holds the cube) likewise.  A bad field is a 400
naming it.  The answer carries what the command would have told the maker, one string per message,
each marked SIMULATED on the simulated robot.  The panel's session keeps these from running while a
run is going.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Protocol

from .. import cli_common, firmware_header
from ..arms import actions
from ..bringup import tune
from ..bringup.connection import describe
from ..config_types import Config
from ..link import protocol as P
from ..link.driver import Link
from ..link.errors import AlarmError, CommandRejectedError, DisconnectedError, LinkError
from .errors import RequestError, boolean, fields, integer, number, only, require
from .words import panel_words

_LIMITS = firmware_header.limits()
SERVO_RANGE = (_LIMITS["SERVO_US_MIN"], _LIMITS["SERVO_US_MAX"])  # the firmware refuses widths outside it
JOG_STEPS_MAX = _LIMITS["JOG_STEPS_MAX"]
CLEAR_ALARM = "check the robot, then press Clear alarm (POST /api/alarm/clear)"
# What to do about a refusal, by the firmware's code (its own words say what was wrong).
REJECTED_ADVICE = {
    P.ErrorCode.ALARM_ACTIVE: CLEAR_ALARM,
    P.ErrorCode.MOTORS_OFF: "press Motors on first (motors {\"on\": true})",
    P.ErrorCode.ARM_BLOCKED: "open that arm's gripper, or let its pair take the cube (Jog with \"With the cube\" "
                             "ticked: jog {\"with_cube\": true})",
    P.ErrorCode.NOT_HOLDING: "let the arm's pair take the cube first (Load, or Jog with \"With the cube\" ticked: "
                             "jog {\"with_cube\": true})",
    P.ErrorCode.BUSY: "wait until the robot is idle and ask again",
    P.ErrorCode.QUEUE_FULL: "wait until the robot is idle and ask again",
}


class Target(Protocol):
    """What the bring-up acts on: the panel's session (or any robot holder)."""

    @property
    def link(self) -> Link: ...

    @property
    def config(self) -> Config: ...

    @property
    def simulated(self) -> bool: ...


# The widths sent to each board while trimming (the last of each gripper's pair; the rest as config
# says): a trim sends both of its gripper's widths, so an earlier trim of the other one must be kept.
_LIVE_WIDTHS: "weakref.WeakKeyDictionary[Link, tune.Widths]" = weakref.WeakKeyDictionary()


def _widths(link: Link, config: Config) -> tune.Widths:
    widths = _LIVE_WIDTHS.get(link)
    if widths is None:
        widths = _LIVE_WIDTHS[link] = tune.Widths.from_motion(config.motion)
    return widths


def where(link: Link, config: Config) -> dict:
    """The board's state as the bring-up commands say it (robot/bringup/connection.py describe), as data:
    the state and alarm, drivers, each arm's position (null: not known since the drivers were last off),
    each gripper (null: never set since the board started), the homing input, and each gripper's widths
    now (trimmed on this link, else config's).  Reads only."""
    status = link.status()
    now = link.where()
    rev = config.motion.steps_per_rev
    arms: dict[str, dict[str, Any]] = {}
    for arm in P.ARMS:
        steps = now.positions[arm]
        arms[arm] = {"steps": steps, "degrees": None if steps is None else round(steps * 360 / rev, 2),
                     "straight": None if steps is None else now.straight(arm, rev)}
    live = _LIVE_WIDTHS.get(link) or tune.Widths.from_motion(config.motion)
    return {
        "state": status.state.value,
        "alarm": status.alarm.name if status.alarm else None,
        "alarm_text": P.ALARM_TEXT.get(status.alarm) if status.alarm else None,
        "drivers_on": now.motors_on,
        "arms": arms,
        "grippers": dict(now.grippers),
        "home_input_active": now.sensor_active,
        "homing_sensors": config.motion.homing.sensors,
        "steps_per_rev": rev,
        "widths": {arm: {"open": live.values[arm][0], "closed": live.values[arm][1]} for arm in P.ARMS},
        "servo_range_us": list(SERVO_RANGE),
        "summary": describe(now, status, rev),
    }


# ---------------------------------------------------------------------------
# The actions: each reads its fields (400 naming a bad one), then calls what its command calls.

Tell = Callable[[str], None]


def _arm(body: dict) -> str:
    return require(body, "arm", choices=tuple(P.ARMS))


def _motors(body: dict, target: Target, tell: Tell) -> dict:
    only(body, ("on",))
    on = boolean(body, "on")
    actions.set_motors(target.link, on, tell)
    return {"motors": "on" if on else "off"}


def _jog(body: dict, target: Target, tell: Tell) -> dict:
    only(body, ("arm", "degrees", "steps", "with_cube"))
    arm = _arm(body)
    rev = target.config.motion.steps_per_rev
    most_degrees = JOG_STEPS_MAX * 360 / rev
    degrees = number(body, "degrees", -most_degrees, most_degrees, default=None)
    steps = integer(body, "steps", -JOG_STEPS_MAX, JOG_STEPS_MAX, default=None)
    if (degrees is None) == (steps is None):
        raise RequestError(400, "give degrees or steps (one of them)", field="degrees")
    with_cube = boolean(body, "with_cube", default=False)
    field = "steps" if degrees is None else "degrees"
    if degrees is not None:
        steps = actions.steps_for_degrees(degrees, rev)
        if abs(steps * 360 / rev - degrees) > 1e-9:
            tell(f"{degrees:g} deg is {steps} steps ({steps * 360 / rev:.2f} deg) at {rev} steps per turn.")
    if steps == 0:
        raise RequestError(400, f"{field}: that is 0 steps: nothing to turn", field=field)
    actions.jog(target.link, arm, steps, tell, with_cube=with_cube)
    return {"arm": arm, "steps": steps}


def _grip(body: dict, target: Target, tell: Tell) -> dict:
    only(body, ("target", "close"))
    text = require(body, "target")
    close = boolean(body, "close")
    try:
        arms = actions.arms_of(text)
    except actions.BringupError as exc:
        raise RequestError(400, f"target: {exc}", field="target") from None
    if len(arms) not in (1, 4) and not any(set(arms) == set(pair) for pair in actions.PAIRS):
        raise RequestError(400, f"target: {text!r} is not one gripper, a pair ({', '.join(actions.PAIRS)}) or 'all'",
                           field="target")
    actions.grip(target.link, arms, close, tell)
    return {"arms": arms, "close": close}


def _home(body: dict, target: Target, tell: Tell) -> dict:
    only(body, ("arms",))
    arms = _arms_field(body, "arms", default="RLFB")
    if not target.config.motion.homing.sensors:
        raise RequestError(409, f"no homing sensors (motion.homing.sensors is false in {target.config.path}): "
                                "square each arm by eye instead: its +/- buttons until it stands straight, then "
                                "Straight (square {\"arm\": \"R\", \"steps\": \"+\"}, then square {\"arm\": \"R\", "
                                "\"straight\": true})")
    actions.home_with_sensors(target.link, arms, tell)
    _say_simulated_angles(target, arms, tell)
    return {"arms": arms, "method": "sensors"}


class _Asked(Exception):
    """Ends square_by_eye after the step asked for, before its confirmation (ZERO)."""


def _square(body: dict, target: Target, tell: Tell) -> dict:
    """Squaring by eye, one request per step: {"arm", "steps": n | "+" | "-"} turns it; {"arm",
    "straight": true} declares it straight (ZERO).  Both through square_by_eye, answering its prompt."""
    only(body, ("arm", "steps", "straight"))
    arm = _arm(body)
    straight = boolean(body, "straight", default=False)
    steps = body.get("steps")
    if straight == (steps is not None):
        raise RequestError(400, "give steps (a whole number, \"+\" or \"-\") or \"straight\": true (one of them)",
                           field="steps")
    if steps is not None and steps not in ("+", "-"):
        steps = integer(body, "steps", -JOG_STEPS_MAX, JOG_STEPS_MAX)
        if steps == 0:
            raise RequestError(400, "steps: 0 steps turns nothing", field="steps")
    answers = [""] if straight else [str(steps)]

    def ask(prompt: str) -> str:
        if not answers:
            raise _Asked
        return answers.pop(0)

    hint, left_off = _simulated_hints(target)
    kept: list[str] = []
    try:
        actions.square_by_eye(target.link, arm, ask, kept.append, hint, left_off)
    except _Asked:
        pass
    finally:  # the prompt's key help (+, -, Enter) is the terminal's; the page has its own buttons
        for text in kept:
            if not text.startswith("Square each arm by eye:"):
                tell(text)
    return {"arm": arm, "straight": straight} if straight else {"arm": arm, "steps": steps}


def _simulated_hints(target: Target):
    """On the simulated robot (one that can say its arm's true angle): where each arm really stands, as
    `cube-robot home --sim` tells the maker."""
    angle = getattr(target, "arm_angle", None)
    if not target.simulated or angle is None:
        return None, None
    rev = target.config.motion.steps_per_rev

    def left_off(arm: str) -> int:
        return (angle(arm) + rev // 2) % rev - rev // 2

    def hint(arm: str) -> str:
        off = left_off(arm)
        return ("straight" if off == 0 else f"arm {arm} stands {abs(off)} step{'s' if abs(off) != 1 else ''} "
                f"{'clockwise' if off > 0 else 'anticlockwise'} of straight")
    return hint, left_off


def _say_simulated_angles(target: Target, arms: str, tell: Tell) -> None:
    angle = getattr(target, "arm_angle", None)
    if target.simulated and angle is not None:
        tell("Simulated arms now at (steps from straight): " + ", ".join(f"{a} {angle(a)}" for a in arms) + ".")


class _CubeNotInYet(Exception):
    """Ends actions.load once all grippers are open: the page asks for the cube, then loads again."""


def _load(body: dict, target: Target, tell: Tell) -> dict:
    """`cube-robot load` in two requests, as the page has no Enter key to wait on: {} opens all grippers
    (put the cube in), then {"cube_in": true} closes the start pair (or "pair") on it."""
    only(body, ("pair", "cube_in"))
    config = target.config
    pair = require(body, "pair", choices=actions.PAIRS, default=None)
    if pair is None:
        pair = config.robot.start_grip if config.robot.start_grip in actions.PAIRS else actions.PAIRS[0]
    cube_in = boolean(body, "cube_in", default=False)
    if cube_in and any(state != "open" for state in target.link.where().grippers.values()):
        # load would open them and close the pair at once: a cube held now would drop in between
        raise RequestError(409, "the grippers are not all open: press \"Load: open the grippers\" first (load {}), "
                                "put the cube in, then \"Load: the cube is in\" (load {\"cube_in\": true})",
                           field="cube_in")
    if cube_in:  # the panel keeps the port open, so the arms' positions are known unless the drivers went off
        actions.check_pair_for_the_cube(target.link.where(), pair, config.motion.steps_per_rev)

    def wait() -> None:
        if not cube_in:
            raise _CubeNotInYet

    said: list[str] = []
    try:
        actions.load(target.link, pair, wait, said.append)
    except _CubeNotInYet:
        pass
    finally:
        for text in said:  # the command's prompt names Enter; the page's is this request again
            if not text.startswith("All grippers open:"):
                tell(text)
            elif not cube_in:
                tell("All grippers open: put the cube between them, then press \"Load: the cube is in\" "
                     "(load {\"cube_in\": true}).")
    return {"pair": pair, "cube_in": cube_in}


def _release(body: dict, target: Target, tell: Tell) -> dict:
    only(body, ())
    actions.release(target.link, tell)
    return {}


def _trim(body: dict, target: Target, tell: Tell) -> dict:
    """One gripper's open or closed width, sent and moved to now (as a key of `tune grippers`)."""
    only(body, ("arm", "which", "us"))
    arm = _arm(body)
    which = require(body, "which", choices=tuple(tune.WHICH))
    us = _width(body, "us")
    widths = _widths(target.link, target.config)
    actions.ensure_motors(target.link, tell)
    widths.set(arm, which, us, SERVO_RANGE)
    tune.apply_live(target.link, widths, arm, which)
    tell(f"gripper {arm} {which}: {us} us (sent; the gripper moved there)")
    return {"arm": arm, "which": which, "us": us}


def _save_trims(body: dict, target: Target, tell: Tell) -> dict:
    """Write the widths given into the config file, through `tune grippers --save`'s writer (only the
    motion.arms.<arm>.servo_*_us lines; the file replaced only once the new text loads)."""
    from .. import config as config_module

    only(body, ("widths",))
    given = body.get("widths")
    if not isinstance(given, dict) or not given:
        raise RequestError(400, "widths: give {\"R\": {\"open\": US, \"closed\": US}, ...}", field="widths")
    only(given, tuple(P.ARMS), where="widths.")
    config = target.config
    widths = tune.Widths.from_motion(config.motion)
    for arm, pair in given.items():
        where_ = f"widths.{arm}."
        if not isinstance(pair, dict) or not pair:
            raise RequestError(400, f"widths.{arm}: give {{\"open\": US, \"closed\": US}}", field=f"widths.{arm}")
        only(pair, tuple(tune.WHICH), where=where_)
        for which in pair:
            widths.set(arm, which, _width(pair, which, where_), SERVO_RANGE)
    if target.simulated:
        raise RequestError(409, cli_common.SIM_NOT_SAVED.format(what="widths tuned on", path=config.path))
    if config.path is None:
        raise RequestError(409, "the panel's config was not loaded from a file: nothing to save into")
    try:
        written = tune.save(config.path, widths)
    except config_module.ConfigError as exc:
        raise RequestError(400, str(exc), field="widths") from None
    tell(f"Saved {len(widths.changed)} width(s) into {written} (motion.arms.<arm>.servo_*_us lines only).")
    live = _widths(target.link, config)
    for arm, which in widths.changed:
        live.values[arm][tune.WHICH[which]] = widths.values[arm][tune.WHICH[which]]
    return {"saved": sorted(f"{a}.{w}" for a, w in widths.changed), "config": str(written)}


def _width(body: dict, name: str, where: str = "") -> int:
    low, high = SERVO_RANGE
    field = f"{where}{name}"
    value = integer(body, name, -10**6, 10**6, where=where)
    if not low <= value <= high:
        raise RequestError(400, f"{field}: {value} us is outside the firmware's servo range {low}..{high} us "
                                "(SERVO_US_MIN..SERVO_US_MAX)", field=field)
    return value


def _arms_field(body: dict, name: str, default: str) -> str:
    text = require(body, name, default=default)
    try:
        return actions.arms_of(text)
    except actions.BringupError as exc:
        raise RequestError(400, f"{name}: {exc}", field=name) from None


ACTIONS: dict[str, Callable[[dict, Target, Tell], dict]] = {
    "motors": _motors, "jog": _jog, "grip": _grip, "home": _home, "square": _square, "load": _load,
    "release": _release, "trim": _trim, "save-trims": _save_trims,
}


def perform(action: str, body: object, target: Target) -> dict:
    """Do one bring-up action: {"ok": true, "action", "simulated", "messages": [...], "where": where(...)}
    and what the action did.  RequestError: 404 an unknown action, 400 a bad field (nothing was sent),
    409 what the robot or the bring-up refused (the messages so far and the state after it in the answer)."""
    handler = ACTIONS.get(action)
    if handler is None:
        raise RequestError(404, f"no bring-up action {action!r} (actions: {', '.join(ACTIONS)})")
    body = fields(body)
    messages: list[str] = []

    def mark(text: str) -> str:
        return cli_common.simulated(text) if target.simulated else text

    def tell(text: str) -> None:
        messages.append(mark(panel_words(text)))

    try:
        done = handler(body, target, tell)
    except RequestError as exc:
        if exc.status == 409:
            exc.message = mark(panel_words(exc.message))
            exc.details.setdefault("messages", messages)
        raise
    except (actions.BringupError, tune.TuneError, LinkError) as exc:
        refusal = RequestError(409, mark(panel_words(refused(exc))), details={"messages": messages})
        try:
            refusal.details["where"] = where(target.link, target.config)
        except Exception:  # the state cannot be read (the link is gone): the refusal says why
            pass
        raise refusal from None
    return {"ok": True, "action": action, "simulated": target.simulated, **done, "messages": messages,
            "where": where(target.link, target.config)}


def refused(exc: Exception) -> str:
    """A refusal's message: the code (the firmware's, or the alarm's) and what to do."""
    first = str(exc)
    if isinstance(exc, AlarmError):  # its message already says to check the robot and clear the alarm
        return f"{first} In the panel: Clear alarm (POST /api/alarm/clear) clears it."
    if isinstance(exc, CommandRejectedError):
        advice = REJECTED_ADVICE.get(exc.code)
        return f"{first}; {advice}" if advice else first
    if isinstance(exc, DisconnectedError):
        return (f"{first}. The robot finishes what it had been sent, then waits: plug the USB cable back in and "
                "look at the arms; restart the panel (opening the port restarts an Uno, which forgets the arms' "
                "positions: home them again)")
    return first
