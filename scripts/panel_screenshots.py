#!/usr/bin/env python3
"""Screenshots of the panel's page from a seeded simulated run: starts `cube-robot panel --sim --seed N`,
opens the page in Debian's chromium (Playwright; never `playwright install`), presses Start, waits for the
result, and writes a PNG of each part of the page (live camera, cube, run, bring-up, colour calibration,
history, doctor) and of the whole page (desktop and phone-sized).

    .venv/bin/python scripts/panel_screenshots.py [FOLDER] [--seed N] [--config PATH]

FOLDER defaults to docs/panel/.  Without --config the panel runs on a copy of config.yaml whose pictures,
previews and solve log go to a temporary folder (the checkout's runs/ and data/ stay as they are).  It
prints each file it wrote, with its size in pixels as laid out, one per line: `NAME.png WIDTHxHEIGHT`
(heights can change with what the live page shows meanwhile; widths do not).  No pixel
comparison belongs on these: a live page is never twice the same.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
# The parts of the page (index.html's sections), as named in the files written.
SECTIONS = {"live": "#live", "cube": "#cube", "run": "#run", "bringup": "#bringup", "calibrate": "#calibrate",
            "history": "#history", "doctor": "#doctor"}
RESULT = "#run-result"
# Guards against a hang only (a loaded machine is slow, never wrong): a run's result, the panel's URL.
GUARD_MS = 300_000
GUARD_S = GUARD_MS / 1000
PANEL_LINE = re.compile(r"Panel: (https?://\S+)")


class Failed(Exception):
    """The screenshots could not be made; the message says why."""


def scratch_config(folder: Path) -> Path:
    """config.yaml with the pictures, previews and solve log in folder."""
    text = (ROOT / "config.yaml").read_text()
    for setting, value in (("images_dir: runs/scans", "scans"), ("preview_dir: runs/preview", "preview"),
                           ("data_dir: data", "data")):
        if setting not in text:
            raise Failed(f"config.yaml has no `{setting}` line to point into {folder}")
        text = text.replace(setting, f"{setting.split(':')[0]}: {folder / value}")
    path = folder / "config.yaml"
    path.write_text(text)
    return path


def cube_robot() -> list[str]:
    script = Path(sys.executable).parent / "cube-robot"
    return [str(script)] if script.exists() else [sys.executable, "-m", "robot"]


class PanelProcess:
    """`cube-robot panel --sim` in its own process group until close()."""

    def __init__(self, config: Path, seed: int, folder: Path):
        self.stderr_path = folder / "panel-stderr.txt"
        command = [*cube_robot(), "panel", "--sim", "--seed", str(seed), "--http-port", "0", "--config", str(config)]
        with open(self.stderr_path, "w") as stderr:
            # SIGINT as a terminal's Ctrl-C, even when this script runs as a background job (which ignores it).
            self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True,
                                            start_new_session=True,
                                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.output: list[str] = []
        self.found = threading.Event()
        self.url: str | None = None
        threading.Thread(target=self._read, daemon=True).start()
        if not self.found.wait(GUARD_S) or self.url is None:
            self.close()
            raise Failed(f"`{' '.join(command)}` printed no 'Panel: URL' line:\n{self.describe()}")

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:  # read to the end: a full pipe would block the panel
            self.output.append(line)
            found = PANEL_LINE.search(line)
            if found and self.url is None:
                self.url = found.group(1)
                self.found.set()
        self.found.set()

    def describe(self) -> str:
        return "".join(self.output)[-3000:] + self.stderr_path.read_text(errors="replace")[-3000:]

    def close(self) -> None:
        """Ctrl-C, as in its terminal; killed if it does not end."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def shoot(url: str, out: Path) -> list[tuple[str, int, int]]:
    """Drives one run from the page and writes the screenshots; (file name, width, height) of each."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=GUARD_MS)
    written: list[tuple[str, int, int]] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            context = browser.new_context(viewport=DESKTOP)
            context.set_default_timeout(GUARD_MS)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(url)
            page.get_by_role("button", name="Start", exact=True).click()
            expect(page.locator(RESULT)).to_contain_text("RESULT")
            _wait_until_loaded(page)
            for name, selector in SECTIONS.items():
                part = page.locator(selector)
                if part.count() != 1:
                    raise Failed(f"the page has {part.count()} elements {selector} (the {name} part), not one")
                part.scroll_into_view_if_needed()
                box = part.bounding_box()
                if box is None or box["width"] < 1 or box["height"] < 1:
                    raise Failed(f"the {name} part ({selector}) is not shown")
                part.screenshot(path=str(out / f"{name}.png"), animations="disabled")
                written.append((f"{name}.png", round(box["width"]), round(box["height"])))
            _refuse_shown_errors(page, "desktop")
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(out / "page-desktop.png"), full_page=True, animations="disabled")
            written.append(("page-desktop.png", DESKTOP["width"], _page_height(page)))
            if errors:
                raise Failed(f"uncaught JavaScript errors in the page: {errors}")
            context.close()

            phone_context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
            phone_context.set_default_timeout(GUARD_MS)
            phone = phone_context.new_page()
            phone.goto(url)
            expect(phone.locator(RESULT)).to_contain_text("RESULT")  # the last run's result, on a new page
            _wait_until_loaded(phone)
            _refuse_shown_errors(phone, "phone")
            wide = phone.evaluate("document.documentElement.scrollWidth")
            if wide > PHONE["width"]:
                raise Failed(f"on the phone-sized screen the page is {wide} px wide, wider than its {PHONE['width']} px "
                             "(it scrolls sideways)")
            phone.screenshot(path=str(out / "page-phone.png"), full_page=True, animations="disabled")
            written.append(("page-phone.png", PHONE["width"], _page_height(phone)))
            phone_context.close()
        finally:
            browser.close()
    return written


def shrink(path: Path) -> None:
    """Each channel rounded to 6 bits and the strongest compression: about a quarter smaller in the
    repository, with no difference a reader sees."""
    import cv2

    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise Failed(f"{path} is not a PNG that OpenCV reads")
    cv2.imwrite(str(path), image & 0xFC, [cv2.IMWRITE_PNG_COMPRESSION, 9])


def _wait_until_loaded(page) -> None:
    """Until the parts that load on their own have: a live frame, the solve log, the doctor's checks."""
    _wait_for_live_image(page)
    for rows in ("#history-table tr", "#doctor-table tr"):
        page.locator(rows).first.wait_for(state="attached")


def _wait_for_live_image(page) -> None:
    """Until the live view shows a decoded frame (an <img> or a <canvas> with pixels)."""
    page.wait_for_function(
        """() => {
             const live = document.querySelector('#live');
             if (!live) return false;
             const img = live.querySelector('img');
             if (img && img.complete && img.naturalWidth > 0) return true;
             const canvas = live.querySelector('canvas');
             return !!(canvas && canvas.width > 0 && canvas.dataset.frames && Number(canvas.dataset.frames) > 0);
           }""")


def _refuse_shown_errors(page, screen: str) -> None:
    """Screenshots for the README must not show an error line (a part whose API call failed)."""
    shown = page.evaluate("""() => Array.from(document.querySelectorAll('section'))
        .map((section) => [section.id, Array.from(section.querySelectorAll('.errors'))
                                         .map((line) => line.textContent.trim()).filter(Boolean).join('; ')])
        .filter(([, text]) => text)""")
    if shown:
        raise Failed(f"the page ({screen}) shows errors: "
                     + "; ".join(f"#{section}: {text}" for section, text in shown))


def _page_height(page) -> int:
    return int(page.evaluate("Math.ceil(document.documentElement.scrollHeight)"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", nargs="?", type=Path, default=ROOT / "docs" / "panel",
                        help="where the PNGs go (default: docs/panel/)")
    parser.add_argument("--seed", type=int, default=1, help="the simulated run's seed (scramble and images)")
    parser.add_argument("--config", type=Path, help="settings file (default: a copy of config.yaml, see above)")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"panel_screenshots: no {CHROMIUM} (Debian's chromium package; scripts/setup.sh installs it)",
              file=sys.stderr)
        return 2
    args.folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="panel-screenshots-") as scratch:
        config = args.config or scratch_config(Path(scratch))
        try:
            panel = PanelProcess(config, args.seed, Path(scratch))
            try:
                written = shoot(panel.url or "", args.folder)
            finally:
                panel.close()
        except Failed as failure:
            print(f"panel_screenshots: {failure}", file=sys.stderr)
            return 1
        except Exception as error:
            if not type(error).__module__.startswith("playwright"):
                raise
            # A wait that never ended or a page that did not load: Playwright's message says which.
            print(f"panel_screenshots: the browser: {error}", file=sys.stderr)
            return 1
    for name, width, height in written:
        shrink(args.folder / name)
        print(f"{name} {width}x{height}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
