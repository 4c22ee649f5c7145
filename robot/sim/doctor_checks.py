"""Doctor check of the simulation: can the real firmware be built and emulated?"""

from __future__ import annotations

from ..checks import INFO, OK, Result
from ..config_types import Config


def check_emulator(config: Config, args) -> list[Result]:
    """Is the AVR toolchain + simavr there (for `--sim` and the firmware tests)?"""
    from . import emulator

    ok, reason = emulator.available()
    if ok:
        return [Result("avr-gcc + simavr", OK, "firmware can be built and emulated (--sim uses the real firmware)")]
    return [Result("avr-gcc + simavr", INFO, f"not available ({reason}); --sim falls back to the mock firmware")]

