"""Bringing a new robot up (issue 10): jog, grip, motors, home, load, release, tune grippers.

  bench.py      Bench: a connected robot for one command, real (serial port) or emulated (--sim:
                the firmware in simavr, or the mock), and stop_on_interrupt (Ctrl-C sends `!` first)
  actions.py    what the commands do on the link (drivers, one arm, grippers, homing, load/release)
  tune.py       `tune grippers`: per-gripper pulse widths, live, saved into config.yaml line by line
  readiness.py  arms_ready() / prepare_arms(): the pre-flight a run can call (drivers on, arms known
                and straight: homed, or confirmed straight)
  commands.py   the command line

Opening a real Uno's port resets it (DTR): every command starts with the drivers off, the arms'
positions unknown and the grippers never commanded, so each command switches on what it needs and
says so.
"""
