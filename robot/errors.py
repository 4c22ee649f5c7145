"""Errors any layer may raise and the run may catch without knowing which device raised them.

This module imports nothing, so the devices (robot/link, robot/vision), the virtual robot
(robot/sim) and the applications (robot/run, robot/bringup) can all use it.
"""

from __future__ import annotations


class DeviceError(RuntimeError):
    """A device the robot is made of failed (the board's emulator, ...); `advice` says what to do."""

    advice = "see the error above; 'cube-robot doctor' checks the whole setup"
    jam = False  # the cube jammed (a simulated robot's true jaws): not solved, its state not known
