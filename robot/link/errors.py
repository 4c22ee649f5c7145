"""Typed errors of the serial link.  Every message says what went wrong and what to check.

LinkError
  PortError               the port cannot be opened / no robot found on any port
  HandshakeError          something is wrong with what answers on the port
    NoAnswerError           nothing answered at all
    WrongFirmwareError      readable text that is not our firmware (or another protocol version)
    WrongBaudError          unreadable bytes: most likely a baud-rate mismatch
  DisconnectedError       the port went away (USB unplugged, proxy closed)
  SilentBoardError        the board stopped answering, even to `?`
  TooManyResendsError     a command was sent as often as allowed without an answer (stream.sends_allowed)
  CommandRejectedError    `err <seq> <CODE>` for one of our commands
  AlarmError              the firmware latched an alarm
  CubeStateUncertainError the board reset while an arm was moving
  RefusedMidStreamError   an action refused while later queued ones ran (a CubeStateUncertainError)
  UnseenResetError        the board reset and its start-up line was lost; which actions ran is not known
                          past those it confirmed one by one (a CubeStateUncertainError)

Errors raised while a plan streams carry `progress` (a StreamProgress): which
actions completed, so the caller knows the cube's state.
"""

from __future__ import annotations

from typing import Self

from .protocol import ALARM_TEXT, ERROR_TEXT, AlarmCode, ErrorCode


class LinkError(Exception):
    """Base of every serial-link error."""

    progress = None  # StreamProgress when raised during a stream

    def with_progress(self, progress) -> Self:
        self.progress = progress
        if progress is not None:
            self.args = (f"{self.args[0]}\n{progress.describe()}",) + self.args[1:]
        return self


class PortError(LinkError):
    pass


class HandshakeError(LinkError):
    pass


class NoAnswerError(HandshakeError):
    pass


class WrongFirmwareError(HandshakeError):
    pass


class WrongBaudError(HandshakeError):
    pass


class DisconnectedError(LinkError):
    """The port went away.  The message is for the person at the robot; a program using Link
    continues the interrupted stream as `api_hint` says."""

    api_hint = "reopen the port and call Link.resume() to continue the interrupted stream"


class SilentBoardError(LinkError):
    pass


class TooManyResendsError(LinkError):
    pass


class CommandRejectedError(LinkError):
    def __init__(self, command: str, code: ErrorCode):
        self.command, self.code = command, code
        super().__init__(f"the firmware rejected {command!r}: {code.name} ({ERROR_TEXT.get(code, '?')})")


class AlarmError(LinkError):
    def __init__(self, code: AlarmCode, stop_us: int | None = None, detail: str = ""):
        self.code, self.stop_us = code, stop_us
        stopped = f"; steppers stopped {stop_us} us after the trigger" if stop_us is not None else ""
        super().__init__(
            f"alarm {code.name}: {ALARM_TEXT.get(code, 'unknown alarm')}{stopped}. {detail}".rstrip()
        )


class CubeStateUncertainError(LinkError):
    cut_part: tuple | None = None  # a reset cut an action: (parts done or None, of how many); None: not a cut


class RefusedMidStreamError(CubeStateUncertainError):
    """The firmware refused an action while later ones were already queued, and some of those ran.

    The cube is then in no state of the plan (the refused action did nothing, later ones moved), and
    which later ones ran is known only from in-order `done` counting, which a second refusal would
    fool: the state is uncertain.  ran_after: plan action numbers (1-based) reported done after it;
    action: the refused one's number (None: a step the link added, e.g. a re-grip)."""

    def __init__(self, command: str, code: ErrorCode | None, ran_after: list, action: int | None = None):
        self.command, self.code, self.ran_after, self.action = command, code, list(ran_after), action
        why = (f"{code.name} ({ERROR_TEXT.get(code, '?')})" if code is not None
               else "its answer was lost on the line and the board's TIME says it never completed")
        super().__init__(f"the firmware rejected {command!r}: {why}; action(s) {self.ran_after} after it were "
                         "already queued and ran, so the cube is in no state of the plan")


class LineNumberingError(CubeStateUncertainError):
    """The board answered a seq above the host's numbering: it took a line under a number the host had
    since given to another (renumbered) line, so lines may have been answered `ok dup` without running.
    Which actions ran after the last one reported done is not known."""


class UnseenResetError(CubeStateUncertainError):
    """The board reset and its start-up line was lost (line noise, not a power cycle: it kept its memory).
    The reset flushed the actions it had queued, and afterwards it took any later line: a `done` from it
    then does not mean the actions before that one ran.  Only actions the board confirmed one by one
    (their own `done`, `time <seq> <ms>`) count; which of the others ran is not known."""
