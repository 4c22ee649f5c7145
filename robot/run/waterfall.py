"""The run's waterfall: every stage's start and end on one clock, from the start press.

    waterfall = Waterfall(pressed_at, bus.publish)     # time.perf_counter() at the press; StageEnded events
    waterfall.add("solve", t0, t1)                     # clock seconds
    waterfall.add_scan(scanner.marks, profile)         # camera open, each view's motion and frame, decode
    waterfall.stages                                   # [{"stage", "start_ms", "end_ms"[, "floor_ms"]}]
    format_waterfall(report.waterfall)                 # text lines: one bar per stage on a ms scale

floor_ms, where given, is the least the stage can take: a view's motion, its arm time
(robot.timing); the wait for a view's frame (motion end -> frame delivered), the
camera's settle (none for a view that moved nothing) + exposure + delivery time (one more frame
period at worst); the wait
ends when the host has the picture (decoded); execute, the plan's arm time as the firmware
timed it (the free first grip not counted, as in the plan's cost).
"""

from __future__ import annotations

from typing import Callable

from .events import Event, StageEnded

BAR_WIDTH = 48  # characters of the text picture's time axis


class Waterfall:
    """publish(event): each stage is also published as a StageEnded on the run's bus
    (robot/run/events.py), from which the report builds its waterfall."""

    def __init__(self, origin: float, publish: Callable[[Event], None] | None = None):
        self.origin = origin  # clock seconds of the start press (0 ms)
        self.stages: list[dict] = []
        self.publish = publish or (lambda event: None)

    def ms(self, clock: float) -> float:
        """Clock seconds as ms from the start press."""
        return round((clock - self.origin) * 1000, 1)

    def add(self, stage: str, start: float, end: float, floor_ms: float | None = None) -> None:
        start_ms, end_ms = self.ms(start), self.ms(end)
        floor = round(floor_ms, 1) if floor_ms is not None else None
        entry: dict[str, object] = {"stage": stage, "start_ms": start_ms, "end_ms": end_ms}
        if floor is not None:
            entry["floor_ms"] = floor
        self.stages.append(entry)
        self.publish(StageEnded(stage, start_ms, end_ms, floor))

    def add_scan(self, marks: dict | None, profile=None, prefix: str = "", camera_timing=None) -> None:
        """The stages of one scan, from robot/vision/scan.py Scanner.marks."""
        if not marks:
            return
        if "camera_open" in marks:
            self.add(f"{prefix}camera open", *marks["camera_open"])
        for view in marks.get("views", []):
            name, (start, end), frame = view["view"], view["motion"], view.get("frame")
            floor = sum(profile.cost(a) for a in view["actions"]) if profile is not None else None
            self.add(f"{prefix}{name}: motion", start, end, floor)
            if frame:
                wait_floor = None
                if camera_timing is not None:  # settle (none when no arm moved: asked_after) + exposure + delivery
                    settle_s = frame["asked_after"] - frame["motion_end"] if "asked_after" in frame \
                        else camera_timing.settle_s
                    wait_floor = (settle_s + camera_timing.exposure_s + camera_timing.delivery_s) * 1000
                self.add(f"{prefix}{name}: frame", frame["exposure_start"], frame["delivered_at"])
                received = frame.get("received_at", frame["delivered_at"])
                self.add(f"{prefix}{name}: frame wait", frame["motion_end"], received, wait_floor)
        if "decode" in marks:
            self.add(f"{prefix}decode", *marks["decode"])
        if "save_pictures" in marks:
            self.add(f"{prefix}save pictures", *marks["save_pictures"])


def format_waterfall(stages: list[dict], width: int = BAR_WIDTH) -> list[str]:
    """One line per stage: label, start..end ms and a bar on a common ms scale."""
    if not stages:
        return []
    total = max(max(s["end_ms"] for s in stages), 1.0)
    per_column = total / width
    label_width = min(36, max(len(s["stage"]) for s in stages))
    lines = [f"{'':<{label_width}} {'start':>7} {'end':>7}  0 ms{'':<{width - 12}}{total:>7.0f} ms"]
    for s in stages:
        first = min(width - 1, int(max(s["start_ms"], 0.0) / per_column))
        last = min(width, max(first + 1, int(round(s["end_ms"] / per_column))))
        bar = " " * first + "#" * (last - first)
        lines.append(f"{s['stage'][:label_width]:<{label_width}} {s['start_ms']:>7.0f} {s['end_ms']:>7.0f}  "
                     f"|{bar:<{width}}|")
    return lines
