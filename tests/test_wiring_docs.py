"""docs/hardware.md and its wiring picture stay true to the firmware.

- docs/wiring.svg is exactly what scripts/wiring_diagram.py makes from pins.h today (so a pins.h
  change without a new picture fails), it shows every pin at its Uno pin, and a moved pin moves in
  the picture.
- The first-day checklist marks exactly the commands that do not exist yet.
- README.md and firmware/README.md link to docs/hardware.md, which shows the picture.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from robot import cli
from robot.sim import pinlog

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "wiring_diagram.py"
SVG = ROOT / "docs" / "wiring.svg"
HARDWARE_MD = ROOT / "docs" / "hardware.md"
UNO_NAME = {"D": lambda b: f"D{b}", "B": lambda b: f"D{b + 8}", "C": lambda b: f"A{b}"}


def run_script(*args) -> subprocess.CompletedProcess:
    # -S: no site-packages, so the script must get by with the standard library.
    return subprocess.run([sys.executable, "-S", str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def header_labels(svg_text: str) -> dict[str, str]:
    """{Uno pin: the label drawn beside it} read back from the SVG (texts on the same row)."""
    texts = [(float(t.get("y")), float(t.get("x")), t.text)
             for t in ET.fromstring(svg_text).iter("{http://www.w3.org/2000/svg}text")]
    pins = {text: y for y, _, text in texts if re.fullmatch(r"[AD]\d+", text or "")}
    return {pin: next(text for y2, _, text in sorted(texts, key=lambda t: t[1]) if y2 == y and text != pin)
            for pin, y in pins.items()}


def test_checked_in_picture_is_regenerated_from_pins_h():
    result = run_script("--check")
    assert result.returncode == 0, result.stderr + "\n(run: python3 scripts/wiring_diagram.py)"


def test_picture_shows_every_pin_at_its_uno_pin():
    labels = header_labels(SVG.read_text())
    pins = pinlog.load_pin_map()
    for name, pin in pins.items():
        uno = UNO_NAME[pin.port](pin.bit)
        assert labels[uno].startswith(name), f"{name} is {uno} in pins.h, the picture shows {labels[uno]!r} there"
    assert labels["D0"].startswith("RX") and labels["D1"].startswith("TX")
    used = {UNO_NAME[p.port](p.bit) for p in pins.values()}
    assert {u for u, text in labels.items() if text == "free"} == set(labels) - used - {"D0", "D1"}


def test_a_moved_pin_moves_in_the_picture_and_fails_the_check(tmp_path):
    moved = tmp_path / "pins.h"
    text = (ROOT / "firmware" / "cube_robot" / "pins.h").read_text()
    moved_text, n = re.subn(r"(#define PIN_SERVO_B\s+)C, 3", r"\1C, 5", text)
    assert n == 1, "pins.h no longer defines PIN_SERVO_B as C, 3: update this test"
    moved.write_text(moved_text)
    out = tmp_path / "wiring.svg"
    assert run_script("--pins", str(moved), "--output", str(out)).returncode == 0
    labels = header_labels(out.read_text())
    assert labels["A5"] == "SERVO_B" and labels["A3"] == "free"
    check = run_script("--pins", str(moved), "--check")  # against the checked-in docs/wiring.svg
    assert check.returncode == 1 and "out of date" in check.stderr


def test_an_unknown_pin_is_still_drawn(tmp_path):
    extra = tmp_path / "pins.h"
    extra.write_text((ROOT / "firmware" / "cube_robot" / "pins.h").read_text()
                     + "#define PIN_BUZZER    C, 5   // A5\n")
    out = tmp_path / "wiring.svg"
    assert run_script("--pins", str(extra), "--output", str(out)).returncode == 0
    svg = out.read_text()
    assert header_labels(svg)["A5"] == "BUZZER"
    assert "BUZZER (not described in wiring_diagram.py)" in svg


def _command_exists(words: list[str]) -> bool:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            cli.main([*words, "--help"])
        except SystemExit as exit_:
            return exit_.code == 0
    return True


def checklist() -> list[tuple[list[str], bool]]:
    """(command words, marked not built yet) for each `cube-robot ...` step of the checklist."""
    section = HARDWARE_MD.read_text().split("## First-day checklist", 1)[1]
    steps = []
    for line in section.splitlines():
        m = re.match(r"\d+\. .*?`cube-robot ([^`]+)`(.*)", line)
        if m:
            words = []
            for word in m.group(1).split():
                if not re.fullmatch(r"[a-z][a-z-]*", word):
                    break  # ARM, --save, ...
                words.append(word)
            steps.append((words, "not built yet" in m.group(2)))
    return steps


def test_checklist_is_in_order_and_marks_exactly_the_missing_commands():
    steps = checklist()
    assert [" ".join(w) for w, _ in steps] == [
        "doctor", "motors on", "jog", "tune grippers", "home", "load", "calibrate colors", "calibrate timing", "run"]
    wrong = {" ".join(w): ("marked not built yet, but it exists: update docs/hardware.md" if missing
                           else "does not exist: mark it not built yet")
             for w, missing in steps if _command_exists(w) == missing}
    assert not wrong, wrong
    section = HARDWARE_MD.read_text().split("## First-day checklist", 1)[1]
    assert section.index("make -C firmware flash PORT=") < section.index("`cube-robot doctor`"), "flash comes first"


@pytest.mark.parametrize("doc, link", [("README.md", "docs/hardware.md"),
                                       ("firmware/README.md", "../docs/hardware.md"),
                                       ("docs/hardware.md", "wiring.svg")])
def test_docs_link_the_hardware_page_and_the_picture(doc, link):
    text = (ROOT / doc).read_text()
    assert f"]({link})" in text, f"{doc} does not link {link}"
    assert (ROOT / doc).parent.joinpath(link).resolve().exists()


def test_checklist_flags_are_the_flags_the_commands_take(capsys):
    # docs/hardware.md says which checklist commands take --sim and --json; their --help must agree.
    section = HARDWARE_MD.read_text().split("## First-day checklist", 1)[1]
    intro = " ".join(section.split("1. **Flash**", 1)[0].split())
    with_sim_and_json = ["motors on", "jog", "grip", "tune grippers", "home", "load", "release", "run"]
    assert "(`motors`, `jog`, `grip`, `tune grippers`, `home`, `load`, `release`) and `run` also take `--json`, " \
           "and `--sim`" in intro
    assert "`calibrate timing`, `doctor` and `calibrate colours` take `--sim` too" in intro
    for words, flags in ([(c, ("--sim", "--json", "--port", "--config")) for c in with_sim_and_json]
                         + [(c, ("--sim", "--port", "--config"))
                            for c in ("calibrate timing", "doctor", "calibrate colours")]):
        with pytest.raises(SystemExit):
            cli.main([*words.split(), "--help"])
        usage = capsys.readouterr().out
        missing = [flag for flag in flags if f"[{flag}" not in usage]
        assert not missing, f"cube-robot {words} has no {missing}"
