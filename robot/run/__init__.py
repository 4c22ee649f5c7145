"""The run: the whole robot, start button to solved cube, and its log.

    wait for start -> scan (retry doubtful scans) -> solve -> execute -> check -> report

options.py    RunOptions: what `cube-robot run` was asked (not argparse's Namespace)
robot.py      the Robot interface; HardwareRobot (serial link + camera); run_hardware
simulated.py  run_simulated: the same pipeline on robot/sim/robot_sim.py SimulatedRobot
pipeline.py   Pipeline: the stages; run_robot: any failure stops the robot and is reported
report.py     RunReport (dataclass) and its text form
log.py        the solve log (run.data_dir/solve-log.jsonl) and the `history` summary
commands.py   `cube-robot run` and `cube-robot history`
"""
