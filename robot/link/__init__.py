"""The serial link to the firmware (docs/protocol.md).

protocol.py  constants, codes, framing, command builders, reply parsing (the one Python source)
driver.py    Link: handshake, flow control, exactly-once streaming of plans, resume
ports.py     open a port / URL, list ports, probe what answers, find the robot
errors.py    LinkError hierarchy
motion.py    action durations from the `motion` settings (and robot.timing derived from them)
timing_calibration.py  `cube-robot calibrate timing`: measure robot.timing, --save it
commands.py  the `link` commands;  doctor_checks.py  the link's doctor checks
"""
