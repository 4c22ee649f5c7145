"""The 3x3x3 scan sequence (robot/scan_sequence3.py, config scan3; chosen by robot/sim/scan3_search.py):
every one of the 54 stickers seen at least once in spite of the grippers, at its stated arm time."""

import re

import pytest

from robot import config as config_module
from robot.plan3 import Robot3Profile
from robot.scan_sequence3 import Scan3ConfigError, ScanSequence3, sequence_problem3
from robot.sim import render3
from robot.sim.virtual_robot3 import VirtualRobot3
from robot.vision.camera_geometry3 import pose3
from robot3_checker import RobotReplay

CONFIG = config_module.defaults()
TAGS = "".join(chr(0x100 + i) for i in range(54))  # 54 distinct stickers


@pytest.fixture(scope="module")
def profile():
    return Robot3Profile.from_config(CONFIG)


@pytest.fixture(scope="module")
def sequence():
    return ScanSequence3.from_config(CONFIG)


def test_every_sticker_is_seen_where_the_arms_leave_it_mostly_visible(profile, sequence):
    """Replayed on the virtual 3x3x3 (not the sequence's own arithmetic); a listed facelet counts only when
    the grippers, standing where the ops left them, leave its sampled region mostly visible."""
    pose, geometry = pose3(CONFIG), render3.arm_geometry3(CONFIG)
    virtual = VirtualRobot3(profile, TAGS)
    checker = RobotReplay("".join("URFDLB"[i // 9] for i in range(54)), profile)  # legal ops, as plans are checked
    seen, n = set(), 0
    for view in sequence.views:
        for op in view.ops:
            virtual.apply_op(op)
            checker.step(n, op)
            n += 1
        arms = render3.arms_at(geometry, {arm: virtual.arm_steps[arm] * 360 // virtual.steps_per_rev for arm in "RLFB"},
                               dict(virtual.closed))
        share = render3.seen_share(pose, arms, view.facelets)
        assert (share >= render3.SEEN_SHARE).all(), (view.name, dict(zip(view.facelets, share.round(2))))
        here = virtual.facelets()
        seen |= {here["URFDLB".index(name[0]) * 9 + int(name[1]) - 1] for name in view.facelets}
    for op in sequence.finish:
        virtual.apply_op(op)
    assert len(seen) == 54 and not virtual.jams
    assert all(virtual.gripper_angle(arm) == 0 and virtual.closed[arm] for arm in "RLFB")  # as a plan starts
    assert virtual.facelets() == sequence.final_state(TAGS)


def test_the_arm_time_is_the_profiles_and_what_config_yaml_says(profile, sequence):
    ops = sequence.all_ops()
    assert sequence.arm_ms() == profile.plan_cost(ops) == sum(profile.op_cost(op) for op in ops)
    text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    block = text[text.index("\nscan3:"):text.index("\n  views:", text.index("\nscan3:"))]
    said = re.search(r"(\d+) ms of arm time with the firmware's op times, (\d+) views", " ".join(block.split()))
    assert said and int(said[1]) == sequence.arm_ms() and int(said[2]) == len(sequence.views)
    tilts = sum(op["op"] == "tilt" for op in ops)
    assert tilts >= 5  # every face comes up to U once (a gripped face's centre is under its crossbar)
    assert sequence.arm_ms() == tilts * profile.tilt_ms(90)  # nothing but tilts: views taken while a pair is open


def test_the_default_is_the_exact_searchs_optimum(profile, sequence):
    from robot.sim import scan3_search

    visible = scan3_search.visible_places(pose3(CONFIG), render3.arm_geometry3(CONFIG), profile)
    assert visible[((0, 0, 0, 0), ())] == (0, 2, 4, 6, 8, 18, 20, 21, 23, 24, 26)  # jaws at 0 hide U's edges
    assert {3, 5} <= set(visible[((0, 0, 0, 0), ("L", "R"))])  # RL open: their jaws stand back from U4, U6
    found = scan3_search.search(profile, visible, max_expansions=50_000)  # exact: ends well within the limit
    again = ScanSequence3.from_data(found["views"], found["finish"], profile)
    assert again.arm_ms() == found["arm_ms"] == sequence.arm_ms() and not again.unseen_facelets()
    assert found["expanded"] < 50_000
    # the default's views are what the search's visibility says they show
    for view, angles, closed in zip(sequence.views, sequence.angles_at_views(), sequence.closed_at_views()):
        key = (tuple(angles[arm] for arm in profile.arms), tuple(sorted(a for a, c in closed.items() if not c)))
        assert set(view.facelets) == {f"{'URFDLB'[p // 9]}{p % 9 + 1}" for p in visible[key]}, view.name


def test_a_sequence_that_misses_stickers_or_breaks_the_rules_is_refused(profile):
    views = [{"name": "only", "ops": [], "facelets": ["U1", "U5", "F1"]}]
    problem = sequence_problem3(views)
    assert problem and "never sees 51 facelet(s)" in problem and "U2" in problem
    bad_tilt = [{"name": "tilt", "ops": [{"op": "tilt", "arms": {"R": 90, "L": -90}}], "facelets": ["U1"]}]
    assert "view 'tilt', op 1" in sequence_problem3(bad_tilt) and "other pair open" in sequence_problem3(bad_tilt)
    views = [{"name": "a", "ops": [{"op": "open", "arms": ["F", "B"]}, {"op": "tilt", "arms": {"R": 90, "L": -90}},
                                   {"op": "close", "arms": ["F", "B"]}], "facelets": ["U1"]}]
    with pytest.raises(Scan3ConfigError, match="every arm closed at 0"):
        ScanSequence3.from_data(views, [], profile)
    assert "not a 3x3x3 facelet name" in sequence_problem3([{"name": "x", "ops": [], "facelets": ["U0"]}])


def test_config_refuses_a_scan3_that_misses_stickers(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("scan3:\n  views:\n    - name: one\n      ops: []\n      facelets: [U1, U3]\n")
    with pytest.raises(config_module.ConfigError, match="scan3.views.*never sees 52"):
        config_module.load(path)


def test_config_refuses_a_scan3_finish_that_leaves_a_pair_open_naming_its_line(tmp_path):
    """The finish is part of the sequence: one that leaves FB open is a config error at load (was a traceback from
    the run's scan set-up), naming scan3.finish and its line."""
    path = tmp_path / "config.yaml"
    path.write_text("scan3:\n  cube_mm: 57.0\n  finish: []\n")
    with pytest.raises(config_module.ConfigError, match="scan3.finish.*every arm closed at 0") as error:
        config_module.load(path)
    assert ":3:" in str(error.value)  # the finish's line


def test_a_bad_facelet_name_or_a_repeated_one_names_its_view():
    views = [{"name": "a", "ops": [], "facelets": ["U1"]}, {"name": "b", "ops": [], "facelets": ["U1", "X9"]}]
    problem = sequence_problem3(views)
    assert "view 'b'" in problem and "'X9' is not a 3x3x3 facelet name" in problem
    twice = [{"name": "c", "ops": [], "facelets": ["U1", "U2", "U1"]}]
    assert "view 'c'" in (sequence_problem3(twice) or "") and "U1" in sequence_problem3(twice)
