"""The `cube-robot calibrate` commands: applications that drive the robot (or the emulated one, with
--sim) to measure what config.yaml and calibration/ hold.

colours.py  `calibrate colours`: sticker regions and colours, with the robot presenting each view
timing.py   `calibrate timing`: the robot's action durations (robot.timing), --save them
overlap.py  `calibrate overlap`: where the jaws stop touching, first touch and clear a turning layer (motion.jaw_*)
The group itself is made in robot/cli.py (CALIBRATE_MODULES).
"""
