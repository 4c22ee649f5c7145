"""The pre-flight check of the arms (robot/doctor/preflight.py PREFLIGHT_CHECKS): drivers on, and
every arm homed or confirmed straight, before the start button.

Opening a real Uno's port resets it (drivers off, positions forgotten), so on a run this check
makes the arms ready on the link the run just opened (robot/arms/readiness.py prepare_arms):
with homing sensors (motion.homing.sensors) it homes the arms, in the air; without them it needs the
user's word that the arms stand straight: `cube-robot run --arms-straight`, or `y` at the prompt on a
terminal.  It moves nothing when a check above it failed.  `cube-robot doctor` (no open link) only
reads the robot and says what a run will do.

The context (robot/doctor/preflight.py) may carry: `link` (the run's open Link), `preflight_failures`
(the failed checks so far), `confirm_arms_straight(arms) -> bool` (None: nobody to ask), `tell_maker`.
"""

from __future__ import annotations

from ..checks import FAIL, INFO, OK, WARN, Result
from ..config_types import Config
from ..link import protocol as P

ITEM = "drivers and arms"


def _how_to_confirm(config: Config) -> str:
    sensors = config.motion.homing.sensors
    fix = ("square each arm by eye (`cube-robot home` walks you through it), then start the run with "
           "`cube-robot run --arms-straight` (or answer y when a run on a terminal asks)")
    if not sensors:
        fix += "; or fit homing sensors and set motion.homing.sensors: true (docs/hardware.md)"
    return fix


def check_arms(config: Config, context) -> list[Result]:
    """A run: make the drivers and arms ready (home or confirm), else FAIL with the fix.  Doctor: report."""
    link = getattr(context, "link", None)
    if link is None:
        return _doctor_report(config, context)
    from ..link.errors import ALARM_TEXT, AlarmError, LinkError
    from . import readiness
    from .actions import BringupError

    rev = config.motion.steps_per_rev
    where = link.where()
    if not readiness.arms_problems(where, rev):
        return [Result(ITEM, OK, "drivers on; every arm's position known and straight")]
    earlier = getattr(context, "preflight_failures", None)
    if earlier:
        return [Result(ITEM, FAIL, "not made ready (" + "; ".join(readiness.arms_problems(where, rev))
                       + "): the checks above failed, so nothing was moved; fix them first")]
    tell_maker = getattr(context, "tell_maker", None) or (lambda text: None)
    ask = getattr(context, "confirm_arms_straight", None)
    asked = []

    def confirm(arms: str) -> bool:
        asked.append(arms)
        return bool(ask and ask(arms))
    sensors = config.motion.homing.sensors
    if sensors:
        tell_maker("Homing the arms with their sensors (each turns in the air: keep the cube out until they are done)...")
    try:
        where = readiness.prepare_arms(link, config, confirm, tell_maker)
    except BringupError as exc:
        if asked and not sensors:
            return [Result(ITEM, FAIL, f"the arms' positions are unknown ({', '.join(asked[0])}: the board "
                                       f"forgets them whenever its drivers are off, as after the reset when "
                                       f"the port opens) and nobody confirmed them straight: {_how_to_confirm(config)}")]
        return [Result(ITEM, FAIL, f"{exc}: {_how_to_confirm(config)}")]
    except LinkError as exc:
        first = str(exc).splitlines()[0]
        if isinstance(exc, AlarmError):
            first = f"alarm {exc.code.name}: {ALARM_TEXT.get(exc.code, 'unknown alarm')}"
            if exc.code == P.AlarmCode.HOME_STUCK:
                first += (" (an arm parked on its sensor keeps the shared input active: mount each magnet a little "
                          "clockwise of its arm's zero so zero_offset_steps is negative, docs/hardware.md; or a "
                          "stuck sensor)")
        try:  # homing goes R, L, F, B: the first arm still unknown is the one that failed
            arm = next((a for a in P.ARMS if link.where().positions[a] is None), None)
        except LinkError:
            arm = None
        which = f"arm {arm}'s sensor" if arm else "each arm's sensor"
        return [Result(ITEM, FAIL, f"homing{f' arm {arm}' if arm else ''} failed: {first}; check {which} (wiring, "
                                   "motion.homing.sensor_active, the magnet within a turn), try `cube-robot home`, "
                                   "clear the alarm with `cube-robot link reset-alarm`")]
    how = "homed with their sensors" if sensors and not asked else "confirmed straight by you"
    return [Result(ITEM, OK, f"drivers on; arms {how}: " + ", ".join(f"{a} {where.positions[a]}" for a in P.ARMS))]


def _doctor_report(config: Config, args) -> list[Result]:
    """The doctor: read the robot (opening its port resets an Uno: drivers off, positions unknown)
    and say what a run will do about it.  Moves nothing."""
    from ..link.driver import Link, LinkSettings
    from ..link.errors import LinkError

    port = getattr(args, "port", None) or LinkSettings.from_config(config).port
    sensors = config.motion.homing.sensors
    plan = ("a run homes the arms with their sensors before the start button (cube out until then)" if sensors
            else "a run needs your word that the arms stand straight (`cube-robot run --arms-straight`, or y "
                 "at its prompt); `cube-robot home` squares them by eye")
    if not port:
        return [Result(ITEM, INFO, f"no port named (--port or link.port): not read; {plan}")]
    opened = getattr(args, "named_robot", None)  # the serial row's open connection (the doctor closes it)
    try:
        link = opened if opened is not None else Link.open(config, port=port, motors=False)
    except LinkError as exc:
        return [Result(ITEM, INFO, f"{port}: not read ({str(exc).splitlines()[0]}); {plan}")]
    try:
        where = link.where()
    finally:
        if link is not opened:
            link.close()
    unknown = [a for a in P.ARMS if where.positions[a] is None]
    state = (f"drivers {'on' if where.motors_on else 'off'}, "
             + (f"positions unknown ({', '.join(unknown)})" if unknown else "every position known")
             + f", homing input {'active' if where.sensor_active else 'inactive'}")
    if sensors and where.sensor_active:
        return [Result(ITEM, WARN, f"{port}: {state}: a sensor reads active with the arms at rest; if no "
                                   "arm stands at its sensor, check motion.homing.sensor_active (low/high) "
                                   "and the wiring; " + plan)]
    return [Result(ITEM, INFO if unknown or not where.motors_on else OK, f"{port}: {state}; {plan}")]
