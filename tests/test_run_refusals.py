"""`run` refuses options it would otherwise ignore: --resume on the simulated robot, an empty --scramble."""

import pytest
from conftest import scratch_config

from robot import cli


@pytest.mark.parametrize("argv, implied", [(["--sim"], "--sim"), (["--estop-at", "3"], "--estop-at")])
def test_resume_on_the_simulated_robot_is_refused_naming_why(tmp_path, capsys, argv, implied):
    code = cli.main(["run", *argv, "--resume", "--firmware", "mock", "--config", str(scratch_config(tmp_path))])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "--resume" in err and implied in err and "nothing moved" in err, err


def test_an_empty_scramble_is_refused_naming_the_option(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["run", "--sim", "--scramble", " ", "--firmware", "mock", "--config", str(scratch_config(tmp_path))])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert "--scramble" in err and "empty" in err and "random" in err, err
