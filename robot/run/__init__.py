"""The run: the whole robot, start button to solved cube, and its log.

    wait for start -> scan (retry doubtful scans) -> solve -> execute -> check -> report

options.py    RunOptions: what `cube-robot run` was asked (not argparse's Namespace)
robot.py      the Robot interface (a typing.Protocol); HardwareRobot (serial link + camera); choose_robot
hardware.py   run_hardware: the pipeline on a HardwareRobot; not_started_report
simulated.py  run_simulated: the same pipeline on robot/sim/robot_sim.py SimulatedRobot
pipeline.py   Pipeline: the stages; run_robot: any failure stops the robot and is reported
events.py     the run's typed events and their bus; the live progress line (a subscriber)
report.py     RunReport (dataclass, built from the events) and its text form
log.py        the solve log (run.data_dir/solve-log.jsonl, written from the events) and the `history` summary
commands.py   `cube-robot run` and `cube-robot history`
"""
