"""Every stop's advice fits its cause (robot/run/pipeline.py stop_advice): one row per cause."""

import pytest

from robot.link.errors import (AlarmError, CommandRejectedError, CubeStateUncertainError, DisconnectedError,
                               HandshakeError, PortError, SilentBoardError)
from robot.link.protocol import AlarmCode, ErrorCode
from robot.link.stream import StreamProgress
from robot.run.stop_words import stop_advice

COMMANDS = ["GRIP FB", "GRIP RL", "TURN R90", "GRIP FB", "TURN F90 B90"]


def reset_cut(action: int, done, total) -> CubeStateUncertainError:
    """What Link raises when the board's banner names a cut action (action: 0-based)."""
    error = CubeStateUncertainError(f"the board reset while action {action + 1} was running")
    error.cut_part = (done, total)
    return error.with_progress(StreamProgress(COMMANDS, [None] * len(COMMANDS), action, action, (done, total)))


# cause -> (the error, phrases the advice must contain, phrases it must not contain)
CASES = {
    "reset mid-turn": (reset_cut(2, 37, 100), ["reset during TURN R90", "turn that layer by hand",
                                              "run --resume"], ["emergency", "USB"]),
    "reset, turn whole": (reset_cut(2, 100, 100), ["no layer was left between positions", "reset-alarm"],
                          ["by hand", "emergency"]),
    "reset, steps unknown": (reset_cut(4, None, 100), ["turn that layer by hand"], ["no layer was left"]),
    "reset during a grip": (reset_cut(3, 1, 2), ["reset during GRIP FB", "no layer was left"], ["by hand"]),
    "memory lost": (CubeStateUncertainError("the board restarted without its memory"), ["lost its memory"],
                    ["emergency"]),
    "port gone": (PortError("cannot open serial port '/dev/ttyACM0'"), ["did not come back", "USB cable"],
                  ["emergency", "alarm"]),
    "cable pulled": (DisconnectedError("the serial port went away"), ["did not come back"], ["emergency"]),
    "silent board": (SilentBoardError("the board is silent"), ["did not come back", "power"], ["emergency"]),
    "noisy link": (HandshakeError("the identity exchange did not complete"), ["too noisy", "USB cable"],
                   ["emergency"]),
    "e-stop button": (AlarmError(AlarmCode.ESTOP_INPUT), ["release the emergency stop"], ["line noise"]),
    "stop byte": (AlarmError(AlarmCode.ESTOP_BYTE), ["stop byte", "line noise"], ["release the emergency stop"]),
    "homing sensor": (AlarmError(AlarmCode.HOME_NOT_FOUND), ["HOME_NOT_FOUND", "homing sensor"], ["emergency"]),
    "sensor stuck": (AlarmError(AlarmCode.HOME_STUCK), ["HOME_STUCK", "homing sensor"], ["emergency"]),
    "reset alarm": (AlarmError(AlarmCode.RESET_DURING_MOTION), ["RESET_DURING_MOTION", "reset-alarm"],
                    ["emergency", "homing"]),
    "refused command": (CommandRejectedError("TURN R90", ErrorCode.NOT_HOLDING), ["refused 'TURN R90'",
                                                                               "NOT_HOLDING"], ["emergency"]),
}


@pytest.mark.parametrize("cause", CASES)
def test_the_advice_fits_the_cause(cause):
    error, wanted, unwanted = CASES[cause]
    advice = stop_advice(error)
    for phrase in wanted:
        assert phrase in advice, (cause, phrase, advice)
    for phrase in unwanted:
        assert phrase not in advice, (cause, phrase, advice)


def test_causes_that_need_different_actions_get_different_advice():
    advice = {cause: stop_advice(error) for cause, (error, _, _) in CASES.items()}
    same_action = [("port gone", "cable pulled"), ("cable pulled", "silent board")]  # reconnect, in each case
    for a, b in same_action:
        assert advice[a] == advice[b]
    different = {advice[c] for c in CASES if c not in ("cable pulled", "silent board")}
    assert len(different) == len(CASES) - 2


def test_a_cut_action_is_in_the_report_json_and_text():
    from robot.run.stop_words import interrupted_action
    from robot.run.report import RunReport

    error = reset_cut(2, 37, 100)
    cut = interrupted_action(error.progress)
    assert cut == {"action": 3, "command": "TURN R90", "completed_before": 2, "parts_done": 37,
                   "parts_total": 100, "where": "37 of 100 steps done (about 33 of 90 degrees: the layer is "
                                                "between positions)"}
    report = RunReport(time="t", mode="hardware", interrupted_action=cut)
    assert report.to_json()["interrupted_action"]["parts_done"] == 37
    assert "cut action  3 (TURN R90): 37 of 100 steps done" in report.format()
    unknown = interrupted_action(reset_cut(4, None, 100).progress)
    assert unknown["parts_done"] is None and "unknown part of 100 steps" in unknown["where"]
    # A stop that was not a reset (e-stop): which action, but no parts.
    plain = StreamProgress(COMMANDS, [None] * 5, 1, 1)
    assert interrupted_action(plain) == {"action": 2, "command": "GRIP RL", "completed_before": 1}
