"""The arm motions that present a scan view: each view's actions streamed to the robot over its link.

The scan (robot/vision/scan.py) asks its view mover for each view and grabs frames; this view mover is
the robot's side of that: what a view costs in arm time (a GRIP to the pair that already holds is not
sent) and which pair holds the cube after it.
"""

from __future__ import annotations

import time

from ..link.errors import LinkError
from ..link.protocol import GRIP_PAIRS, State
from ..plan import Grip
from ..scan_sequence import ScanView


class ArmViewMover:
    """Presents scan views by streaming their actions to the robot over its link.

    holding: the pair known to hold the cube (None: not known).  The firmware finishes a GRIP to
    the pair that already holds at once, so such a grip is a no-op: it is not sent at all (no
    round trip) and costs no arm time; `last_charged` is the last view's actions that were sent
    (the waterfall's floor for its motion).  A wrong `holding` cannot move the cube wrongly: the
    firmware refuses a TURN by a pair that does not hold (NOT_HOLDING) and the run stops.
    still_since: clock time (time.perf_counter) since which nothing has shaken the cube (None: not
    known): the last arm motion's `done`, or the start press (the button is on the robot's frame; the
    run sets it), so a view that moves nothing waits only for what is left of the settle time after
    that (robot/vision/grabber.py view_frames), not for a GRIP's round trip and a settle after it.
    """

    def __init__(self, link, after=None, holding: str | None = None):
        self.link, self.after = link, after  # after(): called once the view is in place
        self.holding = holding
        self.still_since: float | None = None
        self.last_charged: list = []

    def move_to(self, view: ScanView) -> None:
        before = self.holding
        self.last_charged = charged_actions(view.actions, before)
        if self.last_charged:
            # Unknown until the motions are done (a stopped stream leaves them unknown).
            self.holding = self.still_since = None
            self.link.run(list(self.last_charged))
            self.still_since = time.perf_counter()  # the last `done` arrived: the arms are still
            self.holding = holding_after(view.actions, before)
        if self.after:
            self.after()

    def learn(self) -> None:
        """Before the start press: which pair holds and whether the arms are still, from the board
        (WHERE's grippers; STATUS idle: nothing queued or running), so the first view's GRIP to the
        loaded pair is not sent (its frame then settles from the press: Pipeline.run)."""
        try:
            status, where = self.link.status(), self.link.where()
        except LinkError:  # not known: the first GRIP is sent and settles as a motion (the run goes on)
            self.holding = self.still_since = None
            return
        self.holding = holding_from_grippers(where.grippers)
        self.still_since = time.perf_counter() if status.state == State.IDLE else None


def holding_from_grippers(grippers: dict) -> str | None:
    """The pair holding the cube by the board's gripper states (WHERE): both its grippers closed and
    the other pair's open; anything else (both closed, one open, never commanded) is None."""
    held = [pair for pair in GRIP_PAIRS if all(grippers.get(arm) == "closed" for arm in pair)
            and all(grippers.get(arm) == "open" for other in GRIP_PAIRS if other != pair for arm in other)]
    return held[0] if len(held) == 1 else None


def charged_actions(actions, holding: str | None) -> list:
    """The actions that cost arm time when `holding` holds the cube: a GRIP to the pair that
    already holds costs none (the firmware finishes it at once)."""
    charged = []
    for action in actions:
        if not (isinstance(action, Grip) and action.pair == holding):
            charged.append(action)
        holding = action.pair if isinstance(action, Grip) else holding
    return charged


def holding_after(actions, holding: str | None) -> str | None:
    """The pair holding the cube after `actions` (a turn keeps the holding pair)."""
    for action in actions:
        if isinstance(action, Grip):
            holding = action.pair
    return holding
