"""Stop bytes `!` made by line noise (docs/protocol.md, "A stop byte made by line noise"): when one
stopped nothing, the link clears it, says so, and goes on, at most NOISE_STOPS_CLEARED_MAX times per run.

A Link (robot/link/driver.py) holds one NoiseStops: every wait of the Link (a command, waiting for idle or
the start button, a stream) asks may_clear, so the rule and its cap are in one place.
"""

from __future__ import annotations

import collections

from . import protocol as P

CLEAR_ALARM_HINT = "Check the robot, then clear the alarm with `cube-robot link reset-alarm`."
# Stop bytes made by line noise that the link clears on its own, per run: per Link, from open() to
# close() across reconnects (stats["noise_stops_cleared"] counts them).  A cleared one stopped nothing,
# but each is a byte the noise turned into exactly `!`: more in one run means the next may well land while
# an arm moves, so the run stops (nothing queued: the cube state is known) and names the cable.  Counted
# per run, not per command or wait: a run sends dozens of commands and waits, and wait_start() waits for
# the button in short slices, so a per-wait bound would be no bound.
NOISE_STOPS_CLEARED_MAX = 3


class NoiseStops:
    """The noise-stop rule of one Link: whether a latched alarm may be cleared, and what was cleared."""

    def __init__(self, stats: collections.Counter):
        self.stats = stats  # the link's counters (noise_stops_cleared)
        self.host_sent_stop = False  # this host sent the stop byte (Link.estop); only a host sends `!`
        self.cleared: list[str] = []  # stop bytes made by line noise that the link cleared (for the report)

    def stopped_nothing(self, code: P.AlarmCode, stream) -> bool:
        """Whether a latched alarm is line noise that stopped nothing, so clearing it is safe.

        Only a host sends the stop byte `!`: an ESTOP_BYTE alarm this host did not send is a byte the
        noise turned into `!`.  It stopped nothing when no action was queued on the board (stream.py
        nothing_queued_at_alarm; every motion is a queued action; `stream` None: none is running).
        Never the e-stop input (ESTOP_INPUT: a person pressed it; the firmware reports a press after a
        latched `!` as ESTOP_INPUT too)."""
        return (code == P.AlarmCode.ESTOP_BYTE and not self.host_sent_stop
                and (stream is None or stream.nothing_queued_at_alarm()))

    def may_clear(self, code: P.AlarmCode, stream) -> bool:
        """A stop byte made by line noise that stopped nothing, and this run has cleared fewer than
        NOISE_STOPS_CLEARED_MAX: the one rule every wait (command, idle, button, stream) applies."""
        return self.stats["noise_stops_cleared"] < NOISE_STOPS_CLEARED_MAX and self.stopped_nothing(code, stream)

    def hint(self, code: P.AlarmCode, stream) -> str:
        """What to do about an alarm that stops the run; a noise stop past the cap says why it was not cleared."""
        if self.stopped_nothing(code, stream):
            return (f"Line noise made the stop byte '!' again ({self.stats['noise_stops_cleared']} cleared in this "
                    f"run, at most {NOISE_STOPS_CLEARED_MAX} are): the link is too noisy to go on (check the USB "
                    "cable, keep it away from the motor wires, try a shorter one). No action was queued: nothing "
                    "moved. " + CLEAR_ALARM_HINT)
        return CLEAR_ALARM_HINT

    def was_cleared(self, when: str) -> None:
        """The link sent RESET for a stop byte made by line noise: count it and say so."""
        self.stats["noise_stops_cleared"] += 1
        self.cleared.append(
            f"line noise made the stop byte '!' {when} (this host sent none); no action was queued or moving, "
            "so nothing stopped: the link cleared that alarm and went on")
