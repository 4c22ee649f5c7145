"""The mock firmware's arms, grippers and drivers (the bring-up commands), as firmware/cube_robot does them.

A part robot/sim/mock_firmware.py MockFirmware holds (`mock.arms`): the drivers (MOTORS, off at power-up and after
`idle_off_s` without an action), each arm's position (known after HOME or ZERO, forgotten when the
drivers go off), each gripper's state (what is commanded now, and what it will be once the queue has
run, which TURN / JOG / HOME are checked against), the per-arm and per-gripper settings (ARM,
GRIPPER, SETUP), and a model of the arms' mechanics for homing: each arm's angle in steps and an
optional sensor window per arm on one shared input, as the simavr harness models them.

The test hooks (set_sensor, remove_sensor, stick_sensor, turn_by_hand, reverse_wiring, arm_position,
`step_log`: (arm, signed steps) of every completed move) are the MockFirmware's, run on its device thread.
"""

from __future__ import annotations

import time
from typing import Callable

from .. import firmware_header
from .. import motion as motion_time
from ..config_types import MotionConfig
from ..link import protocol as P
from .mock_regrip import MockRegrip

LIMITS = firmware_header.limits()
ARMS = P.ARMS
PAIR_ARMS = firmware_header.ARM_PAIRS
OPEN, CLOSED = "open", "closed"


def pair_of(arm: str) -> str:
    return next(name for name, arms in PAIR_ARMS.items() if arm in arms)


def holding_pair(grippers: dict) -> str | None:
    """The pair whose grippers are both closed while the other pair's are open (motion.cpp)."""
    for name, arms in PAIR_ARMS.items():
        others = [a for a in ARMS if a not in arms]
        if all(grippers[a] == CLOSED for a in arms) and all(grippers[a] == OPEN for a in others):
            return name
    return None


def parse_bounded(text: str, low: int, high: int):
    """command.cpp parse_bounded: optional '-', digits; more than 9 digits is out of range."""
    digits = text[1:] if text.startswith("-") else text
    if not digits or not digits.isdigit() or not digits.isascii():
        return P.ErrorCode.BAD_ARGUMENT
    if len(digits) > 9:
        return P.ErrorCode.OUT_OF_RANGE
    value = int(text)
    return value if low <= value <= high else P.ErrorCode.OUT_OF_RANGE


def parse_lettered(args, spec: dict):
    """command.cpp parse_lettered: each letter once, in any order, bounded."""
    if len(args) != len(spec):
        return P.ErrorCode.BAD_ARGUMENT
    values = {}
    for arg in args:
        if arg[:1] not in spec or arg[0] in values:
            return P.ErrorCode.BAD_ARGUMENT
        value = parse_bounded(arg[1:], *spec[arg[0]])
        if isinstance(value, P.ErrorCode):
            return value
        values[arg[0]] = value
    return values


def _arm_set(text: str) -> str | None:
    """command.cpp parse_arms: some of R L F B, each once."""
    if not text or any(c not in ARMS for c in text) or len(set(text)) != len(text):
        return None
    return text


class MockArms:
    """The arms of one mock board.  It reads the board's settings (`motion`), its latched alarm and
    whether it is busy (an action queued or running) through the functions it is given."""

    def __init__(self, motion: Callable[[], MotionConfig], alarm: Callable[[], P.AlarmCode],
                 busy: Callable[[], bool]):
        self._motion, self._alarm, self._busy = motion, alarm, busy
        self.regrip: MockRegrip  # the board's regrip schedule (MockFirmware sets it)
        self.jog_in_the_air_only = False  # 3x3x3 mode (mock_puzzle3.py): a closed arm would turn a layer
        # The mechanics survive a reset (they are not the board's RAM).
        self.angle = {arm: 0 for arm in ARMS}  # physical, in steps
        self.sensors = {arm: None for arm in ARMS}  # None, "stuck" or (start, width)
        self.wiring = {arm: 1 for arm in ARMS}  # -1: the motor turns the other way for DIR high
        self.step_log: list[tuple[str, int]] = []
        self.power_on()

    # -- state -----------------------------------------------------------------

    def power_on(self) -> None:
        """Drivers off, positions unknown, grippers never commanded, settings at their defaults."""
        self.motors_on = False
        self.known: set[str] = set()  # arms whose position is known
        self.position = {arm: 0 for arm in ARMS}  # steps from the arm's zero (logical, before wrapping)
        self.grippers: dict[str, str | None] = {arm: None for arm in ARMS}  # commanded now: None (never), OPEN, CLOSED
        self.planned = dict(self.grippers)  # once the queue has run
        self.invert = {arm: False for arm in ARMS}
        self.zero_offset = {arm: 0 for arm in ARMS}
        self.gripper_us = {arm: (LIMITS["DEFAULT_SERVO_OPEN_US"], LIMITS["DEFAULT_SERVO_CLOSED_US"]) for arm in ARMS}
        self.idle_off_s = LIMITS["DEFAULT_IDLE_OFF_S"]
        self.sensor_active_level = LIMITS["DEFAULT_HOME_ACTIVE_LEVEL"]
        self._idle_since = time.monotonic()
        self._home_outcome: dict[int, tuple[list[tuple[str, int]], P.AlarmCode | None]] = {}  # seq -> (physical moves [(arm, steps)], alarm code or None)

    # -- the shared homing input -------------------------------------------------

    def _sensor_of(self, arm: str, angle: int) -> bool:
        sensor = self.sensors[arm]
        if sensor is None:
            return False
        if sensor == "stuck":
            return True
        start, width = sensor
        return (angle - start) % self._motion().steps_per_rev < width

    def input_active(self, angles: dict | None = None) -> bool:
        angles = angles or self.angle
        return any(self._sensor_of(arm, angles[arm]) for arm in ARMS)

    def move_physically(self, arm: str, steps: int) -> None:
        self.angle[arm] += steps

    def _sign(self, arm: str) -> int:
        """Logical steps -> physical: the firmware's inversion, then the motor's wiring."""
        return (-1 if self.invert[arm] else 1) * self.wiring[arm]

    # -- immediate commands (command.cpp) ---------------------------------------

    def _settings_allowed(self):
        if self._alarm():
            return P.ErrorCode.ALARM_ACTIVE
        return P.ErrorCode.BUSY if self._busy() else None

    def immediate(self, name: str, args: list[str]):
        """MOTORS ZERO ARM GRIPPER SETUP: an error code or None (done)."""
        if name == "MOTORS":
            if len(args) != 1 or args[0] not in ("ON", "OFF"):
                return P.ErrorCode.BAD_ARGUMENT
            if args[0] == "ON" and self._alarm():
                return P.ErrorCode.ALARM_ACTIVE
            if self._busy():
                return P.ErrorCode.BUSY
            self.set_motors(args[0] == "ON")
            return None
        if name == "ZERO":
            if len(args) != 1 or not _arm_set(args[0]):
                return P.ErrorCode.BAD_ARGUMENT
            if self._alarm():
                return P.ErrorCode.ALARM_ACTIVE
            if not self.motors_on:
                return P.ErrorCode.MOTORS_OFF
            if self._busy():
                return P.ErrorCode.BUSY
            for arm in args[0]:
                self.position[arm] = 0
                self.known.add(arm)
            return None
        if name == "SETUP":
            values = parse_lettered(args, {"I": (0, LIMITS["IDLE_OFF_S_MAX"]), "H": (0, 1)})
            if isinstance(values, P.ErrorCode):
                return values
            problem = self._settings_allowed()
            if problem:
                return problem
            self.idle_off_s, self.sensor_active_level = values["I"], values["H"]
            return None
        # ARM / GRIPPER <arm> ...
        if not args or len(args[0]) != 1 or args[0] not in ARMS:
            return P.ErrorCode.BAD_ARGUMENT
        arm = args[0]
        if name == "ARM":
            spec = {"I": (0, 1), "Z": (-LIMITS["ZERO_OFFSET_MAX"], LIMITS["ZERO_OFFSET_MAX"])}
        else:
            spec = {"O": (LIMITS["SERVO_US_MIN"], LIMITS["SERVO_US_MAX"]),
                    "C": (LIMITS["SERVO_US_MIN"], LIMITS["SERVO_US_MAX"])}
        values = parse_lettered(args[1:], spec)
        if isinstance(values, P.ErrorCode):
            return values
        problem = self._settings_allowed()
        if problem:
            return problem
        if name == "ARM":
            if self.invert[arm] != bool(values["I"]):
                self.known.discard(arm)  # its counting flips
            self.invert[arm], self.zero_offset[arm] = bool(values["I"]), values["Z"]
        else:
            self.gripper_us[arm] = (values["O"], values["C"])
        return None

    def servo_all(self, open_us: int, closed_us: int) -> None:
        """SERVO sets every gripper's widths (the pair-wide values)."""
        for arm in ARMS:
            self.gripper_us[arm] = (open_us, closed_us)

    def set_motors(self, on: bool) -> None:
        self.motors_on = on
        self._idle_since = time.monotonic()
        if not on:
            self.known.clear()  # nothing holds the arms

    def forget_positions_for_new_steps(self) -> None:
        """MOTION with another steps_per_rev: a step is another angle."""
        self.known.clear()

    def where(self) -> P.Where:
        rev = self._motion().steps_per_rev
        positions = {arm: self.position[arm] % rev if arm in self.known else None for arm in ARMS}
        return P.Where(self.motors_on, positions, dict(self.grippers),
                       self.input_active())

    # -- queued actions ------------------------------------------------------------

    def queue_action(self, seq: int, name: str, args: list[str]):
        """JOG OPEN CLOSE HOME: an error code, or the nominal duration in ms (then queued by the caller)."""
        if name in ("OPEN", "CLOSE"):
            if len(args) != 1 or not _arm_set(args[0]):
                return P.ErrorCode.BAD_ARGUMENT
            # its latest start (a frame and the new width) and the travel (mock_regrip.py)
            return self.regrip.opening_ms(args[0]) if name == "OPEN" else self.regrip.closing_ms(args[0])
        if name == "JOG":
            if len(args) != 2 or len(args[0]) != 1 or args[0] not in ARMS:
                return P.ErrorCode.BAD_ARGUMENT
            steps = parse_bounded(args[1], -LIMITS["JOG_STEPS_MAX"], LIMITS["JOG_STEPS_MAX"])
            if isinstance(steps, P.ErrorCode):
                return steps
            if steps == 0:
                return P.ErrorCode.BAD_ARGUMENT
        else:  # HOME
            if len(args) != 1 or len(args[0]) != 1 or args[0] not in ARMS:
                return P.ErrorCode.BAD_ARGUMENT
        arm = args[0]
        if self._alarm():
            return P.ErrorCode.ALARM_ACTIVE
        if not self.motors_on:
            return P.ErrorCode.MOTORS_OFF
        in_the_air = self.planned[arm] == OPEN
        if name == "HOME":
            if not in_the_air:
                return P.ErrorCode.ARM_BLOCKED
            return self._plan_home(seq, arm)
        if not in_the_air and (self.jog_in_the_air_only or holding_pair(self.planned) != pair_of(arm)):
            return P.ErrorCode.ARM_BLOCKED
        m = self._motion()
        return 1000 * motion_time.move_seconds(abs(steps), m.max_speed_steps_per_s, m.accel_steps_per_s2)

    def queued(self, name: str, args: list[str]) -> None:
        """An action was queued: what the grippers will be after it."""
        if name == "GRIP":
            for arm in ARMS:
                self.planned[arm] = CLOSED if pair_of(arm) == args[0] else OPEN
        elif name in ("OPEN", "CLOSE"):
            for arm in args[0]:
                self.planned[arm] = CLOSED if name == "CLOSE" else OPEN

    def _plan_home(self, seq: int, arm: str):
        """Homing as motion.cpp does it, on the modelled mechanics: the moves and the outcome, timed."""
        m = self._motion()
        rev = m.steps_per_rev
        sign = self._sign(arm)  # logical steps -> physical

        def speed(turns_per_s: float) -> float:
            return max(LIMITS["HOME_SPEED_MIN"], min(m.max_speed_steps_per_s, int(rev * turns_per_s)))

        seek = speed(LIMITS["HOME_SEEK_TURNS_PER_S"])
        approach = speed(LIMITS["HOME_SEEK_TURNS_PER_S"] / LIMITS["HOME_APPROACH_DIVISOR"])
        angle = {a: self.angle[a] for a in ARMS}
        moves, seconds = [], 0.0

        def move(limit: int, v: float, until=None) -> bool:
            """Step up to `limit` logical steps; True if `until` (sensor active?) was reached."""
            nonlocal seconds
            direction = 1 if limit > 0 else -1
            done = 0
            for _ in range(abs(limit)):
                angle[arm] += direction * sign
                done += direction
                if until is not None and self.input_active(angle) == until:
                    break
            moves.append((arm, done * sign))
            seconds += motion_time.move_seconds(abs(done), v, m.accel_steps_per_s2)
            return until is not None and self.input_active(angle) == until

        alarm = None
        if self.input_active(angle) or move(rev // 4 * LIMITS["HOME_SEARCH_QUARTERS"], seek, True):
            if not move(-(rev // LIMITS["HOME_RELEASE_DIVISOR"]), seek, False):
                alarm = P.AlarmCode.HOME_STUCK
            else:
                move(-(rev // LIMITS["HOME_BACKOFF_DIVISOR"]), seek)
                if not move(rev // LIMITS["HOME_BACKOFF_DIVISOR"] + rev // LIMITS["HOME_RELEASE_DIVISOR"],
                            approach, True):
                    alarm = P.AlarmCode.HOME_NOT_FOUND
                elif self.zero_offset[arm]:
                    move(self.zero_offset[arm], seek)
        else:
            alarm = P.AlarmCode.HOME_NOT_FOUND
        self._home_outcome[seq] = (moves, alarm)
        return 1000 * seconds

    def action_started(self, seq: int, command: str, nominal: float) -> float:
        """First effects (motion.cpp start()) of any action but a GRIP (mock_regrip.py start_grip):
        OPEN/CLOSE act at once.  Returns the action's duration."""
        name, *args = command.split()
        if name in ("OPEN", "CLOSE"):
            for arm in args[0]:
                self.grippers[arm] = CLOSED if name == "CLOSE" else OPEN
        return nominal

    def gripper_halfway(self, command: str) -> None:
        """A GRIP's second phase: the other pair opens."""
        pair = command.split()[1]
        for arm in ARMS:
            if arm not in PAIR_ARMS[pair]:
                self.grippers[arm] = OPEN

    def action_finished(self, seq: int, command: str):
        """Effects at the end of an action; returns an alarm code when homing failed (no `done`)."""
        name, *args = command.split()
        rev = self._motion().steps_per_rev
        if name == "GRIP":
            self.gripper_halfway(command)
        elif name in ("TURN", "TILT", "JOG"):
            turns = [(args[0], int(args[1]))] if name == "JOG" else \
                [(a[0], int(a[1:]) * rev // 360) for a in args]
            for arm, steps in turns:
                self.position[arm] += steps
                self.move_physically(arm, steps * self._sign(arm))
                self.step_log.append((arm, steps))
        elif name == "HOME":
            moves, alarm = self._home_outcome.pop(seq)
            arm = args[0]
            for _, steps in moves:
                self.move_physically(arm, steps)
                self.step_log.append((arm, steps * self._sign(arm)))  # physical -> logical (sign is +-1)
            if alarm:
                return alarm
            self.position[arm] = 0
            self.known.add(arm)
        self._idle_since = time.monotonic()
        return None

    def after_flush(self) -> None:
        """An alarm flushed the queue: the plan is what the grippers are now."""
        self.planned = dict(self.grippers)

    def poll_idle(self) -> None:
        now = time.monotonic()
        if self._busy() or not self.motors_on:
            self._idle_since = now
        # Not scaled by time_scale: the pauses it measures are the host's (scanning, planning), which
        # run at wall speed; scaled, 300 s became 6 s and a slow scan switched the drivers off mid-run.
        elif self.idle_off_s and now - self._idle_since >= self.idle_off_s:
            self.set_motors(False)
