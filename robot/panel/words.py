"""The page's words for what the commands tell a person at a terminal.

The bring-up actions and the doctor's checks are shared with the commands (robot/arms/actions.py,
robot/arms/doctor_checks.py, robot/arms/readiness.py, ...), whose messages name commands and flags.  In the
panel, which holds the port, the person uses the page's controls instead: `panel_words` rewrites every
message the bring-up, the doctor and the calibration answer with, naming the control (and, where a
script needs it, the API request in parentheses).  Most specific phrases first.
"""

from __future__ import annotations

import re

SQUARE = "square each by eye (its +/- buttons, then Straight)"
HOME = f"Home with the sensors, or without sensors {SQUARE}"

# (pattern, replacement): re.sub in this order.
PANEL_WORDS: tuple[tuple[str, str], ...] = (
    # robot/arms/actions.py: a jog with the cube on arms nobody has placed
    (r"Home them first \(`cube-robot home --arms [RLFB]+`\), or, if they stand straight, confirm it "
     r"\(`--arms-straight`\)",
     f"Home them first: {HOME}; Straight alone if one already stands straight"),
    (r"\(`cube-robot jog [RLFB] \.\.\.`, or `cube-robot home --arms [RLFB]+`\)",
     f"(Jog with \"With the cube\" unticked, or {SQUARE})"),
    (r"`cube-robot jog [RLFB] \.\.\. --with-cube`", "Jog with \"With the cube\" ticked (jog {\"with_cube\": true})"),
    (r"`cube-robot home` \(or a run's check\) finds them again", f"{HOME} finds them again (or a run's check)"),
    # robot/arms/doctor_checks.py: what a run needs of arms without sensors
    (r"a run needs your word that the arms stand straight \(`cube-robot run --arms-straight`, or y at its "
     r"prompt\); `cube-robot home` squares them by eye",
     "a run needs the arms known: in Bring-up, square each arm by eye (its +/- buttons, then Straight) before "
     "Start, or start the panel with --arms-straight"),
    (r"square each arm by eye \(`cube-robot home` walks you through it\), then start the run with "
     r"`cube-robot run --arms-straight` \(or answer y when a run on a terminal asks\)",
     "in Bring-up, square each arm by eye (its +/- buttons, then Straight), then Start (or start the panel "
     "with --arms-straight)"),
    (r"clear the alarm with `cube-robot link reset-alarm`", "press Clear alarm"),
    (r"run 'cube-robot link reset-alarm'", "press Clear alarm"),
    (r"`cube-robot link reset-alarm`", "Clear alarm"),
    (r"run `cube-robot home`", f"in Bring-up: {HOME}"),
    (r"`cube-robot home`", f"Bring-up's Home: {HOME}"),
    (r"`cube-robot release`", "Release"),
    (r"`cube-robot motors off`", "Motors off"),
    (r"`cube-robot motors on`", "Motors on"),
    # robot/vision/doctor_checks.py: the calibration files
    (r"[`']cube-robot calibrate colours[`']", "Calibrate colours (on this page)"),
    (r"\(cube-robot doctor\)", "(Doctor, on this page)"),
    # robot/cli_common.py SIM_NOT_SAVED: trims on the simulated robot
    (r"\(tune or measure on the robot, with --port, to save\)",
     "(trim on the robot itself, with the panel started with --port instead of --sim, to save)"),
)

_COMPILED = tuple((re.compile(pattern), replacement) for pattern, replacement in PANEL_WORDS)


def panel_words(text: str) -> str:
    """`text` with the commands it names replaced by the page's controls."""
    for pattern, replacement in _COMPILED:
        text = pattern.sub(replacement.replace("\\", "\\\\"), text)
    return text


__all__ = ["PANEL_WORDS", "panel_words"]
