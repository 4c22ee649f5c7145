"""The robot a run drives: the interface, and the real robot on a serial port.

The simulated robot (robot/sim/robot_sim.py SimulatedRobot) offers the same
interface; its demonstration faults (bad light, a pulled cable, the e-stop)
live there, behind the two hooks below, so the pipeline never asks which
robot it has.
"""

from __future__ import annotations

import sys
import time
from typing import Protocol


class Robot(Protocol):
    """What the pipeline (robot/run/pipeline.py) needs of a robot."""

    backend: str  # what answers on the link, for the report
    link: object  # a connected robot.link.driver.Link (after start)
    camera: object  # a robot.vision.camera.Camera
    presenter: object  # present(view): puts the cube in a scan view (robot.vision.scan)
    regions: object  # sticker regions, or None: the Scanner loads scan.regions_file
    calibration: object  # a colour Calibration, None, or "auto" (scan.colours_file if it exists)

    def __enter__(self) -> "Robot": ...  # connect (the link closes on exit, which stops the robot)

    def __exit__(self, *exc) -> None: ...

    def wait_start(self, timeout_s: float) -> bool: ...  # True once start is pressed

    def before_scan(self, attempt: int | None) -> None: ...  # attempt 1, 2, ...; None: the check rescan

    def action_done(self, completed: int) -> None: ...  # plan actions completed so far


class HardwareRobot:
    """A robot on a serial port; a person presses its start button (or Enter here)."""

    calibration = "auto"  # the scan uses scan.colours_file when it exists

    def __init__(self, config, port=None):
        self.config, self.port = config, port
        self.link = self.camera = self.presenter = None
        self.regions = None  # the Scanner loads the calibrated regions (scan.regions_file)
        self.backend = "robot on " + (port or config["link"]["port"] or "an auto-detected port")

    def start(self) -> "HardwareRobot":
        from ..link.driver import Link
        from ..vision.camera import open_camera
        from ..vision.scan import LinkPresenter

        self.link = Link.open(self.config, port=self.port)
        identity = self.link.identity
        self.backend = f"{identity.firmware} {identity.version} on {self.link.url}"
        self.camera = open_camera(self.config)
        self.presenter = LinkPresenter(self.link)
        return self

    def close(self) -> None:
        if self.link is not None:
            self.link.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    def wait_start(self, timeout_s: float) -> bool:
        """The robot's start button, or Enter in the terminal."""
        import threading

        entered = threading.Event()
        if sys.stdin is not None and sys.stdin.isatty():
            threading.Thread(target=lambda: (sys.stdin.readline(), entered.set()), daemon=True).start()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if entered.is_set() or self.link.wait_button(timeout_s=0.2):
                return True
        return False

    def before_scan(self, attempt: int | None) -> None:
        pass  # a real camera is left as it is

    def action_done(self, completed: int) -> None:
        pass


def robot_attached(config, port=None) -> bool:
    """True when the given, configured or a detectable port answers as our firmware."""
    from ..link import ports
    from ..link.driver import LinkSettings

    settings = LinkSettings.from_config(config)
    try:
        if port or settings.port:
            return ports.probe(port or settings.port, settings).ok
        ports.find_robot(settings)
        return True
    except Exception:  # no port, or nothing of ours answers: that is the question asked
        return False


def run_hardware(config, options, say):
    """The real robot: serial link to the board, the configured camera and calibrated regions."""
    import datetime as dt

    from .pipeline import run_robot
    from .report import RunReport

    report = RunReport(time=dt.datetime.now().isoformat(timespec="seconds"), mode="hardware")
    robot = HardwareRobot(config, options.port)

    def finish():
        # SOLVED on a real robot only when the check rescan did not see otherwise.
        report.solved = bool(report.execute_ok) and report.verified_solved is not False

    return run_robot(config, robot, options, say, report, finish)
