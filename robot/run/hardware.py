"""A run on the real robot (robot/run/robot.py HardwareRobot), and the report of a run that no robot
answered.  The simulated robot's counterpart is robot/run/simulated.py."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Callable

from ..checks import RobotNotReady
from . import events as ev
from ..config_types import Config
from .events import EventBus
from .options import RunOptions
from .pipeline import CUBE_NOT_STARTED, run_robot
from .report import NOT_STARTED, RunReport
from .robot import HardwareRobot, PortNotReady, Robot

if TYPE_CHECKING:
    from ..link.driver import Link


def not_started_report(exc: RobotNotReady, bus: EventBus) -> RunReport:
    """The report of a run that no robot answered (choose_robot): NOT STARTED, nothing moved; its
    events are published on `bus` (the last is RunEnded)."""
    started = ev.RunStarted(time=dt.datetime.now().isoformat(timespec="seconds"), mode="hardware")
    report = RunReport.start(started).subscribe(bus)
    port = exc if isinstance(exc, PortNotReady) else None
    bus.publish(started)
    bus.publish(ev.RobotNamed(port.answered if port else None))
    bus.publish(ev.Stopped(errors=(port.problem if port else str(exc),), advice=port.fix if port else None,
                           cube_state=CUBE_NOT_STARTED, outcome=NOT_STARTED))
    bus.publish(ev.RunEnded(report.result(), report.exit_status()))
    return report


def run_hardware(config: Config, options: RunOptions, tell_maker: Callable[[str], None], bus: EventBus | None = None,
                 probed: Link | None = None) -> RunReport:
    """The real robot: serial link to the board, the configured camera and calibrated regions.
    probed: the robot's Link as choose_robot left it open (else the port is opened here).
    The run's events are published on `bus` (the last is RunEnded); returns its report."""
    robot = HardwareRobot(config, options.port, tell_maker, arms_straight=options.arms_straight, resume=options.resume,
                          probed=probed)
    return run_hardware_on(config, robot, options, tell_maker, bus)


def run_hardware_on(config: Config, robot: Robot, options: RunOptions, tell_maker: Callable[[str], None],
                    bus: EventBus | None = None) -> RunReport:
    """One run on `robot`, a HardwareRobot (or one a panel holds and lends: robot/panel/held.py)."""
    bus = bus if bus is not None else EventBus()
    started = ev.RunStarted(time=dt.datetime.now().isoformat(timespec="seconds"), mode="hardware")
    report = RunReport.start(started).subscribe(bus)
    bus.publish(started)

    def finish():
        # SOLVED on a real robot only when the rescan after the solve saw a solved cube (VERIFIED);
        # without it the outcome is EXECUTED (NOT VERIFIED), with the reason in report.verify.
        bus.publish(ev.Result(solved=bool(report.execute_ok) and report.verified_solved is True))

    run_robot(config, robot, options, tell_maker, bus, finish)
    bus.publish(ev.RunEnded(report.result(), report.exit_status()))
    return report
