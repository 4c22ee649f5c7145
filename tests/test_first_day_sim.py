"""docs/hardware.md's first-day checklist rehearsed without hardware: every step's `Rehearse:` command,
read from the doc in its order, run as written (the real firmware in simavr behind `--sim`, the
simulated webcam), so the doc and the commands cannot drift apart.

Each `cube-robot` command runs in-process on a copy of config.yaml whose files (calibration, pictures,
previews, solve log) live under tmp_path; the only things added to a command are `--config` and, where
the step asks a person, that person's answers (on stdin, as the doc says they can be given).
"""

from __future__ import annotations

import io
import re
import shlex
import subprocess
import sys

import pytest

from conftest import scratch_config
from robot import cli, cube
from robot import config as config_module
from robot.scan_sequence import ScanSequence
from robot.sim import emulator

OK, REASON = emulator.available()
pytestmark = [pytest.mark.firmware, pytest.mark.skipif(not OK, reason=f"firmware emulator unavailable: {REASON}")]
ROOT = config_module.PROJECT_ROOT
CALIBRATION_ANSWERS = "solved_ready: yes\nregions: detect\naccept_regions: yes\nscrambled_ready: yes\nverify: yes\n"


class Terminal(io.StringIO):
    """Keys typed by a person at a terminal (commands that need one ask stdin whether it is a tty)."""

    def isatty(self) -> bool:
        return True


def rehearsals() -> list[tuple[int, list[str]]]:
    """(step number, its Rehearse commands) of every numbered step of the checklist, in order."""
    section = (ROOT / "docs" / "hardware.md").read_text().split("## First-day checklist", 1)[1]
    section = section.split("\n## ", 1)[0]
    steps = re.split(r"^(\d+)\. ", section, flags=re.M)[1:]
    out = []
    for number, text in zip(steps[::2], steps[1::2]):
        rehearse = text.split("Rehearse:", 1)[1] if "Rehearse:" in text else ""
        out.append((int(number), [c for c in re.findall(r"`([^`]+)`", rehearse)
                                  if c.startswith(("cube-robot ", "make "))]))
    return out


def same_cube(a: str, b: str) -> bool:
    """The same stickers up to the colours' letters (each decoder names them by its own scheme)."""
    return len(a) == len(b) and len(set(zip(a, b))) == len(set(a)) == len(set(b))


def test_every_step_of_the_checklist_says_how_to_rehearse_it_with_sim():
    steps = rehearsals()
    assert [n for n, _ in steps] == list(range(1, 11)), steps
    for number, commands in steps:
        assert commands, f"step {number} has no Rehearse command"
        for command in commands:
            assert command.startswith("make -C firmware -n ") or " --sim" in command, (number, command)


def test_the_first_day_checklist_rehearsed_with_sim(tmp_path, capsys, monkeypatch):
    def edit(text):
        text = text.replace("regions_file: calibration/regions.yaml", f"regions_file: {tmp_path / 'cal' / 'regions.yaml'}")
        text = text.replace("colours_file: calibration/colors.yaml", f"colours_file: {tmp_path / 'cal' / 'colors.yaml'}")
        return text.replace("preview_dir: runs/preview", f"preview_dir: {tmp_path / 'preview'}")
    config = scratch_config(tmp_path, edit)
    loaded = config_module.load(config)
    assert str(tmp_path) in loaded.scan.colours_file and str(tmp_path) in loaded.scan.preview_dir
    said = {}
    for number, commands in rehearsals():
        for command in commands:
            words = shlex.split(command)
            if words[0] == "make":  # 1. Flash: the commands shown, nothing written
                made = subprocess.run(words, cwd=ROOT, capture_output=True, text=True, timeout=120)
                assert made.returncode == 0, made.stderr
                assert "avrdude -p m328p -c arduino -P /dev/ttyACM0" in made.stdout
                continue
            args = words[1:] + ["--config", str(config)]
            stdin = io.StringIO("")
            if words[1] == "home":  # a person squares each arm by eye: Enter for each
                stdin = Terminal("\n" * 4)
            elif words[1] == "load":  # Enter once the cube is in
                stdin = Terminal("\n")
            elif words[1] == "calibrate" and words[2] in ("colours", "colors"):  # the answers on stdin
                args += ["--answers", "-", "--no-window"]
                stdin = io.StringIO(CALIBRATION_ANSWERS)
            monkeypatch.setattr(sys, "stdin", stdin)
            code = cli.main(args)
            out, err = capsys.readouterr()
            # Every line that says something starts with the mark, on stdout and stderr (prompts and
            # failures too), a run's ==== rules included.
            lines = [line for line in out.splitlines() if line.strip()]
            assert lines, (command, out)
            unmarked = [line for line in lines + err.splitlines() if line.strip() and not line.startswith("SIMULATED | ")]
            assert unmarked == [], (command, unmarked)
            said[" ".join(words[1:3])] = (code, out, err)
            expected = 1 if words[1] == "doctor" else 0  # doctor: no regions file before step 8
            assert code == expected, (command, out, err)

    code, out, _ = said["doctor --sim"]
    assert "real firmware (.elf) in simavr" in out
    assert re.search(r"firmware handshake .* ok +cube-robot-fw", out) and re.search(r"simulated webcam +ok", out)
    assert re.search(r"regions file .* FAIL +missing", out)
    assert "drivers and arms" in out and "every position known" not in out  # read, as a fresh board is
    _, out, _ = said["tune grippers"]
    assert "gripper R open: 1100 us" in out and "Not saved" in out
    _, out, _ = said["calibrate colors"]
    assert "presents each view" in out and "nothing saved" in out
    assert not (tmp_path / "cal").exists(), "the rehearsal wrote calibration files"
    # The check scan read the virtual cube that was put in (as the scan sequence left it).
    put_in = re.search(r"a scrambled cube is now in the virtual robot: ([URFDLB]{24})", out).group(1)
    decoded = re.search(r"decoded: ([URFDLB]{24})", out).group(1)
    assert same_cube(ScanSequence.from_config(loaded).final_state(put_in), decoded), (put_in, decoded)
    assert put_in != cube.SOLVED_FACELETS
    _, out, _ = said["calibrate timing"]
    assert "not saved" in out
    _, out, _ = said["run --sim"]
    assert "SOLVED" in out
