"""The real firmware running in simavr, reachable through a pty like a real Uno.

    ok, reason = available()          # toolchain + simavr installed?
    with Emulator() as emu:           # builds if outdated, starts the harness
        port = serial.Serial(emu.port, 115200, timeout=1)   # the Uno resets on open
        ...
        emu.press("estop"); emu.release("estop")
        emu.reset()                   # the board's reset button (RAM kept)
        events = emu.pin_events()     # decode with robot.sim.pinlog
        emu.set_sensor("R", start=37, width=15, steps_per_rev=400)   # homing sensors
        emu.arm_position("R")         # the arm's angle in steps, as the harness models it

The harness (firmware/harness/harness.c) holds the CPU until the pty is
opened, resets it when the pty is closed and opened again (the Uno's DTR
reset), and logs every pin change with its cycle.  Several emulators can run
at once: each has its own pty and a private temporary directory.

The harness runs in its own session, so a terminal's Ctrl-C reaches only the host, which then
stops the robot in order and reads its state.  Its temporary directory goes on every exit: close()
(the context manager), at interpreter exit, on SIGTERM/SIGHUP (they raise SystemExit while an
emulator runs); a host killed outright (SIGKILL) leaves it, and the next start removes every
such directory whose owner process is gone (`remove_stale_folders`).

`Emulator(uart_log=PATH)`, or the environment variable CUBE_ROBOT_UART_LOG for emulators a program
starts inside (the panel's), appends each byte the host sends, as it goes into the firmware's UART, with
the host's wall clock (`read_uart_log`): bench/panel.py times the emergency stop from a browser's click.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .. import paths
from ..errors import DeviceError
from . import pinlog

FIRMWARE_DIR = paths.FIRMWARE_DIR
BUILD_DIR = paths.firmware_build_dir()  # firmware/build in a checkout; never inside site-packages
ELF = BUILD_DIR / "cube_robot.elf"
HARNESS = BUILD_DIR / "harness"
ARDUINO_CORE = Path("/usr/share/arduino/hardware/arduino/avr/cores/arduino")
INPUTS = ("estop", "start")
START_TIMEOUT_S = 10.0
CONTROL_TIMEOUT_S = 10.0
FOLDER_PREFIX = "cube-robot-emu-"
OWNER_FILE = "owner.pid"  # the host's pid: marks a folder this program made, and whose it is
UART_LOG_ENV = "CUBE_ROBOT_UART_LOG"

_TOOLS = ("make", "avr-gcc", "avr-g++", "avr-gcc-ar", "avr-objcopy", "avr-size", "gcc", "pkg-config")
_INSTALL_HINT = "install with: apt-get install gcc-avr avr-libc binutils-avr arduino-core-avr make " \
                "libsimavr-dev libelf-dev pkg-config gcc libc6-dev (or run scripts/setup.sh as root)"


class EmulatorError(DeviceError):
    """The emulator could not be built, started or controlled."""

    @property
    def advice(self) -> str:  # type: ignore[override]  # computed: the make command depends on where the firmware lives
        # what a run says to do (robot/run/pipeline.py advice_for)
        return f"the firmware emulator failed: run '{paths.make_advice('harness')}' to see the build error"


class BuildError(EmulatorError):
    """The firmware or the harness did not compile; the message holds the compiler output."""


def available() -> tuple[bool, str]:
    """(True, "") when the AVR toolchain, the Arduino core and simavr are installed,
    else (False, what is missing)."""
    missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    if missing:
        return False, f"missing {', '.join(missing)}; {_INSTALL_HINT}"
    if not ARDUINO_CORE.is_dir():
        return False, f"no Arduino core at {ARDUINO_CORE}; {_INSTALL_HINT}"
    if subprocess.run(["pkg-config", "--exists", "simavr"], capture_output=True).returncode != 0:
        return False, f"pkg-config does not find simavr; {_INSTALL_HINT}"
    if not Path("/usr/include/libelf.h").exists() and not Path("/usr/include/libelf/libelf.h").exists():
        return False, f"libelf headers missing; {_INSTALL_HINT}"
    return True, ""


def build(targets=("all", "harness")) -> None:
    """Build the firmware and the harness with make, only if something is outdated.

    Raises BuildError with the compiler output when the build fails."""
    ok, reason = available()
    if not ok:
        raise BuildError(f"cannot build the firmware: {reason}")
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    # One build at a time (parallel test processes share firmware/build).
    with open(BUILD_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        make = paths.make_command(*targets)
        if subprocess.run([*make, "-q"], capture_output=True).returncode == 0:
            return
        result = subprocess.run(make, capture_output=True, text=True)
        if result.returncode != 0:
            raise BuildError(
                f"firmware build failed ({' '.join(make)}, exit {result.returncode}):\n"
                f"{result.stdout[-4000:]}{result.stderr[-4000:]}"
            )


def size() -> dict[str, int]:
    """Flash and RAM use of the built firmware: {"flash": bytes, "ram": bytes}."""
    out = subprocess.run(["avr-size", "--mcu=atmega328p", "-C", "--format=avr", str(ELF)],
                         capture_output=True, text=True, check=True).stdout
    result = {}
    for line in out.splitlines():
        if line.startswith("Program:"):
            result["flash"] = int(line.split()[1])
        elif line.startswith("Data:"):
            result["ram"] = int(line.split()[1])
    return result


def remove_stale_folders(parent: str | Path | None = None) -> list[Path]:
    """Remove the temporary folders of emulators whose host process is gone (a host killed with
    SIGKILL cannot clean up).  Only folders with this program's owner file are touched; returns them."""
    removed = []
    for folder in Path(parent or tempfile.gettempdir()).glob(FOLDER_PREFIX + "*"):
        try:
            pid = int((folder / OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue  # not ours, or its owner is still writing the file
        if pid != os.getpid() and not _process_alive(pid):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


_running: "weakref.WeakSet[Emulator]" = weakref.WeakSet()
_TERMINATING = (signal.SIGTERM, signal.SIGHUP)
_saved_handlers: dict = {}


def _close_all() -> None:
    for emulator in list(_running):
        emulator.close()


atexit.register(_close_all)


def _terminate(signum, frame):
    # Unwinds the main thread: every `with` closes its emulator (and stops the robot in order).
    raise SystemExit(128 + signum)


def _watch_termination(on: bool) -> None:
    """While an emulator runs, SIGTERM/SIGHUP raise SystemExit instead of killing the host outright (which
    would leave the temporary folder); a handler someone else installed is left alone."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in _TERMINATING:
        if on and sig not in _saved_handlers and signal.getsignal(sig) == signal.SIG_DFL:
            _saved_handlers[sig] = signal.signal(sig, _terminate)
        elif not on and sig in _saved_handlers and signal.getsignal(sig) is _terminate:
            signal.signal(sig, _saved_handlers.pop(sig))


@dataclass(frozen=True)
class UartByte:
    """A byte the host sent, as it went into the firmware's UART (a line of the harness's --uart-log)."""

    wall_ns: int  # the host's CLOCK_REALTIME (time.time_ns()) at that moment
    cycle: int
    byte: int


def read_uart_log(path: str | Path, offset: int = 0) -> tuple[list[UartByte], int]:
    """The whole lines of a --uart-log file from byte `offset` on, and the offset after them."""
    with open(path, "rb") as file:
        file.seek(offset)
        data = file.read()
    whole = data[:data.rfind(b"\n") + 1]  # a line being written is read next time
    found = []
    for line in whole.decode().splitlines():
        seconds, cycle, byte = line.split()
        whole_s, _, fraction = seconds.partition(".")
        found.append(UartByte(int(whole_s) * 1_000_000_000 + int(fraction.ljust(9, "0")[:9]), int(cycle), int(byte)))
    return found, offset + len(whole)


class Emulator:
    """One simavr instance running the firmware; use as a context manager."""

    def __init__(self, realtime: bool = False, pin_log: bool = True, boot_delay_ms: int = 100,
                 uart_log: str | Path | None = None):
        self.realtime = realtime
        self.pin_log = pin_log
        self.boot_delay_ms = boot_delay_ms
        self.uart_log = uart_log if uart_log is not None else os.environ.get(UART_LOG_ENV) or None
        self.port: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._dir: str | None = None
        self._log_path: Path | None = None
        self._log_reader: pinlog.LogReader | None = None
        self._stdout_buf = b""
        self._stderr: IO[str] | None = None

    def __enter__(self) -> "Emulator":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> "Emulator":
        build()
        remove_stale_folders()
        _running.add(self)
        _watch_termination(True)
        try:
            self._dir = tempfile.mkdtemp(prefix=FOLDER_PREFIX)
            (Path(self._dir) / OWNER_FILE).write_text(str(os.getpid()))
            cmd = [str(HARNESS), str(ELF), "--boot-delay-ms", str(self.boot_delay_ms)]
            if self.pin_log:
                self._log_path = Path(self._dir) / "pins.log"
                cmd += ["--log", str(self._log_path)]
            if self.realtime:
                cmd.append("--realtime")
            if self.uart_log is not None:
                cmd += ["--uart-log", str(self.uart_log)]
            self._stderr = open(Path(self._dir) / "harness.stderr", "w+")
            # Its own session: a terminal's Ctrl-C (sent to the foreground process group) reaches only
            # the host, which stops the robot in order; the harness ends when its stdin closes.
            self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                          start_new_session=True)
            self.port = self._read_line(START_TIMEOUT_S, "the pty path")
            if not self.port.startswith("/dev/"):
                raise EmulatorError(f"harness printed {self.port!r} instead of a pty path")
        except BaseException:
            self.close()
            raise
        return self

    def _read_line(self, timeout: float, what: str) -> str:
        deadline = time.monotonic() + timeout
        proc = self._started()
        assert proc.stdout is not None  # started with stdout=PIPE
        fd = proc.stdout.fileno()
        while b"\n" not in self._stdout_buf:
            left = deadline - time.monotonic()
            if left <= 0 or proc.poll() is not None:
                raise EmulatorError(f"harness gave no {what} ({self._harness_failure()})")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    raise EmulatorError(f"harness closed its output before {what} ({self._harness_failure()})")
                self._stdout_buf += chunk
        line, self._stdout_buf = self._stdout_buf.split(b"\n", 1)
        return line.decode()

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            raise EmulatorError("emulator not running (start() it first)")
        return self._proc

    def _harness_failure(self) -> str:
        code = self._started().poll()
        err = ""
        if self._stderr is not None:
            self._stderr.seek(0)
            err = self._stderr.read()[-2000:].strip()
        state = "still running" if code is None else f"exit code {code}"
        return f"{state}; stderr: {err or '(empty)'}"

    def _raw_control(self, command: str) -> str:
        proc = self._proc
        if proc is None or proc.poll() is not None:
            raise EmulatorError(f"emulator not running; cannot {command!r}")
        assert proc.stdin is not None  # started with stdin=PIPE
        proc.stdin.write(command.encode() + b"\n")
        proc.stdin.flush()
        return self._read_line(CONTROL_TIMEOUT_S, f"answer to {command!r}")

    def _control(self, command: str) -> int:
        """Send a control command; returns the CPU cycle at which it took effect."""
        reply = self._raw_control(command)
        if not reply.startswith(f"ok {command} "):
            raise EmulatorError(f"harness refused {command!r}: {reply}")
        return int(reply.rsplit(" ", 1)[1])

    def press(self, name: str) -> int:
        """Press (hold low) the 'estop' or 'start' input; returns the cycle."""
        if name not in INPUTS:
            raise ValueError(f"unknown input {name!r}; use one of {INPUTS}")
        return self._control(f"press {name}")

    def release(self, name: str) -> int:
        if name not in INPUTS:
            raise ValueError(f"unknown input {name!r}; use one of {INPUTS}")
        return self._control(f"release {name}")

    def tap(self, name: str, hold_ms: int = 50) -> None:
        """Press an input and hold it `hold_ms` of emulated time (the firmware debounces), then release."""
        pressed = self.press(name)
        while self.cycle() - pressed < hold_ms * pinlog.CYCLES_PER_SECOND // 1000:
            time.sleep(0.002)  # polls the emulated clock, which runs on its own
        self.release(name)

    def reset(self) -> int:
        """The board's reset button: the CPU restarts, RAM (.noinit) is kept."""
        return self._control("reset")

    def cycle(self) -> int:
        """The CPU's current cycle (16 per microsecond)."""
        return self._control("cycle")

    def send_at(self, cycle: int, data: bytes) -> int:
        """Put one byte into the firmware's UART at `cycle` (at once if that has passed), as a host's byte
        landing at a chosen moment: deterministic, where a byte written to the port lands wherever the
        host's scheduling puts it.  Returns the cycle the request reached the harness."""
        if len(data) != 1:
            raise ValueError("send_at takes exactly one byte")
        return self._control(f"send-at {cycle} {data[0]}")

    # -- the arms' mechanics and homing sensors (harness.c models them) --------

    def set_sensor(self, arm: str, start: int, width: int, steps_per_rev: int) -> int:
        """Arm's sensor is active while the arm is start..start+width-1 steps (mod a turn) from where it started."""
        return self._control(f"sensor {arm} {start} {width} {steps_per_rev}")

    def remove_sensor(self, arm: str) -> int:
        """No sensor on this arm: the input never switches for it."""
        return self._control(f"sensor {arm} none")

    def stick_sensor(self, arm: str) -> int:
        """This arm's sensor is always active (a sensor that never releases)."""
        return self._control(f"sensor {arm} stuck")

    def sensor_level(self, active_high: bool) -> int:
        return self._control(f"sensor-level {'high' if active_high else 'low'}")

    def reverse_wiring(self, arm: str, reversed_: bool = True) -> int:
        """The motor turns the other way for DIR high (coil wires swapped)."""
        return self._control(f"wiring {arm} {'reversed' if reversed_ else 'normal'}")

    def turn_by_hand(self, arm: str, steps: int) -> int:
        return self._control(f"hand {arm} {steps}")

    def arm_position(self, arm: str) -> int:
        """The arm's angle in steps from where it started (signed, not wrapped)."""
        reply = self._raw_control(f"position {arm}")
        parts = reply.split()
        if parts[:3] != ["ok", "position", arm]:
            raise EmulatorError(f"harness refused 'position {arm}': {reply}")
        return int(parts[3])

    def stack_lowest(self) -> int:
        """The lowest stack pointer the firmware reached since the harness started (a data address: the
        stack grows down from RAMEND, so the bytes between the static RAM's end and this were never used)."""
        reply = self._raw_control("stack").split()
        if reply[:2] != ["ok", "stack"]:
            raise EmulatorError(f"harness refused 'stack': {' '.join(reply)}")
        return int(reply[2])

    @property
    def log_path(self) -> Path:
        if self._log_path is None:
            raise EmulatorError("this emulator was started with pin_log=False")
        return self._log_path

    def pin_events(self) -> list[pinlog.PinEvent]:
        """Every pin change so far (complete up to the last line the harness wrote), read incrementally."""
        if self._log_reader is None or self._log_reader.path != self.log_path:
            self._log_reader = pinlog.LogReader(self.log_path)
        return self._log_reader.events()

    def close(self) -> None:
        proc = self._proc
        if proc is not None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
            self._proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        _running.discard(self)
        if not _running:
            _watch_termination(False)
