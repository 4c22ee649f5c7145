"""The bring-up commands with 3x3x3 grippers (`--puzzle 3x3x3`): the board in its 3x3x3 mode.

The host sends `PUZZLE 3` at the handshake (Link(puzzle="3x3x3")) and the board enforces the
3x3x3 robot's rules (docs/robot3.md, docs/protocol.md): every arm closed on its face at 0 by default;
a closed arm turns its layer (TURN) only while both grippers of the other pair are closed at 0; JOG
only in the air (its gripper open); a gripper closes only on an arm whose position the board knows
and that stands square.  Opening a real Uno's port restarts it and it forgets the arms' positions, so
a command that closes a gripper finds them again itself: homed with the sensors
(motion.homing.sensors) or confirmed straight on the maker's word (--arms-straight).

A refusal of the board is said with its named error, what the line did (nothing) and what to do
(`refused`).  `tell_maker` prints one line for the user, as in robot/arms/actions.py.
"""

from __future__ import annotations

from ..arms import actions
from ..arms.actions import BringupError
from ..link import protocol as P
from ..link.errors import CommandRejectedError

PUZZLE = "3x3x3"
FLAG = f"--puzzle {PUZZLE}"
E = P.ErrorCode


def other_pair(arm: str) -> str:
    return next(pair for pair in actions.PAIRS if arm not in pair)


def at_90(where: P.Where, arm: str, steps_per_rev: int) -> bool:
    """The arm's gripper stands across the other pair's layers (a quarter off 0, mod a half turn)."""
    position = where.positions[arm]
    return position is not None and position % (steps_per_rev // 2) == steps_per_rev // 4


def advice(code: E, arms: str, where: P.Where | None, steps_per_rev: int) -> str:
    """What to do after the board refused a line about `arms` with `code` (where: the board's WHERE after)."""
    arm = arms[0]
    if code == E.ARM_BLOCKED:
        return (f"open {arm}'s gripper first: cube-robot grip {arm} open {FLAG} (in 3x3x3 mode an arm turns "
                f"in the air only; to turn its layer: cube-robot jog {arm} 90 --with-cube {FLAG})")
    if code == E.POSITION_UNKNOWN:
        unknown = [a for a in arms if where is not None and where.positions[a] is None] or list(arms)
        return (f"the board does not know where arm(s) {', '.join(unknown)} stand (opening the port restarts "
                "it, and it forgets): if they stand straight, say so with --arms-straight; with homing sensors "
                "(motion.homing.sensors: true) `cube-robot load`, `home` and `tune grippers` find them")
    if code == E.NOT_SQUARE:
        crooked = [a for a in arms if where is not None and where.positions[a] is not None
                   and not where.straight(a, steps_per_rev)] or list(arms)
        return (f"arm(s) {', '.join(crooked)} stand between quarter positions, where the jaws would close on a "
                f"turned layer: turn them square in the air first (cube-robot jog {crooked[0]} --steps N {FLAG}), "
                f"or home them (cube-robot home --arms {''.join(crooked)} {FLAG})")
    if code == E.OTHER_PAIR_OPEN:
        pair = other_pair(arm)
        return (f"a layer turns only while both grippers of the other pair hold the cube: close them first: "
                f"cube-robot grip {pair} close {FLAG}")
    if code == E.GRIPPER_ACROSS:
        across = [a for a in other_pair(arm) if where is not None and at_90(where, a, steps_per_rev)]
        name = across[0] if across else other_pair(arm)[0]
        return (f"gripper {'/'.join(across) or other_pair(arm)} stands at 90, across {arm}'s layer: restore it first "
                f"(open it, turn it back to 0 in the air, close it: cube-robot grip {name} open {FLAG}, then "
                f"cube-robot jog {name} -90 {FLAG}, then cube-robot grip {name} close {FLAG})")
    if code == E.MOTORS_OFF:
        return "the stepper drivers are off: cube-robot motors on"
    return "see docs/protocol.md, The puzzle mode"


def send(link, command: str, arms: str) -> int:
    """Stream one action and wait for its `done` (its duration in ms); a refusal is a BringupError that
    names the board's error, says the line did nothing, and what to do."""
    try:
        return link.run([command]).durations_ms[-1]
    except CommandRejectedError as exc:
        try:
            where = link.where()
        except Exception:  # the refusal is said all the same
            where = None
        raise BringupError(
            f"the board refused `{command}`: {exc.code.name} ({P.ERROR_TEXT.get(exc.code, '?')}); that line "
            f"did nothing: {advice(exc.code, arms, where, link.motion.steps_per_rev)}") from None


def confirm_straight(link, arms: str, tell_maker, left_off=None) -> P.Where:
    """The maker's word (--arms-straight): the arms of `arms` whose position the board does not know stand
    straight (ZERO; the drivers on first).  left_off(arm) (simulation): the arm's true steps from straight."""
    where = actions.ensure_motors(link, tell_maker)
    unknown = "".join(a for a in arms if where.positions[a] is None)
    if unknown:
        link.request(P.zero_command(unknown))
        said = f"Arm(s) {', '.join(unknown)} taken as straight, on your word (--arms-straight): their positions are now 0"
        if left_off is not None:
            off = ", ".join(f"{a} {left_off(a):+d}" for a in unknown if left_off(a))
            said += (f"; the simulated arms really stand off straight by {off} steps" if off
                     else "; the simulated arms are exactly straight")
        tell_maker(said + ".")
        where = link.where()
    return where


def holding(where: P.Where) -> str:
    """What the grippers allow now, in one sentence (the 3x3x3 rules)."""
    closed = {a for a in P.ARMS if where.grippers[a] == "closed"}
    if closed == set(P.ARMS):
        return ("Every gripper is closed (the 3x3x3 default): an arm turns its layer while the other pair "
                "stands closed at 0.")
    if not closed:
        return "No gripper is closed: nothing holds a cube."
    pairs = [pair for pair in actions.PAIRS if set(pair) <= closed]
    if pairs:
        pair = pairs[0]
        return (f"Pair {pair} holds the cube; {', '.join(sorted(set(P.ARMS) - closed, key=P.ARMS.index))} "
                "open (an open arm turns in the air; no layer turns until the other pair is closed at 0).")
    return (f"No pair holds the cube (only {', '.join(sorted(closed, key=P.ARMS.index))} closed): a 3x3x3 is held "
            "by both grippers of a pair; close a pair or take the cube out.")


def grip(link, arms: str, close: bool, tell_maker, arms_straight: bool = False, left_off=None) -> P.Where:
    """OPEN / CLOSE those grippers.  Closing needs each arm's position known and square (the board
    refuses POSITION_UNKNOWN / NOT_SQUARE): with arms_straight, arms of unknown position are confirmed
    straight first."""
    if close and arms_straight:
        confirm_straight(link, arms, tell_maker, left_off)
    send(link, P.grippers_command(arms, close), arms)
    widths = ", ".join(f"{arm} {P.gripper_widths(link.motion, arm)[1 if close else 0]} us" for arm in arms)
    tell_maker(f"{'Closed' if close else 'Opened'} gripper{'s' if len(arms) > 1 else ''} {', '.join(arms)} ({widths}).")
    where = link.where()
    tell_maker(holding(where))
    return where


def jog(link, arm: str, steps: int, tell_maker, with_cube: bool = False, arms_straight: bool = False,
        left_off=None) -> P.Where:
    """Turn one arm by `steps` in the air (JOG: its gripper must be open; a gripper the board has never
    set since it started holds nothing and is opened first), or with_cube: turn its layer (TURN, quarter
    or half turns) with its gripper and the other pair's closed at 0."""
    rev = link.motion.steps_per_rev
    if with_cube:
        return _layer_turn(link, arm, steps, tell_maker, arms_straight, left_off)
    where = actions.ensure_motors(link, tell_maker)
    if where.grippers[arm] is None:
        send(link, P.grippers_command(arm, close=False), arm)
        tell_maker(f"Opened gripper {arm} first, so the arm turns in the air (its state was unknown: the board "
                   "has just started, and a gripper it never set holds nothing).")
    ms = send(link, P.jog_command(arm, steps), arm)  # a closed gripper: ARM_BLOCKED, said with what to do
    tell_maker(f"Arm {arm} turned {steps:+d} steps ({steps * 360 / rev:+.1f} deg) in the air in {ms} ms. "
               "A positive turn must be clockwise seen from outside the arm's face; if it went the other way, set "
               f"motion.arms.{arm}.invert in config.yaml (or swap the motor's 1A/1B wires with the power off).")
    where = link.where()
    if where.positions[arm] is not None and not where.straight(arm, rev):
        tell_maker(f"Arm {arm} now stands between quarter positions: the board will not close its gripper there "
                   "(NOT_SQUARE) until it is turned square.")
    return where


def _layer_turn(link, arm: str, steps: int, tell_maker, arms_straight: bool, left_off) -> P.Where:
    rev = link.motion.steps_per_rev
    degrees = steps * 360 // rev
    holders = arm + other_pair(arm)  # the arm turns its layer; the other pair holds the cube at 0
    if arms_straight:
        where = confirm_straight(link, holders, tell_maker, left_off)
    else:
        where = actions.ensure_motors(link, tell_maker)
    to_close = "".join(a for a in holders if where.grippers[a] != "closed")
    if to_close:
        send(link, P.grippers_command(to_close, close=True), to_close)
        tell_maker(f"Closed gripper(s) {', '.join(to_close)} on the cube: pair {other_pair(arm)} holds it while "
                   f"{arm} turns its layer.")
    ms = send(link, P.turn_command({arm: degrees}), holders)
    tell_maker(f"Arm {arm} turned its layer {degrees:+d} deg in {ms} ms. A positive turn must be clockwise seen from "
               f"outside the arm's face; if it went the other way, set motion.arms.{arm}.invert in config.yaml.")
    where = link.where()
    if at_90(where, arm, rev):
        tell_maker(f"Gripper {arm} now stands at 90, across the {' and '.join(other_pair(arm))} layers: they cannot "
                   f"turn until {arm} is restored (open it, turn it back in the air, close it).")
    return where


def check_layer_turn(steps: int, steps_per_rev: int) -> None:
    """A layer turns by quarter or half turns only (TURN): BringupError for any other angle."""
    quarter = steps_per_rev // 4
    if steps % quarter or abs(steps) > 2 * quarter:
        raise BringupError(f"{steps} steps ({steps * 360 / steps_per_rev:g} deg): in 3x3x3 mode a layer turns by "
                           "quarter or half turns only (90, -90, 180 or -180)")


def home(link, arms: str, tell_maker, by_eye: bool = False, ask=None, hint=None, left_off=None) -> P.Where:
    """Home `arms` one pair at a time (sensors, or squared by eye), so the other pair can hold the cube
    meanwhile; the grippers that were closed close again at 0 afterwards."""
    where = actions.ensure_motors(link, tell_maker)
    groups: list[tuple[str, str]] = []
    for arm in arms:
        pair = actions.pair_of(arm)
        if pair not in [g[0] for g in groups]:
            groups.append((pair, "".join(a for a in arms if a in pair)))
    for pair, group in groups:
        were_closed = "".join(a for a in group if where.grippers[a] == "closed")
        to_open = "".join(a for a in group if where.grippers[a] != "open")
        if to_open:
            send(link, P.grippers_command(to_open, close=False), to_open)
            others = other_pair(group[0])
            held = all(where.grippers[a] == "closed" for a in others)
            tell_maker(f"Opened gripper(s) {', '.join(to_open)}: homing turns each arm in the air"
                       + ("." if not were_closed else f"; pair {others} holds the cube meanwhile." if held else
                          f"; pair {others} does not hold a cube: take it out."))
        if by_eye:
            actions.square_by_eye(link, group, ask, tell_maker, hint, left_off)
        else:
            actions.home_with_sensors(link, group, tell_maker)
        if were_closed:
            send(link, P.grippers_command(were_closed, close=True), were_closed)
            tell_maker(f"Closed gripper(s) {', '.join(were_closed)} again, at 0.")
        where = link.where()
    return where


def find_positions(link, arms: str, config, tell_maker, arms_straight: bool, left_off=None) -> P.Where:
    """Before closing grippers on a cube (load, tune grippers): the positions of `arms` known, confirmed
    straight (arms_straight) or homed with the sensors; else a BringupError before anything moved that
    names the board's refusal to come (POSITION_UNKNOWN) and the ways out."""
    where = link.where()
    unknown = "".join(a for a in arms if where.positions[a] is None)
    if unknown and arms_straight:
        return confirm_straight(link, arms, tell_maker, left_off)
    if unknown and config.motion.homing.sensors:
        return home(link, unknown, tell_maker)
    if unknown:
        raise unknown_refusal(link, where, unknown)
    return actions.ensure_motors(link, tell_maker)


def unknown_refusal(link, where: P.Where, unknown: str) -> BringupError:
    return BringupError(
        f"the board would refuse to close gripper(s) {', '.join(unknown)}: POSITION_UNKNOWN "
        f"({P.ERROR_TEXT[E.POSITION_UNKNOWN]}); nothing moved: "
        + advice(E.POSITION_UNKNOWN, unknown, where, link.motion.steps_per_rev))


def load(link, config, wait, tell_maker, arms_straight: bool = False, left_off=None) -> P.Where:
    """Every gripper open, the arms' positions found (see find_positions), wait for the cube (wait()),
    then all four close on it at 0: the 3x3x3 robot's default."""
    where = link.where()
    unknown = "".join(a for a in P.ARMS if where.positions[a] is None)
    if unknown and not (arms_straight or config.motion.homing.sensors):
        raise unknown_refusal(link, where, unknown)  # said before anything moves or a cube goes in
    actions.ensure_motors(link, tell_maker)
    send(link, P.grippers_command(P.ARMS, close=False), P.ARMS)
    where = find_positions(link, P.ARMS, config, tell_maker, arms_straight, left_off)
    crooked = [a for a in P.ARMS if not where.straight(a, link.motion.steps_per_rev)]
    if crooked:
        raise BringupError(
            f"the board would refuse to close gripper(s) {', '.join(crooked)}: NOT_SQUARE; no cube was taken: "
            + advice(E.NOT_SQUARE, "".join(crooked), where, link.motion.steps_per_rev))
    tell_maker("All grippers open, the arms square: put the 3x3x3 between them, then press Enter or the robot's "
               "start button.")
    wait()
    send(link, P.grippers_command(P.ARMS, close=True), P.ARMS)
    tell_maker("Cube held by all four grippers, at 0 (the 3x3x3 robot's default). "
               f"`cube-robot release {FLAG}` opens them all.")
    return link.where()
