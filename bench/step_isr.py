"""The step ISR in simavr: its cycles per run, and the step times of a fixed set of actions.

    python3 bench/step_isr.py [--elf ELF --harness HARNESS] [--save-steps FILE] [--compare FILE]

Runs ACTIONS (default motion, a triangle move, the fastest settings, a homing) on the firmware in
simavr with the harness's ISR trace (`--isr-log`: the cycles from the vector's jump to the return,
interrupts nested inside it included) and its pin log.  Prints the step ISR's median and maximum
cycles, overall and at the fastest settings (8000 steps/s: 2000 cycles between steps); target:
worst case under 600.  --save-steps writes every step's time (cycles from its action's first step)
in Timer1 ticks as JSON; --compare reads such a file (recorded from another build) and prints how far
each step moved.  Without --elf/--harness it builds and runs the repository's firmware.
"""

from __future__ import annotations

import argparse
import bisect
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import serial

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robot.link import protocol as P  # noqa: E402
from robot.sim import emulator, pinlog  # noqa: E402

ISR_TARGET_CYCLES = 600
FASTEST = "MOTION S6400 V8000 A200000"
DEFAULT_MOTION = "MOTION S400 V2000 A66667"
# (label, command or harness control line `@...`, wait for `done`)
ACTIONS = [
    ("motors", "MOTORS ON", False),
    ("grip RL", "GRIP RL", True),
    ("pair quarter", "TURN R90 L-90", True),
    ("half", "TURN R180", True),
    ("grip FB", "GRIP FB", True),
    ("uneven pair", "TURN F-90 B180", True),
    ("slow accel", "MOTION S400 V8000 A2000", False),
    ("triangle", "TURN F90", True),
    ("fastest", FASTEST, False),
    ("fastest pair", "TURN F180 B-90", True),
    ("defaults", DEFAULT_MOTION, False),
    ("sensor", "@sensor R 37 15 400", False),
    ("home", "HOME R", True),
]
SENSOR_STOPPED = {"home"}  # actions whose moves may end on the sensor (no end tick)
MOVES = [label for label, command, wait in ACTIONS if wait and not command.startswith("GRIP")]
REPLY_TIMEOUT_S = 30.0


class Run:
    """One harness with a pin log and an ISR log, and a minimal host on its pty."""

    def __init__(self, elf: Path, harness: Path, workdir: Path):
        self.pin_log, self.isr_log = workdir / "pins.log", workdir / "isr.log"
        self.proc = subprocess.Popen(
            [str(harness), str(elf), "--log", str(self.pin_log), "--isr-log", str(self.isr_log),
             "--isr-vector", str(STEP_VECTOR), "--isr-vector", str(SERVO_VECTOR)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(workdir / "harness.stderr", "w"), text=True)
        port = self.proc.stdout.readline().strip()
        if not port.startswith("/dev/"):
            raise RuntimeError(f"{harness} printed {port!r} instead of a pty path (see {workdir}/harness.stderr)")
        self.serial = serial.Serial(port, P.BAUD, timeout=REPLY_TIMEOUT_S)
        banner = self.reply()
        if not isinstance(banner, P.Identity):
            raise RuntimeError(f"expected the banner, got {banner}")
        self.seq = banner.last

    def reply(self):
        raw = self.serial.readline()
        if not raw.endswith(b"\n"):
            raise RuntimeError(f"no line from the firmware within {REPLY_TIMEOUT_S} s (got {raw!r})")
        return P.parse_reply(P.unframe(raw.rstrip(b"\r\n")))

    def control(self, line: str) -> int:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        if not answer.startswith(f"ok {line} "):
            raise RuntimeError(f"harness refused {line!r}: {answer}")
        return int(answer.rsplit(" ", 1)[1])

    def command(self, command: str, wait_done: bool) -> None:
        self.seq += 1
        self.serial.write(P.command_line(self.seq, command))
        answered = False
        while True:
            reply = self.reply()
            if isinstance(reply, P.Ok) and reply.seq == self.seq:
                answered = True
            elif isinstance(reply, (P.Err, P.Resend, P.Alarm)):
                raise RuntimeError(f"{command!r}: {reply}")
            elif isinstance(reply, P.Done) and reply.seq == self.seq:
                return
            if answered and not wait_done:
                return

    def close(self) -> None:
        self.serial.close()
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def run_actions(elf: Path, harness: Path, workdir: Path) -> tuple[dict, "IsrLog", list]:
    """({label: (start cycle, end cycle)}, the step ISR's log, the pin events)."""
    run = Run(elf, harness, workdir)
    spans = {}
    try:
        for label, command, wait in ACTIONS:
            start = run.control("cycle")
            if command.startswith("@"):
                run.control(command[1:])
            else:
                run.command(command, wait)
            spans[label] = (start, run.control("cycle"))
    finally:
        run.close()
    return spans, read_isr_log(run.isr_log), pinlog.read_log(run.pin_log)


STEP_VECTOR, SERVO_VECTOR = 11, 12  # TIMER1_COMPA, TIMER1_COMPB (ATmega328P)


class IsrLog(NamedTuple):
    pending: dict[int, list[int]]             # per vector: cycles at which it fell due (compare matches)
    runs: dict[int, list[tuple[int, int, int]]]  # per vector: (entry cycle, cycles, own cycles) of each run


def read_isr_log(path: Path) -> IsrLog:
    log = IsrLog({STEP_VECTOR: [], SERVO_VECTOR: []}, {STEP_VECTOR: [], SERVO_VECTOR: []})
    for number, line in enumerate(path.read_text().splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if fields[0] == "pending" and len(fields) == 3:
            log.pending.setdefault(int(fields[1]), []).append(int(fields[2]))
        elif fields[0] == "run" and len(fields) == 5:
            log.runs.setdefault(int(fields[1]), []).append((int(fields[2]), int(fields[3]), int(fields[4])))
        else:
            raise ValueError(f"{path}:{number}: not an ISR log line: {line!r}")
    return log


def servo_latencies(isr: IsrLog) -> list[int]:
    """Cycles from each servo compare to its ISR's entry: how long other code kept interrupts off."""
    pending = isr.pending[SERVO_VECTOR]
    return [entry - pending[bisect.bisect_right(pending, entry) - 1]
            for entry, _, _ in isr.runs[SERVO_VECTOR] if pending and pending[0] <= entry]


def stepped_after(pending: list[int], index: int, edges: list[int]) -> bool:
    """Whether a step edge follows the compare match pending[index] before the next one."""
    until = pending[index + 1] if index + 1 < len(pending) else float("inf")
    i = bisect.bisect_left(edges, pending[index])
    return i < len(edges) and edges[i] < until


def step_times(events, isr: IsrLog, spans: dict) -> dict[str, dict[str, list[list[int]]]]:
    """{action: {arm: [[each step's compare match, in cycles from its move's first] + [the move's end]
    for each move]}}: the step ISR's schedule, free of the latency before its pins change.  A move
    starts when the main loop starts it, so only the times within one are compared; its end is the
    compare after its last step (the end tick, which steps nothing)."""
    result = {}
    pending = isr.pending[STEP_VECTOR]
    for label in MOVES:
        start, end = spans[label]
        result[label] = {}
        steps = pinlog.step_events(events, start_cycle=start, end_cycle=end)
        all_edges = sorted(c for arm_steps in steps.values() for c, _ in arm_steps)
        for arm, moves in pinlog.arm_motions(events, start_cycle=start, end_cycle=end).items():
            if not moves:
                continue
            edges = [c for c, _ in steps[arm]]
            result[label][arm] = []
            for move in moves:
                due = [pending[bisect.bisect_right(pending, c) - 1]
                       for c in edges if move.start_cycle <= c <= move.end_cycle]
                after = bisect.bisect_right(pending, due[-1])
                # A move the homing sensor stops ends on its last step: no end tick (the compare
                # it had scheduled may still show, as simavr raises it).
                if label not in SENSOR_STOPPED and after < len(pending) \
                        and not stepped_after(pending, after, all_edges):
                    due.append(pending[after])
                result[label][arm].append([c - due[0] for c in due])
    return result


def isr_cycles(records, spans: dict, labels=None, own: bool = False) -> list[int]:
    """The step ISR's cycles per run in the actions named (default all): with the interrupts nested
    in it, or (own) without them."""
    windows = [spans[label] for label in (labels or list(spans))]
    return [own_cycles if own else cycles for entry, cycles, own_cycles in records.runs[STEP_VECTOR]
            if any(a <= entry < b for a, b in windows)]


CYCLES_PER_TICK = 8  # Timer1 at F_CPU/8


def in_ticks(times: dict) -> dict:
    """step_times in Timer1 ticks: compare matches fall on whole ticks (simavr raises them within the
    instruction then running, up to 3 cycles late), so rounding recovers the schedule exactly."""
    return {label: {arm: [[round(c / CYCLES_PER_TICK) for c in move] for move in moves]
                    for arm, moves in arms.items()} for label, arms in times.items()}


def compare(reference_ticks: dict, measured: dict) -> dict[str, list[tuple[int, int]]]:
    """{action: [(index in its move, cycles the step moved) for every step]}, each move aligned on
    its median step (a move's start is the main loop's).  ValueError when the steps themselves differ.

    simavr 1.6 sometimes runs the first compare after a move that the homing sensor stopped at the
    time the stopped move had scheduled next, not at the new move's (the writes of OCR1A and
    TIMSK1 leave that compare armed; an Uno clears it with TIFR1): such a first step stands out
    alone, in the old firmware and the new."""
    moved = {}
    for label, arms in reference_ticks.items():
        got = measured.get(label, {})
        if set(got) != set(arms):
            raise ValueError(f"{label}: arms {sorted(got)} stepped, {sorted(arms)} expected")
        moved[label] = []
        for arm, ref_moves in arms.items():
            shape, ref_shape = [len(m) for m in got[arm]], [len(m) for m in ref_moves]
            if shape != ref_shape:
                raise ValueError(f"{label}: arm {arm} made moves of {shape} steps, {ref_shape} expected")
            for move, ref in zip(got[arm], ref_moves):
                diffs = [c - CYCLES_PER_TICK * r for c, r in zip(move, ref)]
                offset = statistics.median_low(diffs)
                moved[label] += [(i, d - offset) for i, d in enumerate(diffs)]
    return moved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elf", type=Path, help="firmware .elf (default: build the repository's)")
    parser.add_argument("--harness", type=Path, help="harness binary (default: the repository's)")
    parser.add_argument("--save-steps", type=Path, help="write every step's time to this JSON file")
    parser.add_argument("--compare", type=Path, help="compare the step times with this JSON file")
    args = parser.parse_args()
    if args.elf is None or args.harness is None:
        emulator.build()
    elf, harness = args.elf or emulator.ELF, args.harness or emulator.HARNESS
    with tempfile.TemporaryDirectory(prefix="step-isr-") as tmp:
        started = time.monotonic()
        spans, records, events = run_actions(elf, harness, Path(tmp))
        print(f"{elf}: {len(records.runs[STEP_VECTOR])} step ISR runs in {time.monotonic() - started:.1f} s of wall time")
    for name, labels in (("all actions", None), ("fastest (8000 steps/s)", ["fastest pair"])):
        cycles, own = isr_cycles(records, spans, labels), isr_cycles(records, spans, labels, own=True)
        print(f"  step ISR, {name}: {len(cycles)} runs, median {statistics.median(cycles):.0f} cycles, "
              f"max {max(cycles)} with the interrupts nested in it; its own: median "
              f"{statistics.median(own):.0f}, max {max(own)} (target < {ISR_TARGET_CYCLES})")
    latencies = servo_latencies(records)
    print(f"  servo ISR's start after its compare: median {statistics.median(latencies):.0f} cycles, "
          f"max {max(latencies)} ({len(latencies)} pulses)")
    measured = step_times(events, records, spans)
    if args.save_steps:
        args.save_steps.write_text(json.dumps(in_ticks(measured)) + "\n")
        print(f"  step times written to {args.save_steps}")
    if args.compare:
        moved = compare(json.loads(args.compare.read_text()), measured)
        for label, steps in moved.items():
            diffs = [d for _, d in steps]
            off = [(i, d) for i, d in steps if abs(d) > 6]
            print(f"  {label:14s} {len(diffs):5d} steps: moved by {min(diffs)}..{max(diffs)} cycles; "
                  f"by more than 6 (index in move, cycles): {off or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
