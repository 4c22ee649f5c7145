"""scripts/panel_screenshots.py draws every part of the page from a seeded simulated run: each PNG it
names is there, is an image of the width it printed (the screen's for the whole page) and is not blank.
No pixel comparison: a live page is never twice the same."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from panel_fixtures import DESKTOP, PHONE, ROOT, browser_missing, panel_config

SCRIPT = ROOT / "scripts" / "panel_screenshots.py"
PARTS = ["live", "cube", "run", "bringup", "calibrate", "history", "doctor"]


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> tuple[Path, dict[str, tuple[int, int]]]:
    reason = browser_missing()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI runs the browser tests, but: {reason}")
        pytest.skip(reason)
    scratch = tmp_path_factory.mktemp("screenshots")
    out = scratch / "out"
    done = subprocess.run([sys.executable, str(SCRIPT), str(out), "--seed", "3", "--config",
                           str(panel_config(scratch / "panel"))], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    sizes = {}
    for line in done.stdout.splitlines():
        name, size = line.split()
        width, height = size.split("x")
        sizes[name] = (int(width), int(height))
    return out, sizes


def test_every_part_and_the_whole_page_are_drawn(screenshots):
    out, sizes = screenshots
    expected = {f"{part}.png" for part in PARTS} | {"page-desktop.png", "page-phone.png"}
    assert set(sizes) == expected
    assert {path.name for path in out.iterdir()} == expected


@pytest.mark.parametrize("name", [f"{part}.png" for part in PARTS] + ["page-desktop.png", "page-phone.png"])
def test_each_png_is_a_non_blank_image_of_its_size(screenshots, name):
    out, sizes = screenshots
    image = cv2.imread(str(out / name), cv2.IMREAD_COLOR)
    assert image is not None, f"{name} is not an image cv2 can read"
    height, width = image.shape[:2]
    # The width the layout gave it (an element's box has fractional pixels, the PNG whole ones); a height
    # follows what the live page showed at that moment (a status line that wraps), so only its range.
    assert abs(width - sizes[name][0]) <= 2, (name, (width, height), sizes[name])
    if name == "page-desktop.png":
        assert width == DESKTOP["width"] and height >= DESKTOP["height"]
    elif name == "page-phone.png":
        assert width == PHONE["width"] and height > PHONE["height"], "the phone's page is one long column"
    else:
        assert 100 <= width <= DESKTOP["width"] and height >= 40
    # Not blank: more than a handful of colours, and not one colour over nearly all of it.
    pixels = image.reshape(-1, 3)
    colours, counts = np.unique(pixels, axis=0, return_counts=True)
    assert len(colours) > 8, f"{name} has {len(colours)} colours"
    assert counts.max() < 0.98 * len(pixels), f"{name} is {counts.max() / len(pixels):.0%} one colour"
