"""Saving a calibration's numbers: the one rule for rewriting a `key: value  # comment` line, and the
validated save that checks the file reads back as measured (calibrate timing, calibrate overlap)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from ..config_types import Config

VALUE_LINE = re.compile(r"^(?P<head>\s+(?P<key>\w+):\s*)(?P<value>[^\s#]+)(?P<spaces>\s*)(?P<rest>#[^\r\n]*)?(?P<end>\r?\n?)$")


def with_number(match: re.Match, value) -> str:
    """The VALUE_LINE `match` with int(value) in place of its value; a trailing comment stays in its column
    when the new number fits, and a line without one keeps its line end."""
    new = str(int(value))
    if match["rest"] is None:
        return f"{match['head']}{new}{match['spaces']}{match['end']}"
    spaces = " " * max(1, len(match["value"]) + len(match["spaces"]) - len(new))
    return f"{match['head']}{new}{spaces}{match['rest']}{match['end']}"


def save_read_back(path, new_text: str, values: dict, read_back: Callable[[Config], dict],
                   error: type[Exception], expected: dict | None = None) -> Path:
    """Replace the config file at `path` with `new_text` (robot.config_edit.replace_validated) if it loads and
    `read_back(loaded)` equals `expected` (default `values`); the file really written is returned.  Any
    failure raises `error` (the calibration's own) naming the file; the file is then unchanged."""
    from ..config_edit import SaveError, replace_validated, save_target

    want = values if expected is None else expected

    def reads_back(loaded) -> None:
        got = read_back(loaded)
        if got != want:
            raise error(f"{path}: rewritten file reads back as {got}, expected {values}")

    try:
        replace_validated(path, new_text, reads_back)
    except SaveError as exc:
        raise error(str(exc)) from None
    return save_target(path)
