"""What `calibrate colours --sim` says can be checked against itself: the camera's settings in words,
and the decoded net next to the virtual cube in the same orientation (after the scan's turns)."""

from __future__ import annotations

import re

from conftest import calibrate_colours_sim
from robot import cli


def test_calibrate_colours_sim_shows_the_check_cube_and_its_decode_in_the_same_orientation(tmp_path, capsys,
                                                                                           monkeypatch):
    out = calibrate_colours_sim(tmp_path, monkeypatch, capsys)
    lines = [line.removeprefix("SIMULATED | ") for line in out.splitlines()]

    [camera] = [line for line in lines if line.startswith("camera: ")]
    assert not re.search(r"[{}'=]", camera), camera  # words, not a Python dict or repr
    assert camera.startswith("camera: simulated camera, lighting (brightness ") and " fps, exposure " in camera

    def where(heading: str) -> int:
        return next(i for i, line in enumerate(lines) if line.startswith(heading))
    put_in, after_turns, decode = (where("a scrambled cube is now in the virtual robot"),
                                   where("the scrambled cube in the virtual robot after the scan's turns"),
                                   where("decoded: "))
    assert lines[put_in].endswith("(as put in)") and put_in < after_turns < decode
    virtual, decoded = lines[after_turns + 1:after_turns + 7], lines[decode + 1:decode + 7]
    assert [row.split(":")[0].strip() for row in decoded] == list("URFDLB")
    assert virtual == decoded, (virtual, decoded)
    assert re.search(r"decoded: [URFDLB]{24} \(confidence [\d.]+\), the cube as it stands after the scan's turns:",
                     out)
