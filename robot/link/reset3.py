"""The link to a board in 3x3x3 mode across a reset: the arms put back where the host knows they are.

A reset (a reopened port, the reset button) makes the board 2x2x2 again and forgets every arm's
position and the open grippers; in 3x3x3 mode it then refuses every TURN, TILT and CLOSE
(`POSITION_UNKNOWN`).  `Link.configure` sends `PUZZLE 3` again after every reset (it does so at every
connect); `Link3.configure` then tells the board where the arms are, from what the host knows for
certain: the stream's actions that the board itself reported done (its `done` lines, `last`), nothing
else.  Only an arm at 0 can be told (`ZERO`); a gripper left at 90 by a quarter turn cannot, and the
plan stops there (`ArmAcrossAfterResetError`, the cube state exact: the reset came between actions).
Any doubt (an action cut by the reset, an unseen reset, actions that ran after a refused one) stops
too (the link's own errors come first: `check_cut`, `UnseenResetError`; else `ArmsNotKnownError`).

    link = Link3(port, settings, motion=config.motion, url=url, puzzle="3x3x3")
    link.arms_after_reset = lambda progress: {"R": (0, True), ...}   # arm -> (gripper angle, closed)
"""

from __future__ import annotations

from typing import Callable

from . import protocol as P
from .driver import Link
from .errors import CubeStateUncertainError, LinkError
from .stream import StreamEntry, StreamProgress

# arm -> (gripper angle 0 / 90, or -1 between positions; closed?) after the stream's completed actions,
# or the reason the host does not know them.
ArmsKnown = Callable[[StreamProgress | None], "dict[str, tuple[int, bool]] | str"]


class ArmAcrossAfterResetError(LinkError):
    """The board reset between actions while a gripper stood at 90: it cannot be told so (ZERO says 0)."""


class ArmsNotKnownError(CubeStateUncertainError):
    """The board reset and the host does not know for certain where every arm stands."""


class Link3(Link):
    """A Link whose configure() (at every connect and after every reset) also gives a board in 3x3x3 mode
    back the arms' positions and grippers the host knows, before the stream goes on."""

    arms_after_reset: ArmsKnown | None = None  # None: not set up yet (the first connect zeroes the arms itself)

    def configure(self) -> None:
        super().configure()
        if self.arms_after_reset is None or self.motion is None or self.puzzle != "3x3x3":
            return
        where = self.where()
        if all(where.positions[arm] is not None for arm in P.ARMS):
            return  # no reset (e.g. a reconnect that kept the board's power): it knows its arms
        stream = self._stream
        known = self.arms_after_reset(stream.progress() if stream is not None else None)
        if isinstance(known, str):
            raise ArmsNotKnownError(f"the board reset and forgot its arms' positions; {known}: nothing more is sent")
        across = [arm for arm in P.ARMS if known[arm][0] != 0]
        if across:
            raise ArmAcrossAfterResetError(
                f"the board reset between actions and forgot its arms' positions while gripper(s) "
                f"{', '.join(f'{arm} at {known[arm][0]}' for arm in across)} stood across (a board is told only "
                "that an arm is at 0, ZERO): the plan does not go on, nothing more is sent")
        self.request("ZERO " + "".join(P.ARMS))
        # The grippers as they are: a reset forgets open ones (and a mock forgets all); these move nothing.
        closed = "".join(arm for arm in P.ARMS if known[arm][1])
        opened = "".join(arm for arm in P.ARMS if not known[arm][1])
        commands = [P.grippers_command(arms, arms == closed) for arms in (opened, closed) if arms]
        if stream is not None and not stream.finished():  # first, before the stream's next action
            stream.entries[stream.next:stream.next] = [StreamEntry(command, None) for command in commands]
            return
        callback = self._stream_progress_cb
        try:  # a stream of their own; the finished one stays the link's (resume() returns its durations)
            self.run(commands)
        finally:
            self._stream, self._stream_progress_cb = stream, callback
