"""The words of a stop: what happened, what the cube's state means, and what to do next, by cause.

Used by the run's pipeline (robot/run/pipeline.py) for its report and live lines.
"""

from __future__ import annotations

from ..errors import DeviceError


def advice_for(exc: BaseException) -> str:
    from ..link.errors import HandshakeError, LinkError

    if isinstance(exc, HandshakeError):
        return "check the serial port, the cable and that the board runs cube-robot firmware (cube-robot doctor)"
    if isinstance(exc, LinkError):
        return "check the USB cable and the robot's power, then run again"
    if isinstance(exc, DeviceError):  # e.g. the simulated robot's emulator: the error knows its fix
        return exc.advice
    return DeviceError.advice


def link_lost_line(exc, when: str) -> str:
    """The live line when the link is lost mid-run, for the person at the robot: what happened, what
    to do now, and that the run goes on by itself (the link's exception also names an API call for
    programs, `api_hint`, which is not theirs)."""
    return (f"\nSerial link lost {when}: {exc.args[0].splitlines()[0]}. Reconnecting: plug the USB cable "
            "back in if it came out and leave the cube in the grippers; the run goes on by itself once the "
            "robot answers...")


def alarm_words(exc) -> str:
    """An alarm as the run's report says it: the link's hint to clear it (written for the bring-up
    commands) is left out, as the report's advice says what to do after this run (simulated or not)."""
    from ..link.driver import CLEAR_ALARM_HINT

    return exc.args[0].splitlines()[0].removesuffix(CLEAR_ALARM_HINT).rstrip()


def stop_advice(exc) -> str:
    """What to do after a stop while the plan ran, by its cause."""
    from ..link.errors import (AlarmError, CommandRejectedError, CubeStateUncertainError, DisconnectedError,
                               HandshakeError, LineNumberingError, PortError, RefusedMidStreamError,
                               SilentBoardError, UnseenResetError)
    from ..link.protocol import ALARM_TEXT, AlarmCode

    rerun = "then run again (the cube will be rescanned)"
    if isinstance(exc, LineNumberingError):
        return ("the board reset unseen and its line numbers no longer match the host's: which actions ran after "
                f"the last one reported done is not known; check the cube sits straight in the grippers and the "
                f"USB cable, {rerun}")
    if isinstance(exc, RefusedMidStreamError):
        why = exc.code.name if exc.code is not None else "its answer lost"
        return (f"the firmware refused {exc.command!r} ({why}) while later actions were already queued, "
                f"and action(s) {exc.ran_after} ran: check the cube sits straight in the grippers and the firmware "
                f"version (cube-robot doctor), {rerun}")
    if isinstance(exc, UnseenResetError):  # it kept its memory: not a power cycle
        return ("the board reset and its start-up line was lost in line noise: which actions ran after the last "
                "one it reported done one by one is not known; check the cube sits straight in the grippers and the "
                f"USB cable, {rerun}")
    if isinstance(exc, CubeStateUncertainError):
        part = exc.cut_part
        if part is None:  # not a cut: the board came back without its memory
            return ("the board lost its memory (a power cycle, or another program reset it): the cube state "
                    f"is not known for sure; check the cube sits straight in the grippers, {rerun}")
        progress = exc.progress
        command = progress.commands[progress.interrupted] if progress and progress.interrupted is not None else ""
        done, total = part
        square = command.startswith("GRIP") or (command.startswith("TURN") and done in (0, total))
        clear = "clear the alarm (cube-robot link reset-alarm)"
        if square:
            return (f"the board reset during {command}, but its memory says no layer was left between positions: "
                    f"check the cube sits straight in the grippers, {clear}, {rerun}")
        return (f"the board reset during {command or 'a move'} (the layer stopped between positions): turn that "
                "layer by hand to the nearest quarter position so the cube sits straight, then run "
                "'cube-robot run --resume' (it clears that alarm and rescans the cube)")
    if isinstance(exc, AlarmError):
        if exc.code == AlarmCode.ESTOP_INPUT:
            return f"release the emergency stop, check the cube sits straight in the grippers, {rerun}"
        if exc.code == AlarmCode.ESTOP_BYTE:
            return ("the board received the stop byte '!' (the host sends it on a stop; otherwise line noise "
                    f"made it): check the cube sits straight in the grippers and the USB cable, {rerun}")
        if exc.code in (AlarmCode.HOME_NOT_FOUND, AlarmCode.HOME_STUCK):
            return (f"alarm {exc.code.name} ({ALARM_TEXT[exc.code]}): check that arm's homing sensor and its "
                    f"wiring (cube-robot home), clear the alarm (cube-robot link reset-alarm), {rerun}")
        return (f"alarm {exc.code.name} ({ALARM_TEXT.get(exc.code, 'unknown alarm')}): check the cube sits straight "
                f"in the grippers, clear the alarm (cube-robot link reset-alarm), {rerun}")
    if isinstance(exc, CommandRejectedError):
        return (f"the firmware refused {exc.command!r} ({exc.code.name}): the actions before it completed; "
                f"check the firmware version (cube-robot doctor) and the config, {rerun}")
    if isinstance(exc, HandshakeError):
        return f"the board came back but the link is too noisy to talk to it: check the USB cable, {rerun}"
    if isinstance(exc, (DisconnectedError, SilentBoardError, PortError)):
        return f"the serial port did not come back: reconnect the USB cable and check the robot's power, {rerun}"
    return f"check the USB cable and the robot's power, {rerun}"


def action_label(action) -> str:
    """A plan action as the plan prints it: 'grip RL', 'R+L\''."""
    from ..plan import Grip

    return f"grip {action.pair}" if isinstance(action, Grip) else action.notation()


def interrupted_note(index: int, action, stopped: str) -> str:
    """What a stop part-way through plan action `index` means for the cube, and what to do."""
    from ..plan import Grip

    if isinstance(action, Grip):
        return (f"action {index + 1} ({action_label(action)}) {stopped} stopped part-way: a grip turns no layer; "
                "check the cube sits straight in the grippers")
    return (f"action {index + 1} ({action_label(action)}) {stopped} stopped part-way: turn that layer by hand to "
            "the nearest quarter position")


def interrupted_action(progress) -> dict:
    """The JSON of the action a stop interrupted: which, and (after a reset) how far it got."""
    from ..link.stream import describe_part

    k = progress.interrupted
    data = {"action": k + 1, "command": progress.commands[k], "completed_before": progress.completed}
    if progress.interrupted_part is not None:
        done, total = progress.interrupted_part
        data.update(parts_done=done, parts_total=total, where=describe_part(progress.commands[k], done, total))
    return data
