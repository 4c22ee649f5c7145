"""`cube-robot solve` input errors: a bad --start-grip, and non-UTF-8 bytes on stdin."""

import json
import subprocess
import sys

from conftest import scratch_config
from robot import cli
from robot.config import PROJECT_ROOT


def test_unknown_start_grip_is_named_not_an_invalid_cube(capsys):
    code = cli.main(["solve", "--start-grip", "XY", "wwwwrrrrggggyyyyoooobbbb"])
    captured = capsys.readouterr()
    assert code == 2 and "--start-grip 'XY' is not an arm pair (pairs: RL, FB, or any)" in captured.err
    assert "invalid" not in captured.out


def test_a_non_utf8_line_on_stdin_loses_no_other_line(tmp_path):
    good = b"UFUFRRRRFDFDDBDBLLLLUBUB\n"
    data = good + b"UUUU\xffRRRRFFFFDDDDLLLLBBBB\n" + good
    result = subprocess.run([sys.executable, "-m", "robot", "solve", "--json", "-",
                             "--config", str(scratch_config(tmp_path))], input=data,
                            capture_output=True, cwd=PROJECT_ROOT, timeout=300)
    lines = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert result.returncode == 2 and len(lines) == 3, result.stderr.decode()[-2000:]
    assert lines[0]["facelets"] == lines[2]["facelets"] == "UFUFRRRRFDFDDBDBLLLLUBUB" and "plan" in lines[0]
    assert lines[1]["ok"] is False and "stdin line 2: not UTF-8 text (byte 0xff at column 5)" in lines[1]["error"]
