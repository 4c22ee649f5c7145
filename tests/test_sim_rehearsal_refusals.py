"""The rehearsals (`--sim`) of doctor and calibrate colours refuse options that name real hardware or
files to write, before anything starts."""

import pytest

from robot import cli


@pytest.mark.parametrize("args, said", [
    (["doctor", "--sim", "--port", "/dev/ttyACM0"], "--port names a real one"),
    (["calibrate", "colours", "--sim", "--colours-out", "x.yaml"], "--colours-out cannot go with it"),
    (["calibrate", "colours", "--sim", "--solved-images", "shots"], "--solved-images cannot go with it"),
])
def test_sim_refuses_real_hardware_and_output_files(args, said, capsys, tmp_path):
    assert cli.main(args) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "x.yaml").exists()


def test_calibrate_colours_sim_saves_nothing_with_the_mock(tmp_path, capsys, monkeypatch):
    import io
    import sys

    from conftest import scratch_config

    def edit(text):
        text = text.replace("colours_file: calibration/colors.yaml", f"colours_file: {tmp_path / 'cal' / 'c.yaml'}")
        text = text.replace("regions_file: calibration/regions.yaml", f"regions_file: {tmp_path / 'cal' / 'r.yaml'}")
        return text.replace("preview_dir: runs/preview", f"preview_dir: {tmp_path / 'preview'}")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code = cli.main(["calibrate", "colours", "--sim", "--firmware", "mock", "--yes", "--no-window", "--seed", "4",
                     "--config", str(scratch_config(tmp_path, edit))])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"writes the 6 colours above into {tmp_path / 'cal' / 'c.yaml'}" in out and "nothing saved" in out
    assert not (tmp_path / "cal").exists()
    assert all(line.startswith("SIMULATED | ") for line in out.splitlines() if line.strip())
