"""The panel's session (robot/panel/session.py) on the simulated robot, in this process: a run started from
the panel is the terminal's run (its events in order, the solve log, SIMULATED SOLVED), the emergency stop and
Stop end it as the terminal's would, a layer left between positions blocks Start until a new cube, a person
confirms or corrects the scanned cube, and only the controlling client moves the robot.  The Python mock
firmware unless the emulator is the point (a stop mid-turn: only the emulated pins show a layer part-turned)."""

from __future__ import annotations

import contextlib
import json
import threading
from typing import Callable, Iterator

import numpy as np
import pytest

from conftest import scratch_config
from robot import config as config_module
from robot import cube
from robot.panel.errors import RequestError
from robot.panel.held import HeldRobot
from robot.panel.session import PanelSession
from robot.plan import RobotProfile, Turn, action_from_json, replay
from robot.run.log import log_path

HANG_GUARD_S = 300.0  # ends a test the session leaves waiting; not a speed requirement


class Heard:
    """A listener of the session: every message it sends, in order; waits on what it has heard."""

    def __init__(self) -> None:
        self.messages: list[dict] = []
        self.condition = threading.Condition()
        self.on_message: Callable[[dict], None] | None = None  # called on the sender's thread (the run's)

    def __call__(self, message: dict) -> None:
        with self.condition:
            self.messages.append(message)
            self.condition.notify_all()
        if self.on_message is not None:
            self.on_message(message)

    def wait_for(self, predicate: Callable[[dict], bool], what: str) -> dict:
        with self.condition:
            found = self.condition.wait_for(
                lambda: next((m for m in self.messages if predicate(m)), None), HANG_GUARD_S)
            assert found, f"never heard {what}; heard {[m['type'] for m in self.messages]}"
            return found

    def report(self, run: int) -> dict:
        return self.wait_for(lambda m: m["type"] == "Report" and m["run"] == run, f"run {run}'s report")

    def of_run(self, run: int) -> list[dict]:
        with self.condition:
            return [m for m in self.messages if m.get("run") == run]


@pytest.fixture
def config(tmp_path):
    """config.yaml with the scan pictures and the solve log in tmp_path."""
    return config_module.load(scratch_config(tmp_path))


@contextlib.contextmanager
def opened(config, seed: int = 3, firmware: str = "mock") -> Iterator[tuple[PanelSession, Heard]]:
    state = cube.random_placed_state(np.random.default_rng(seed))
    session = PanelSession(config, HeldRobot.simulated_robot(config, state, firmware=firmware, seed=seed))
    heard = Heard()
    try:
        session.open()
        session.listen(heard)
        session.take_control("tab-a")
        yield session, heard
    finally:
        session.close()


def refused(call: Callable[[], object]) -> RequestError:
    with pytest.raises(RequestError) as caught:
        call()
    return caught.value


def logged(config) -> list[dict]:
    path = log_path(config)
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def is_solved_facelets(facelets: str) -> bool:
    return all(len(set(facelets[4 * face:4 * face + 4])) == 1 for face in range(6))


def same_cube_up_to_colour_names(stated: str, truth: str) -> bool:
    """Whether `stated` (colours as the scan named them) is the cube `truth` (the virtual cube's own names)."""
    names: dict[str, str] = {}
    return all(names.setdefault(a, b) == b for a, b in zip(stated, truth)) and len(set(names.values())) == len(names)


def plan_actions(report: dict) -> list:
    return [action_from_json(action) for action in report["plan"]["plan"]]


def first_turn(report_or_plan: dict) -> int:
    """The index (from 0) of the plan's first Turn (a grip turns no layer)."""
    actions = [action_from_json(a) for a in report_or_plan["plan"]]
    return next(i for i, action in enumerate(actions) if isinstance(action, Turn))


# -- a run, twice ----------------------------------------------------------------------------------------------

def test_a_run_ends_simulated_solved_with_its_events_in_order_logged_and_a_second_run_works(config):
    with opened(config) as (session, heard):
        assert session.start_run("tab-a") == 1
        first = heard.report(1)
        assert first["result_line"].startswith("SIMULATED SOLVED"), first["text"]
        assert first["report"]["outcome"] == "SOLVED" and first["report"]["simulated"] is True

        run = [m for m in heard.of_run(1) if m["type"] not in ("State", "Message")]
        types = [m["type"] for m in run]
        assert types[0] == "RunStarted" and types[-2:] == ["RunEnded", "Report"], types
        plan = next(m for m in run if m["type"] == "PlanFound")
        total = plan["actions"]
        assert total > 0
        sent = [m["action"] for m in run if m["type"] == "ActionSent"]
        done = [m["completed"] for m in run if m["type"] == "ActionDone"]
        assert sent == list(range(1, total + 1)), sent  # each action's line once, in order
        assert done == sorted(done) and done[-1] == total and len(set(done)) == len(done), done
        # Every action's line went out before its `done` came, and all of it after the plan was found
        # and before the stream ended.
        position = {id(m): i for i, m in enumerate(run)}
        for k in range(1, total + 1):
            sent_at = next(position[id(m)] for m in run if m["type"] == "ActionSent" and m["action"] == k)
            done_at = next(position[id(m)] for m in run if m["type"] == "ActionDone" and m["completed"] >= k)
            assert position[id(plan)] < sent_at < done_at < types.index("StreamEnded"), (k, types)
        assert types.index("StreamEnded") < types.index("Result") < types.index("RunEnded")

        log = logged(config)
        assert [entry["outcome"] for entry in log] == ["SOLVED"] and log[0]["simulated"] is True
        assert log[0]["plan"]["moves"] == plan["moves"]
        assert session.state()["run"]["state"] == "idle"

        # The same held robot, its cube now solved: a second run scans it, finds nothing to do, and is logged.
        assert session.start_run("tab-a") == 2
        second = heard.report(2)
        assert second["result_line"].startswith("SIMULATED SOLVED"), second["text"]
        assert is_solved_facelets(second["report"]["facelets"]), second["report"]["facelets"]
        assert [entry["outcome"] for entry in logged(config)] == ["SOLVED", "SOLVED"]


# -- the emergency stop and Stop ---------------------------------------------------------------------------

def test_the_emergency_stop_mid_run_latches_the_alarm_names_the_cube_state_and_start_waits_for_clear_alarm(config):
    """The stop byte once the plan's first turn is done (from another thread, as the web server's, while the
    run's thread waits in the listener): the report names the cube after the actions done, the virtual
    cube's state; Start is refused naming the alarm until Clear alarm, and then a run solves the cube."""
    with opened(config) as (session, heard):
        stop_after: list[int] = []

        def on_message(message: dict) -> None:
            if message["run"] != 1:
                return
            if message["type"] == "PlanFound":
                stop_after.append(first_turn(message["plan"]) + 1)
            elif message["type"] == "ActionDone" and stop_after and message["completed"] == stop_after[0]:
                answer: list[dict] = []
                web_server = threading.Thread(target=lambda: answer.append(session.emergency_stop()))
                web_server.start()
                web_server.join()
                assert answer and answer[0]["sent"] is True and answer[0]["running"] is True, answer
        heard.on_message = on_message

        session.start_run("tab-a")
        report = heard.report(1)["report"]
        heard.wait_for(lambda m: m["type"] == "EmergencyStop" and m["run"] == 1, "the emergency stop")
        assert report["outcome"] == "EMERGENCY STOP", report  # this host's stop byte, as after Ctrl-C
        assert any("the panel's Emergency stop sent the stop byte" in error and "ESTOP_BYTE" in error
                   for error in report["errors"]), report
        assert "clear the alarm (Clear alarm in the panel), then Start again" in report["advice"], report["advice"]
        assert "USB cable" not in report["advice"]  # the panel sent the byte: no line noise to suspect
        assert "execute (stopped)" in [entry["stage"] for entry in report["waterfall"]]  # the stage it cut short
        assert session.state()["board"]["alarm"] == "ESTOP_BYTE"

        # The cube state named: the scanned cube after the actions the board did (at least the first turn),
        # which is the virtual cube's.
        done = report["stopped_at_action"]
        assert done is not None and done >= stop_after[0]
        actions = plan_actions(report)
        assert done < len(actions), "the stop came after the plan's end: nothing was stopped"
        scanned = cube.parse_facelets(report["facelets"])
        expected = replay(scanned.cubie, actions[:done], RobotProfile.from_config(config))[0].to_facelets(
            scanned.colours)
        stated = report["cube_state_after_stop"]
        assert stated.split()[0] == expected and f"after plan action {done} of {len(actions)}" in stated, stated
        assert expected != report["facelets"]  # a layer had turned: not the cube as scanned
        assert same_cube_up_to_colour_names(expected, report["virtual_cube"]), (expected, report["virtual_cube"])

        refusal = refused(lambda: session.start_run("tab-a"))
        assert refusal.status == 409 and "ESTOP_BYTE" in refusal.message, refusal.message
        assert session.state()["run"]["id"] == 1  # no run was started

        cleared = session.clear_alarm("tab-a")
        assert cleared["board"]["alarm"] is None and cleared["board"]["state"] == "IDLE", cleared
        assert session.start_run("tab-a") == 2
        again = heard.report(2)
        assert again["result_line"].startswith("SIMULATED SOLVED"), again["text"]


def test_stop_mid_run_ends_as_ctrl_c_in_the_terminal_and_the_advice_names_the_panels_clear_alarm(config):
    with opened(config) as (session, heard):
        pressed: list[threading.Thread] = []

        def on_message(message: dict) -> None:
            if message["type"] == "ActionDone" and message["run"] == 1 and not pressed:  # Stop from the page: not on the run's thread
                pressed.append(threading.Thread(target=session.stop, args=("tab-a",)))
                pressed[0].start()
        heard.on_message = on_message

        session.start_run("tab-a")
        answer = heard.report(1)
        pressed[0].join()
        report = answer["report"]
        assert report["outcome"] == "EMERGENCY STOP" and answer["result_line"].startswith("SIMULATED EMERGENCY STOP")
        assert report["errors"][-1] == "emergency stop: Stop (pressed in the panel); the stop byte was sent to the robot"
        assert "Clear alarm in the panel" in report["advice"], report["advice"]
        assert "cube-robot link reset-alarm" not in report["advice"] and "SIMULATED: the virtual robot ended" \
            not in report["advice"]  # the panel still holds the robot: its button clears the alarm
        assert "Clear alarm in the panel" in answer["text"]
        done = report["stopped_at_action"]
        assert done is not None and done >= 1
        assert f"after plan action {done} of" in report["cube_state_after_stop"]
        assert same_cube_up_to_colour_names(report["cube_state_after_stop"].split()[0], report["virtual_cube"])
        assert session.state()["board"]["alarm"] == "ESTOP_BYTE"
        assert logged(config)[-1]["outcome"] == "EMERGENCY STOP"


@pytest.mark.firmware
def test_a_stop_mid_turn_leaves_the_virtual_cube_jammed_until_a_new_cube_is_put_in(config):
    """The emergency stop while an arm is between positions (the emulator's pins show the arm stopped part-way
    through a turn): the virtual cube cannot go on, the state says so and Start is refused with the same
    words; a new cube (a new emulated robot) clears it.  (The emergency stop, not Stop: Stop takes effect when
    the run's thread next hears from the board, the turn's own `done`, so it never lands mid-turn.)"""
    from robot.sim import emulator

    ok, why = emulator.available()
    if not ok:
        pytest.skip(f"firmware emulator unavailable: {why}")
    with opened(config, firmware="emulator") as (session, heard):
        quarter = config.motion.steps_per_rev // 4
        seen: dict[str, int] = {}

        def watch_the_arms() -> None:
            """After the plan is found only its turns move the arms: stop when one stands between positions."""
            heard.wait_for(lambda m: m["type"] == "PlanFound", "the plan")
            while not any(m["type"] == "Report" for m in heard.of_run(1)):
                angles = {arm: session.held.arm_angle(arm) for arm in "RLFB"}
                between = {arm: steps for arm, steps in angles.items() if steps is not None and steps % quarter}
                if between:
                    seen.update(between)
                    session.emergency_stop()
                    return

        session.start_run("tab-a")
        watcher = threading.Thread(target=watch_the_arms)
        watcher.start()
        report = heard.report(1)["report"]
        watcher.join()
        assert seen, "no arm was seen between positions during the plan's turns (the plan ran to its end)"
        assert any("ESTOP_BYTE" in error for error in report["errors"]), report
        jammed = session.state()["jammed"]
        assert jammed and jammed.startswith("SIMULATED") and "between positions" in jammed, jammed
        assert "press New cube" in jammed

        refusal = refused(lambda: session.start_run("tab-a"))
        assert refusal.status == 409 and refusal.message == jammed

        answer = session.new_cube("tab-a", None, 5)
        assert answer["ok"] is True and session.state()["jammed"] is None
        assert session.state()["board"]["alarm"] is None  # a fresh emulated board
        assert session.start_run("tab-a") == 2
        assert heard.report(2)["result_line"].startswith("SIMULATED SOLVED")


# -- the review: a person confirms or corrects the cube read -----------------------------------------------------

def waiting_review(session: PanelSession, heard: Heard, run: int) -> dict:
    heard.wait_for(lambda m: m["type"] == "State" and m["run"]["id"] == run and m["run"]["review"] is not None,
                   f"run {run} waiting for the cube's confirmation")
    return session.state()["run"]["review"]


def rotated_colour_names(facelets: str) -> str:
    """The same cube with its colours renamed as a turn of the whole cube about the U-R-F corner moves them
    (U->R->F, D->L->B): legal, every sticker named differently but the same pattern, so a plan that solves
    it solves the cube in the grippers."""
    scheme = cube.parse_facelets(facelets).colours  # the colour of each face, U R F D L B
    rename = dict(zip(scheme, (scheme[1], scheme[2], scheme[0], scheme[4], scheme[5], scheme[3])))
    return "".join(rename[c] for c in facelets)


def test_the_review_refuses_an_illegal_cube_naming_its_stickers_then_solves_the_corrected_one(config):
    with opened(config) as (session, heard):
        session.start_run("tab-a", review=True)
        review = waiting_review(session, heard, 1)
        scanned = review["facelets"]
        assert review["confidence"] is not None

        # One sticker changed alone: not a legal cube.  Refused naming it; the run still waits, nothing planned.
        other = next(c for c in scanned if c != scanned[0])
        illegal = other + scanned[1:]
        refusal = refused(lambda: session.confirm_cube("tab-a", illegal))
        assert refusal.status == 422 and refusal.field == "facelets"
        assert "U1" in refusal.details["stickers"] and "U1" in refusal.message, refusal.to_json()
        state = session.state()
        assert state["run"]["state"] == "running" and state["run"]["review"]["facelets"] == scanned
        assert not [m for m in heard.of_run(1) if m["type"] in ("PlanFound", "ActionSent")]

        corrected = rotated_colour_names(scanned)
        changed = [i for i in range(24) if corrected[i] != scanned[i]]
        assert changed
        session.confirm_cube("tab-a", corrected)
        answer = heard.report(1)
        report = answer["report"]
        assert answer["result_line"].startswith("SIMULATED SOLVED"), answer["text"]
        assert report["facelets"] == corrected and report["plan"]["facelets"] == corrected
        assert report["corrected"] == {"scanned": scanned, "stickers": changed}
        event = next(m for m in heard.of_run(1) if m["type"] == "CubeCorrected")
        assert event["scanned"] == scanned and event["facelets"] == corrected and list(event["stickers"]) == changed
        corrected_line = next(line for line in answer["text"].splitlines() if "corrected " in line)
        assert corrected in corrected_line and "by hand in the panel" in corrected_line
        assert logged(config)[-1]["corrected"]["scanned"] == scanned


def test_stop_while_the_review_waits_ends_the_run_with_nothing_turned(config):
    with opened(config) as (session, heard):
        put_in = session.held.robot.virtual.state  # type: ignore[union-attr]
        session.start_run("tab-a", review=True)
        scanned = waiting_review(session, heard, 1)["facelets"]
        session.stop("tab-a")
        answer = heard.report(1)
        report = answer["report"]
        assert report["outcome"] == "INTERRUPTED", report
        assert "no stop byte was sent" in report["errors"][-1], report["errors"]
        # The cube had been read: the state named is the one read (not "not read yet").
        assert report["cube_state_after_stop"] == f"{scanned} (as scanned; no plan action ran)", report
        assert not [m for m in heard.of_run(1) if m["type"] in ("PlanFound", "ActionSent", "ActionDone")]
        state = session.state()
        assert state["run"]["state"] == "idle" and state["run"]["review"] is None
        assert state["board"]["alarm"] is None  # nothing moved, so no stop byte latched an alarm
        # No layer turned: the virtual cube is the one put in, at most turned whole (the scan's views).
        virtual = session.held.robot.virtual.state  # type: ignore[union-attr]
        assert any(virtual == put_in * rotation for rotation in cube.ROTATIONS), \
            session.held.robot.virtual.history  # type: ignore[union-attr]


# -- control: one client moves the robot ----------------------------------------------------------------------

def test_a_second_client_moves_nothing_until_it_takes_control_but_may_always_emergency_stop(config):
    with opened(config) as (session, heard):
        for name, call in (("start", lambda: session.start_run("tab-b")),
                           ("stop", lambda: session.stop("tab-b")),
                           ("confirm", lambda: session.confirm_cube("tab-b", "UUUURRRRFFFFDDDDLLLLBBBB")),
                           ("bring-up", lambda: session.bringup("tab-b", "motors", {"on": True})),
                           ("clear alarm", lambda: session.clear_alarm("tab-b")),
                           ("new cube", lambda: session.new_cube("tab-b", None, 1)),
                           ("control", lambda: session.take_control("tab-b"))):
            refusal = refused(call)
            assert refusal.status == 409 and "'tab-a'" in refusal.message, (name, refusal.message)
        assert session.state()["run"]["id"] is None and session.controller == "tab-a"

        assert session.emergency_stop()["sent"] is True  # no client asked: anyone who sees the page may
        session.refresh_board()  # as GET /api/bringup/where does
        assert session.state()["board"]["alarm"] == "ESTOP_BYTE"

        session.take_control("tab-b", take=True)
        assert session.controller == "tab-b"
        assert refused(lambda: session.clear_alarm("tab-a")).status == 409
        assert session.clear_alarm("tab-b")["board"]["alarm"] is None
        session.release_control("tab-a")  # not the controller: changes nothing
        assert session.controller == "tab-b"
        session.release_control("tab-b")
        assert session.controller is None
        session.take_control("tab-a")
        assert session.state("tab-a")["you_control"] is True
