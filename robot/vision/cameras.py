"""Several cameras as one: each scan view names its camera (scan.views[].camera).

    cameras = CameraSet({"main": camera, "second": other}, sequence)
    cameras.capture("bottom-back")   # the frame of that view, from the camera the view names

The scanner sees one camera; views taken at the same moment (ScanSequence.moments) are captured
together by `capture_moment` (one thread per camera, so two cameras cost one frame time).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor


class CameraSet:
    def __init__(self, cameras: dict, sequence):
        missing = sorted(sequence.cameras - set(cameras))
        if missing:
            raise ValueError(f"scan views name camera(s) {', '.join(missing)} but the robot has "
                             f"{', '.join(sorted(cameras))}: set scan.second_camera.device")
        self.cameras = cameras
        self.camera_of = {view.name: view.camera for view in sequence.views}
        self.records: dict = {}  # view -> its frame's times (robot/run/waterfall.py), as camera.last_capture

    def open(self) -> "CameraSet":
        for camera in self.cameras.values():
            camera.open()
        return self

    def close(self) -> None:
        for camera in self.cameras.values():
            camera.close()

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()
        return False

    def capture(self, view: str, still_since: float | None = None):
        camera = self.cameras[self.camera_of[view]]
        image = capture_view(camera, view, still_since)
        self.records[view] = getattr(camera, "last_capture", None)  # views of one moment: one per thread
        return image

    @property
    def lighting(self):  # the simulated cameras' light (SimulatedRobot.before_scan sets it on all)
        return next(iter(self.cameras.values())).lighting

    @lighting.setter
    def lighting(self, value) -> None:
        for camera in self.cameras.values():
            camera.lighting = value

    @property
    def timing(self):  # the frame timing (config `camera`, shared by both cameras): the waterfall's floors
        return getattr(self.cameras.get("main", next(iter(self.cameras.values()))), "timing", None)

    def settings(self) -> dict:
        return {name: camera.settings() for name, camera in self.cameras.items()}


def capture_record(camera, view: str):
    """The times of `view`'s frame just captured (None when the camera does not pick frames by time)."""
    records = getattr(camera, "records", None)
    return records.get(view) if isinstance(records, dict) else getattr(camera, "last_capture", None)


def capture_view(camera, view: str, still_since: float | None = None):
    """camera.capture(view), telling a camera that picks frames by time since when the arms are
    still (robot/vision/grabber.py view_frames), when that is known."""
    return camera.capture(view) if still_since is None else camera.capture(view, still_since=still_since)


def capture_moment(camera, views, still_since: float | None = None) -> list:
    """The frames of views taken at one moment: at once when they are several (one per camera)."""
    if len(views) == 1:
        return [capture_view(camera, views[0].name, still_since)]
    with ThreadPoolExecutor(max_workers=len(views), thread_name_prefix="camera") as pool:
        return list(pool.map(lambda view: capture_view(camera, view.name, still_since), views))
