"""`cube-robot tune grippers`: each gripper's open and closed pulse widths, live on the robot.

Interactive: one gripper at a time, keys nudge its width and the gripper moves at once (a GRIPPER
line re-sends its widths; a gripper in use takes them with the next servo frame).  Saved into the
config file by rewriting only the motion.arms.<arm>.servo_open_us / servo_closed_us lines (every
other character kept, like `calibrate timing --save`).  Non-interactive: `--set R.open=1100 ...`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..config_types import MotionConfig
from ..link import protocol as P

KEYS_HELP = ("keys: + / - nudge 10 us, ] / [ nudge 50 us, o tune OPEN, c tune CLOSED, n next gripper, "
             "s save and quit, q quit without saving")
NUDGE = {"+": 10, "=": 10, "-": -10, "]": 50, "[": -50}
WHICH = {"open": 0, "closed": 1}


class TuneError(RuntimeError):
    """A width that cannot be set or saved (the message names it)."""


@dataclass
class Widths:
    """Each gripper's (open_us, closed_us), starting from the config (its own or the pair-wide)."""

    values: dict = field(default_factory=dict)
    changed: set = field(default_factory=set)  # (arm, "open"/"closed")

    @classmethod
    def from_motion(cls, motion: MotionConfig) -> "Widths":
        return cls({arm: list(P.gripper_widths(motion, arm)) for arm in P.ARMS})

    def set(self, arm: str, which: str, us: int, limits=(None, None)) -> int:
        low, high = limits
        if (low is not None and us < low) or (high is not None and us > high):
            raise TuneError(f"gripper {arm} {which}: {us} us is outside {low}..{high} us (firmware limits)")
        self.values[arm][WHICH[which]] = us
        self.changed.add((arm, which))
        return us

    def command(self, arm: str) -> str:
        return P.gripper_command(arm, *self.values[arm])


def parse_setting(text: str) -> tuple[str, str, int]:
    """'R.open=1100' -> ('R', 'open', 1100); TuneError names a bad one."""
    match = re.fullmatch(r"([RLFBrlfb])\.(open|closed)=(\d+)", text.strip())
    if not match:
        raise TuneError(f"{text!r}: use ARM.open=US or ARM.closed=US, e.g. R.open=1100")
    return match[1].upper(), match[2], int(match[3])


def apply_live(link, widths: Widths, arm: str, which: str) -> None:
    """Send the gripper's widths and put it in the position being tuned (it moves now)."""
    link.request(widths.command(arm))
    link.run([P.grippers_command(arm, close=which == "closed")])


def interactive(link, widths: Widths, limits, read_key, tell_maker, arms: str = P.ARMS) -> bool:
    """The key-driven trim; True when the user saves.  read_key() returns one key (or a line)."""
    tell_maker(KEYS_HELP)
    index, which = 0, "open"
    apply_live(link, widths, arms[index], which)
    while True:
        arm = arms[index]
        tell_maker(f"gripper {arm}: tuning {which.upper()} = {widths.values[arm][WHICH[which]]} us "
            f"(open {widths.values[arm][0]}, closed {widths.values[arm][1]})")
        key = read_key()
        if key == "\x03":  # Ctrl-C from a terminal in raw mode: an interrupt, as a SIGINT is in every command
            tell_maker("Ctrl-C: the widths tuned are not saved (no file was written).")
            raise KeyboardInterrupt
        if key in ("", "q", "\x04"):
            return False
        if key == "s":
            return True
        if key in ("o", "c"):
            which = "open" if key == "o" else "closed"
        elif key == "n":
            index = (index + 1) % len(arms)
        elif key in NUDGE:
            try:
                widths.set(arm, which, widths.values[arm][WHICH[which]] + NUDGE[key], limits)
            except TuneError as exc:
                tell_maker(str(exc))
                continue
        else:
            tell_maker(KEYS_HELP)
            continue
        apply_live(link, widths, arms[index], which)


# ---------------------------------------------------------------------------
# Saving: only the lines of the changed settings


def _value_span(text: str, node) -> tuple[int, int]:
    return node.start_mark.index, node.end_mark.index


def rewrite_gripper_widths(text: str, widths: Widths, path="config") -> str:
    """`text` with motion.arms.<arm>.servo_<which>_us replaced for each changed width; every other
    character kept (comments, order, spacing).  A setting not written in the file is an error."""
    root = yaml.compose(text)
    replacements = []
    for arm, which in sorted(widths.changed):
        key_path = ["motion", "arms", arm, f"servo_{which}_us"]
        node = root
        for key in key_path:
            node = next((v for k, v in node.value if k.value == key), None) if isinstance(node, yaml.MappingNode) else None
            if node is None:
                raise TuneError(f"{path}: no {'.'.join(key_path)} line to update; add it under motion: arms: {arm}: "
                                "(see the shipped config.yaml) and run again")
        assert node is not None  # each key above was found
        if not isinstance(node, yaml.ScalarNode) or "\n" in text[slice(*_value_span(text, node))]:
            raise TuneError(f"{path}:{node.start_mark.line + 1}: {'.'.join(key_path)} is not a plain value")
        replacements.append((*_value_span(text, node), str(widths.values[arm][WHICH[which]])))
    for start, end, new in sorted(replacements, reverse=True):
        old = text[start:end]
        # Keep a trailing comment in its column when the new value fits.
        tail = text[end:]
        spaces = len(tail) - len(tail.lstrip(" "))
        if spaces and tail.lstrip(" ").startswith("#"):
            pad = max(1, len(old) + spaces - len(new))
            text = text[:start] + new + " " * pad + tail.lstrip(" ")
        else:
            text = text[:start] + new + tail
    return text


def save(path, widths: Widths) -> Path:
    """Rewrite the changed width lines of the config file at `path`, validated, atomically; the file
    really written (a symlink's target) is returned.  TuneError when it cannot be written."""
    from ..config_edit import SaveError, replace_validated, save_target

    try:
        replace_validated(path, rewrite_gripper_widths(Path(path).read_text(), widths, path))
    except SaveError as exc:
        raise TuneError(str(exc)) from None
    return save_target(path)
