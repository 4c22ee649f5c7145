"""What a run in the panel says where the terminal's words would not fit: an emergency stop during the check
rescan, the time a person took to check the cube (left out of button->solved), a hand-corrected cube that was
not the one in the robot, the run's stage while it waits for the person, and a path the panel does not serve."""

from __future__ import annotations

import threading

from panel_fixtures import get, panel_server  # noqa: F401
from test_panel_session import config, opened  # noqa: F401  (the fixtures and helpers of the session's tests)

from robot import cube


def test_an_emergency_stop_during_the_check_rescan_is_an_emergency_stop_after_the_whole_plan(config):
    with opened(config) as (session, heard):
        sent: list = []

        def on_message(message: dict) -> None:
            if message["type"] == "StageStarted" and message["stage"] == "verify" and not sent:
                sent.append(session.emergency_stop())
        heard.on_message = on_message
        run = session.start_run("tab-a")
        report = heard.report(run)["report"]
        assert sent, "the run never reached its check rescan"
        assert report["outcome"] == "EMERGENCY STOP", report
        assert report["execute_ok"] is True  # the whole plan had run
        assert any("the panel's Emergency stop sent the stop byte" in error for error in report["errors"]), report
        assert "check rescan" in report["cube_state_after_stop"], report["cube_state_after_stop"]
        assert "SIMULATED: the virtual cube is solved" in report["cube_state_after_stop"], report
        assert "Clear alarm in the panel" in report["advice"], report["advice"]


def test_a_persons_review_is_left_out_of_button_to_solved_and_is_in_the_waterfall(config):
    with opened(config) as (session, heard):
        staged: list = []

        def on_message(message: dict) -> None:
            if message["type"] == "State" and message["run"]["review"] and not staged:
                staged.append(message["run"]["stage"])
                # confirm from another thread once the state (and its stage) has been sent
                facelets = message["run"]["review"]["facelets"]
                threading.Thread(target=session.confirm_cube, args=("tab-a", facelets)).start()
        heard.on_message = on_message
        run = session.start_run("tab-a", review=True)
        report = heard.report(run)["report"]
        assert staged == ["review"], staged
        assert report["outcome"] == "SOLVED", report
        stages = {entry["stage"]: entry for entry in report["waterfall"]}
        review = stages["review (a person checks the cube)"]
        waited = review["end_ms"] - review["start_ms"]
        assert report["review_ms"] is not None and abs(report["review_ms"] - waited) <= 1.0, (report["review_ms"], waited)
        # start press -> the last action's done (the execute stage's end, on the same clock), less the review
        assert abs(report["button_to_solved_ms"] - (stages["execute"]["end_ms"] - report["review_ms"])) <= 1.0, report


def test_a_hand_corrected_cube_that_was_not_the_one_in_the_robot_ends_not_solved_with_advice(config):
    with opened(config) as (session, heard):
        def on_message(message: dict) -> None:
            review = message["run"]["review"] if message["type"] == "State" else None
            if review:  # a legal cube, but another one: the scanned cube turned by U
                other = cube.apply_moves(review["facelets"], ["U"])
                threading.Thread(target=session.confirm_cube, args=("tab-a", other)).start()
                heard.on_message = None
        heard.on_message = on_message
        run = session.start_run("tab-a", review=True)
        answer = heard.report(run)
        report = answer["report"]
        assert report["outcome"] == "NOT SOLVED", report
        assert "was not the cube in the robot" in (report["advice"] or ""), report
        corrected_line = next(line for line in answer["text"].splitlines() if "corrected " in line)
        changed = [cube.facelet_name(i) for i in report["corrected"]["stickers"]]
        assert changed and all(name in corrected_line for name in changed), corrected_line


def test_a_path_the_panel_does_not_serve_is_a_json_404(panel_server):  # noqa: F811
    answer = get(panel_server, "/api/nope")
    assert answer.status == 404
    assert "/api/nope" in answer.json()["error"]
