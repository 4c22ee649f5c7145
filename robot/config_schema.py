"""The schema of every setting in config.yaml: names, kinds, defaults (many read from the firmware's
defaults.h), bounds and checks.  robot/config.py loads and validates a file against it;
config.yaml documents every setting and tests/test_config.py checks the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from . import firmware_header

ARM_FACES = "URFDLB"


@dataclass
class Setting:
    """One leaf of the schema."""

    kind: Any  # int, float, bool, str, list, dict
    default: Any
    doc: str
    min: float | None = None
    max: float | None = None
    choices: tuple | None = None
    item: Any = None  # element type for list settings
    min_items: int = 0
    max_items: int | None = None
    check: Callable[[Any], str | None] | None = None  # returns an error text or None
    nullable: bool = False


def _check_pairs(pairs) -> str | None:
    if not pairs:
        return "needs at least one arm pair"
    seen: dict[str, str] = {}
    for name, faces in pairs.items():
        if not isinstance(faces, list) or not faces:
            return f"pair {name!r} must list the faces its arms grip, e.g. [R, L]"
        for face in faces:
            if face not in ARM_FACES:
                return f"pair {name!r}: {face!r} is not a face (use U R F D L B)"
            if face in seen:
                return f"face {face} is gripped by both pair {seen[face]!r} and pair {name!r}"
            seen[face] = name
    supported = firmware_header.ARM_PAIRS
    if {k: set(v) for k, v in pairs.items()} != {k: set(v) for k, v in supported.items()}:
        layout = ", ".join(f"{k}: [{', '.join(v)}]" for k, v in supported.items())
        return (f"the firmware supports only the four-arm layout {{{layout}}}; "
                "another layout needs firmware changes (command.cpp, motion.cpp) first")
    return None


def _check_angles(angles) -> str | None:
    bad = [a for a in angles if a not in (90, 180, -90, -180, 270, -270)]
    if bad:
        return f"angles must be quarter or half turns (90, 180, -90), got {bad}"
    return None


def _check_scan_views(views) -> str | None:
    # The check lives with the sequence model (pure cube arithmetic, no vision); imported when used.
    from .scan_sequence import sequence_problem

    return sequence_problem(views)

# The default 3x3x3 scan (bench/scan3.py prints how it was chosen and its arm time).
SCAN3_VIEWS: list = [
    {"name": "view1", "facelets": ["U1", "U3", "U5", "U7", "U9", "F1", "F3", "F4", "F6", "F7", "F9"],
     "ops": []},
    {"name": "view2", "facelets": ["U4", "U5", "U6", "U7", "U9", "F1", "F3", "F4", "F6", "F7", "F9"],
     "ops": [{"op": "open", "arms": ["R", "L"]}]},
    {"name": "view3", "facelets": ["U2", "U4", "U5", "U6", "U7", "U8", "U9", "F1", "F2", "F3"],
     "ops": [{"op": "tilt", "arms": {"F": -90, "B": 90}}]},
    {"name": "view4", "facelets": ["U1", "U2", "U3", "U5", "U7", "U8", "U9", "F1", "F2", "F3"],
     "ops": [{"op": "close", "arms": ["R", "L"]}]},
    {"name": "view5", "facelets": ["U4", "U5", "U6", "U7", "U9", "F1", "F3", "F4", "F6", "F7", "F9"],
     "ops": [{"op": "open", "arms": ["R", "L"]}, {"op": "tilt", "arms": {"F": -90, "B": 90}}]},
    {"name": "view6", "facelets": ["U1", "U3", "U5", "U7", "U9", "F1", "F3", "F4", "F6", "F7", "F9"],
     "ops": [{"op": "close", "arms": ["R", "L"]}]},
    {"name": "view7", "facelets": ["U2", "U4", "U5", "U6", "U7", "U8", "U9", "F1", "F2", "F3"],
     "ops": [{"op": "open", "arms": ["R", "L"]}, {"op": "tilt", "arms": {"F": -90, "B": 90}}]},
    {"name": "view8", "facelets": ["U1", "U2", "U3", "U5", "U7", "U8", "U9", "F1", "F2", "F3"],
     "ops": [{"op": "close", "arms": ["R", "L"]}]},
    {"name": "view9", "facelets": ["U1", "U2", "U3", "U5", "U7", "U8", "U9", "F1", "F2", "F3", "F4", "F5", "F6"],
     "ops": [{"op": "open", "arms": ["F", "B"]}]},
    {"name": "view10", "facelets": ["U1", "U2", "U3", "U4", "U5", "U6", "U7", "U8", "U9", "F1", "F2", "F3", "F5"],
     "ops": [{"op": "tilt", "arms": {"R": -90, "L": 90}}]},
    {"name": "view11", "facelets": ["U1", "U3", "U4", "U5", "U6", "U7", "U9", "F1", "F3", "F4", "F6"],
     "ops": [{"op": "close", "arms": ["F", "B"]}, {"op": "open", "arms": ["R", "L"]},
             {"op": "tilt", "arms": {"F": -90, "B": 90}}]},
    {"name": "view12", "facelets": ["U1", "U2", "U3", "U7", "U9", "F1", "F3", "F4", "F6", "F7", "F9"],
     "ops": [{"op": "close", "arms": ["R", "L"]}, {"op": "open", "arms": ["F", "B"]},
             {"op": "tilt", "arms": {"R": 90, "L": -90}}]},
]
SCAN3_FINISH: list = [{"op": "close", "arms": ["F", "B"]}]


def _check_scan3_views(views) -> str | None:
    # The check lives with the 3x3x3 sequence model (robot/scan_sequence3.py); imported when used.
    from .scan_sequence3 import sequence_problem3

    return sequence_problem3(views)


def _check_pairs3(pairs) -> str | None:
    """robot3.pairs: two pairs, each gripping two opposite faces, on different axes."""
    if len(pairs) != 2:
        return f"needs exactly two arm pairs, e.g. {{RL: [R, L], FB: [F, B]}}; got {len(pairs)}"
    axes: dict[int, str] = {}
    for name, faces in pairs.items():
        if not isinstance(faces, list) or len(faces) != 2 or any(f not in ARM_FACES for f in faces):
            return f"pair {name!r} must list the two opposite faces its arms grip, e.g. [R, L]; got {faces!r}"
        first, second = (ARM_FACES.index(f) for f in faces)
        if (first + 3) % 6 != second:
            return f"pair {name!r}: {faces[0]} and {faces[1]} are not opposite faces"
        if first % 3 in axes:
            return f"pairs {axes[first % 3]!r} and {name!r} grip the same axis; the two pairs must be at right angles"
        axes[first % 3] = name
    return None


def _check_tilt_angles(angles) -> str | None:
    bad = [a for a in angles if a not in (90, -90, 270, -270, 180, -180)]
    return f"a tilt turns the cube by 90 (or 180) degrees: 90, -90 or 180, got {bad}" if bad else None


_FW = firmware_header.limits()  # the firmware's defaults and bounds (defaults.h)


def _arm_settings(arm: str) -> dict:
    """motion.arms.<arm>: direction, zero offset, and this gripper's widths (null: the pair-wide ones)."""
    return {
        "invert": Setting(bool, False, f"arm {arm} turns the wrong way: invert its direction (instead of "
                                       "swapping the motor's coil wires)"),
        "zero_offset_steps": Setting(
            int, 0, f"arm {arm}: steps from where its homing sensor switches (turning positively) to its zero",
            min=-_FW["ZERO_OFFSET_MAX"], max=_FW["ZERO_OFFSET_MAX"],
        ),
        "servo_open_us": Setting(int, None, f"gripper {arm}'s pulse width when open; null = motion.servo_open_us",
                                 min=_FW["SERVO_US_MIN"], max=_FW["SERVO_US_MAX"], nullable=True),
        "servo_closed_us": Setting(int, None, f"gripper {arm}'s pulse width when closed; null = "
                                   "motion.servo_closed_us", min=_FW["SERVO_US_MIN"], max=_FW["SERVO_US_MAX"],
                                   nullable=True),
    }


# Every setting.  Nested dicts are sections; Setting objects are leaves.
SCHEMA: dict = {
    "robot": {
        "pairs": Setting(
            dict, {"RL": ["R", "L"], "FB": ["F", "B"]},
            "arm pairs: name -> faces gripped by that pair's arms; exactly one pair holds at a time",
            check=_check_pairs,
        ),
        "turn_angles": Setting(
            list, [90, 180, -90], "angles an arm may turn its layer by (clockwise-positive from outside)",
            item=int, min_items=1, check=_check_angles,
        ),
        "start_grip": Setting(
            str, "any", "which pair holds the cube at the start: a pair name or 'any' (robot picks)"
        ),
        "square_released_arms": Setting(
            bool, False, "turn a released pair's arms back square before the other pair turns (no two "
            "perpendicular arms a quarter round at once: they meet at the cube's edges); the solver charges it"
        ),
        # null = derived from the `motion` section (robot/motion.py: robot_timing);
        # a number (measured by `calibrate timing --save`) wins.
        "timing": {
            "quarter_turn_ms": Setting(int, None, "duration of a 90 degree arm turn; null = from motion",
                                       min=1, max=5000, nullable=True),
            "half_turn_ms": Setting(int, None, "duration of a 180 degree arm turn; null = from motion",
                                    min=1, max=5000, nullable=True),
            "regrip_ms": Setting(int, None, "duration of handing the cube to the other pair; null = from motion",
                                 min=1, max=5000, nullable=True),
        },
    },
    # The four-arm 3x3x3 robot (robot/plan3.py, docs/robot3.md): every arm closed by default.
    "robot3": {
        "pairs": Setting(dict, {"RL": ["R", "L"], "FB": ["F", "B"]},
                         "arm pairs: name -> the two opposite faces its arms grip", check=_check_pairs3),
        "tilt_angles": Setting(list, [90, -90], "angles a pair may turn the whole cube by (the other pair open)",
                               item=int, min_items=1, check=_check_tilt_angles),
        # No timing of its own: the same arms and firmware as robot.timing and `motion` (robot/plan3.py).
        "search_budget_s": Setting(float, 0.25, "run --puzzle 3x3x3: the robot-aware search's time budget, s "
                                   "(bench/e2e.py --puzzle 3x3x3 --budgets chose it)", min=0.05, max=30.0),
    },
    "tables": {
        "dir": Setting(str, "tables", "where solver tables are stored (relative to the project root)"),
    },
    "link": {
        # Bounds and defaults of the timeouts are host choices; docs/protocol.md says how they are used.
        "port": Setting(
            str, None, "serial port of the robot (e.g. /dev/ttyACM0, COM3, socket://127.0.0.1:5000); "
            "null = ask every serial port for the cube-robot firmware's identity", nullable=True,
        ),
        "baud": Setting(int, _FW["SERIAL_BAUD"], "serial speed; must equal the firmware's SERIAL_BAUD",
                        min=300, max=2000000),
        "ack_timeout_ms": Setting(
            int, 200, "no answer to a command line for this long -> resend it", min=5, max=10000,
        ),
        "silence_timeout_ms": Setting(
            int, 500, "nothing received for this long while work is outstanding -> send '?'; "
            "no answer within the same time again -> the board is reported silent", min=20, max=60000,
        ),
        "handshake_timeout_ms": Setting(
            int, 3000, "how long to wait for the firmware's identity after opening the port "
            "(an Uno's bootloader takes about 1.6 s after the open resets it)", min=50, max=30000,
        ),
        "max_resends": Setting(
            int, 10, "resends of one command line before the link gives up (3 times as many sends while "
            "the board answers with damaged lines)", min=1, max=1000,
        ),
        "reconnect_window_ms": Setting(
            int, 10000, "after a lost connection, how long to wait for the serial port to come back "
            "before the run stops with the cube state", min=0, max=600000,
        ),
    },
    "motion": {
        # Defaults and limits are the firmware's (firmware/cube_robot/defaults.h, read at import);
        # the host sends these with MOTION, SERVO and JAWS at every handshake.
        "steps_per_rev": Setting(
            int, _FW["DEFAULT_STEPS_PER_REV"], "stepper (micro)steps per arm revolution; a multiple of 4",
            min=_FW["STEPS_PER_REV_MIN"], max=_FW["STEPS_PER_REV_MAX"],
            check=lambda v: None if v % 4 == 0 else f"{v} is not a multiple of 4 (a quarter turn must be whole steps)",
        ),
        "max_speed_steps_per_s": Setting(int, _FW["DEFAULT_MAX_SPEED"], "top stepper speed",
                                         min=_FW["MAX_SPEED_MIN"], max=_FW["MAX_SPEED_MAX"]),
        "accel_steps_per_s2": Setting(
            int, _FW["DEFAULT_ACCEL"], "stepper acceleration (also the deceleration of an emergency stop)",
            min=_FW["ACCEL_MIN"], max=_FW["ACCEL_MAX"],
        ),
        "servo_open_us": Setting(int, _FW["DEFAULT_SERVO_OPEN_US"], "gripper servo pulse width when open",
                                 min=_FW["SERVO_US_MIN"], max=_FW["SERVO_US_MAX"]),
        "servo_closed_us": Setting(int, _FW["DEFAULT_SERVO_CLOSED_US"], "gripper servo pulse width when closed",
                                   min=_FW["SERVO_US_MIN"], max=_FW["SERVO_US_MAX"]),
        # The jaws' travel and clearances: the regrip's overlap (robot/regrip.py) is scheduled from these.
        "servo_speed_us_per_ms": Setting(
            float, _FW["DEFAULT_SERVO_SPEED"] / 10, "gripper servo speed, microseconds of pulse width per ms "
            "(the datasheet's, or measured); sent in tenths",
            min=_FW["SERVO_SPEED_MIN"] / 10, max=_FW["SERVO_SPEED_MAX"] / 10,
            check=lambda v: None if abs(v * 10 - round(v * 10)) < 1e-9 else
            f"{v:g} has more than one decimal (the firmware is told tenths of a us per ms)",
        ),
        "jaw_clear_pct": Setting(int, _FW["DEFAULT_JAW_CLEAR_PCT"], "% of the opening travel where the jaws stop "
                                 "touching the cube", min=_FW["JAW_PCT_MIN"], max=_FW["JAW_PCT_MAX"]),
        "jaw_contact_pct": Setting(int, _FW["DEFAULT_JAW_CONTACT_PCT"], "% of the closing travel where the jaws "
                                   "first touch the cube", min=_FW["JAW_PCT_MIN"], max=_FW["JAW_PCT_MAX"]),
        "jaw_open_gap_mm": Setting(int, _FW["DEFAULT_JAW_OPEN_GAP_MM"], "jaw to cube when fully open, mm",
                                   min=_FW["JAW_OPEN_GAP_MM_MIN"], max=_FW["JAW_OPEN_GAP_MM_MAX"]),
        "cube_mm": Setting(int, _FW["DEFAULT_CUBE_MM"], "the cube's edge, mm (how far a turning layer reaches)",
                           min=_FW["CUBE_MM_MIN"], max=_FW["CUBE_MM_MAX"]),
        # Bring-up: sent at every connect with ARM, GRIPPER and SETUP (docs/protocol.md).
        "idle_off_s": Setting(
            int, _FW["DEFAULT_IDLE_OFF_S"], "stepper drivers switch off after this many seconds without an action "
            "(they heat while holding); the arms' positions are then unknown; 0 = never",
            min=0, max=_FW["IDLE_OFF_S_MAX"],
        ),
        "homing": {
            "sensors": Setting(
                bool, False, "each arm has an index sensor (Hall sensor or switch) on the shared homing input: "
                "`cube-robot home` finds the arms' zeros with it; false: home squares the arms by eye",
            ),
            "sensor_active": Setting(
                str, "low", "level of the homing input at a sensor: low (open-collector Hall sensor or a switch "
                "to GND) or high", choices=("low", "high"),
            ),
        },
        "arms": {arm: _arm_settings(arm) for arm in "RLFB"},
    },
    "camera": {
        "device": Setting(
            str, "0",
            "the camera: an index (0), a device path (/dev/video0), a video file or image-sequence pattern "
            "(frames_%03d.png) read through OpenCV VideoCapture, or a folder of <view>.png images (file camera)",
        ),
        "width": Setting(int, 640, "frame width asked of the camera (regions are set for this size)", min=160, max=4096),
        "height": Setting(int, 480, "frame height asked of the camera", min=120, max=4096),
        "exposure": Setting(
            str, "auto-then-freeze",
            "a manual exposure in the driver's units (e.g. -6 or 150), 'auto-then-freeze' (let auto exposure "
            "settle, then lock the value it chose) or 'auto' (not recommended: colours drift)",
            check=lambda v: None if v in ("auto", "auto-then-freeze") or v.lstrip("-").replace(".", "", 1).isdigit()
            else f"use a number, 'auto-then-freeze' or 'auto', not {v!r}",
        ),
        "white_balance": Setting(
            str, "auto-then-freeze",
            "a manual white balance in kelvin (e.g. 4500), 'auto-then-freeze' or 'auto' (not recommended)",
            check=lambda v: None if v in ("auto", "auto-then-freeze") or v.isdigit()
            else f"use kelvin (e.g. 4500), 'auto-then-freeze' or 'auto', not {v!r}",
        ),
        "settle_frames": Setting(
            int, 30, "frames read while auto exposure / white balance settle before they are frozen", min=0, max=600
        ),
        "flush_frames": Setting(int, 4, "video files and image sequences only: frames skipped before each view "
                                "(a live camera picks its frame by time, robot/vision/grabber.py)", min=0, max=60),
        "average_frames": Setting(int, 1, "frames averaged per view; more than 1 only when the sensor noise "
                                  "hurts (each extra frame costs a frame period)", min=1, max=30),
        # Camera timing: one source for the real camera's frame choice and the simulated webcam.
        "fps": Setting(float, 30.0, "frame rate asked of the camera (the simulated webcam's frame period)",
                       min=1.0, max=240.0),
        "exposure_ms": Setting(float, 20.0, "exposure time of one frame (at least the real one: a frame counts as "
                               "taken after a motion only if it began this long before it arrived)", min=0.1,
                               max=1000.0),
        "delivery_ms": Setting(float, 10.0, "from the end of a frame's exposure to its arrival at the host "
                               "(sensor readout and USB)", min=0.0, max=1000.0),
        "buffer_frames": Setting(int, 4, "frames the driver queues (stale ones come out first; the simulated "
                                 "webcam queues this many)", min=1, max=32),
        "settle_ms": Setting(float, 30.0, "after a view's motion ends, the cube shakes this long: a view uses the "
                             "first frame whose exposure began after that", min=0.0, max=2000.0),
        "pose": {
            # Real scans read regions from the calibration; the pose is for the
            # renderer (robot/sim/render.py) and the first guess of the regions.
            "elevation_deg": Setting(float, 45.0, "camera height angle above the cube's equator", min=0.0, max=90.0),
            "azimuth_deg": Setting(
                float, 0.0, "camera angle around the vertical axis from the F face towards R", min=-180.0, max=180.0
            ),
            "distance_mm": Setting(float, 200.0, "camera to cube centre", min=30.0, max=2000.0),
            "fov_deg": Setting(float, 55.0, "horizontal field of view of the lens", min=10.0, max=150.0),
            "cube_mm": Setting(float, 50.0, "cube edge length", min=20.0, max=120.0),
        },
        # SIMULATED: the lamp of the simulated robot's pictures (robot/sim/lamp.py); a real camera ignores it.
        "lighting": {
            "preset": Setting(str, "none", "the simulated lamp: none (no reflection), glare, side or dim "
                              "(`cube-robot run --sim --light NAME` picks one for a run)",
                              choices=("none", "glare", "side", "dim")),
            "strength": Setting(float, None, "mix with the lamp's white at the centre of the most washed sticker "
                                "(0.4: 40 %); empty: the preset's", min=0.0, max=1.0, nullable=True),
            "spread_deg": Setting(float, None, "size of the reflection (degrees between the lamp's mirror direction "
                                  "and the camera at one sigma); empty: the preset's", min=0.5, max=60.0, nullable=True),
            "position_mm": Setting(list, None, "the lamp in the camera's frame, mm from the cube's centre: [right, "
                                   "up, back towards the camera]; empty: where the preset puts it", item=float,
                                   min_items=3, max_items=3, nullable=True),
        },
    },
    "scan": {
        "views": Setting(
            list,
            [
                {"name": "top-front", "actions": [{"op": "grip", "pair": "RL"}],
                 "facelets": ["U1", "U2", "U3", "U4", "F1", "F2", "F3", "F4"], "camera": "main"},
                {"name": "bottom-back", "actions": [{"op": "turn", "arms": {"R": 180, "L": 180}}],
                 "facelets": ["U1", "U2", "U3", "U4", "F1", "F2", "F3", "F4"], "camera": "main"},
                {"name": "left", "actions": [{"op": "grip", "pair": "FB"}, {"op": "turn", "arms": {"F": 90, "B": -90}}],
                 "facelets": ["U1", "U2", "U3", "U4"], "camera": "main"},
                {"name": "right", "actions": [{"op": "turn", "arms": {"F": 180, "B": 180}}],
                 "facelets": ["U1", "U2", "U3", "U4"], "camera": "main"},
            ],
            "the scan sequence: per view the robot actions that present it and the facelets seen in its "
            "regions (robot frame at that moment); all 24 must be seen",
            item={
                "name": Setting(str, "", "view name (names its regions in the regions file)"),
                "actions": Setting(list, [], "robot actions before the frame, as in plans", item=None),
                "facelets": Setting(list, [], "facelet seen in each region, in region order", item=str, min_items=1),
                "camera": Setting(str, "main", "the camera that takes this view: main (camera.*) or second "
                                  "(scan.second_camera); a view without actions by the other camera is taken "
                                  "at the same moment as the view before it", choices=("main", "second")),
            },
            min_items=1,
            check=_check_scan_views,
        ),
        "finish": Setting(list, [], "robot actions after the last view (the result is in the frame after them)",
                          item=None),
        "second_camera": {
            "device": Setting(str, "", "the second camera's device (as camera.device; '' = none: views naming "
                              "it are refused on a real robot); its frames are read like camera.*'s"),
            "elevation_deg": Setting(float, -45.0, "its pose for the renderer and the first guess of its regions: "
                                     "height angle (negative: below the cube)", min=-90.0, max=90.0),
            "azimuth_deg": Setting(float, 180.0, "... and angle around the cube (180: from behind)",
                                   min=-360.0, max=360.0),
        },
        "adaptive_from": Setting(int, 2, "decode after this view and each later one, and stop the scan as soon "
                                 "as the decoder is sure (0: always every view; only with an empty finish)",
                                 min=0, max=64),
        "second_look": Setting(bool, True, "when the scan after the last view is doubtful because of washed-out "
                               "stickers, present them again from a pose that turns them to the lamp differently "
                               "(at most two extra views) and decode the fused looks (robot/vision/fused.py)"),
        "regions_file": Setting(
            str, "calibration/regions.yaml", "sticker regions per view (written by 'cube-robot calibrate colours')"
        ),
        "colours_file": Setting(
            str, "calibration/colors.yaml", "colour calibration (written by 'cube-robot calibrate colours'; "
            "scans and 'vision decode' use it: they work without it but warn about drift only with it)"
        ),
        "sampling": {
            "inner_fraction": Setting(float, 0.6, "share of a region's size sampled (its inner part)", min=0.1, max=1.0),
            "trim_fraction": Setting(float, 0.2, "share of pixels farthest from the median dropped", min=0.0, max=0.8),
            "glare_delta_l": Setting(
                float, 8.0, "pixels this much lighter (L*) and much paler than the sticker are glare", min=1.0, max=60.0
            ),
            "shadow_delta_l": Setting(float, 15.0, "pixels this much darker (L*) than the sticker are shadow",
                                      min=1.0, max=60.0),
        },
        "drift_warn_delta_e": Setting(
            float, 15.0, "warn when readings sit this far (median Delta-E) from the calibration", min=1.0, max=100.0
        ),
        "save_images": Setting(bool, True, "save annotated frames and the decoded net of every scan"),
        "images_dir": Setting(str, "runs/scans", "where scan pictures go (one timestamped folder per scan)"),
        "preview_dir": Setting(
            str, "runs/preview", "where calibration previews are written when there is no display"
        ),
    },
    # The 3x3x3 scan (robot/scan_sequence3.py; chosen by robot/sim/scan3_search.py, bench/scan3.py).
    "scan3": {
        "cube_mm": Setting(float, 57.0, "the 3x3x3's edge, mm (camera.pose.cube_mm is the 2x2x2's)",
                           min=20.0, max=120.0),
        "views": Setting(
            list, SCAN3_VIEWS,
            "the 3x3x3 scan sequence: per view the robot3 ops that present it and the facelets the arms leave "
            "visible (robot frame at that moment); all 54 must be seen",
            item={
                "name": Setting(str, "", "view name (names its regions)"),
                "ops": Setting(list, [], "robot3 ops before the frame, as in 3x3x3 plans", item=None),
                "facelets": Setting(list, [], "facelet seen in each region, in region order", item=str, min_items=1),
            },
            min_items=1,
            check=_check_scan3_views,
        ),
        "finish": Setting(list, SCAN3_FINISH, "robot3 ops after the last view: every gripper back to 0, as a "
                          "plan starts", item=None),
        "regions_file": Setting(str, "calibration/regions3.yaml", "the 3x3x3's sticker regions per scan3 view "
                                "(written by 'cube-robot calibrate colours --puzzle 3x3x3'; without it the run "
                                "guesses them from camera.pose)"),
        "colours_file": Setting(str, "calibration/colors3.yaml", "the 3x3x3's sticker colours (written by the "
                                "same calibration; the run's decode takes them as its prior when they exist)"),
    },
    "decode": {
        "lightness_weight": Setting(
            float, 0.5, "weight of Lab lightness vs hue in colour distances (shading and glare change lightness most)",
            min=0.0, max=2.0,
        ),
        "shading_correction": Setting(
            bool, True, "rescale a sticker's chroma by its lightness, so a shaded sticker matches a lit one",
        ),
        "max_chroma_gain": Setting(
            float, 2.0, "limit of that rescaling (keeps near-black readings from being blown up)", min=1.0, max=5.0,
        ),
        "noise_floor": Setting(
            float, 2.0, "smallest sticker-noise estimate (Lab units) that margins are measured in", min=0.1, max=50.0,
        ),
        "min_margin": Setting(
            float, 2.5, "refuse (ask for a rescan) when the next-best legal cube is closer than this: its extra "
            "cost in units of sticker noise * sqrt(stickers that differ)", min=0.0, max=100.0,
        ),
        "full_margin": Setting(
            float, 6.0, "margin at which confidence reaches 1 (confidence = margin / full_margin)", min=0.1, max=100.0,
        ),
        "refine_alternatives": Setting(
            int, 3, "how many near alternatives get their colour centres refitted when measuring the margin "
            "(more: safer margins, slower)", min=0, max=50,
        ),
        "max_looks_other": Setting(
            float, 5.0, "refuse when a sticker reads as another colour: this much nearer (noise units) to that "
            "colour than to the one the best legal cube needs, and within this of it (a swapped or misread "
            "sticker)", min=0.0, max=100.0,
        ),
        "max_total_looks_other": Setting(
            float, 12.0, "refuse when the stickers' excess likeness to other colours adds up to more than this "
            "(noise units): the readings fit no legal cube well", min=0.0, max=500.0,
        ),
    },
    "run": {
        "data_dir": Setting(str, "data", "solve log and run data (relative to the project root)"),
        "scan_attempts": Setting(int, 3, "scans tried before asking the user (doubtful scans are retried)",
                                 min=1, max=10),
        "verify_after": Setting(bool, True, "re-scan after executing to confirm the cube is solved"),
        "start_timeout_s": Setting(float, 600.0, "how long to wait for the start button", min=1, max=86400),
    },
    "panel": {
        "host": Setting(str, "127.0.0.1", "the address `cube-robot panel` listens on (any other than loopback "
                                          "needs the token)"),
        "http_port": Setting(int, 8080, "the panel's web port (0: any free port)", min=0, max=65535),
        "token": Setting(str, "", "the panel's access token (empty: a new random one at each start; needed off "
                                  "loopback)"),
    },
    # SIMULATED only: the virtual robot's true build (robot/sim/); a real robot ignores it.
    "simulated_robot": {
        "draw_arms": Setting(bool, True, "draw the four arms, their grippers and their shadows in the simulated "
                             "pictures (robot/sim/render_arms.py; off: a bare cube)"),
        "gripper": {
            "jaw_width_mm": Setting(float, 8.0, "a gripper jaw's width", min=1.0, max=50.0),
            "jaw_depth_mm": Setting(float, 8.0, "how far a jaw reaches along the layer from the face",
                                    min=1.0, max=50.0),
            "jaw_thickness_mm": Setting(float, 3.0, "a jaw's thickness", min=0.5, max=20.0),
            "open_gap_mm": Setting(float, 12.0, "jaw to cube when the gripper is open (0 when closed); must "
                                   "exceed a turning layer's reach (10.4 mm for a 50 mm cube)", min=0.0, max=50.0),
            "crossbar_gap_mm": Setting(float, 5.0, "the crossbar's inner side to the face when closed",
                                       min=0.0, max=50.0),
            "shaft_radius_mm": Setting(float, 5.0, "half the arm's square rod (and the crossbar's thickness)",
                                       min=0.5, max=30.0),
            # The true servo and jaws (robot/sim/jaws.py), separate from the firmware's motion.jaw_* settings.
            "servo_speed_us_per_ms": Setting(float, 4.7, "the true servo's speed, us of pulse width per ms",
                                             min=0.5, max=20.0),
            "clear_pct": Setting(int, 50, "% of the opening travel where the true jaws stop touching the cube",
                                 min=5, max=95),
            "contact_pct": Setting(int, 70, "% of the closing travel where the true jaws first touch the cube",
                                   min=5, max=95),
            "true_jaws": Setting(bool, True, "the jaws move at the true servo's speed and a turning layer's reach "
                                 "meeting a jaw, or a hand-over that drops the cube, is a jam (the emulator's pins; off: "
                                 "the grippers open and close at once)"),
        },
        # The 3x3x3 grippers (robot/sim/render3.py, virtual_robot3.py): each holds its face's middle third, its
        # jaws narrower than a sticker row and no deeper than the outer layer (the middle slice turns free).
        "gripper3": {
            "jaw_width_mm": Setting(float, 15.0, "a 3x3x3 jaw's width (within the face's middle third)",
                                    min=1.0, max=50.0),
            "jaw_depth_mm": Setting(float, 14.0, "how far a 3x3x3 jaw reaches along the outer layer from the face",
                                    min=1.0, max=50.0),
            "jaw_thickness_mm": Setting(float, 4.0, "a 3x3x3 jaw's thickness", min=0.5, max=20.0),
            "open_gap_mm": Setting(float, 14.0, "3x3x3 jaw to cube when open; must exceed a tilting cube's reach "
                                   "(11.8 mm for a 57 mm cube)", min=0.0, max=50.0),
            "crossbar_gap_mm": Setting(float, 5.0, "the 3x3x3 crossbar's inner side to the face when closed",
                                       min=0.0, max=50.0),
            "shaft_radius_mm": Setting(float, 5.0, "half the 3x3x3 arm's square rod (and the crossbar's thickness)",
                                       min=0.5, max=30.0),
        },
        "shadow": Setting(float, 0.25, "darkening of a cube face in an arm's full shadow (0: no shadows)",
                          min=0.0, max=1.0),
    },
}
