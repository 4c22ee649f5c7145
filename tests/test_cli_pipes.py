"""Every command ends quietly when the reader of its output goes away, as a Unix tool does.

`cube-robot solve --json - < many-cubes.txt | head -c 5`: head exits after 5 bytes; the next write
finds the pipe closed.  The command stops without a traceback and exits 141 (128 + SIGPIPE, what a
shell reports for a tool stopped by a closed pipe).  Real subprocesses and real pipes.
"""

import signal
import subprocess
import sys

import pytest

from conftest import scratch_config
from robot import cli
from robot.config import PROJECT_ROOT
from robot.exit_status import ExitStatus

REPORTED = "BYWGOGGBOYRWBRYWRGBWRYOO"
BROKEN_PIPE = 128 + signal.SIGPIPE  # what a shell reports for a tool stopped by SIGPIPE


def test_the_exit_status_is_the_one_a_shell_reports_for_sigpipe():
    assert ExitStatus.BROKEN_PIPE == BROKEN_PIPE


def _cube_robot(config, *args, stdin=subprocess.DEVNULL):
    """cube-robot with config.yaml's settings and the session's solver tables (scratch_config)."""
    return subprocess.Popen([sys.executable, "-m", "robot", *args, "--config", str(config)], stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=PROJECT_ROOT)


def _ends_quietly(proc):
    stderr = proc.stderr.read().decode()
    code = proc.wait(timeout=300)
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr and "Errno 32" not in stderr, stderr
    assert code == BROKEN_PIPE, (code, stderr)


def test_reader_leaving_after_five_bytes_of_a_long_output(tmp_path):
    # Far more output than a pipe holds (64 KiB on Linux), so the command is still writing when
    # the reader goes, as with `| head -c 5`.
    cubes = tmp_path / "many-cubes.txt"
    cubes.write_text(f"{REPORTED}\n" * 3000)
    with open(cubes, "rb") as stdin:
        proc = _cube_robot(scratch_config(tmp_path), "solve", "--json", "-", stdin=stdin)
        first = proc.stdout.read(5)
        proc.stdout.close()
        assert first == b'{"fac'
        _ends_quietly(proc)


@pytest.mark.parametrize("args", [("solve", "--json", REPORTED), ("tables", "status")],
                         ids=["solve one cube", "tables status"])
def test_reader_gone_before_the_first_line(args, tmp_path):
    # The output fits in the buffer, so it is written only by the final flush: that must end quietly
    # too (argparse's --help already drops a failed write by itself).
    proc = _cube_robot(scratch_config(tmp_path), *args)
    proc.stdout.close()
    _ends_quietly(proc)


def test_a_broken_pipe_that_is_not_the_output_is_not_hidden(monkeypatch):
    # A BrokenPipeError from something else (a link to an emulator, say) is a real failure: raised.
    from robot.solver import commands

    def handler(args):
        raise BrokenPipeError(32, "Broken pipe (not stdout)")

    monkeypatch.setattr(commands, "run_solve", handler)
    with pytest.raises(BrokenPipeError, match="not stdout"):
        cli.main(["solve", REPORTED])
