"""Are the arms ready for a run?  A pre-flight check a run can call (robot/run/).

The firmware forgets the arms' positions whenever the drivers go off (power-up, a reset, which
opening a real Uno's port causes, `MOTORS OFF`, the idle time).  A run must not turn on positions
nobody established: the arms are ready when the drivers are on and every arm's position is known
(homed, or confirmed straight with ZERO) and straight (a whole number of quarter turns from zero).

    problems = arms_problems(link.where(), steps_per_rev)     # [] when ready
    prepare_arms(link, config, confirm=ask_user, tell_maker=print)   # drivers on; home or confirm; -> Where
"""

from __future__ import annotations

from ..config_types import Config
from ..link import protocol as P
from . import actions


def arms_problems(where: P.Where, steps_per_rev: int) -> list[str]:
    """What keeps the arms from a run, one sentence each ([] when ready)."""
    problems = []
    if not where.motors_on:
        problems.append("the stepper drivers are off (nothing holds the arms)")
    unknown = [arm for arm in P.ARMS if where.positions[arm] is None]
    if unknown:
        problems.append(f"the position of arm(s) {', '.join(unknown)} is unknown (drivers were off since): "
                        "home them (`cube-robot home`) or confirm they are straight")
    crooked = [arm for arm in P.ARMS if where.positions[arm] is not None and not where.straight(arm, steps_per_rev)]
    if crooked:
        problems.append(f"arm(s) {', '.join(crooked)} stand between quarter positions "
                        f"({', '.join(f'{a} at {where.positions[a]} steps' for a in crooked)})")
    return problems


def prepare_arms(link, config: Config, confirm, tell_maker) -> P.Where:
    """Make the arms ready: drivers on; arms whose position is unknown are homed with their sensors
    (motion.homing.sensors) or, without sensors, confirmed straight when `confirm(arms)` returns True.
    Raises actions.BringupError when they cannot be made ready.  Homing turns arms in the air: call it
    before the cube is in (the grippers of the homed arms are opened)."""
    where = actions.ensure_motors(link, tell_maker)
    unknown = "".join(arm for arm in P.ARMS if where.positions[arm] is None)
    if unknown:
        if config.motion.homing.sensors:
            where = actions.home_with_sensors(link, unknown, tell_maker)
        elif confirm(unknown):
            link.request(P.zero_command(unknown))
            where = link.where()
        else:
            raise actions.BringupError(f"the arms' positions are unknown ({', '.join(unknown)}) and were not confirmed "
                                       "straight: run `cube-robot home`")
    problems = arms_problems(where, config.motion.steps_per_rev)
    if problems:
        raise actions.BringupError("the arms are not ready: " + "; ".join(problems))
    return where
