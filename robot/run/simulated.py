"""A run on the simulated robot (robot/sim/robot_sim.py): the real firmware in simavr
when the AVR toolchain is installed, else the Python mock firmware; the report says which.

SOLVED here means the virtual cube, moved only by what the firmware did, ends solved.
"""

from __future__ import annotations

import datetime as dt

from . import events as ev
from ..config_types import Config
from .events import EventBus
from .options import RunOptions
from .pipeline import run_robot
from .report import RunReport, speed_words


# Said when the virtual cube was left between positions (a stop mid-turn) by a robot that outlives the run.
VIRTUAL_CUBE_STUCK = "SIMULATED: the virtual cube cannot go on from here"


def run_simulated(config: Config, options: RunOptions, tell_maker, bus: EventBus | None = None) -> RunReport:
    """The run on the simulated robot; its events are published on `bus` (the last is RunEnded)."""
    import numpy as np

    from .. import cube
    from ..sim.robot_sim import SimulatedRobot

    bus = bus if bus is not None else EventBus()
    options = options.replace(sim=True)  # its words are about the virtual robot (e.g. the advice after a stop)
    rng = np.random.default_rng(options.seed)
    if options.scramble:
        state = cube.SOLVED.apply(cube.parse_moves(options.scramble))
    else:
        state = cube.random_placed_state(rng)
    started = ev.RunStarted(time=dt.datetime.now().isoformat(timespec="seconds"), mode="simulated",
                            scramble=options.scramble or None, true_state=state.to_facelets())
    robot = SimulatedRobot(config, state, firmware=options.firmware, realtime=options.realtime,
                           fault_rate=options.fault_rate, seed=int(rng.integers(1 << 30)),
                           bad_scan=options.bad_scan, disconnect_at=options.disconnect_at,
                           estop_at=options.estop_at, keep_power=options.keep_power, light=options.light)
    return run_simulated_on(config, robot, started, options, tell_maker, bus)


def run_simulated_on(config: Config, robot, started: ev.RunStarted, options: RunOptions, tell_maker,
                     bus: EventBus, sim=None) -> RunReport:
    """One run on `robot`, a SimulatedRobot, or the robot a panel lends for the run (robot/panel/held.py)
    with `sim`, the SimulatedRobot behind it, whose virtual cube says the truth.  `started` says what cube
    was put in.  Its events are published on `bus` (the last is RunEnded)."""
    sim = robot if sim is None else sim
    report = RunReport.start(started).subscribe(bus)
    bus.publish(started)
    bus.publish(ev.RobotNamed(robot.backend))
    tell_maker(f"Simulated robot: {robot.backend}.")

    def finish():
        sim.sync()
        bus.publish(ev.Result(solved=bool(report.execute_ok) and sim.virtual.is_solved(),
                              final_state=sim.virtual.facelets(), turned_quarters=sim.virtual.turned_quarters))

    run_robot(config, robot, options, tell_maker, bus, finish)
    if sim is not robot:  # a lent robot is not closed by the run: the virtual cube as the firmware left it
        from ..sim.virtual_robot import MechanicalError

        try:
            sim.sync()
        except MechanicalError as exc:  # e.g. a stop mid-turn: the virtual cube cannot be left between positions
            bus.publish(ev.RunWarning(f"{VIRTUAL_CUBE_STUCK}: {exc}; put a new "
                                      "cube in to go on"))
    jammed = sim.jammed  # the first jam's words (None: none)
    if report.outcome is not None and report.execute_ok and report.cube_state_after_stop and not jammed:
        # A Ctrl-C after the whole plan ran (in the check rescan): the simulation knows the truth, say it
        # (closing the robot synced the virtual cube with what the firmware did; after a jam it does not).
        solved = "solved" if sim.virtual.is_solved() else "NOT solved"
        bus.publish(ev.Stopped(cube_state=f"{report.cube_state_after_stop}; SIMULATED: the virtual cube is {solved}"))
    measured = sim.measured_speed()  # board time / host wall time over the run (None: it stopped first)
    board_ms = wall_ms = speedup = timing_note = None
    if measured is not None and measured[1] > 0:
        board_ms, wall_ms = round(measured[0], 1), round(measured[1], 1)
        speedup = round(measured[0] / measured[1], 2)
    if not options.realtime:
        ran = (f"ran {speed_words(speedup)} (measured: {board_ms / 1000:.1f} s of board "
               f"time in {wall_ms / 1000:.1f} s)" if speedup and board_ms is not None and wall_ms is not None
               else "was sped up (not measured)")
        timing_note = f"SIMULATED and sped up: the simulation {ran}; --realtime predicts the real robot's times"
    faults = sim.serial_fault_counts() if sim.proxy is not None else (None, None)
    # After a jam the virtual cube holds the turns as if they went through: its facelets would claim a state.
    virtual_cube = sim.virtual.facelets() if not jammed else (
        "NOT KNOWN: the virtual robot jammed (see the error); its cube's facelets are not the truth after that")
    bus.publish(ev.SimulationMeasured(virtual_cube=virtual_cube, board_ms=board_ms, wall_ms=wall_ms,
                                      speedup=speedup, timing_note=timing_note, serial_faults=faults[0],
                                      faults_made_estop_byte=faults[1], light=sim.light_note))
    bus.publish(ev.RunEnded(report.result(), report.exit_status()))
    return report
