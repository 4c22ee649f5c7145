"""Bringing a new robot up: jog, grip, motors, home, load, release, tune grippers.

  connection.py ConnectedRobot: a connected robot for one command, real (serial port) or emulated (--sim:
                the firmware in simavr, or the mock), and stop_on_interrupt (Ctrl-C sends `!` first)
  tune.py       `tune grippers`: per-gripper pulse widths, live, saved into config.yaml line by line
  commands.py   the command line
What the commands do on the link (drivers, one arm, grippers, homing, load/release) is in
robot/arms/, with the run's pre-flight check of the arms.

Opening a real Uno's port resets it (DTR): every command starts with the drivers off, the arms'
positions unknown and the grippers never commanded, so each command switches on what it needs and
says so.
"""
