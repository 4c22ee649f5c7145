"""The true jaws watching an emulated robot outside a run (`calibrate overlap --sim`): SIMULATED only.

A bring-up robot (robot/bringup/connection.py ConnectedRobot) has no virtual cube; these follow what its
board did with the virtual robot's true jaws (robot/sim/jaws.py) and answer what a maker would see:

    witness = witness_for(robot, config)   # the emulator's pin log, or the mock's own state
    witness.sync()      -> the jam (MechanicalError) the last actions caused, or None
    witness.touching(arms) -> does any of these jaws touch the cube now?

With the emulator every servo pulse and step on the pins is fed, timed.  The mock firmware keeps no
times: what it did is fed as if each action ended before the next began (each servo at rest), which
is what a calibration that waits between its moves gives.
"""

from __future__ import annotations

from ..config_types import Config
from . import pinlog
from .jaws import JawTracker, feed_pins
from .virtual_robot import MechanicalError


class PinWitness:
    """The true jaws fed from an emulator's pin log (read from the start on each sync)."""

    def __init__(self, emulator, config: Config):
        self.emulator, self.tracker = emulator, JawTracker.from_config(config)
        self.motions = pinlog.MotionDecoder()
        self.fed_until: dict[str, int] = {}  # arm -> start cycle of the last width change fed
        self.now_ms = 0.0

    def sync(self) -> MechanicalError | None:
        events = self.emulator.pin_events()
        if not events:
            return None
        changes = {}
        for arm, pulses in pinlog.servo_changes(events).items():
            changes[arm] = [p for p in pulses if p.start_cycle > self.fed_until.get(arm, -1)]
            if pulses:
                self.fed_until[arm] = pulses[-1].start_cycle
        self.now_ms = pinlog.cycles_to_ms(events[-1].cycle)
        try:
            feed_pins(self.tracker, events, changes, self.motions.new_moves(events), self.motions.pin_map)
        except MechanicalError as exc:
            return exc
        return None

    def touching(self, arms) -> bool:
        return any(self.tracker.servos[arm].gap(self.now_ms) == 0 for arm in arms)


class MockWitness:
    """The true jaws fed from the mock firmware's state: each gripper's width as it now commands it,
    each completed move (its step log), one after another with the servos at rest in between."""

    STEP_MS = 5.0  # a slow turn: the layer's reach is met wherever a jaw stands
    SETTLE_MS = 1000.0  # longer than any servo's travel

    def __init__(self, mock, config: Config):
        self.mock, self.tracker = mock, JawTracker.from_config(config)
        self.widths: dict[str, float] = {}
        self.moves_seen = 0
        self.now_ms = 0.0

    def sync(self) -> MechanicalError | None:
        arms = self.mock.arms
        for arm in "RLFB":
            state = arms.grippers[arm]
            if state is None:
                continue
            width = arms.gripper_us[arm][0 if state == "open" else 1]
            if self.widths.get(arm) != width:
                self.tracker.command(arm, self.now_ms, width)
                self.widths[arm] = width
        self.now_ms += self.SETTLE_MS
        log = self.mock.step_log
        for arm, steps in log[self.moves_seen:]:
            times = [self.now_ms + i * self.STEP_MS for i in range(abs(steps))]
            self.tracker.turn(arm, times, steps)
            self.now_ms += abs(steps) * self.STEP_MS + self.SETTLE_MS
        self.moves_seen = len(log)
        try:
            self.tracker.check()
        except MechanicalError as exc:
            return exc
        return None

    def touching(self, arms) -> bool:
        return any(self.tracker.servos[arm].gap(self.now_ms) == 0 for arm in arms)


def witness_for(robot, config: Config) -> PinWitness | MockWitness:
    """The witness of a started ConnectedRobot with --sim (the emulator or the mock)."""
    if robot.emulator is not None:
        return PinWitness(robot.emulator, config)
    if robot.mock is not None:
        return MockWitness(robot.mock, config)
    raise ValueError("the true jaws watch only an emulated robot (--sim)")
