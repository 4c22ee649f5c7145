"""The calibrations' shared line rewrite (robot/calibrate/config_lines.py): a number replaced, a trailing
comment kept in its column, and a line without a comment keeps its line end (calibrate timing and
calibrate overlap both write through it)."""

from robot.calibrate.config_lines import VALUE_LINE, with_number
from robot.calibrate.overlap import rewrite_jaw_settings
from robot.calibrate.timing import rewrite_timing


def test_a_comment_stays_in_its_column_when_the_number_fits():
    line = "    grip_ms: 100   # the gripper's close\n"
    assert with_number(VALUE_LINE.match(line), 95.6) == "    grip_ms: 95    # the gripper's close\n"
    assert with_number(VALUE_LINE.match(line), 12345) == "    grip_ms: 12345 # the gripper's close\n"


def test_timing_lines_without_comments_keep_their_line_ends():
    text = "robot:\n  timing:\n    grip_ms: 100\n    turn_ms: 200\n"
    assert rewrite_timing(text, {"grip_ms": 150}) == "robot:\n  timing:\n    grip_ms: 150\n    turn_ms: 200\n"


def test_jaw_lines_without_comments_keep_their_line_ends():
    text = "motion:\n  jaw_clear_pct: 40\n  jaw_contact_pct: 60\n"
    assert (rewrite_jaw_settings(text, {"jaw_clear_pct": 45, "jaw_contact_pct": 55})
            == "motion:\n  jaw_clear_pct: 45\n  jaw_contact_pct: 55\n")
