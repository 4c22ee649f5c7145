"""What the bring-up commands do on the link (robot.link.driver.Link), each saying what it did.

`tell_maker` is a function that prints one line for the user.  Queued actions (JOG, OPEN, CLOSE, HOME,
GRIP) are streamed with Link.run, so each returns once the firmware reported it `done`; a refusal
or an alarm raises the link's typed error (CommandRejectedError, AlarmError) naming the code.
"""

from __future__ import annotations

from ..link import protocol as P

PAIRS = P.GRIP_PAIRS  # ("RL", "FB")


class BringupError(RuntimeError):
    """A bring-up step that cannot be done as asked (the message says why and what to do)."""


def steps_for_degrees(degrees: float, steps_per_rev: int) -> int:
    return round(degrees * steps_per_rev / 360)


def ensure_motors(link, tell_maker) -> P.Where:
    """Switch the stepper drivers on if they are off, and say so.  Returns WHERE after."""
    where = link.where()
    if not where.motors_on:
        link.request(P.motors_command(True))
        tell_maker("Switched the stepper drivers on (all four share ENABLE): the arms now hold their position.")
        where = link.where()
    return where


def set_motors(link, on: bool, tell_maker) -> P.Where:
    link.request(P.motors_command(on))
    where = link.where()
    if on:
        tell_maker("Stepper drivers on: the arms hold. They switch off after motion.idle_off_s without an action, "
            "with `cube-robot motors off`, or when a program next opens the port (that resets the Uno).")
    else:
        tell_maker("Stepper drivers off: the arms turn freely by hand. Their positions are now unknown: "
            "`cube-robot home` (or a run's check) finds them again.")
    return where


def arms_of(target: str) -> str:
    """'R', 'RL', 'FB' or 'all' -> the arm letters; BringupError names a bad one."""
    if target.lower() == "all":
        return P.ARMS
    text = target.upper()
    if not text or any(c not in P.ARMS for c in text) or len(set(text)) != len(text):
        raise BringupError(f"{target!r} is not an arm (R, L, F, B), a pair ({', '.join(PAIRS)}) or 'all'")
    return text


def grip(link, arms: str, close: bool, tell_maker) -> P.Where:
    link.run([P.grippers_command(arms, close)])
    where = link.where()
    widths = ", ".join(f"{arm} {P.gripper_widths(link.motion, arm)[1 if close else 0]} us" for arm in arms)
    tell_maker(f"{'Closed' if close else 'Opened'} gripper{'s' if len(arms) > 1 else ''} {', '.join(arms)} ({widths}).")
    return where


def pair_of(arm: str) -> str:
    return next(pair for pair in PAIRS if arm in pair)


def jog(link, arm: str, steps: int, tell_maker, with_cube: bool = False, arms_straight: bool = False) -> P.Where:
    """Turn one arm by `steps`: in the air (its gripper opened first if needed), or with_cube: its pair
    takes the cube (GRIP) and turns that layer.  With the cube, the pair's arms' positions must be known
    (and straight if the pair has yet to close on it): a gripper closed off a quarter position jams it.
    arms_straight: the user's word that the pair's arms of unknown position stand straight (ZERO)."""
    if with_cube:
        where = link.where()
        unknown = "".join(a for a in pair_of(arm) if where.positions[a] is None)
        if unknown and arms_straight:
            ensure_motors(link, tell_maker)  # ZERO needs the drivers on
            link.request(P.zero_command(unknown))
            tell_maker(f"Arm(s) {', '.join(unknown)} taken as straight, on your word (--arms-straight): "
                       "their positions are now 0.")
            where = link.where()
        check_pair_for_the_cube(where, pair_of(arm), link.motion.steps_per_rev)
    where = ensure_motors(link, tell_maker)
    actions = []
    if with_cube:
        if not _pair_holds(where, pair_of(arm)):
            actions.append(P.grip_command(pair_of(arm)))
            tell_maker(f"Pair {pair_of(arm)} takes the cube (its grippers close, the other pair's open).")
    elif _pair_holds(where, pair_of(arm)):
        # Opening this gripper would leave the cube in one gripper (it can fall): say what to do instead.
        raise BringupError(f"pair {pair_of(arm)} holds the cube: `cube-robot jog {arm} ... --with-cube` turns "
                           f"that layer, or take the cube out first (`cube-robot release`) to turn arm {arm} in the air")
    elif where.grippers[arm] != "open":
        actions.append(P.grippers_command(arm, close=False))
        tell_maker(f"Opened gripper {arm} first, so the arm turns in the air"
            + (" (its state was unknown: the board has just started)." if where.grippers[arm] is None else "."))
    actions.append(P.jog_command(arm, steps))
    result = link.run(actions)
    rev = link.motion.steps_per_rev
    tell_maker(f"Arm {arm} turned {steps:+d} steps ({steps * 360 / rev:+.1f} deg) in {result.durations_ms[-1]} ms. "
        "A positive turn must be clockwise seen from outside the arm's face; if it went the other way, set "
        f"motion.arms.{arm}.invert in config.yaml (or swap the motor's 1A/1B wires with the power off).")
    return link.where()


def check_pair_for_the_cube(where: P.Where, pair: str, steps_per_rev: int) -> None:
    """BringupError naming the arms of `pair` whose state is not trusted for touching the cube."""
    unknown = [a for a in pair if where.positions[a] is None]
    if unknown:
        raise BringupError(
            f"the position of arm(s) {', '.join(unknown)} is unknown (the drivers were off since): pair {pair} "
            f"could close on the cube between quarter positions and jam it. Home them first (`cube-robot home "
            f"--arms {''.join(unknown)}`), or, if they stand straight, confirm it (`--arms-straight`)")
    crooked = [a for a in pair if not where.straight(a, steps_per_rev)]
    if crooked and not _pair_holds(where, pair):
        raise BringupError(
            f"arm(s) {', '.join(f'{a} at {where.positions[a]} steps' for a in crooked)} stand between quarter "
            f"positions: pair {pair} would close on the cube crooked and jam it. Turn them straight in the air "
            f"first (`cube-robot jog {crooked[0]} ...`, or `cube-robot home --arms {''.join(crooked)}`)")


def _pair_holds(where: P.Where, pair: str) -> bool:
    return all(where.grippers[a] == ("closed" if a in pair else "open") for a in P.ARMS)


def _open_for_turning_in_the_air(link, arms: str, tell_maker, why: str) -> None:
    """Drivers on, and the grippers of `arms` opened (a turn with one closed would twist the cube);
    `why` ends the message that says so."""
    ensure_motors(link, tell_maker)
    where = link.where()
    closed = [a for a in arms if where.grippers[a] != "open"]
    if closed:
        link.run([P.grippers_command("".join(closed), close=False)])
        tell_maker(f"Opened gripper(s) {', '.join(closed)}{why} (take the cube out).")


def home_with_sensors(link, arms: str, tell_maker) -> P.Where:
    """HOME each arm in turn (in the air: its gripper is opened first)."""
    _open_for_turning_in_the_air(link, arms, tell_maker, ": homing turns each arm in the air")
    for arm in arms:
        tell_maker(f"Homing arm {arm}: seek the sensor, back off, approach slowly, move by its zero offset "
            f"({link.motion.arms[arm].zero_offset_steps} steps)...")
        result = link.run([P.home_command(arm)])
        tell_maker(f"  arm {arm} is at its zero ({result.durations_ms[0]} ms).")
    return link.where()


SMALL_STEP_TURNS = 1 / 80  # `+` / `-` while squaring by eye: 4.5 degrees


def square_by_eye(link, arms: str, ask, tell_maker, hint=None, left_off=None) -> P.Where:
    """Walk the user through squaring each arm: jog in small steps until it looks straight, confirm.

    `ask(prompt)` returns the user's line; `hint(arm)` (simulation) describes where the arm really is and
    `left_off(arm)` (simulation) gives its true steps from straight, said with the confirmation.
    Lines: `+` / `-` (a small step), a signed number of steps (`-7`), `Enter` = straight."""
    _open_for_turning_in_the_air(link, arms, tell_maker, " so the arms turn in the air")
    small = max(1, round(link.motion.steps_per_rev * SMALL_STEP_TURNS))
    tell_maker(f"Square each arm by eye: `+` turns it {small} steps clockwise seen from outside that arm's face, `-` "
        "anticlockwise, a number turns it that many steps (e.g. -3), Enter when the gripper stands straight.")
    for arm in arms:
        while True:
            if hint:
                tell_maker(f"  (simulation: {hint(arm)})")
            answer = ask(f"Arm {arm} [+ / - / steps / Enter = straight]: ").strip()
            if not answer:
                break
            steps = {"+": small, "-": -small}.get(answer)
            if steps is None:
                try:
                    steps = int(answer)
                except ValueError:
                    tell_maker(f"  {answer!r}: type +, -, a whole number of steps, or just Enter")
                    continue
            if steps:
                link.run([P.jog_command(arm, steps)])
    link.request(P.zero_command(arms))
    said = f"Confirmed straight: {', '.join(arms)} (their positions are now 0)"
    if left_off is not None:
        offsets = {arm: left_off(arm) for arm in arms}
        crooked = ", ".join(f"{arm} {off:+d}" for arm, off in offsets.items() if off)
        said += (f"; but the simulated arms were left off straight by {crooked} steps (+ is clockwise)" if crooked
                 else "; the simulated arms are exactly straight")
    tell_maker(said + ".")
    return link.where()


def load(link, start_pair: str, wait, tell_maker) -> P.Where:
    """Open all grippers, wait for the cube (wait() returns when Enter or the start button), close the start pair."""
    ensure_motors(link, tell_maker)
    link.run([P.grippers_command(P.ARMS, close=False)])
    tell_maker("All grippers open: put the cube between them, then press Enter or the robot's start button.")
    wait()
    link.run([P.grip_command(start_pair)])
    tell_maker(f"Cube held by pair {start_pair} ({' and '.join(start_pair)}); the other pair is open. "
        "`cube-robot release` opens all grippers.")
    return link.where()


def release(link, tell_maker) -> P.Where:
    link.run([P.grippers_command(P.ARMS, close=False)])
    tell_maker("All grippers open: take the cube out.")
    return link.where()
