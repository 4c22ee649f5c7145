"""`calibrate colours` in the panel (robot/panel/calibrate_api.py) on the simulated robot (the mock firmware,
the simulated webcam): each view presented by the robot and its picture taken, a region dragged and the
drag used, the colours learned with the command's own functions, the simulated save writing nothing; the
same walk-through on a robot the panel takes as real writes the command's two files.  And the page's
steps in chromium against `cube-robot panel --sim`."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import scratch_config
from robot import config as config_module
from robot import cube
from robot.panel.calibrate_api import PanelCalibration
from robot.panel.errors import RequestError
from robot.panel.held import HeldRobot
from robot.panel.session import PanelSession
from robot.vision.regions import Regions
from panel_fixtures import browser, get, page, panel_server  # noqa: F401

CLIENT = "tab-calibrate"


class Overlays:
    """What the session's live view is told to draw (the LiveView's own tests cover drawing it)."""

    def __init__(self):
        self.drawn: list[tuple[list, list | None, str]] = []

    def attach(self, grabber, simulated=False):
        pass

    def detach(self):
        pass

    def close(self):
        pass

    def stats(self):
        return None

    def set_overlay(self, quads, colours=None, label=""):
        self.drawn.append(([np.asarray(q) for q in quads], colours, label))


def _config(tmp_path):
    def edit(text):
        text = text.replace("colours_file: calibration/colors.yaml", f"colours_file: {tmp_path / 'cal' / 'colors.yaml'}")
        text = text.replace("regions_file: calibration/regions.yaml", f"regions_file: {tmp_path / 'cal' / 'regions.yaml'}")
        return text.replace("preview_dir: runs/preview", f"preview_dir: {tmp_path / 'preview'}")
    return config_module.load(scratch_config(tmp_path, edit))


def _session(tmp_path, simulated=True):
    config = _config(tmp_path)
    held = HeldRobot.simulated_robot(config, cube.SOLVED, firmware="mock", seed=3)
    held.simulated = simulated  # False: the panel takes the virtual robot for a real one (files are saved)
    session = PanelSession(config, held, Overlays()).open()
    session.take_control(CLIENT)
    return session


@pytest.fixture
def session(tmp_path):
    session = _session(tmp_path)
    yield session
    session.close()


def _centre(quad) -> np.ndarray:
    return np.asarray(quad, dtype=float).mean(axis=0)


def _walk_views(calibration: PanelCalibration, session, after_confirm=None) -> None:
    held = session.held
    rev = session.config.motion.steps_per_rev
    for number, view in enumerate(calibration.walk.sequence.views):
        before = {arm: held.robot.mock.arm_position(arm) for arm in "RLFB"}  # the virtual arms' true angles
        state = calibration.present(CLIENT)
        after = {arm: held.robot.mock.arm_position(arm) for arm in "RLFB"}
        assert state["current"] == view.name and state["step"] == "presented"
        turned = {arm for arm in "RLFB" if (after[arm] - before[arm]) % rev}
        turns = {arm for action in view.actions for arm in getattr(action, "arms", {})}
        assert turned == turns, (view.name, before, after)  # the virtual arms moved as the view's actions say
        drawn, colours, label = session.live.drawn[-1]
        assert label == f"calibrate: {view.name}" and colours is None and len(drawn) == len(view.facelets)
        state = calibration.confirm(CLIENT, view.name)
        shown = state["views"][number]
        assert shown["state"] == "confirmed" and len(shown["samples"]) == len(view.facelets)
        assert calibration.walk.frames[view.name].shape[:2] == (session.config.camera.height,
                                                              session.config.camera.width)
        assert session.live.drawn[-1][1] is not None  # the sampled colours drawn at each sticker
        if after_confirm:
            after_confirm(view.name)


def test_the_walk_through_on_the_simulated_robot_learns_six_separated_colours_and_saves_nothing(session, tmp_path):
    calibration = PanelCalibration(session)
    state = calibration.start(CLIENT)
    assert state["step"] == "solved-cube-in" and state["simulated"] and state["next"] == "top-front"
    assert all(text.startswith("SIMULATED | ") for text in state["messages"])
    assert session.held.robot.virtual.facelets() == cube.SOLVED_FACELETS
    rendered = session.held.robot.regions
    assert [view["quads"] for view in state["views"]] == [
        np.round(rendered.quads(name), 1).tolist() for name in rendered.views]

    moved = {}

    def drag(view: str) -> None:
        """On the first view: U3's region dragged onto F1's sticker (a wrong place, to see it used)."""
        if view != "top-front":
            return
        quads = calibration.walk.quads[view]
        facelets = list(calibration.walk.sequence.views[0].facelets)
        shift = _centre(quads[facelets.index("F1")]) - _centre(quads[facelets.index("U3")])
        samples_before = calibration.state()["views"][0]["samples"]
        state = calibration.adjust(CLIENT, view, "U3", offset=shift.tolist())
        moved["shift"] = shift
        got = state["views"][0]
        assert got["adjusted"] and np.allclose(np.asarray(got["quads"][facelets.index("U3")]),
                                               np.round(quads[facelets.index("U3")] + shift, 1), atol=0.11)
        # U3 now samples F1's sticker: its colour is F1's, no longer that of U's other stickers.
        now = got["samples"]
        u3, f1, u1 = (np.array(now[facelets.index(n)]["lab"]) for n in ("U3", "F1", "U1"))
        assert np.linalg.norm(u3 - f1) < 10 < np.linalg.norm(u3 - u1), (now, samples_before)

    _walk_views(calibration, session, drag)
    state = calibration.learn(CLIENT)
    findings = state["findings"]
    assert not findings["ok"] and any("region 2" in p or "top-front" in p for p in findings["problems"]), findings
    with pytest.raises(RequestError) as refused:
        calibration.save(CLIENT)
    assert refused.value.status == 409 and "learn the colours first" in refused.value.message

    # Dragged back onto U3: the readings are the solved cube's again.
    calibration.adjust(CLIENT, "top-front", "U3", offset=(-moved["shift"]).tolist())
    state = calibration.learn(CLIENT)
    findings = state["findings"]
    assert findings["ok"] and findings["problems"] == [], findings
    assert len(findings["colours"]) == 6 and len({c["name"] for c in findings["colours"]}) == 6
    assert len(findings["separations"]) == 15 and not any(p["too_close"] for p in findings["separations"])
    assert findings["separated"] and findings["warnings"] == []

    # The check: a scrambled virtual cube scanned with what was learned, decoded as the cube it is.
    state = calibration.check(CLIENT)
    check = state["check"]
    assert check["refused"] is None and check["virtual"]["same"], check
    assert check["facelets"] != cube.SOLVED_FACELETS and len(check["net"]) == 6
    assert state["verified"] == "asked" and state["current"] is None
    with pytest.raises(RequestError) as refused:
        calibration.save(CLIENT)
    assert refused.value.status == 409 and refused.value.field == "matches"
    with pytest.raises(RequestError) as refused:
        calibration.confirm(CLIENT)  # the robot moved on: the last view is no longer there to retake
    assert refused.value.status == 409
    calibration.verify(CLIENT, True)
    state = calibration.save(CLIENT)
    saved = state["saved"]
    assert saved["saved"] is False and saved["message"].startswith("SIMULATED | not saved (simulated): a real "
                                                                   "calibration writes the 6 colours above into")
    assert saved["colours_file"] == str(tmp_path / "cal" / "colors.yaml")
    assert "the regions of 4 views (panel)" in saved["message"] and "both files are unchanged" in saved["message"]
    assert not (tmp_path / "cal").exists()  # nothing written
    assert session.live.drawn[-1] == ([], None, "")  # the calibration's outlines leave the live view


def test_each_views_stickers_are_named_by_the_face_whose_colour_they_show_on_the_solved_cube(session):
    """A view after the scan's turns shows other stickers than its places' names (bottom-back's places U1..F4
    hold D and B stickers): the page names each by the face it was on as the cube was put in."""
    calibration = PanelCalibration(session)
    calibration.start(CLIENT)
    _walk_views(calibration, session)
    state = calibration.learn(CLIENT)
    assert state["findings"]["ok"], state["findings"]
    learned = {colour["face"]: np.array(colour["lab"]) for colour in state["findings"]["colours"]}
    views = {view["name"]: view for view in state["views"]}
    assert {name[0] for name in views["bottom-back"]["facelets"]} == {"D", "B"}
    assert views["bottom-back"]["places"][:4] == ["U1", "U2", "U3", "U4"]
    shown = []
    for view in state["views"]:
        for name, sample in zip(view["facelets"], view["samples"]):
            nearest = min(learned, key=lambda face: float(np.linalg.norm(learned[face] - np.array(sample["lab"]))))
            assert nearest == name[0], (view["name"], name, sample, learned)
            shown.append(name)
    assert sorted(shown) == sorted(cube.facelet_name(i) for i in range(cube.FACELET_COUNT))  # each sticker once
    said = [text for text in state["messages"] if "'bottom-back' presented" in text]
    assert said and "D1 D2 D3 D4" in said[0] and "U1" not in said[0], said
    # A region is chosen by the name the page shows.
    state = calibration.adjust(CLIENT, "left", views["left"]["facelets"][1], offset=[1.0, 0.0])
    assert "region " + views["left"]["facelets"][1] + " moved" in state["messages"][-1]


def test_the_views_come_in_the_scans_order_and_a_run_in_between_means_starting_again(session):
    calibration = PanelCalibration(session)
    with pytest.raises(RequestError) as refused:
        calibration.present(CLIENT)
    assert refused.value.status == 409 and "start one" in refused.value.message
    calibration.start(CLIENT)
    with pytest.raises(RequestError) as refused:
        calibration.present(CLIENT, "left")
    assert refused.value.status == 400 and refused.value.field == "view" and "'top-front'" in refused.value.message
    calibration.present(CLIENT, "top-front")
    with pytest.raises(RequestError) as refused:
        calibration.present(CLIENT)
    assert refused.value.status == 409 and "confirm it" in refused.value.message
    for body, field in (({"sticker": "D1", "offset": [1, 1]}, "sticker"), ({"sticker": "U1"}, "offset"),
                        ({"sticker": "U1", "offset": [1, True]}, "offset"),
                        ({"sticker": "U1", "offset": [5000, 0]}, "offset"),
                        ({"sticker": "U1", "quad": [[0, 0], [1, 0], [1, 1], [0, 1]]}, "quad")):
        with pytest.raises(RequestError) as refused:
            calibration.adjust(CLIENT, "top-front", body.get("sticker"), quad=body.get("quad"),
                               offset=body.get("offset"))
        assert refused.value.status == 400 and refused.value.field == field, (body, refused.value.message)
    with pytest.raises(RequestError) as refused:
        calibration.confirm("another-tab")
    assert refused.value.status == 409 and "does not control" in refused.value.message
    calibration.confirm(CLIENT)
    session.bringup(CLIENT, "jog", {"arm": "F", "degrees": 90})  # in the air: the pair RL holds the cube
    with pytest.raises(RequestError) as refused:
        calibration.present(CLIENT)
    assert refused.value.status == 409 and "the arms moved since the calibration's last view" in refused.value.message
    calibration.start(CLIENT)  # again, from a solved cube: the views from the first
    session.run_id += 1  # as a run's start does: the run turns the cube
    with pytest.raises(RequestError) as refused:
        calibration.present(CLIENT)
    assert refused.value.status == 409 and "start again with a solved cube" in refused.value.message
    assert refused.value.message.startswith("SIMULATED | ")


def test_detect_snaps_a_shifted_views_regions_back_onto_its_stickers(session):
    calibration = PanelCalibration(session)
    calibration.start(CLIENT)
    calibration.present(CLIENT)
    calibration.confirm(CLIENT)
    rendered = session.held.robot.regions.quads("top-front")
    with pytest.raises(RequestError) as refused:
        calibration.detect(CLIENT, "left")
    assert refused.value.status == 409 and "confirm it first" in refused.value.message
    calibration.adjust(CLIENT, "top-front", None, offset=[7, -5])  # the camera moved a little
    shifted = np.array(calibration.state()["views"][0]["quads"])
    assert np.allclose(shifted - rendered, [7, -5], atol=0.06)
    state = calibration.detect(CLIENT, "top-front")
    said = state["messages"][-1]
    found = int(said.split("'top-front': ")[1].split(" of ")[0])
    assert found >= 6, said
    centres = np.array(state["views"][0]["quads"]).mean(axis=1)
    back = np.linalg.norm(centres - rendered.mean(axis=1), axis=1) < 3  # on the sticker the renderer drew
    assert back.sum() >= found, (said, centres, rendered.mean(axis=1))


def test_a_real_robot_whose_arms_are_not_known_is_refused_before_anything_moves(tmp_path):
    from robot.arms import actions

    session = _session(tmp_path, simulated=False)
    try:
        actions.set_motors(session.held.link, False, lambda text: None)  # the drivers off: the positions are lost
        calibration = PanelCalibration(session)
        with pytest.raises(RequestError) as refused:
            calibration.start(CLIENT)
        assert refused.value.status == 409 and "the arms are not ready" in refused.value.message
        assert "Bring-up" in refused.value.message and calibration.state()["step"] == "idle"
        assert "cube-robot" not in refused.value.message  # the page's controls, not the command
    finally:
        session.close()


def test_a_robot_taken_as_real_saves_the_commands_two_files(tmp_path):
    session = _session(tmp_path, simulated=False)
    try:
        calibration = PanelCalibration(session)
        state = calibration.start(CLIENT)
        assert not state["simulated"] and "a SOLVED cube must be in the robot" in state["messages"][0]
        _walk_views(calibration, session)
        calibration.adjust(CLIENT, "left", None, offset=[1.5, -1.0])  # every region of the view at once
        state = calibration.learn(CLIENT)
        assert state["findings"]["ok"], state["findings"]
        state = calibration.save(CLIENT)
        colours, regions = tmp_path / "cal" / "colors.yaml", tmp_path / "cal" / "regions.yaml"
        assert state["saved"] == {"saved": True, "colours_file": str(colours), "regions_file": str(regions),
                                  "message": f"saved {colours} and {regions}"}
        from robot.vision.colour import Calibration

        learned = Calibration.load(colours)
        assert len(learned.colours) == 6 and learned.camera["camera"] == "simulated"
        written = Regions.load(regions)
        assert written.source == "panel" and set(written.views) == {"top-front", "bottom-back", "left", "right"}
        assert np.allclose(written.quads("left"), np.round(calibration.walk.quads["left"], 1), atol=0.06)
        rendered = session.held.robot.regions
        assert np.allclose(written.quads("left") - rendered.quads("left"), [1.5, -1.0], atol=0.06)
    finally:
        session.close()


def test_the_page_walks_the_calibration_on_the_simulated_robot(panel_server, page):
    """In chromium: Start calibration, each view presented and confirmed, a region dragged with the mouse
    (the panel moves it by the drag in image pixels), the colours learned and shown apart, Save saying
    SIMULATED what it would write, and writing nothing."""
    from playwright.sync_api import expect

    from robot.config import project_path

    config = config_module.load(panel_server.folder / "config.yaml")
    files = [project_path(config.scan.colours_file), project_path(config.scan.regions_file)]
    before = [path.read_bytes() if path.exists() else None for path in files]
    page.goto(panel_server.url)
    expect(page.locator("#mode")).to_have_text("SIMULATED")
    section = page.locator("#calibrate")
    section.scroll_into_view_if_needed()
    section.get_by_role("button", name="Start calibration", exact=True).click()
    expect(page.locator("#calibrate-step")).to_contain_text("Present next view")
    views = [view["name"] for view in get(panel_server, "/api/calibrate").json()["views"]]
    assert views == ["top-front", "bottom-back", "left", "right"]
    for number, name in enumerate(views):
        section.get_by_role("button", name="Present next view", exact=True).click()
        expect(page.locator(f"#calibrate-views li[data-view='{name}']")).to_have_attribute("data-state", "presented")
        expect(page.locator("#calibrate-regions polygon")).to_have_count(8 if number < 2 else 4)
        if number == 0:
            # The picture is there (the regions' box is the picture's) before anything is dragged.
            expect(page.locator("#calibrate-image")).to_have_attribute("data-shown", f"{name}:presented")
            region = page.locator("#calibrate-regions polygon[data-sticker='U1']")
            box, frame = region.bounding_box(), page.locator("#calibrate-regions").bounding_box()
            before_quad = np.array(get(panel_server, "/api/calibrate").json()["views"][0]["quads"][0])
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            page.mouse.move(x, y)
            page.mouse.down()
            page.mouse.move(x + 3, y + 2, steps=3)
            page.mouse.move(x + 6, y + 4, steps=3)
            page.mouse.up()
            expect(page.locator("#calibrate-views li[data-view='top-front']")).to_have_attribute("data-adjusted", "true")
            after_quad = np.array(get(panel_server, "/api/calibrate").json()["views"][0]["quads"][0])
            scale = config.camera.width / frame["width"]  # image pixels per CSS pixel
            assert np.allclose(after_quad - before_quad, [6 * scale, 4 * scale], atol=0.2 + 0.5 * scale)
        section.get_by_role("button", name="Confirm view", exact=True).click()
        expect(page.locator(f"#calibrate-views li[data-view='{name}']")).to_have_attribute("data-state", "confirmed")
        if number == 0:
            expect(page.locator("#calibrate-image")).to_have_attribute("data-shown", f"{name}:confirmed")
            # A tap chooses U2: its corners can be dragged, one at a time (the panel gets the new quad).
            page.locator("#calibrate-regions polygon[data-sticker='U2']").click()
            corners = page.locator("#calibrate-regions circle.corner")
            expect(corners).to_have_count(4)
            before_quad = np.array(get(panel_server, "/api/calibrate").json()["views"][0]["quads"][1])
            handle = corners.nth(2).bounding_box()
            x, y = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2
            page.mouse.move(x, y)
            page.mouse.down()
            page.mouse.move(x - 4, y - 3, steps=4)
            page.mouse.up()
            expect(page.locator("#calibrate-messages li").last).to_contain_text("region U2 moved")
            after_quad = np.array(get(panel_server, "/api/calibrate").json()["views"][0]["quads"][1])
            moved = after_quad - before_quad
            assert np.allclose(moved[[0, 1, 3]], 0) and np.allclose(moved[2], [-4 * scale, -3 * scale],
                                                                     atol=0.2 + 0.5 * scale), moved
            section.get_by_role("button", name="Snap regions to the stickers seen", exact=True).click()
            expect(page.locator("#calibrate-messages li").last).to_contain_text("stickers detected")
    section.get_by_role("button", name="Learn colours", exact=True).click()
    expect(page.locator("#calibrate-verdict")).to_have_text("Every pair of colours is well apart.")
    expect(page.locator("#calibrate-separations tbody tr")).to_have_count(15)
    expect(page.locator("#calibrate-colours tbody tr")).to_have_count(6)
    expect(page.locator("#calibrate-findings h3")).to_contain_text("SIMULATED")
    section.get_by_role("button", name="Save calibration", exact=True).click()
    expect(page.locator("#calibrate-saved")).to_contain_text("SIMULATED | not saved (simulated): a real calibration "
                                                             "writes the 6 colours above into")
    assert [path.read_bytes() if path.exists() else None for path in files] == before


def test_another_tabs_steps_show_on_an_open_page_without_a_reload(panel_server, page):
    """The calibration's state goes to every page after each step: a page that only watches follows
    the steps another client takes."""
    from playwright.sync_api import expect

    from panel_fixtures import post

    page.goto(panel_server.url)
    expect(page.locator("#calibrate-step")).to_contain_text("Start calibration puts a solved cube in")
    page.evaluate("window.sameDocument = true")
    assert post(panel_server, "/api/control", {}, client="other-tab").status == 200
    assert post(panel_server, "/api/calibrate/start", {}, client="other-tab").status == 200
    expect(page.locator("#calibrate-step")).to_contain_text("Present next view")
    assert post(panel_server, "/api/calibrate/present", {}, client="other-tab").status == 200
    expect(page.locator("#calibrate-views li[data-view='top-front']")).to_have_attribute("data-state", "presented")
    expect(page.locator("#calibrate-messages li").last).to_contain_text("'top-front' presented (stickers U1")
    assert page.evaluate("window.sameDocument") is True  # followed, not reloaded


def test_the_routes_move_nothing_on_a_get_and_name_a_bad_field(panel_server):
    from panel_fixtures import post

    for step in ("start", "present", "adjust", "confirm", "detect", "learn", "check", "verify", "save", "cancel"):
        answer = get(panel_server, f"/api/calibrate/{step}")
        assert answer.status == 405 and "nothing moves on a GET" in answer.json()["error"], (step, answer.text)
    assert get(panel_server, "/api/calibrate").json()["step"] == "idle"  # no GET above started anything
    answer = post(panel_server, "/api/calibrate/present", {"veiw": "top-front"})
    assert answer.status == 400 and answer.json()["field"] == "veiw", answer.text
    answer = post(panel_server, "/api/calibrate/wobble", {})
    assert answer.status == 404 and "no calibration step 'wobble'" in answer.json()["error"]
    assert post(panel_server, "/api/control", {}).status == 200
    answer = post(panel_server, "/api/calibrate/present", {})
    assert answer.status == 409 and "no calibration is going" in answer.json()["error"], answer.text
    assert post(panel_server, "/api/calibrate/start", {}, client="another").status == 409  # it does not control
    answer = post(panel_server, "/api/calibrate/start", {})
    assert answer.status == 200 and answer.json()["step"] == "solved-cube-in", answer.text
    answer = post(panel_server, "/api/calibrate/adjust", {"view": "top-front", "sticker": "U1", "offset": [1, 2]})
    assert answer.status == 409 and answer.json()["field"] == "view", answer.text  # not presented yet
    answer = get(panel_server, "/api/calibrate/picture.jpg?view=top-front")
    assert answer.status == 404 and answer.json()["field"] == "view"
