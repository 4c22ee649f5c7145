"""How a 3x3x3 run's stop names the cube (robot/run/puzzle3.py): 54 facelets, and what they are.

The host knows the cube from its scan and the ops the board reported done since (robot/sim/robot_sim3.py
`done_ops`); after a link error some further ops may have run (`maybe_ops`: none when the board refused one,
or said from an idle queue which ran; the one it was running when an alarm or a reset's cut stopped it; every
one sent when the host lost sight of the board).  A stop names the state after the ops done; when others may
have run, it says NOT KNOWN and which ones, and `possible` lists every state its words allow (the state after
each further op), for a judge to check the claim against the virtual cube.
"""

from __future__ import annotations

from ..plan3 import Robot3Profile


class Stop3(Exception):
    """The run stopped; `state` names the cube (54 facelets and what they are) or why it is not known;
    `possible`: the 54-facelet states those words allow (None: none named)."""

    def __init__(self, message: str, state: str, advice: str, estop: bool = False,
                 possible: list | None = None):
        super().__init__(message)
        self.state, self.advice, self.estop, self.possible = state, advice, estop, possible


def describe_op(op: dict) -> str:
    arms = op["arms"]
    if op["op"] in ("open", "close"):
        return f"{op['op']} {' '.join(arms)}"
    return f"{op['op']} " + " + ".join(f"{arm} {angle:+d}" for arm, angle in arms.items())


def rehearse(profile: Robot3Profile, scanned: str, ops) -> list[str]:
    """The scanned cube after each prefix of `ops` ([after none, after the first, ...]), by the virtual robot's
    rules, up to the first op they would not let run (a rehearsal of what the host knows, not the truth)."""
    from ..sim.virtual_robot import MechanicalError
    from ..sim.virtual_robot3 import VirtualRobot3

    rehearsal = VirtualRobot3(profile, scanned)
    states = [rehearsal.facelets()]
    for op in ops:
        try:
            rehearsal.apply_op(op)
        except MechanicalError:
            break
        states.append(rehearsal.facelets())
    return states


def where_words(done: int, plan_total: int) -> str:
    if done <= plan_total:
        return f"after plan op {done} of {plan_total}"
    return (f"after the whole plan ({plan_total} ops) and {done - plan_total} op(s) of the grippers' restore and the "
            "check rescan (whose tilts turn the whole cube)")


def op_label(number: int, plan_total: int) -> str:
    """Op `number` (from 1) counted from the plan's first: a plan op, or one of the restore and rescan after it."""
    return f"plan op {number} of {plan_total}" if number <= plan_total else \
        f"restore/rescan op {number - plan_total} after the plan"


def link_stop(exc, profile: Robot3Profile, scanned: str, done_ops: list, maybe_ops: list, plan_total: int) -> Stop3:
    """A link error after the scan was read: the state after `done_ops` (exact, or NOT KNOWN with `maybe_ops`)."""
    from ..link.errors import CommandRejectedError
    from ..link.reset3 import ArmAcrossAfterResetError

    states = rehearse(profile, scanned, list(done_ops) + list(maybe_ops))
    done = len(done_ops)
    state = states[min(done, len(states) - 1)]
    where, following = where_words(done, plan_total), op_label(done + 1, plan_total)
    message = f"{following}: {type(exc).__name__}: {exc}"
    if isinstance(exc, CommandRejectedError):
        return Stop3(message, f"{state} ({where}; {following} was refused by the board and did nothing)",
                     "SIMULATED: a plan the board refuses is a bug of the plan or the board's rules: report it",
                     possible=[state])
    if isinstance(exc, ArmAcrossAfterResetError):
        return Stop3(message, f"{state} ({where}, each reported done by the board; it reset between ops and nothing "
                     "more was sent)", "put every gripper back at 0 by hand (open it, turn its arm square, close it), "
                     "then run again (the cube is rescanned)", possible=[state])
    if not maybe_ops:
        return Stop3(message, f"{state} ({where}, as the board reported from an idle queue; nothing after it ran)",
                     "check the USB cable, then run again (the cube is rescanned)", possible=[state])
    which = (f"{following} ({describe_op(maybe_ops[0])}) may have run, part-way or whole" if len(maybe_ops) == 1 else
             f"which of the next {len(maybe_ops)} ops ({following} on) ran is not known")
    return Stop3(message, f"NOT KNOWN: {state} {where} (each reported done by the board); {which}",
                 "check the cube (a layer left between positions is turned by hand to the nearest quarter), then run "
                 "again (the cube is rescanned)", possible=states[done:done + len(maybe_ops) + 1])


def jam_stop(jam, profile: Robot3Profile, scanned: str, before: list, later: list, plan_total: int) -> Stop3:
    """The virtual robot jammed in one of `later` (the ops done since its last sync, and any that may have run
    after): the state after `before` is the last the host is sure of."""
    states = rehearse(profile, scanned, list(before) + list(later))
    done = len(before)
    span = op_label(done + 1, plan_total) + (f" .. {op_label(done + len(later), plan_total)}" if len(later) > 1 else "")
    return Stop3(f"jam in {span}: {jam}",
                 f"NOT KNOWN: {states[done]} {where_words(done, plan_total)}; the virtual robot jammed ({jam.rule}) in "
                 f"{span} and may have left a layer part-way",
                 "free the cube, turn any layer left part-way to the nearest quarter, then run again "
                 "(the cube is rescanned)", possible=states[done:])
