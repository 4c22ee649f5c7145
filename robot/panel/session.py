"""What the panel does with the robot it holds: runs, stops, bring-up, and who may move it.

    session = PanelSession(config, held, live).open()
    session.listen(send)                      # send(message: dict), called on any thread (the web server hops)
    session.take_control("tab-1")
    session.start_run("tab-1")                # a run on its own thread; its events go to every listener
    session.emergency_stop()                  # any client: the stop byte now, from the caller's thread
    session.close()

One lock guards the robot between runs: a bring-up action and a run never overlap, and the board is
asked for its state only while no run streams to it (the run's thread owns the link then).  The
emergency stop takes no lock: it writes the stop byte past every queue, whatever else is going on.

A run is the terminal's run (robot/run/pipeline.py run_robot) on a BorrowedRobot (robot/panel/held.py):
its events are the ones `cube-robot run` folds into its report, it is logged in the same solve log, and
a closed browser changes nothing about it.  Stop does what Ctrl-C does in `cube-robot run`: the run's
thread gets a KeyboardInterrupt, so it stops exactly as the terminal's run would (the stop byte only when
something moves, the report naming the cube's state).
"""

from __future__ import annotations

import ctypes
import dataclasses
import datetime as dt
import threading
from typing import TYPE_CHECKING, Any, Callable

from ..config_types import Config
from ..run import events as ev
from ..run.events import EventBus
from ..run.options import RunOptions
from ..run.simulated import VIRTUAL_CUBE_STUCK
from ..run.robot import StopPressed
from .errors import RequestError

if TYPE_CHECKING:
    from ..run.report import RunReport
    from .held import HeldRobot
    from .live import LiveView

Listener = Callable[[dict], None]
REVIEW_TIMEOUT_S = 600.0  # how long a run waits for a person to confirm the cube it read


def event_json(event: ev.Event, run: int) -> dict:
    """A run event as the websocket sends it: its class name, the run's number and its fields."""
    data: dict[str, Any] = {"type": type(event).__name__, "run": run}
    data.update(dataclasses.asdict(event))
    return data


class Review:
    """A scanned cube waiting for a person: the run's thread waits until confirm() or cancel()."""

    def __init__(self, facelets: str, confidence: float):
        self.facelets, self.confidence = facelets, confidence
        self.answer: str | None = None
        self.done = threading.Event()


class PanelSession:
    def __init__(self, config: Config, held: HeldRobot, live: LiveView | None = None):
        self.config, self.held, self.live = config, held, live
        self.lock = threading.RLock()  # the robot between runs (bring-up, board reads, starting a run)
        self._listeners: list[Listener] = []
        self._listeners_lock = threading.Lock()
        self._run_messages: list[dict] = []  # the latest run's messages, for a page that opens mid-run
        self._messages_run: int | None = None
        self.controller: str | None = None  # the client that may move the robot
        self.run_id = 0
        self.run_state = "idle"  # "idle", "running", "stopping"
        self.stage: str | None = None
        self.run_thread: threading.Thread | None = None
        self.last_report: RunReport | None = None
        self.last_text: str | None = None  # the last run's report as the terminal prints it
        self.cube: dict[str, Any] = {"facelets": None, "confidence": None, "seen": None}
        self.review: Review | None = None
        self.board: dict | None = None  # the board's state, as last read between runs
        self.overlay_view: str | None = None  # the scan view the live view outlines
        self._interruptible = False  # a run is going that a Stop may interrupt (until its RunEnded)
        self.jammed: str | None = None  # simulation: why the virtual cube cannot go on (a new cube is needed)

    # -- life -------------------------------------------------------------------------

    def open(self) -> "PanelSession":
        self.held.start()
        if self.live is not None and self.held.camera is not None:
            self.live.attach(self.held.camera.grabber, simulated=self.held.simulated)
        self.refresh_board()
        return self

    def close(self) -> None:
        thread = self.run_thread
        if thread is not None and thread.is_alive():
            self._interrupt(thread)  # as Ctrl-C in `cube-robot run`: the run stops in order
            thread.join(timeout=30)
        if self.live is not None:
            self.live.close()
        self.held.close()

    # -- listeners (the websocket) ------------------------------------------------------

    def listen(self, listener: Listener) -> Listener:
        with self._listeners_lock:
            self._listeners.append(listener)
        return listener

    def listen_from_start(self, listener: Listener) -> list[dict]:
        """Listen, and get the latest run's messages so far (a page opened mid-run draws it whole): each
        message is either in the list returned or sent to the listener, never both, never neither."""
        with self._listeners_lock:
            self._listeners.append(listener)
            return list(self._run_messages)

    def unlisten(self, listener: Listener) -> None:
        with self._listeners_lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def send(self, message: dict) -> None:
        with self._listeners_lock:
            if message.get("run") is not None and message.get("type") != "State":
                if message["run"] != self._messages_run:  # a new run: the last one's are no longer replayed
                    self._run_messages, self._messages_run = [], message["run"]
                self._run_messages.append(message)
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(message)
            except Exception:  # a listener that fails (a closed socket) does not stop the others or the run
                pass

    def changed(self) -> None:
        self.send({"type": "State"} | self.state())

    # -- control ------------------------------------------------------------------------

    def take_control(self, client: str, take: bool = False) -> None:
        with self.lock:
            if self.controller not in (None, client) and not take:
                raise RequestError(409, f"client {self.controller!r} controls the robot: take control explicitly "
                                        "({\"take\": true}) to move it from here", "take")
            self.controller = client
        self.changed()

    def release_control(self, client: str) -> None:
        """The client's last connection closed: anyone may take control (a run goes on as it is)."""
        with self.lock:
            if self.controller == client:
                self.controller = None
        self.changed()

    def require_control(self, client: str) -> None:
        if self.controller != client:
            who = f"client {self.controller!r} controls it" if self.controller else "nobody controls it yet"
            raise RequestError(409, f"this client does not control the robot ({who}): take control first (Take control; POST /api/control)",
                               "X-Cube-Robot-Client")

    # -- the state ------------------------------------------------------------------------

    def refresh_board(self) -> None:
        """Read the board's state (only between runs: the run's thread owns the link while it runs)."""
        from .bringup_api import where

        with self.lock:
            if self.run_state != "idle" or self.held.robot.link is None:
                return
            try:
                self.board = where(self.held.link, self.config)
            except Exception as exc:  # the board does not answer: say so in the state
                self.board = {"error": f"{type(exc).__name__}: {exc}"}

    def state(self, client: str | None = None) -> dict:
        report = self.last_report
        return {
            "mode": "simulated" if self.held.simulated else "hardware",
            "simulated": self.held.simulated,
            "backend": self.held.backend,
            "run": {"id": self.run_id or None, "state": self.run_state, "stage": self.stage,
                    "result_line": report.result_line() if report is not None and self.run_state == "idle" else None,
                    "review": ({"facelets": self.review.facelets, "confidence": self.review.confidence}
                               if self.review is not None else None)},
            "controller": self.controller,
            "you_control": client is not None and client == self.controller,
            "board": self.board,
            "cube": dict(self.cube),
            "jammed": self.jammed,
            "live": self.live.stats() if self.live is not None else None,
        }

    # -- runs ---------------------------------------------------------------------------

    def start_run(self, client: str, review: bool = False) -> int:
        """Start a run (the start button).  review: wait for a person to confirm (or correct) the cube
        the scan read before it is solved."""
        with self.lock:
            self.require_control(client)
            if self.run_state != "idle":
                raise RequestError(409, f"run {self.run_id} is still going ({self.run_state})")
            if self.jammed:
                raise RequestError(409, self.jammed)
            self._refuse_alarm()
            self.run_id += 1
            run_id = self.run_id
            self.run_state, self.stage = "running", None
            self.cube = {"facelets": None, "confidence": None, "seen": None}
            self._interruptible = True
            thread = self.run_thread = threading.Thread(target=self._run, args=(run_id, review),
                                                        name=f"panel run {run_id}", daemon=True)
            thread.start()
        self.changed()
        return run_id

    def _refuse_alarm(self) -> None:
        """Nothing moves while an alarm is latched: refused here with its name (the board would refuse too)."""
        from ..link import protocol as P

        link = self.held.robot.link
        if link is None:
            return
        try:
            alarm = link.status().alarm
        except Exception:
            return  # the run's own start finds out and reports it
        if alarm != P.AlarmCode.NONE:
            raise RequestError(409, f"alarm {alarm.name} is latched: nothing moves until it is cleared "
                                    "(press Clear alarm at the top of the page; POST /api/alarm/clear)")

    def _run(self, run_id: int, review: bool) -> None:
        from ..run.log import SolveLog

        bus = EventBus()
        bus.subscribe(lambda event: self._on_event(run_id, event))
        bus.subscribe(SolveLog(self.config))  # a panel's run is logged like any run
        options = RunOptions(sim=self.held.simulated, realtime=self.held.simulated, robot_kept=True,
                             port=None if self.held.simulated else self.held.link.url)
        robot = self.held.lend(self._review if review else None)

        def tell_maker(text: str) -> None:  # the page's messages (replayed to a page opened mid-run)
            self.send({"type": "Message", "run": run_id, "text": text})

        report = None
        events: list[ev.Event] = []
        bus.subscribe(events.append)
        try:
            report = self._run_on(robot, options, tell_maker, bus)
        except KeyboardInterrupt:  # a Stop that landed as the run was ending: its events still tell it
            from ..run.report import RunReport

            report = RunReport.replay(events) if events else None
        except Exception as exc:  # a failure outside the run's own handling: said, never a silent end
            tell_maker(f"the run failed: {type(exc).__name__}: {exc}")
        finally:
            with self.lock:
                self.run_state, self.stage, self.review = "idle", None, None
                if report is not None:
                    self.last_report, self.last_text = report, report.format()
            self._sync_held()
            self.refresh_board()
        if report is not None:
            self.send({"type": "Report", "run": run_id, "report": report.to_json(),
                       "result_line": report.result_line(), "text": self.last_text})
        self.changed()

    def _sync_held(self) -> None:
        """The virtual cube follows the firmware (simulation); one it cannot follow is said in the state."""
        from ..sim.virtual_robot import MechanicalError

        try:
            self.held.sync()
        except MechanicalError as exc:
            self.jammed = f"{VIRTUAL_CUBE_STUCK} ({exc}): press New cube"

    def _run_on(self, robot, options: RunOptions, tell_maker, bus: EventBus) -> RunReport:
        if self.held.simulated:
            from ..run.simulated import run_simulated_on

            sim = self.held.robot
            started = ev.RunStarted(time=dt.datetime.now().isoformat(timespec="seconds"), mode="simulated",
                                    true_state=sim.virtual.facelets())  # type: ignore[union-attr]
            return run_simulated_on(self.config, robot, started, options, tell_maker, bus, sim=sim)
        from ..run.hardware import run_hardware_on

        return run_hardware_on(self.config, robot, options, tell_maker, bus)

    def _on_event(self, run_id: int, event: ev.Event) -> None:
        if isinstance(event, ev.StageStarted):
            self.stage = event.stage
        elif isinstance(event, ev.ViewsDecoded):
            self.cube = {"facelets": event.facelets, "confidence": event.confidence,
                         "seen": [i in event.seen for i in range(len(event.facelets))],
                         "unread": list(event.unread), "colours_rgb": event.colours_rgb, "corrected": None}
            self._overlay_read(event.view_colours)
        elif isinstance(event, ev.CubeCorrected):
            self.cube = self.cube | {"facelets": event.facelets, "corrected": list(event.stickers)}
        elif isinstance(event, ev.FrameTaken):
            self.live_overlay(event.view)
        elif isinstance(event, ev.RunEnded):  # the run is over: a Stop now has nothing left to stop
            with self.lock:
                self._interruptible = False
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(threading.get_ident()), None)
        elif isinstance(event, ev.RunWarning) and event.text.startswith(VIRTUAL_CUBE_STUCK):
            # run/simulated.py's own sync at the run's end found the virtual cube stuck (a stop mid-turn);
            # the session's sync after the run then finds nothing new, so this is where it is learnt.
            self.jammed = f"{event.text}: press New cube"
        self.send(event_json(event, run_id))
        if isinstance(event, (ev.StageStarted, ev.ViewsDecoded, ev.CubeCorrected)):
            self.changed()

    def live_overlay(self, view: str, colours: list | None = None) -> None:
        """The live view outlines the stickers of the view the camera now looks at (with the colour read
        in each, once the scan is decoded)."""
        from .live import regions_overlay

        regions = self.held.robot.regions
        self.overlay_view = view
        if regions is not None and self.live is not None:
            try:
                quads = regions_overlay(regions, view.split(": ")[-1])
                if colours is not None:  # [r, g, b] per region -> BGR; None where another view read it
                    colours = [None if c is None else (c[2], c[1], c[0]) for c in colours]
                    colours += [None] * (len(quads) - len(colours))
                self.live.set_overlay(quads, colours, label=view)
            except Exception:  # a view the regions do not know: no outline rather than a failed run
                pass

    def _overlay_read(self, view_colours: dict) -> None:
        """After a decoded scan: the colours read in the view the camera still looks at (its last)."""
        view = self.overlay_view
        if view is not None and view.split(": ")[-1] in view_colours:
            self.live_overlay(view, view_colours[view.split(": ")[-1]])

    # -- review: a person confirms or corrects the cube read ----------------------------------

    def _review(self, facelets: str, confidence: float) -> str:
        """On the run's thread: wait for the page's confirmation; the cube it confirms (maybe corrected)."""
        review = self.review = Review(facelets, confidence)
        self.stage = "review"  # the run waits for the person, not for the robot
        self.changed()
        if not review.done.wait(REVIEW_TIMEOUT_S):
            raise TimeoutError(f"nobody confirmed the cube in {REVIEW_TIMEOUT_S:.0f} s (nothing turned)")
        self.review = None
        if review.answer is None:
            raise StopPressed  # cancelled: the run stops as at a Stop before anything turned
        return review.answer

    def confirm_cube(self, client: str, facelets: str) -> None:
        """The person's confirmation of the cube to solve: legal (checked as `solve` checks), or refused
        with the sticker named and the run still waiting."""
        from .cube_check import check_facelets

        with self.lock:
            self.require_control(client)
            review = self.review
            if review is None:
                raise RequestError(409, "no run is waiting for a cube to be confirmed", "facelets")
            check_facelets(facelets)
            review.answer = facelets
            review.done.set()

    # -- stopping ---------------------------------------------------------------------------

    def stop(self, client: str) -> None:
        """As Ctrl-C in `cube-robot run` (any client that controls the robot)."""
        with self.lock:
            self.require_control(client)
            thread = self.run_thread
            if self.run_state == "idle" or thread is None or not thread.is_alive():
                raise RequestError(409, "no run is going: nothing to stop")
            if not self._interruptible:
                raise RequestError(409, f"run {self.run_id} is already stopping or ending: wait for its report")
            self.run_state, self._interruptible = "stopping", False
            review = self.review
            if review is not None:
                review.done.set()  # a run waiting for the person: cancelled
            else:
                self._interrupt(thread)  # under the lock: never after the run's RunEnded (which takes it)
                link = self.held.robot.link
                if link is not None:
                    link.connection.wake()  # a run waiting for the board's next line hears the stop now
        self.changed()

    @staticmethod
    def _interrupt(thread: threading.Thread) -> None:
        """Raise KeyboardInterrupt in the run's thread (what Ctrl-C raises in the terminal's run)."""
        if thread.ident is not None:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(StopPressed))

    def emergency_stop(self) -> dict:
        """The stop byte, now, from the caller's thread: no lock, no queue (any client may)."""
        link = self.held.robot.link
        if link is None:
            raise RequestError(409, "the robot is not connected: switch its power off")
        link.estop()
        self.send({"type": "EmergencyStop", "run": self.run_id or None})
        if self.run_state == "idle":  # the board's alarm, read off this thread (the caller answers at once)
            threading.Thread(target=self._refresh_and_say, name="panel board read", daemon=True).start()
        return {"sent": True, "run": self.run_id or None, "running": self.run_state != "idle"}

    def _refresh_and_say(self) -> None:
        self.refresh_board()
        self.changed()

    def clear_alarm(self, client: str) -> dict:
        with self.lock:
            self.require_control(client)
            if self.run_state != "idle":
                raise RequestError(409, "a run is going: its stop clears nothing; wait for its report")
            link = self.held.robot.link
            if link is None:
                raise RequestError(409, "the robot is not connected")
            link.clear_alarm()
            self.refresh_board()
        self.changed()
        return {"ok": True, "board": self.board}

    # -- bring-up and the simulated cube --------------------------------------------------------

    def bringup(self, client: str, action: str, body: dict) -> dict:
        from .bringup_api import perform

        with self.lock:
            self.require_control(client)
            if self.run_state != "idle":
                raise RequestError(409, f"run {self.run_id} is going: bring-up waits until it ends")
            if self.jammed:  # the simulation cannot move a cube it left between positions
                raise RequestError(409, self.jammed)
            try:
                result = perform(action, body, self.held)
                if action == "save-trims" and result.get("config"):  # the saved widths are the config's now
                    from .. import config as config_module

                    self.config = self.held.config = config_module.load(result["config"])
            finally:
                self._sync_held()
                self.refresh_board()
            if self.jammed:  # what the firmware did left the virtual cube between positions: said with the answer
                result["messages"] = list(result.get("messages", [])) + [self.jammed]
                result["jammed"] = self.jammed
        self.changed()
        return result

    def new_cube(self, client: str, scramble: str | None, seed: int | None) -> dict:
        """Simulation only: a new simulated robot with a freshly scrambled cube (the emulated board starts
        anew, as after a power cycle)."""
        import numpy as np

        from .. import cube
        from .held import HeldRobot

        with self.lock:
            self.require_control(client)
            if not self.held.simulated:
                raise RequestError(409, "a real robot's cube is put in by hand (`load` in bring-up)")
            if self.run_state != "idle":
                raise RequestError(409, f"run {self.run_id} is going")
            try:
                state = (cube.SOLVED.apply(cube.parse_moves(scramble)) if scramble
                         else cube.random_placed_state(np.random.default_rng(seed)))
            except cube.MoveError as exc:
                raise RequestError(400, str(exc), "scramble") from None
            if self.live is not None:
                self.live.detach()
            self.held.close()
            self.held = HeldRobot.simulated_robot(self.config, state, firmware=self.held.firmware,
                                                  seed=0 if seed is None else seed, light=self.held.light)
            self.held.start()
            if self.live is not None and self.held.camera is not None:
                self.live.attach(self.held.camera.grabber, simulated=self.held.simulated)
            self.cube = {"facelets": None, "confidence": None, "seen": None}
            self.jammed = None
            self.refresh_board()
        self.changed()
        return {"ok": True, "true_state": state.to_facelets(), "backend": self.held.backend}

    # -- the doctor ---------------------------------------------------------------------------

    def doctor(self) -> dict:
        """The pre-flight checks that only read, on the link and camera the panel holds (a GET moves nothing)."""
        from .doctor_api import DoctorContext, checks

        with self.lock:
            if self.run_state != "idle":
                raise RequestError(409, f"run {self.run_id} is going: the checks read the board, which the run "
                                        "is using; ask again when it has ended")
            if self.jammed:  # the simulated camera cannot draw a cube left between positions
                raise RequestError(409, f"{self.jammed}, then run the checks")
            held = self.held
            context = DoctorContext(link=held.link, camera=held.camera, simulated=held.simulated,
                                    config_arg=str(self.config.path) if self.config.path else None)
            return {"simulated": held.simulated, "rows": checks(self.config, context)}
