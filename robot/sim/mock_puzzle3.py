"""The mock firmware's puzzle mode, as firmware/cube_robot/puzzle3.cpp and command.cpp do it.

`PUZZLE 2` / `PUZZLE 3` (immediate; refused while latched or busy; 2x2x2 after power-up and every
reset) and, in 3x3x3 mode (docs/robot3.md), the board's rules: a TURN whose arm is closed turns its
layer only while the other pair is closed with both grippers at 0 (an open arm turns in the air);
`TILT <arm><angle> <arm><angle>` (both arms of one pair, opposite angles: the whole cube turns) only
while that pair is closed and the other open; a gripper closes (CLOSE, GRIP) only on a square arm;
an arm whose position is not known is refused; JOG only in the air.  Where an arm will stand is kept
as the firmware keeps it: 0 / 90 / off square / not known after the queued actions, read from the
step counter whenever the queue is empty.  `turn_pair` parses TURN and TILT arguments.
"""

from __future__ import annotations

from .. import firmware_header
from ..link import protocol as P
from .mock_arms import CLOSED, OPEN, holding_pair, parse_bounded, pair_of

AT_0, AT_90, OFF_SQUARE, UNKNOWN = range(4)
E = P.ErrorCode
PAIR_ARMS = firmware_header.ARM_PAIRS


def turn_pair(args: list[str], tilt: bool = False):
    """The pair a TURN's (TILT's) arms belong to, or the error code (command.cpp cmd_turn)."""
    if not 1 <= len(args) <= 2 or (tilt and len(args) != 2):
        return P.ErrorCode.BAD_ARGUMENT
    pair, arms = None, []
    for arg in args:
        arm_pair = next((name for name, arms_of in PAIR_ARMS.items() if arg[:1] in arms_of), None)
        if arm_pair is None:
            return P.ErrorCode.BAD_ARGUMENT
        angle = parse_bounded(arg[1:], -P.TURN_ANGLE_MAX, P.TURN_ANGLE_MAX)
        if isinstance(angle, P.ErrorCode):
            return angle
        if angle == 0 or angle % 90 or arg[0] in arms:
            return P.ErrorCode.BAD_ARGUMENT
        if pair is not None and arm_pair != pair:
            return P.ErrorCode.NOT_HOLDING
        pair = arm_pair
        arms.append(arg[0])
    if tilt and sum(int(arg[1:]) for arg in args) != 0:
        return P.ErrorCode.BAD_ARGUMENT  # opposite angles: the same way in space
    return pair


class MockPuzzle3:
    def __init__(self, fw):
        self.fw = fw  # the MockFirmware (its arms, queue, alarm and motion settings)
        self.power_on()

    def power_on(self) -> None:
        self.on = False  # 2x2x2 after power-up and every reset
        self.fw.arms.jog_in_the_air_only = False
        self.states = {arm: UNKNOWN for arm in P.ARMS}

    @property
    def name(self) -> str:
        return "3x3x3" if self.on else "2x2x2"

    def command(self, args: list[str]) -> P.ErrorCode | None:
        """PUZZLE 2 / PUZZLE 3 (command.cpp cmd_puzzle)."""
        if len(args) != 1 or args[0] not in ("2", "3"):
            return E.BAD_ARGUMENT
        if self.fw.alarm:
            return E.ALARM_ACTIVE
        if self.fw._busy():
            return E.BUSY
        self.on = args[0] == "3"
        self.fw.arms.jog_in_the_air_only = self.on
        return None

    # -- where the arms will stand -----------------------------------------------

    def _quarter(self) -> int:
        return self.fw.motion.steps_per_rev // 4

    def _sync(self) -> None:
        arms, quarter = self.fw.arms, self._quarter()
        for arm in P.ARMS:
            position = arms.position[arm] % (4 * quarter)
            self.states[arm] = (UNKNOWN if arm not in arms.known else
                                OFF_SQUARE if position % quarter else (position // quarter) % 2)

    def _sync_if_idle(self) -> None:
        if not self.fw._busy():
            self._sync()

    def queued(self, name: str, args: list[str], was_idle: bool) -> None:
        """An action was queued (3x3x3 mode): puzzle3.cpp puzzle3_queued."""
        if was_idle:
            self._sync()
        if name == "HOME":
            self.states[args[0]] = AT_0
            return
        quarter, rev = self._quarter(), self.fw.motion.steps_per_rev
        moves = ({args[0]: int(args[1])} if name == "JOG" else
                 {arg[0]: int(arg[1:]) * rev // 360 for arg in args} if name in ("TURN", "TILT") else {})
        for arm, steps in moves.items():
            if self.states[arm] < OFF_SQUARE:
                self.states[arm] = OFF_SQUARE if steps % quarter else self.states[arm] ^ ((steps // quarter) & 1)

    # -- the checks (after the arguments, ALARM_ACTIVE and MOTORS_OFF, as the firmware) ----------

    def check_move(self, name: str, args: list[str], pair: str) -> P.ErrorCode | None:
        """TURN / TILT once their arguments, ALARM_ACTIVE and MOTORS_OFF passed (command.cpp cmd_turn)."""
        if not self.on:
            return None if holding_pair(self.fw.arms.planned) == pair else E.NOT_HOLDING
        return self.check_tilt(pair) if name == "TILT" else self.check_turn(args)

    def check_turn(self, args: list[str]) -> P.ErrorCode | None:
        self._sync_if_idle()
        planned, others = self.fw.arms.planned, []
        moving = {arg[0] for arg in args}
        for arm in (a for a in P.ARMS if a in moving):  # in the firmware's order
            if self.states[arm] == UNKNOWN:
                return E.POSITION_UNKNOWN
            if planned[arm] == OPEN:
                continue  # turns in the air (a restore)
            if self.states[arm] == OFF_SQUARE:
                return E.NOT_SQUARE
            others = [a for a in P.ARMS if pair_of(a) != pair_of(arm)]
        if any(planned[a] != CLOSED for a in others):
            return E.OTHER_PAIR_OPEN
        for arm in others:
            if self.states[arm] == UNKNOWN:
                return E.POSITION_UNKNOWN
            if self.states[arm] != AT_0:
                return E.GRIPPER_ACROSS
        return None

    def check_tilt(self, pair: str) -> P.ErrorCode | None:
        self._sync_if_idle()
        planned = self.fw.arms.planned
        for arm in P.ARMS:
            tilting = pair_of(arm) == pair
            if tilting and self.states[arm] == UNKNOWN:
                return E.POSITION_UNKNOWN
            if tilting and self.states[arm] == OFF_SQUARE:
                return E.NOT_SQUARE
            if tilting and planned[arm] != CLOSED:
                return E.NOT_HOLDING
            if not tilting and planned[arm] != OPEN:
                return E.OTHER_PAIR_CLOSED
        return None

    def check_close(self, arms: str) -> P.ErrorCode | None:
        """CLOSE <arms>, GRIP <pair>: a gripper closes only on a square arm whose position is known."""
        if not self.on or self.fw.alarm:
            return None
        self._sync_if_idle()
        for arm in P.ARMS:
            if arm in arms and self.states[arm] == UNKNOWN:
                return E.POSITION_UNKNOWN
            if arm in arms and self.states[arm] == OFF_SQUARE:
                return E.NOT_SQUARE
        return None
