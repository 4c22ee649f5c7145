"""A run on the simulated robot (robot/sim/robot_sim.py): the real firmware in simavr
when the AVR toolchain is installed, else the Python mock firmware; the report says which.

SOLVED here means the virtual cube, moved only by what the firmware did, ends solved.
"""

from __future__ import annotations

import datetime as dt

from .options import RunOptions
from .pipeline import run_robot
from .report import RunReport, speed_words


def run_simulated(config, options: RunOptions, say) -> RunReport:
    import numpy as np

    from .. import cube
    from ..sim.robot_sim import SimulatedRobot

    rng = np.random.default_rng(options.seed)
    if options.scramble:
        state = cube.SOLVED.apply(cube.parse_moves(options.scramble))
    else:
        state = cube.random_placed_state(rng)
    report = RunReport(time=dt.datetime.now().isoformat(timespec="seconds"), mode="simulated",
                       scramble=options.scramble or None, true_state=state.to_facelets())
    robot = SimulatedRobot(config, state, firmware=options.firmware, realtime=options.realtime,
                           fault_rate=options.fault_rate, seed=int(rng.integers(1 << 30)),
                           bad_scan=options.bad_scan, disconnect_at=options.disconnect_at,
                           estop_at=options.estop_at, keep_power=options.keep_power)
    report.firmware = robot.backend
    say(f"Simulated robot: {robot.backend}.")

    def finish():
        robot.sync()
        report.solved = bool(report.execute_ok) and robot.virtual.is_solved()
        report.final_state = robot.virtual.facelets()
        report.turned_quarters = robot.virtual.turned_quarters

    run_robot(config, robot, options, say, report, finish)
    measured = robot.measured_speed()  # board time / host wall time over the run (None: it stopped first)
    if measured is not None and measured[1] > 0:
        report.sim_board_ms, report.sim_wall_ms = round(measured[0], 1), round(measured[1], 1)
        report.sim_speedup = round(measured[0] / measured[1], 2)
    if not options.realtime:
        ran = (f"ran {speed_words(report.sim_speedup)} (measured: {report.sim_board_ms / 1000:.1f} s of board "
               f"time in {report.sim_wall_ms / 1000:.1f} s)" if report.sim_speedup else "was sped up (not measured)")
        report.timing_note = f"SIMULATED and sped up: the simulation {ran}; --realtime predicts the real robot's times"
    report.virtual_cube = robot.virtual.facelets()
    if robot.proxy is not None:
        report.serial_faults, report.faults_made_estop_byte = robot.serial_fault_counts()
    return report

