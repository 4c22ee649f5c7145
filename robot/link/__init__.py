"""The serial link to the firmware (docs/protocol.md).

protocol.py  constants, codes, framing, command builders, reply parsing (the one Python source)
driver.py    Link: immediate commands, exactly-once streaming of plans, resume (imports Link, LinkSettings)
handshake.py Connection: port, reader, acknowledged line window, the handshake (used by ports.probe)
noise_stops.py NoiseStops: the rule for a stop byte made by line noise (a Link holds one, as its Connection)
unseen_reset.py a reset whose start-up line was lost: how a stream finds it and what its stop may claim
reader.py    the reader thread: bytes -> parsed lines, events for the application
stream.py    pure bookkeeping: the line window (flow control, resends) and the stream's progress
ports.py     open a port / URL, list ports, probe what answers, find the robot
errors.py    LinkError hierarchy
commands.py  the `link` commands;  doctor_checks.py  the link's doctor checks
"""
