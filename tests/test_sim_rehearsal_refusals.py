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
    from conftest import calibrate_colours_sim

    out = calibrate_colours_sim(tmp_path, monkeypatch, capsys)
    assert f"writes the 6 colours above into {tmp_path / 'cal' / 'c.yaml'}" in out and "nothing saved" in out
    assert not (tmp_path / "cal").exists()
    assert all(line.startswith("SIMULATED | ") for line in out.splitlines() if line.strip())
