"""Ctrl-C in `tune grippers`: a terminal in raw mode gives the key \\x03, not a signal; it is an interrupt
(exit 130, as in every command), said as one, with the grippers' state; nothing is saved."""

import io
import json
import sys

from robot import cli
from robot import config as config_module
from robot.exit_status import ExitStatus


def test_ctrl_c_in_tune_grippers_is_an_interrupt_with_the_grippers_state(tmp_path, capsys, monkeypatch):
    config = tmp_path / "config.yaml"
    config.write_text((config_module.PROJECT_ROOT / "config.yaml").read_text())
    before = config.read_text()
    monkeypatch.setattr(sys, "stdin", io.StringIO("+\n\x03\n"))  # one nudge, then Ctrl-C as a raw terminal gives it
    code = cli.main(["tune", "grippers", "--sim", "--firmware", "mock", "--json", "--config", str(config)])
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert code == ExitStatus.INTERRUPTED == 130, err
    assert "interrupted" in result["error"] and "grippers: R open" in result["error"], result["error"]
    assert "Not saved" not in err and "not saved" in err  # why nothing was saved: the interrupt, not a `q`
    assert config.read_text() == before
