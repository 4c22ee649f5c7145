"""The serial link to the firmware (docs/protocol.md).

protocol.py  constants, codes, framing, command builders, reply parsing (the one Python source)
driver.py    Link: handshake, flow control, exactly-once streaming of plans, resume
ports.py     open a port / URL, list ports, probe what answers, find the robot
errors.py    LinkError hierarchy
motion.py    action durations from the `motion` settings
"""
