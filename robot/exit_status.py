"""Every command's exit statuses: one number per condition, the same in every command.

`cube-robot run` gave the meanings; every other command uses the same number for the same
condition (no robot answering is NOT_STARTED everywhere, a bad config BAD_CONFIG everywhere).
README.md's exit-status table lists these by number and name; tests/test_exit_status.py checks it.
Imports nothing, so every module may use it.
"""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0  # run: SOLVED; any other command: done
    NOT_DONE = 1  # run: NOT SOLVED; others: stopped or refused part-way (the message says why), a check failed
    BAD_CONFIG = 2  # bad config or arguments: refused before anything connected or moved
    NOT_VERIFIED = 3  # run: EXECUTED (NOT VERIFIED): the plan ran, no rescan confirmed it
    NOT_STARTED = 4  # no robot answers on the port, or it is not ready (an alarm latched at open): nothing moved
    INTERRUPTED = 130  # Ctrl-C: the stop byte went to the robot first
    BROKEN_PIPE = 141  # the reader of the output went away (128 + SIGPIPE, as a shell reports a Unix tool)

