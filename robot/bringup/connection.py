"""A connected robot for one bring-up command: on a serial port, or emulated (--sim).

    with ConnectedRobot(config, port=None, sim=True) as robot:   # the firmware in simavr (or the mock)
        robot.link.where()
        with stop_on_interrupt(robot, tell_maker):              # Ctrl-C: `!` first, then the robot's state
            ...

The emulated robot is a freshly built one: its arms stand a few steps off straight (as if turned by
hand), and when config says the arms have homing sensors, each sits where its arm's zero offset
says (so homing ends with the arm straight), sharing one input as on the real wiring.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ..config_types import Config
from ..link import protocol as P

if TYPE_CHECKING:  # the link and the simulators are imported when the robot starts
    from ..link.driver import Link
    from ..sim.emulator import Emulator
    from ..sim.mock_firmware import MockFirmware

# A freshly assembled robot: each arm a few steps off straight (physical steps, positive = clockwise).
SIM_HAND_OFFSETS = {"R": 7, "L": -4, "F": 3, "B": -9}


class CommandInterrupted(RuntimeError):
    """Ctrl-C during a command that moved the robot; the message says what state it is in."""


class ConnectedRobot:
    """A link to a robot (real or emulated), with the drivers left as the board has them."""

    def __init__(self, config: Config, port: str | None = None, sim: bool = False, firmware: str = "auto",
                 realtime: bool = False, puzzle: str = "2x2x2"):
        self.config, self.port, self.sim = config, port, sim
        self.puzzle = P.known_puzzle(puzzle)  # the board's rules, set at the handshake (PUZZLE 3 for a 3x3x3)
        self.firmware, self.realtime = firmware, realtime
        self.emulator: Emulator | None = None
        self.mock: MockFirmware | None = None
        self.link: Link | None = None
        self.backend: str | None = None
        self.interrupted_streaming = False  # Ctrl-C came while actions were streamed (Link.run)

    # -- life cycle ----------------------------------------------------------------

    def start(self) -> "ConnectedRobot":
        from ..link.driver import Link

        url = self.port
        try:
            if self.sim:
                url = self._start_simulation()
            link = self.link = Link.open(self.config, port=url, motors=False, puzzle=self.puzzle)
            if self.puzzle != "2x2x2":
                self._check_puzzle(link)
        except BaseException:
            self.close()
            raise
        link.run = self._noting_interrupts(link.run)  # type: ignore[method-assign]  # this robot's own link notes Ctrl-C while streaming
        identity = link.identity
        if not self.sim and identity is not None:  # open() returns after the handshake: the board said who it is
            self.backend = f"{identity.firmware} {identity.version} on {link.url}"
        return self

    def _check_puzzle(self, link) -> None:
        """The board's own word that it took the puzzle mode: `pz` in its `id` line (HELLO)."""
        from ..link.errors import HandshakeError

        identity = next((r for r in link.request("HELLO") if isinstance(r, P.Identity)), None)
        said = identity.puzzle if identity is not None else "nothing readable"
        if said != self.puzzle:
            raise HandshakeError(f"the board did not take `{P.puzzle_command(self.puzzle)}` (its id line says "
                                 f"{said}): flash a firmware with the puzzle mode (protocol 6; firmware/README.md)")

    def _start_simulation(self) -> str:
        from ..sim import emulator as emulator_module

        usable, reason = emulator_module.available()
        if self.firmware == "emulator" and not usable:
            raise emulator_module.EmulatorError(f"the firmware emulator is not available: {reason}")
        motion = self.config.motion
        mechanics: Emulator | MockFirmware
        if self.firmware == "emulator" or (self.firmware == "auto" and usable):
            emulator = self.emulator = emulator_module.Emulator(realtime=self.realtime).start()
            self.backend = "SIMULATED: the real firmware (.elf) in simavr"
            mechanics, url = emulator, emulator.port
        else:
            from ..sim.mock_firmware import MockFirmware

            mock = self.mock = MockFirmware("pty", motion=motion, time_scale=1.0 if self.realtime else 0.05).start()
            self.backend = "SIMULATED: the Python mock firmware" + ("" if self.firmware == "mock" else f" ({reason})")
            mechanics, url = mock, mock.url
        if url is None:  # start() returns once the simulated board has a port
            raise RuntimeError(f"{self.backend}: the simulated board has no port")
        self.set_up_mechanics(mechanics, self.config)
        return url

    def _noting_interrupts(self, run):
        """Link.run, noting a Ctrl-C that came while it streamed actions: only then may the robot be
        moving (a prompt, Enter or the start button come between actions)."""
        def run_noting(*args, **kwargs):
            try:
                return run(*args, **kwargs)
            except KeyboardInterrupt:
                self.interrupted_streaming = True
                raise
        return run_noting

    @staticmethod
    def set_up_mechanics(mechanics, config: Config) -> None:
        """Motors wired as config's inversions say; arms off straight by SIM_HAND_OFFSETS; sensors where
        config's zero offsets put the zero (robot/sim/mechanics.py)."""
        from ..sim.mechanics import place_sensors, wire_as_configured

        wire_as_configured(mechanics, config)
        for arm, offset in SIM_HAND_OFFSETS.items():
            mechanics.turn_by_hand(arm, offset)
        place_sensors(mechanics, config)

    def arm_angle(self, arm: str) -> int | None:
        """Simulation only: the arm's physical angle in steps from straight (None on a real robot)."""
        mechanics = self.emulator or self.mock
        return None if mechanics is None else mechanics.arm_position(arm)

    def press_start(self) -> None:
        """Simulation only: press the robot's start button (held 50 ms: the firmware debounces)."""
        if self.emulator:
            self.emulator.tap("start")
        elif self.mock:
            self.mock.press_start()

    def close(self) -> None:
        for stop in (self.link and self.link.close, self.emulator and self.emulator.close,
                     self.mock and self.mock.stop):
            if stop:
                try:
                    stop()
                except Exception:  # best effort: the first error was already reported
                    pass

    def __enter__(self) -> "ConnectedRobot":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


def describe(where: P.Where, status: P.Status | None, steps_per_rev: int) -> str:
    """One paragraph: alarm, drivers, each arm's position, each gripper."""
    parts = []
    if status is not None:
        parts.append(f"state {status.state.value}" + (f", alarm {status.alarm.name} latched" if status.alarm else ""))
    parts.append("drivers " + ("on" if where.motors_on else "off"))
    arms = []
    for arm in P.ARMS:
        position = where.positions[arm]
        if position is None:
            arms.append(f"{arm} unknown")
        else:
            degrees = position * 360 / steps_per_rev
            arms.append(f"{arm} {position} steps ({degrees:.1f} deg){'' if where.straight(arm, steps_per_rev) else ' NOT straight'}")
    parts.append("arms: " + ", ".join(arms))
    parts.append("grippers: " + ", ".join(f"{arm} {where.grippers[arm] or 'never set'}" for arm in P.ARMS))
    return "; ".join(parts)


@contextlib.contextmanager
def stop_on_interrupt(robot: ConnectedRobot, tell_maker):
    """Ctrl-C while the robot moves: send the real-time stop `!` first, then report the robot's state."""
    try:
        yield
    except KeyboardInterrupt:
        link = robot.link
        if link is None:  # Ctrl-C while the port was still opening
            raise CommandInterrupted("interrupted before the link to the robot was open: nothing was sent") from None
        idle = None if robot.interrupted_streaming else _idle_state(robot)
        if idle is not None:  # a stop that moves nothing latches no alarm: the drivers stay as they were
            raise CommandInterrupted(f"interrupted between actions; nothing was moving, so no stop was sent "
                                   f"and no alarm is latched. {idle}.") from None
        try:
            link.estop()
        except Exception as exc:  # the port is gone: nothing more can be sent
            raise CommandInterrupted(f"interrupted; the stop byte could not be sent ({exc}): switch the robot off") from None
        try:
            status = link.status()
            where = link.where()
            state = describe(where, status, robot.config.motion.steps_per_rev)
        except Exception as exc:
            state = f"the robot's state could not be read ({exc})"
        raise CommandInterrupted(
            f"interrupted: sent the e-stop ('!') first. {state}. "
            "Check the robot, then clear the alarm with `cube-robot link reset-alarm`."
        ) from None


def _idle_state(robot: ConnectedRobot) -> str | None:
    """The robot's state when the board says it is idle with nothing queued, else None (moving, in an
    alarm, or unreadable: then the real-time stop is sent)."""
    link = robot.link
    if link is None:
        return None
    try:
        status = link.status()
        if status.state != P.State.IDLE or status.queued or status.running:
            return None
        return describe(link.where(), status, robot.config.motion.steps_per_rev)
    except Exception:
        return None
