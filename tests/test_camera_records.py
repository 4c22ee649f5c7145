"""Two cameras at one moment: each view's frame times reach the waterfall."""

import threading

from robot.plan import Grip
from robot.scan_sequence import ScanSequence, ScanView
from robot.vision.cameras import CameraSet, capture_moment, capture_record


class StampingCamera:
    """Frames stamped with the camera's name; both captures wait for each other (truly at once)."""

    def __init__(self, name, barrier):
        self.name, self.barrier, self.last_capture = name, barrier, None
        self.timing = f"{name} timing"

    def capture(self, view):
        self.barrier.wait(timeout=5)
        self.last_capture = {"camera": self.name, "view": view}
        return f"{self.name}:{view}"


def test_each_view_of_a_moment_keeps_its_own_frame_record():
    barrier = threading.Barrier(2)
    sequence = ScanSequence((ScanView("top", (Grip("RL"),), ("U1",)), ScanView("bottom", (), ("D1",), "second")))
    cameras = CameraSet({"main": StampingCamera("main", barrier), "second": StampingCamera("second", barrier)},
                        sequence)
    assert capture_moment(cameras, sequence.views) == ["main:top", "second:bottom"]
    assert capture_record(cameras, "top") == {"camera": "main", "view": "top"}
    assert capture_record(cameras, "bottom") == {"camera": "second", "view": "bottom"}
    assert cameras.timing == "main timing"  # the waterfall's frame-wait floors (config `camera`)
    single = StampingCamera("only", threading.Barrier(1))
    single.capture("top")
    assert capture_record(single, "top") == {"camera": "only", "view": "top"}
