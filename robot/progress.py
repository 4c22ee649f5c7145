"""A small text progress bar for long work (table builds, streaming a plan).

Draws on stderr only when it is a terminal (or when forced), so pipes and
--json output stay clean.
"""

from __future__ import annotations

import sys
import time


class ProgressBar:
    def __init__(self, total: float, label: str, stream=None, enabled: bool | None = None, width: int = 30):
        self.total = max(total, 1)
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.width = width
        self.started = time.monotonic()
        self.done = 0.0
        self._last_draw = 0.0

    def update(self, done: float, note: str = "") -> None:
        self.done = done
        now = time.monotonic()
        if self.enabled and (now - self._last_draw > 0.1 or done >= self.total):
            self._last_draw = now
            fraction = min(done / self.total, 1.0)
            filled = int(fraction * self.width)
            bar = "#" * filled + "-" * (self.width - filled)
            elapsed = now - self.started
            self.stream.write(f"\r{self.label} [{bar}] {fraction:6.1%} {elapsed:5.1f}s {note}\x1b[K")
            self.stream.flush()

    def finish(self, note: str = "") -> None:
        self.update(self.total, note)
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.finish()
        elif self.enabled:
            self.stream.write("\n")
