"""What happens in a run, as typed events on one bus.

    bus = EventBus()
    bus.subscribe(handler)          # handler(event); any thread may subscribe or unsubscribe
    bus.publish(PlanFound(...))     # every handler, in subscription order, on the publisher's thread

The run (robot/run/pipeline.py) publishes; its report (robot/run/report.py RunReport.apply), the
live progress line (ProgressLine) and the solve log (robot/run/log.py SolveLog) are subscribers, and
so is anything else that wants to watch a run (a panel, a recorder in a test).  A report replayed
from a run's events (RunReport.replay) is the report of that run.

Handlers run on the publisher's thread (the run's, which also streams the plan: ActionSent and
ActionDone come from the link's loop on it), one after another, while the run waits: they must be
quick and must not block; a handler that needs to do slow work hands the event to its own thread.
A handler that raises does not stop the run: the bus catches the exception, says so once per
handler (`warn`) and keeps calling it.

Times: `*_ms` are milliseconds; `start_ms`/`end_ms` are from the start press (robot/run/waterfall.py).
"""

from __future__ import annotations

import sys
import threading
import traceback
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Union

if TYPE_CHECKING:
    from ..progress import ProgressBar

@dataclass(frozen=True)
class RunStarted:
    time: str  # ISO, seconds
    mode: str  # "simulated" or "hardware"
    scramble: str | None = None  # simulation: the scramble asked for (None: a random one)
    true_state: str | None = None  # simulation: the cube put in the robot


@dataclass(frozen=True)
class RobotNamed:
    firmware: str | None  # what answers on the link (or what answered instead)


@dataclass(frozen=True)
class TablesReady:
    load_ms: float  # 0 when the pre-flight had loaded them


@dataclass(frozen=True)
class StartPressed:
    pass  # the waterfall's clock starts here


@dataclass(frozen=True)
class StageStarted:
    stage: str  # "scan", "solve", "execute", "verify"


@dataclass(frozen=True)
class StageEnded:
    stage: str  # a waterfall line: "solve", "top-front: motion", "verify: decode", ...
    start_ms: float
    end_ms: float
    floor_ms: float | None = None  # the least the stage can take, where known


@dataclass(frozen=True)
class FrameTaken:
    """A view's frame, as soon as the camera has given it (the scan goes on)."""
    view: str  # with the scan's prefix ("verify: top-front")
    exposure_start_ms: float
    delivered_ms: float


@dataclass(frozen=True)
class ViewDecoded:
    """The views taken so far, decoded together after `view` (an adaptive scan from scan.adaptive_from
    on, after each view; a full scan after its last)."""
    view: str  # the view just taken, with the scan's prefix
    views: int  # views decoded (taken so far)
    facelets: str | None  # None: not sure (an adaptive scan takes the next view; after the last, refused)
    confidence: float | None = None
    doubt: str | None = None  # why not, in the decoder's words


@dataclass(frozen=True)
class ScanRefused:
    attempt: int
    error: str
    images: tuple[str, ...]


@dataclass(frozen=True)
class ViewsDecoded:
    attempt: int
    views: int  # views taken (an adaptive scan stops when it is sure)
    recognition_ms: float
    read_ms: float
    facelets: str
    confidence: float
    images: tuple[str, ...]
    warnings: tuple[str, ...]
    seen: tuple[int, ...] = ()  # facelet indices read by the camera (the others inferred from the cube)
    unread: tuple[str, ...] = ()  # facelets read past (glare, shadow: they fit no colour), by name ("U1")
    colours_rgb: dict = field(default_factory=dict, hash=False)  # letter -> [r, g, b] the scan saw
    view_colours: dict = field(default_factory=dict, hash=False)  # view -> per region [r, g, b] (None: another view's)


@dataclass(frozen=True)
class CubeCorrected:
    """A person corrected the scanned cube before it was solved (the panel's net)."""
    scanned: str
    facelets: str  # the cube solved instead (legal: validated as `cube-robot solve` validates)
    stickers: tuple[int, ...]  # facelet indices changed


@dataclass(frozen=True)
class PlanFound:
    moves: str
    actions: int
    solve_ms: float
    predicted_ms: int | None  # None for a plan without robot timing (Plan.cost_ms)
    plan: dict = field(hash=False)  # Plan.to_json()


@dataclass(frozen=True)
class RunWarning:
    text: str


@dataclass(frozen=True)
class ActionSent:
    action: int  # the plan action (from 1) whose line first went to the board (a resend is not said again)
    total: int


@dataclass(frozen=True)
class ActionDone:
    completed: int  # plan actions the robot confirmed done
    total: int


@dataclass(frozen=True)
class StreamEnded:
    completed: int  # the plan's stream is over (all done, or stopped): the progress line ends
    total: int


@dataclass(frozen=True)
class LinkRecovered:
    text: str  # "recovered: DisconnectedError (the link was resumed)"


@dataclass(frozen=True)
class LinkStats:
    stats: dict = field(hash=False)  # the link's counters; added to those already reported


@dataclass(frozen=True)
class Executed:
    execute_ms: float
    button_to_solved_ms: float
    measured_machine_ms: int | None  # None when any action's time is unknown
    unknown_time_actions: int | None
    link_stats: dict = field(hash=False)
    review_ms: float | None = None  # a person checked the scanned cube this long (left out of button_to_solved_ms)


@dataclass(frozen=True)
class Checked:
    verify: str  # what the check after the solve found, or why there was none
    verified_solved: bool | None = None
    images: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Stopped:
    """The run stopped (or stops now): what is known; None leaves a value as it is."""
    errors: tuple[str, ...] = ()
    advice: str | None = None
    cube_state: str | None = None
    stopped_at_action: int | None = None
    interrupted_action: dict | None = field(default=None, hash=False)
    outcome: str | None = None


@dataclass(frozen=True)
class NoiseStops:
    texts: tuple[str, ...]  # stop bytes made by line noise that the link cleared (they came before any stop)


@dataclass(frozen=True)
class PicturesSaved:
    images: tuple[str, ...]
    readings: str | None = None  # readings.json beside them
    replay: str | None = None  # the command that decodes them again as the run did


@dataclass(frozen=True)
class Result:
    solved: bool
    final_state: str | None = None  # simulation: the virtual cube
    turned_quarters: int | None = None


@dataclass(frozen=True)
class SimulationMeasured:
    virtual_cube: str
    board_ms: float | None = None
    wall_ms: float | None = None
    speedup: float | None = None
    timing_note: str | None = None
    serial_faults: int | None = None
    faults_made_estop_byte: int | None = None
    light: str | None = None  # the simulated lamp on every scan (None: none)


@dataclass(frozen=True)
class RunEnded:
    outcome: str  # the last event of a run
    exit_status: int


Event = Union[RunStarted, RobotNamed, TablesReady, StartPressed, StageStarted, StageEnded, FrameTaken,
              ViewDecoded, ScanRefused, ViewsDecoded, CubeCorrected, PlanFound, RunWarning, ActionSent, ActionDone,
              StreamEnded, LinkRecovered,
              LinkStats, Executed, Checked, Stopped, NoiseStops, PicturesSaved, Result, SimulationMeasured,
              RunEnded]
Handler = Callable[[Event], None]


def _warn(text: str) -> None:
    print(text, file=sys.stderr)


class EventBus:
    """Synchronous publish/subscribe.  subscribe/unsubscribe are thread-safe; publish calls the
    handlers subscribed when it starts, on the caller's thread (see the module's docstring)."""

    def __init__(self, warn: Callable[[str], None] = _warn):
        self._lock = threading.Lock()
        self._handlers: tuple[Handler, ...] = ()  # replaced, never changed: publish reads it without the lock
        self._failed: dict[int, int] = {}  # id(handler) -> exceptions caught
        self.warn = warn

    def subscribe(self, handler: Handler) -> Handler:
        with self._lock:
            self._handlers = self._handlers + (handler,)
        return handler

    def unsubscribe(self, handler: Handler) -> None:
        with self._lock:
            self._handlers = tuple(h for h in self._handlers if h is not handler)

    def failures(self, handler: Handler) -> int:
        """How many events `handler` raised on."""
        return self._failed.get(id(handler), 0)

    def publish(self, event: Event) -> None:
        for handler in self._handlers:
            try:
                handler(event)
            except Exception as exc:  # a watcher must not stop the run (Ctrl-C still does)
                with self._lock:
                    count = self._failed[id(handler)] = self._failed.get(id(handler), 0) + 1
                if count == 1:
                    self._say_failed(handler, event, exc)

    def _say_failed(self, handler, event, exc) -> None:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        name = (handler.__qualname__ if isinstance(handler, (types.FunctionType, types.MethodType))
                else type(handler).__qualname__)
        try:
            self.warn(f"cube-robot: a run watcher ({name}) "
                      f"failed on {type(event).__name__}: {type(exc).__name__}: {exc} ({where.filename}:"
                      f"{where.lineno}); the run goes on, later failures of it are not said")
        except Exception:
            pass


class ProgressLine:
    """The live progress bar while the plan streams (stderr, when it is a terminal)."""

    def __init__(self, stream=None, enabled: bool | None = None):
        self.stream, self.enabled = stream, enabled
        self.bar: ProgressBar | None = None

    def __call__(self, event: Event) -> None:
        from ..progress import ProgressBar

        if isinstance(event, PlanFound):
            self.bar = ProgressBar(event.actions, "Solving", stream=self.stream, enabled=self.enabled)
        elif isinstance(event, ActionDone) and self.bar is not None:
            self.bar.update(event.completed, f"{event.completed}/{event.total} actions")
        elif isinstance(event, StreamEnded) and self.bar is not None:
            self.bar.finish()
            self.bar = None
