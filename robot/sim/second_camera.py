"""The simulated robot's second camera: scan views with `camera: second` are rendered
from scan.second_camera's pose (below and behind the cube by default), the others from camera.pose.
"""

from __future__ import annotations

from dataclasses import replace

from ..vision.camera_geometry import scan_regions


def add_second_camera(robot, sequence) -> None:
    """Give `robot` (a started SimulatedRobot) a CameraSet of its camera and a second one, and the
    regions of each view from the pose of the camera that takes it."""
    from ..scan_sequence import ScanSequence
    from ..vision.cameras import CameraSet
    from ..vision.regions import Regions

    second = robot.config.scan.second_camera
    pose = replace(robot.pose, elevation_deg=second.elevation_deg, azimuth_deg=second.azimuth_deg)
    camera = type(robot.camera)(robot, pose, robot.seed + 1)  # a SimulatedCamera like the first
    quads = {}
    for name, view_pose in (("main", robot.pose), ("second", pose)):
        views = ScanSequence(tuple(v for v in sequence.views if v.camera == name))
        quads.update(scan_regions(view_pose, views).views)
    robot.regions = Regions(quads, (robot.pose.width, robot.pose.height), source="rendered")
    robot.second_camera = camera
    robot.camera = CameraSet({"main": robot.camera, "second": camera}, sequence)
