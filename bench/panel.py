"""Panel benchmark: the emergency stop from a browser's click, the live view, and the cost of watching a
run (prints one table per measurement, the load average beside it, and a verdict per target).

    .venv/bin/python bench/panel.py [--clicks 50] [--run-clicks 10] [--seconds 20] [--seeds 20]
                                    [--only estop live watch] [--save-images]

Every measurement drives `cube-robot panel --sim --firmware emulator --http-port 0` in its own process (the
real firmware in simavr paced at real time, the simulated 30 fps webcam) from Debian's chromium through
Playwright, as a person at the page would; its config is the shipped one with pictures and the solve log
in a temporary folder (scan pictures off unless --save-images, as bench/e2e.py).

1. Emergency stop (targets: median <= 20 ms, p99 <= 50 ms).  From the click to the `!` arriving at the
   emulated firmware's UART, both on the host's wall clock: the click's time is the page's
   `performance.timeOrigin + event.timeStamp` of the Emergency stop button's pointerdown (the press the
   page acts on); the arrival's is the harness's CLOCK_REALTIME as the byte goes into the UART (its
   --uart-log, asked for through CUBE_ROBOT_UART_LOG: robot/sim/emulator.py).  The page's clock is checked
   against the host's (`performance.timeOrigin + performance.now()` between two time.time_ns()).
   Idle clicks: the board idle, the alarm cleared after each (POST /api/alarm/clear) and the board read
   back without it.  Mid-run clicks: a run started from the page on a new cube each time (a stop mid-turn
   jams the virtual cube), clicked at a random moment of its scan or of its plan's execution.
2. Live view (targets: >= 25 fps received, median frame age <= 100 ms, panel CPU <= 25 % of one core).
   Over --seconds: frames received by the page (window.panelLive.frames) per second of the page's clock,
   each frame's age on arrival as the page computes it (Date.now() - X-Exposure-End), and the panel
   process's CPU (/proc/PID/stat utime+stime; its emulator, a child process, shown apart), first for half
   the time with no page open (the panel idle), then streaming to the page.
3. The cost of watching (target: the watched runs' mean button-to-solved at most 2 % above the plain
   runs').  Per seed, in turn (which goes first turns): a fresh panel, a page watching its stream,
   POST /api/sim/new-cube then the page's Start, the report's button_to_solved_ms; `cube-robot run
   --sim --realtime --firmware emulator --json` with no panel; and, to tell the stream's share from the
   panel's, the same panel and page with the camera stream refused in the browser (unwatched).  Both get the same cube and the same
   simulation seed: the run is given `--scramble S --seed N` (a scramble made here from the seed), the
   panel `{"scramble": S, "seed": M}` where M is the robot seed `run` derives from N
   (robot/run/simulated.py: the first draw of numpy's default_rng(N) when a scramble is given); every
   pair's true_state is checked equal (new-cube's answer, the panel run's report, the run's report).

Not a test: the numbers depend on the machine and its load (2 cores shared here); targets are checked
here, not in timed tests.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from robot import config as config_module  # noqa: E402
from robot.sim import emulator  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CLIENT_HEADER = "X-Cube-Robot-Client"
ESTOP_BYTE = ord("!")
GUARD_S = 300.0  # ends a hang (a panel that never answers); not a bound on anything measured
TARGETS = {"estop_median_ms": 20.0, "estop_p99_ms": 50.0, "fps": 25.0, "age_median_ms": 100.0,
           "cpu_percent": 25.0, "watch_slower": 0.02}


def cube_robot() -> list[str]:
    script = Path(sys.executable).parent / "cube-robot"
    return [str(script)] if script.exists() else [sys.executable, "-m", "robot"]


def load_average() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def verdict(name: str, value: float, target: float, at_most: bool = True, unit: str = "") -> str:
    met = value <= target if at_most else value >= target
    return f"  {name}: {value:.1f}{unit} {'<=' if at_most else '>='} {target:g}{unit}: {'MET' if met else 'NOT MET'}"


def bench_config(folder: Path, save_images: bool) -> Path:
    text = (config_module.PROJECT_ROOT / "config.yaml").read_text()
    text = text.replace("images_dir: runs/scans", f"images_dir: {folder / 'scans'}")
    text = text.replace("preview_dir: runs/preview", f"preview_dir: {folder / 'preview'}")
    text = text.replace("data_dir: data", f"data_dir: {folder / 'data'}")
    if not save_images:
        text = text.replace("save_images: true", "save_images: false")
    path = folder / "config.yaml"
    path.write_text(text)
    config_module.load(path)  # a config the edits broke is said here, not by the panel
    return path


# -- the panel in its own process ---------------------------------------------------------------------------

class Panel:
    """`cube-robot panel --sim --firmware emulator --http-port 0` until close() (Ctrl-C to its group)."""

    def __init__(self, folder: Path, config: Path, env: dict[str, str] | None = None):
        folder.mkdir(parents=True, exist_ok=True)
        command = [*cube_robot(), "panel", "--sim", "--firmware", "emulator", "--http-port", "0",
                   "--config", str(config)]
        self.stderr_path = folder / "panel-stderr.txt"
        with open(self.stderr_path, "a") as stderr:
            self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=folder,
                                            start_new_session=True, env={**os.environ, **(env or {})})
        assert self.process.stdout is not None
        self.url = ""
        for line in self.process.stdout:
            if line.startswith("Panel: "):
                self.url = line.split()[1]
                break
        if not self.url:
            self.close()
            raise RuntimeError(f"the panel printed no URL; its stderr:\n{self.stderr_path.read_text()[-3000:]}")
        threading.Thread(target=self.process.stdout.read, daemon=True).start()  # a full pipe would block it

    @property
    def pid(self) -> int:
        return self.process.pid

    def request(self, method: str, path: str, body: dict | None = None, client: str | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if client:
            headers[CLIENT_HEADER] = client
        request = urllib.request.Request(self.url.rstrip("/") + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=GUARD_S) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"{method} {path}: {exc.code} {exc.read().decode(errors='replace')}") from None

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def post(self, path: str, body: dict, client: str) -> Any:
        return self.request("POST", path, body, client)

    def wait_state(self, ready: Callable[[dict], bool], what: str, every_s: float = 0.05) -> dict:
        deadline = time.monotonic() + GUARD_S
        while time.monotonic() < deadline:
            state = self.get("/api/state")
            if ready(state):
                return state
            time.sleep(every_s)  # polling the state: the panel's only way to tell a script
        raise RuntimeError(f"the panel never reached: {what}")

    def close(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@contextlib.contextmanager
def panel_running(folder: Path, config: Path, env: dict[str, str] | None = None) -> Iterator[Panel]:
    panel = Panel(folder, config, env)
    try:
        yield panel
    finally:
        panel.close()


def open_page(browser, panel: Panel, stream: bool = True):
    """The panel's page, its live view showing frames (stream=False: the camera stream refused in the
    browser, nothing else changed); returns (page, its client name)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(GUARD_S * 1000)
    if not stream:
        page.route("**/api/camera.mjpeg*", lambda route: route.abort())
    page.goto(panel.url)
    if stream:
        page.wait_for_function("window.panelLive && window.panelLive.frames > 0")
    else:
        page.get_by_role("button", name="Emergency stop", exact=True).wait_for()
    return page, page.evaluate("sessionStorage.getItem('cube-robot-client')")


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
    return found


def cpu_percent(pids: list[int], seconds: float) -> list[float]:
    """Each process's CPU over `seconds` (the measurement's own interval), in % of one core."""
    tick = os.sysconf("SC_CLK_TCK")
    before, started = [cpu_ticks(p) for p in pids], time.monotonic()
    time.sleep(seconds)
    after, wall = [cpu_ticks(p) for p in pids], time.monotonic() - started
    return [100.0 * (a - b) / tick / wall for a, b in zip(after, before)]


def stats(values: list[float]) -> str:
    v = np.array(values, float)
    return (f"{len(v):>4}{np.median(v):>9.1f}{v.mean():>9.1f}{np.percentile(v, 90):>9.1f}"
            f"{np.percentile(v, 99):>9.1f}{v.min():>9.1f}{v.max():>9.1f}")


STATS_HEADER = f"{'n':>4}{'median':>9}{'mean':>9}{'p90':>9}{'p99':>9}{'min':>9}{'max':>9}"


# -- 1. the emergency stop ------------------------------------------------------------------------------------

def page_clock_offset_ms(page) -> tuple[float, float]:
    """The page's wall clock minus the host's (ms) and its uncertainty: the tightest of 5 brackets."""
    best = None
    for _ in range(5):
        before = time.time_ns()
        page_ms = page.evaluate("performance.timeOrigin + performance.now()")
        after = time.time_ns()
        half = (after - before) / 2e6
        offset = page_ms - (before + after) / 2e6
        if best is None or half < best[1]:
            best = (offset, half)
    assert best is not None
    return best


class EstopClicker:
    """Clicks the page's Emergency stop and finds the `!` it made in the harness's UART log."""

    def __init__(self, page, uart_log: Path):
        self.page, self.uart_log = page, uart_log
        self.button = page.get_by_role("button", name="Emergency stop", exact=True)
        self.button.evaluate("(b) => { window.benchPresses = []; b.addEventListener('pointerdown', "
                             "(e) => window.benchPresses.push(performance.timeOrigin + e.timeStamp), "
                             "{capture: true}); }")
        # When the panel's answer to the page's POST /api/estop is back in the page (for comparison only).
        page.evaluate("() => { window.benchAnswers = []; const fetch = window.fetch.bind(window); "
                      "window.fetch = async (...a) => { const r = await fetch(...a); "
                      "if (String(a[0]).includes('/api/estop')) "
                      "window.benchAnswers.push(performance.timeOrigin + performance.now()); return r; }; }")

    def click(self) -> tuple[float, float]:
        """One click: ms from its press to the first `!` into the firmware's UART after it, and to the
        panel's answer in the page."""
        offset = self.uart_log.stat().st_size if self.uart_log.exists() else 0
        presses = self.page.evaluate("window.benchPresses.length")
        answers = self.page.evaluate("window.benchAnswers.length")
        self.button.click()
        pressed_ms = self.page.evaluate(f"window.benchPresses.length === {presses + 1} ? window.benchPresses.at(-1) "
                                        ": null")
        if pressed_ms is None:
            raise RuntimeError("the click made no single pointerdown on the Emergency stop button")
        deadline = time.monotonic() + GUARD_S
        while time.monotonic() < deadline:
            if self.uart_log.exists():
                logged, offset = emulator.read_uart_log(self.uart_log, offset)
                stops = [b for b in logged if b.byte == ESTOP_BYTE]
                if stops:
                    self.page.wait_for_function(f"window.benchAnswers.length > {answers}")
                    answered_ms = self.page.evaluate(f"window.benchAnswers[{answers}]")
                    return stops[0].wall_ns / 1e6 - pressed_ms, answered_ms - pressed_ms
            time.sleep(0.01)  # the harness stamps the byte itself: noticing it later changes nothing measured
        raise RuntimeError("no `!` reached the firmware's UART after the click")


def idle_clicks(panel: Panel, clicker: EstopClicker, client: str, clicks: int, label: str) -> list[tuple[float, float]]:
    """Clicks with the board idle, the alarm cleared after each and read back clear: (to the UART, answer)."""
    found = []
    for i in range(clicks):
        found.append(clicker.click())
        cleared = panel.post("/api/alarm/clear", {}, client)
        if cleared["board"].get("alarm") is not None:
            raise RuntimeError(f"the alarm stayed latched after clearing: {cleared['board']}")
        print(f"\r  idle click {i + 1}/{clicks} ({label}): {found[-1][0]:.1f} ms", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return found


def bench_estop(browser, folder: Path, config: Path, clicks: int, run_clicks: int, seed: int) -> list[str]:
    uart_log = folder / "uart.log"
    rows: dict[str, list[tuple[float, float]]] = {}
    results: list[str] = []
    with panel_running(folder / "estop-panel", config, {emulator.UART_LOG_ENV: str(uart_log)}) as panel:
        # The page as a person has it: the live view streaming.
        page, client = open_page(browser, panel)
        panel.post("/api/control", {"take": True}, client)
        clicker = EstopClicker(page, uart_log)
        offsets = [page_clock_offset_ms(page)]
        load_before = load_average()
        rows["idle, live view streaming"] = idle_clicks(panel, clicker, client, clicks, "streaming")
        rng = random.Random(seed)
        attempts = 0
        while sum(len(v) for k, v in rows.items() if k.startswith("mid-run")) < run_clicks and attempts < 3 * run_clicks:
            attempts += 1
            stage = ("scan", "execute")[attempts % 2]
            panel.post("/api/sim/new-cube", {"scramble": scramble_for(10_000 + attempts)}, client)
            previous = panel.wait_state(lambda s: s["run"]["state"] == "idle", "idle after a new cube")["run"]["id"]
            page.get_by_role("button", name="Start", exact=True).click()
            state = panel.wait_state(lambda s: s["run"]["id"] != previous and (
                s["run"]["stage"] == stage or s["run"]["state"] == "idle"), f"the run's {stage}", every_s=0.02)
            if state["run"]["state"] == "idle":
                continue  # the run ended before the stage was seen: another cube
            time.sleep(rng.uniform(0.0, 0.4))  # a random moment within the stage (this is the bench's choice)
            at = panel.get("/api/state")["run"]
            clicked = clicker.click()
            ended = panel.wait_state(lambda s: s["run"]["state"] == "idle", "the run's end after the stop")
            rows.setdefault(f"mid-run: {at['stage'] if at['state'] != 'idle' else 'after the run'}", []).append(clicked)
            results.append(ended["run"]["result_line"] or "(no result line)")
            print(f"\r  mid-run click {len(results)}/{run_clicks} ({at['stage']}): {clicked[0]:.1f} ms",
                  end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        offsets.append(page_clock_offset_ms(page))
        page.close()
        # For comparison: the same idle clicks from a page whose live view is not streaming.
        page, client = open_page(browser, panel, stream=False)
        panel.post("/api/control", {"take": True}, client)
        clicker = EstopClicker(page, uart_log)
        rows["idle, no live view"] = idle_clicks(panel, clicker, client, clicks, "no stream")
        page.close()
    print(f"\n== Emergency stop: click (page pointerdown) -> `!` into the emulated firmware's UART (ms) ==\n"
          f"SIMULATED: real firmware in simavr at real-time pacing; chromium {browser.version} headless; "
          f"{load_before} (start), {load_average()} (end)\n"
          f"page clock minus host clock: {offsets[0][0]:+.2f} ms (+-{offsets[0][1]:.2f}) at the start, "
          f"{offsets[1][0]:+.2f} ms (+-{offsets[1][1]:.2f}) at the end (not subtracted)")
    print(f"{'clicks':<28}{STATS_HEADER}")
    for label, values in rows.items():
        print(f"{label[:27]:<28}{stats([v for v, _ in values])}")
    streamed = [c for label, values in rows.items() if label != "idle, no live view" for c in values]
    print(f"{'all with the live view':<28}{stats([v for v, _ in streamed])}")
    print("the panel's answer back in the page (ms from the press; for comparison, not the target's measure):")
    for label, values in rows.items():
        print(f"{'  ' + label[:25]:<28}{stats([a for _, a in values])}")
    every = [c for values in rows.values() for c in values]
    print("slowest clicks (to the UART / answer in the page, ms): "
          + ", ".join(f"{v:.0f}/{a:.0f}" for v, a in sorted(every, reverse=True)[:5]))
    # The panel writes the byte before it answers: a `!` later than the answer waited in the pty or for the
    # emulator's process to be scheduled, not in the page or the panel.
    print(f"clicks whose `!` reached the UART after the page had the panel's answer: "
          f"{sum(v > a for v, a in every)} of {len(every)}")
    if results:
        print("the mid-run runs' results:")
        for result in sorted(set(results)):
            print(f"  {results.count(result)} x {result}")
    verdicts = []
    for label, values in (("idle, live view streaming", rows["idle, live view streaming"]),
                          ("all with the live view", streamed)):
        latencies = [v for v, _ in values]
        verdicts.append(verdict(f"emergency stop median ({label})", float(np.median(latencies)),
                                TARGETS["estop_median_ms"], unit=" ms"))
        verdicts.append(verdict(f"emergency stop p99 ({label})", float(np.percentile(latencies, 99)),
                                TARGETS["estop_p99_ms"], unit=" ms"))
    print("\n".join(verdicts))
    return verdicts


# -- 2. the live view -------------------------------------------------------------------------------------------

AGE_HOOK = """() => {
  const live = window.panelLive;
  let age = live.ageMs;
  window.benchAges = [];
  Object.defineProperty(live, "ageMs", {configurable: true, get: () => age,
    set: (v) => { age = v; if (v !== null) window.benchAges.push(v); }});
}"""
LIVE_SAMPLE = "() => ({frames: panelLive.frames, index: panelLive.lastIndex, fps: panelLive.fps, " \
              "now: performance.now(), ages: window.benchAges ? window.benchAges.length : 0})"


def bench_live(browser, folder: Path, config: Path, seconds: float) -> list[str]:
    with panel_running(folder / "live-panel", config) as panel:
        harness = children(panel.pid)
        idle_cpu = cpu_percent([panel.pid, *harness], seconds / 2)
        page, _ = open_page(browser, panel)
        page.evaluate(AGE_HOOK)
        first = page.evaluate(LIVE_SAMPLE)
        load_before = load_average()
        streaming_cpu = cpu_percent([panel.pid, *harness], seconds)
        last = page.evaluate(LIVE_SAMPLE)
        ages = page.evaluate("window.benchAges")
        page.close()
    fps = (last["frames"] - first["frames"]) * 1000.0 / (last["now"] - first["now"])
    made = (last["index"] - first["index"]) * 1000.0 / (last["now"] - first["now"])
    print(f"\n== Live view: the simulated 30 fps webcam streamed to a page for {seconds:g} s ==\n"
          f"SIMULATED; {load_before} (start), {load_average()} (end)")
    print(f"frames received by the page: {fps:.1f} per second ({last['frames'] - first['frames']} frames; "
          f"frame indexes advanced {made:.1f} per second; the page's own 2 s reading at the end "
          f"{last['fps']:.1f})")
    print(f"{'frame age on arrival (ms)':<28}{STATS_HEADER}")
    print(f"{'exposure end -> page':<28}{stats(ages)}")
    print(f"{'CPU (% of one core)':<28}{'panel':>9}{'emulator':>10}")
    print(f"{'no page open':<28}{idle_cpu[0]:>9.1f}{sum(idle_cpu[1:]):>10.1f}")
    print(f"{'streaming to the page':<28}{streaming_cpu[0]:>9.1f}{sum(streaming_cpu[1:]):>10.1f}")
    verdicts = [verdict("frames per second received", fps, TARGETS["fps"], at_most=False),
                verdict("median frame age", float(np.median(ages)), TARGETS["age_median_ms"], unit=" ms"),
                verdict("panel CPU while streaming", streaming_cpu[0], TARGETS["cpu_percent"], unit=" %")]
    print("\n".join(verdicts))
    return verdicts


# -- 3. the cost of watching --------------------------------------------------------------------------------

ORIENTATIONS = [" ".join(p for p in (a, b) if p) for a in ("", "x", "x2", "x'", "z", "z'")
                for b in ("", "y", "y2", "y'")]  # the 24 ways a cube can sit in the grippers


def scramble_for(seed: int, length: int = 11) -> str:
    """A random scramble (U R F turns: all a 2x2x2 has) and a random orientation, from the seed."""
    rng = random.Random(seed)
    moves: list[str] = []
    while len(moves) < length:
        face = rng.choice("URF")
        if not moves or moves[-1][0] != face:
            moves.append(face + rng.choice(("", "'", "2")))
    orientation = rng.choice(ORIENTATIONS)
    return " ".join(moves + ([orientation] if orientation else []))


def run_robot_seed(seed: int) -> int:
    """The SimulatedRobot seed `cube-robot run --seed N --scramble S` uses (robot/run/simulated.py)."""
    return int(np.random.default_rng(seed).integers(1 << 30))


def watched_run(browser, folder: Path, config: Path, scramble: str, robot_seed: int, stream: bool = True) -> dict:
    """A run started from the page of a fresh panel; stream=False: the page's camera stream refused."""
    with panel_running(folder, config) as panel:
        page, client = open_page(browser, panel, stream)
        panel.post("/api/control", {"take": False}, client)
        cube = panel.post("/api/sim/new-cube", {"scramble": scramble, "seed": robot_seed}, client)
        if stream:
            frames = page.evaluate("panelLive.frames")
            page.wait_for_function(f"panelLive.frames > {frames}")  # the stream goes on from the new camera
        before = page.evaluate(LIVE_SAMPLE)
        page.get_by_role("button", name="Start", exact=True).click()
        panel.wait_state(lambda s: s["run"]["id"] == 1 and s["run"]["state"] == "idle", "the run's end",
                         every_s=0.25)
        after = page.evaluate(LIVE_SAMPLE)
        report = panel.get("/api/report")
        page.close()
    report["new_cube_true_state"] = cube["true_state"]
    report["watch_fps"] = (after["frames"] - before["frames"]) * 1000.0 / (after["now"] - before["now"])
    return report


def plain_run(config: Path, scramble: str, seed: int, folder: Path) -> dict:
    command = [*cube_robot(), "run", "--sim", "--realtime", "--firmware", "emulator", "--seed", str(seed),
               "--scramble", scramble, "--json", "--config", str(config)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=folder, timeout=GUARD_S)
    lines = done.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(f"`{' '.join(command)}` printed no report (exit {done.returncode}): {done.stderr[-2000:]}")
    return json.loads(lines[-1])


def stage_spans(report: dict) -> dict[str, float]:
    return {s["stage"]: s["end_ms"] - s["start_ms"] for s in report.get("waterfall", [])
            if not s["stage"].startswith("verify") and not s["stage"].endswith(": frame")}


def print_stages(pairs: list[tuple[dict, dict]], unwatched: list[dict]) -> None:
    """Where the difference is: each waterfall stage's mean every way (the seeds that have it every way)."""
    order: list[str] = []
    found: dict[str, list[tuple[float, float, float]]] = {}
    for (watched, plain), other in zip(pairs, unwatched):
        spans = [stage_spans(r) for r in (watched, plain, other)]
        for name, value in spans[0].items():
            if name in spans[1] and name in spans[2]:
                if name not in found:
                    order.append(name)
                found.setdefault(name, []).append((value, spans[1][name], spans[2][name]))
    print(f"{'stage (ms; seeds with it every way)':<42}{'n':>4}{'watched':>9}{'plain':>9}{'diff':>8}{'unwatched':>10}")
    for name in order:
        w, p, u = np.array(found[name], float).T
        print(f"{name[:41]:<42}{len(w):>4}{w.mean():>9.1f}{p.mean():>9.1f}{w.mean() - p.mean():>8.1f}{u.mean():>10.1f}")
    # The plan's arm time as the firmware counted it (emulated ms): what execute took beyond it is the link's
    # and host's time plus the emulator falling behind real time when it waits for a CPU (a real board
    # would not: it has its own).
    excess = [[r["execute_ms"] - r["measured_machine_ms"] for r in (w, p, u)]
              for (w, p), u in zip(pairs, unwatched)
              if all(r.get("execute_ms") is not None and r.get("measured_machine_ms") is not None for r in (w, p, u))]
    if excess:
        w, p, u = np.array(excess, float).T
        print(f"{'execute beyond the firmware-counted arm time':<42}{len(w):>4}{w.mean():>9.1f}{p.mean():>9.1f}"
              f"{w.mean() - p.mean():>8.1f}{u.mean():>10.1f}")


WAYS = ("watched", "unwatched", "plain")


def bench_watch(browser, folder: Path, config: Path, seeds: int) -> list[str]:
    rows = []
    load_before = load_average()
    for seed in range(seeds):
        scramble, robot_seed = scramble_for(seed), run_robot_seed(seed)
        ways: dict[str, Callable[[], dict]] = {
            "watched": lambda: watched_run(browser, folder / f"watch-{seed}", config, scramble, robot_seed),
            "unwatched": lambda: watched_run(browser, folder / f"unwatched-{seed}", config, scramble, robot_seed,
                                             stream=False),
            "plain": lambda: plain_run(config, scramble, seed, folder),
        }
        order = WAYS[seed % 3:] + WAYS[:seed % 3]  # which goes first turns with the seed
        got = {way: ways[way]() for way in order}
        same = len({got["plain"]["true_state"], *(got[w][k] for w in ("watched", "unwatched")
                                                   for k in ("true_state", "new_cube_true_state"))}) == 1
        rows.append((seed, scramble, got, same))
        print(f"  seed {seed + 1}/{seeds}: " + ", ".join(f"{w} {got[w].get('button_to_solved_ms')} ms "
                                                        f"({got[w]['outcome']})" for w in WAYS)
              + f", same cube {same}", file=sys.stderr, flush=True)
    print(f"\n== The cost of watching: button -> solved (ms): watched = a run started from the page of a panel with "
          f"the browser watching its stream; plain = `cube-robot run --sim --realtime` with no panel; unwatched "
          f"(for comparison, not the target) = the same panel and page with the camera stream refused ==\n"
          f"SIMULATED, REAL TIME, real firmware in simavr; the same scramble and simulation seed every way; "
          f"interleaved (which goes first turns); a fresh panel per run; {load_before} (start), "
          f"{load_average()} (end)")
    print(f"{'seed':>4}  {'scramble':<36}{'same cube':>10}{'views':>7}{'watched':>9}{'plain':>9}{'diff':>8}"
          f"{'page fps':>9}{'unwatched':>10}")
    kept = []
    for seed, scramble, got, same in rows:
        ok = same and all(got[w]["solved"] for w in WAYS)
        w, u, p = (got[way].get("button_to_solved_ms") for way in WAYS)
        if ok:
            kept.append(got)
        views = "/".join(str(got[way].get("scan_views")) for way in ("watched", "plain"))
        print(f"{seed:>4}  {scramble:<36}{'yes' if same else 'NO':>10}{views:>7}"
              f"{w if w is not None else '-':>9}{p if p is not None else '-':>9}"
              f"{(w - p) if ok else float('nan'):>8.1f}{got['watched']['watch_fps']:>9.1f}"
              f"{u if u is not None else '-':>10}"
              + ("" if ok else "  (left out: " + " / ".join(got[way]["outcome"] for way in WAYS) + ")"))
    if not kept:
        print("no seed solved every way: nothing to compare")
        return ["  cost of watching: NOT MEASURED (no seed solved every way)"]
    ms = {way: np.array([g[way]["button_to_solved_ms"] for g in kept], float) for way in WAYS}
    print(f"{'':<50}{'mean':>9}{'median':>9}")
    for way in WAYS:
        print(f"{way:<50}{ms[way].mean():>9.1f}{np.median(ms[way]):>9.1f}")
    for way in ("watched", "unwatched"):
        diff = ms[way] - ms["plain"]
        # A rough 95 % interval of the mean difference (t with n-1 degrees of freedom, ~2.1 for 20 seeds).
        half = 2.1 * diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
        base = ms["plain"].mean()
        print(f"{way + ' - plain, per seed':<50}{diff.mean():>9.1f}{np.median(diff):>9.1f}   95 % interval of "
              f"the mean: {diff.mean() - half:+.0f} .. {diff.mean() + half:+.0f} ms "
              f"({100 * (diff.mean() - half) / base:+.1f} .. {100 * (diff.mean() + half) / base:+.1f} %)")
    print(f"seeds compared: {len(kept)}/{len(rows)}")
    print_stages([(g["watched"], g["plain"]) for g in kept], [g["unwatched"] for g in kept])
    slower = ms["watched"].mean() / ms["plain"].mean() - 1
    verdicts = [verdict("watched runs slower than plain (mean)", 100 * slower, 100 * TARGETS["watch_slower"],
                        unit=" %")]
    print("\n".join(verdicts))
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clicks", type=int, default=50, help="emergency stops with the board idle")
    parser.add_argument("--run-clicks", type=int, default=10, help="emergency stops during a run (scan, execute)")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the live view is measured")
    parser.add_argument("--seeds", type=int, default=20, help="seeds of the cost of watching (each: every way)")
    parser.add_argument("--only", nargs="+", choices=("estop", "live", "watch"), default=["estop", "live", "watch"])
    parser.add_argument("--save-images", action="store_true", help="scan pictures saved, as the shipped config")
    options = parser.parse_args()
    ok, reason = emulator.available()
    if not ok:
        sys.exit(f"bench/panel.py needs the firmware emulator: {reason}")
    if not Path(CHROMIUM).exists():
        sys.exit(f"bench/panel.py needs Debian's chromium at {CHROMIUM} (scripts/setup.sh installs it)")
    emulator.build()
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    verdicts: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-panel-") as tmp, sync_playwright() as playwright:
        folder = Path(tmp)
        config = bench_config(folder, options.save_images)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            if "estop" in options.only:
                verdicts += bench_estop(browser, folder, config, options.clicks, options.run_clicks, seed=1)
            if "live" in options.only:
                verdicts += bench_live(browser, folder, config, options.seconds)
            if "watch" in options.only:
                verdicts += bench_watch(browser, folder, config, options.seeds)
        finally:
            browser.close()
    print(f"\n== Verdicts ({time.monotonic() - started:.0f} s; {load_average()}) ==")
    print("\n".join(verdicts))


if __name__ == "__main__":
    main()
