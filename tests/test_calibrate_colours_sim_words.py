"""What `calibrate colours --sim` says can be checked against itself: the camera's settings in words,
and the decoded net next to the virtual cube in the same orientation (after the scan's turns)."""

from __future__ import annotations

import io
import re
import sys

from conftest import scratch_config
from robot import cli


def test_calibrate_colours_sim_shows_the_check_cube_and_its_decode_in_the_same_orientation(tmp_path, capsys,
                                                                                           monkeypatch):
    def edit(text):
        text = text.replace("colours_file: calibration/colors.yaml", f"colours_file: {tmp_path / 'cal' / 'c.yaml'}")
        text = text.replace("regions_file: calibration/regions.yaml", f"regions_file: {tmp_path / 'cal' / 'r.yaml'}")
        return text.replace("preview_dir: runs/preview", f"preview_dir: {tmp_path / 'preview'}")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code = cli.main(["calibrate", "colours", "--sim", "--firmware", "mock", "--yes", "--no-window", "--seed", "4",
                     "--config", str(scratch_config(tmp_path, edit))])
    out = capsys.readouterr().out
    assert code == 0, out
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
