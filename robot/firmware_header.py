"""Facts the firmware defines once, read from its headers (firmware/cube_robot/*.h).

The firmware's C headers are the single source of its numbers: the protocol's
error and alarm codes (the X-macro lists in protocol.h) and its limits and
defaults (defaults.h).  The host (robot.link.protocol, robot.config, the mock
firmware, the pin-log decoder) reads them here at import instead of copying them.

This module imports nothing from `robot` but robot.paths (which imports nothing), so
that any module (config.py included) may use it without an import cycle.  The headers
are the checkout's firmware/, or the copy an installed package carries (robot/paths.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .paths import FIRMWARE_SRC
PROTOCOL_H = FIRMWARE_SRC / "protocol.h"
DEFAULTS_H = FIRMWARE_SRC / "defaults.h"


# The arm layout the firmware is written for: pair name -> the arms (faces) it
# closes.  Hard-coded in the firmware (command.cpp cmd_grip / arm_index,
# motion.cpp PAIR_ARMS); config.py rejects any other robot.pairs on load.
ARM_PAIRS = {"RL": ("R", "L"), "FB": ("F", "B")}


class FirmwareHeaderError(RuntimeError):
    """A header is missing or a define this host needs is not in it."""


@dataclass(frozen=True)
class Code:
    name: str
    number: int
    text: str  # what it means, for messages and docs/protocol.md


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        raise FirmwareHeaderError(f"cannot read {path}: {exc.strerror} (the firmware sources must be present: "
                                 f"a checkout's firmware/, or the copy a built package carries)") from None


def _value(text: str):
    text = text.strip()
    if re.fullmatch(r"-?\d+[UL]*", text):
        return int(text.rstrip("UL"))
    if re.fullmatch(r"0x[0-9A-Fa-f]+[UL]*", text):
        return int(text.rstrip("UL"), 16)
    if re.fullmatch(r"'.'", text):
        return text[1]
    if re.fullmatch(r'"[^"]*"', text):
        return text[1:-1]
    return None  # an expression or macro: not a plain value


@lru_cache(maxsize=None)
def defines(path: Path) -> dict:
    """{NAME: value} of every `#define NAME <number|'c'|"text">` in a header (comments ignored)."""
    values = {}
    for match in re.finditer(r"^[ \t]*#define[ \t]+(\w+)[ \t]+([^\n/]+?)[ \t]*(?://.*)?$", _text(path), re.M):
        value = _value(match.group(2))
        if value is not None:
            values[match.group(1)] = value
    return values


def define(path: Path, name: str):
    values = defines(path)
    if name not in values:
        raise FirmwareHeaderError(f"{path}: no `#define {name} <value>`")
    return values[name]


@lru_cache(maxsize=None)
def code_list(list_name: str, path: Path = PROTOCOL_H) -> tuple[Code, ...]:
    """The entries `X(NAME, number, "text")` of the X-macro `#define <list_name>(X) ...`."""
    text = _text(path)
    match = re.search(rf"^#define[ \t]+{list_name}\(X\)((?:[^\n]*\\\n)*[^\n]*)", text, re.M)
    if not match:
        raise FirmwareHeaderError(f"{path}: no X-macro list `#define {list_name}(X)`")
    entries = re.findall(r'X\(\s*(\w+)\s*,\s*(\d+)\s*,\s*"([^"]*)"\s*\)', match.group(1))
    if not entries:
        raise FirmwareHeaderError(f"{path}: {list_name} lists no X(NAME, number, \"text\") entries")
    codes = tuple(Code(name, int(number), text) for name, number, text in entries)
    if [c.number for c in codes] != list(range(len(codes))):
        raise FirmwareHeaderError(f"{path}: {list_name} must number its codes 0, 1, 2, ... in order")
    return codes


def error_codes() -> tuple[Code, ...]:
    return code_list("ERROR_CODES")


def alarm_codes() -> tuple[Code, ...]:
    return code_list("ALARM_CODES")


def limits() -> dict:
    """defaults.h: the firmware's defaults, bounds and buffer sizes."""
    return dict(defines(DEFAULTS_H))


def cpu_hz() -> int:
    """The board's CPU clock (defaults.h CPU_HZ; the Makefile and the simavr harness use the same)."""
    return define(DEFAULTS_H, "CPU_HZ")
