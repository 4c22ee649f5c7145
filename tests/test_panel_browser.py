"""The panel's page in a real browser (Debian's chromium driven by Playwright) against a real
`cube-robot panel --sim`: the live image, a run to SIMULATED SOLVED, the emergency stop mid-run, a jog, a
cube corrected by hand and solved, a second tab that only watches, and the phone-sized page.

Every wait is on the page's own state (Playwright's auto-waiting: expect(...), wait_for_function); the
fixtures' generous guards only end a hang.
"""

from __future__ import annotations

import re

import pytest

from robot import cube
from panel_fixtures import (BROWSER_GUARD_MS, Panel, browser, get, page, panel_server,  # noqa: F401
                            panel_server_public, post)

SOLVED_RESULT = re.compile(r"^SIMULATED SOLVED\b")
SIX_COLOURS = ("white", "yellow", "red", "orange", "green", "blue")


def colour_name(rgb) -> str:
    """The nearest cube colour to [r, g, b] by hue (HSV), for checking the page's names."""
    import colorsys

    hue, saturation, value = colorsys.rgb_to_hsv(*(max(0, min(255, v)) / 255 for v in rgb))
    if value == 0 or saturation < 0.25:
        return "white"
    degrees = hue * 360
    for limit, name in ((15, "red"), (42, "orange"), (75, "yellow"), (165, "green"), (300, "blue")):
        if degrees < limit:
            return name
    return "red"

def open_page(page, panel: Panel):
    from playwright.sync_api import expect

    page.goto(panel.url)
    # The first state has arrived (the header names the mode) before anything is clicked.
    expect(page.locator("#mode")).to_have_text("SIMULATED")
    return page

def button(page, name: str):
    return page.get_by_role("button", name=name, exact=True)

def net_stickers(page, selector: str) -> dict[str, str]:
    """The colours a net shows: facelet name -> symbol ('?' unknown)."""
    return page.locator(f"{selector} [data-facelet]").evaluate_all(
        "nodes => Object.fromEntries(nodes.map(n => [n.dataset.facelet, n.dataset.colour]))")

def page_state(page) -> dict:
    """/api/state as this tab sees it (its own client id)."""
    return page.evaluate("""async () => {
        const id = sessionStorage.getItem('cube-robot-client');
        const answer = await fetch('/api/state', {headers: {'X-Cube-Robot-Client': id}});
        return await answer.json();
    }""")

def test_live_image_advances(panel_server, page):
    open_page(page, panel_server)
    page.wait_for_function("window.panelLive && window.panelLive.frames >= 3 && window.panelLive.lastIndex !== null")
    first = page.evaluate("({...window.panelLive})")
    page.wait_for_function(f"window.panelLive.lastIndex > {first['lastIndex']} && window.panelLive.frames > "
                           f"{first['frames']}")
    later = page.evaluate("({...window.panelLive})")
    assert later["ageMs"] is not None and later["ageMs"] >= 0, later
    # Drawn to the canvas, not only received; the page says the rate and age it measured.
    page.wait_for_function("Number(document.querySelector('#live-canvas').dataset.frames) > 0")
    from playwright.sync_api import expect
    expect(page.locator("#live-status")).to_contain_text("frames/s")

def test_start_ends_simulated_solved_with_the_solved_net(panel_server, page):
    from playwright.sync_api import expect

    open_page(page, panel_server)
    button(page, "Start").click()
    expect(page.locator("#run-result-line")).to_have_text(SOLVED_RESULT)
    expect(page.locator("#run-result")).to_contain_text("RESULT")
    report = get(panel_server, "/api/report").json()
    assert report["outcome"] == "SOLVED", report
    # The result line is the report's, word for word.
    assert page.locator("#run-result-line").inner_text() == page_state(page)["run"]["result_line"]
    # The net after the run: every face one colour.
    expect(page.locator("#run-after")).to_be_visible()
    shown = net_stickers(page, "#run-after")
    faces = {face: {shown[f"{face}{i}"] for i in range(1, 5)} for face in cube.FACES}
    assert all(len(colours) == 1 and "?" not in colours for colours in faces.values()), shown
    assert len(set().union(*faces.values())) == 6, shown
    # Each action of the plan is marked done, and the waterfall drew the stages.
    total = len(report["plan"]["plan"])
    expect(page.locator("#run-plan li[data-state=done]")).to_have_count(total)
    assert page.locator("#run-waterfall g.bar").count() >= len(report["waterfall"]) > 0
    # The history read the solve log again: this run, and its time on the chart of realtime simulated runs.
    expect(page.locator("#history-table tbody tr").first).to_contain_text("SIMULATED SOLVED")
    expect(page.locator("#history-charts figcaption").first).to_have_text("Start press to solved: SIMULATED realtime")

@pytest.mark.parametrize("how", ["Emergency stop", "Stop"])
def test_a_stop_mid_run_shows_the_stop_and_the_cube_state(panel_server, page, how):
    from playwright.sync_api import expect

    open_page(page, panel_server)
    button(page, "Start").click()
    # Checked at every frame the page draws: the stop lands early in the plan, not after it.
    page.wait_for_function("document.querySelector('#run-plan li[data-state=done]') !== null", polling="raf")
    button(page, how).click()
    if how == "Emergency stop":  # one press, one request (pointerdown sends; the click that follows does not)
        page.wait_for_function("window.panelEstop.ok === true")
        assert page.evaluate("window.panelEstop.presses") == 1
    expect(page.locator("#run-stopped")).to_be_visible()
    expect(button(page, "Stop")).to_be_disabled()  # the run has ended
    state = page_state(page)
    report = get(panel_server, "/api/report").json()
    assert report["outcome"] != "SOLVED", report
    # The page says what the report says: its result line, and the cube's state after the stop.
    expect(page.locator("#run-result-line")).to_have_text(state["run"]["result_line"])
    if how == "Stop":  # as Ctrl-C in `cube-robot run` (INTERRUPTED: it came while nothing moved)
        assert state["run"]["result_line"].startswith(("SIMULATED EMERGENCY STOP", "SIMULATED INTERRUPTED")), state
    else:  # the stop byte, from the web server's thread: the board's alarm names it
        assert "ESTOP_BYTE" in state["run"]["result_line"] or "EMERGENCY STOP" in state["run"]["result_line"], state
    assert report["cube_state_after_stop"], report
    expect(page.locator("#run-cube-state")).to_have_text(report["cube_state_after_stop"])
    if report.get("advice"):
        expect(page.locator("#run-advice")).to_have_text(report["advice"])
    done = page.locator("#run-plan li[data-state=done]").count()
    assert 0 < done < len(report["plan"]["plan"]), done
    if how == "Stop":
        return
    # Back from the emergency stop in the page: the latched alarm cleared, a jammed virtual cube replaced,
    # and the next run solves.
    expect(page.locator("#alarm-box")).to_be_visible()
    expect(button(page, "Start")).to_be_disabled()  # until the alarm is cleared
    expect(page.locator("#run-start-note")).to_contain_text("Clear the alarm first")
    button(page, "Clear alarm").click()
    expect(page.locator("#alarm-box")).to_be_hidden()
    if page_state(page)["jammed"]:
        expect(page.locator("#run-jammed")).to_be_visible()
        button(page, "New cube").click()
        expect(page.locator("#run-jammed")).to_be_hidden()
    button(page, "Start").click()
    expect(page.locator("#run-stopped")).to_be_hidden()
    expect(page.locator("#run-result-line")).to_have_text(SOLVED_RESULT)


def test_a_jog_moves_the_virtual_arm(panel_server, page):
    from playwright.sync_api import expect

    open_page(page, panel_server)
    where = get(panel_server, "/api/bringup/where").json()["board"]
    # An arm whose gripper is open turns in the air (a closed one would turn the cube).
    arm = next((a for a in "RLFB" if where["grippers"][a] == "open"), None)
    if arm is None:
        button(page, "Open all").click()
        expect(page.locator("#bringup-where tr[data-arm=R] td").last).to_have_text("open")
        arm = "R"
        where = get(panel_server, "/api/bringup/where").json()["board"]
    before = where["arms"][arm]["steps"] or 0
    # No homing sensors in the test config: homing is squaring each arm by eye.
    assert where["homing_sensors"] is False, where
    expect(button(page, "Home with the sensors")).to_be_disabled()
    expect(page.locator("#bringup-home-note")).to_contain_text("No homing sensors")
    expect(button(page, f"{arm} is straight")).to_be_enabled()
    page.select_option("#jog-arm", arm)
    page.fill("#jog-steps", "25")
    button(page, "Jog plus steps").click()
    expect(page.locator(f"#bringup-where tr[data-arm={arm}] td.steps")).to_have_text(str(before + 25))
    after = get(panel_server, "/api/bringup/where").json()["board"]
    assert after["arms"][arm]["steps"] == before + 25, after
    assert page.locator("#bringup .errors").inner_text() == ""

def test_a_corrected_cube_is_checked_then_solved(panel_server, page):
    from playwright.sync_api import expect

    open_page(page, panel_server)
    page.check("#run-review")
    button(page, "Start").click()
    expect(page.locator("#cube-waiting")).to_be_visible()
    # The header says what the run waits for.
    expect(page.locator("#run-state")).to_contain_text("waiting for you to check the cube")
    state = page_state(page)
    scanned = state["run"]["review"]["facelets"]
    assert sorted(net_stickers(page, "#cube-net").items()) == sorted(
        (cube.facelet_name(i), c) for i, c in enumerate(scanned))
    # Each sticker is named by the colour the scan saw for its letter, and the letter is said as a face's.
    seen = state["cube"]["colours_rgb"]
    names = {letter: colour_name(rgb) for letter, rgb in seen.items()}
    assert sorted(names.values()) == sorted(SIX_COLOURS), (seen, names)  # the simulated cube's six colours
    for index, letter in enumerate(scanned):
        name = cube.facelet_name(index)
        label = page.locator(f"#cube-net [data-facelet={name}]").get_attribute("aria-label")
        assert label.startswith(f"{name}: {names[letter]} (face {letter}'s colour)"), (label, seen[letter])

    def set_sticker(index: int, colour: str) -> None:
        page.locator(f"#cube-net [data-facelet={cube.facelet_name(index)}]").click()
        page.locator(f"#cube-palette [data-colour={colour}]").click()
        expect(page.locator(f"#cube-net [data-facelet={cube.facelet_name(index)}]")).to_have_attribute(
            "data-colour", colour)

    # The palette's swatches name their colours too.
    page.locator("#cube-net [data-facelet=U1]").click()
    for letter, name in names.items():
        expect(page.locator(f"#cube-palette [data-colour={letter}]")).to_have_accessible_name(
            f"Colour {letter}: {name} (face {letter}'s colour)")
        expect(page.locator(f"#cube-palette [data-colour={letter}] .name")).to_have_text(name)

    # One sticker changed alone makes an illegal cube: the check names it (its letter explained by the
    # colour seen), marks it, and Solve stays off.
    other = next(c for c in scanned if c != scanned[0])
    set_sticker(0, other)
    button(page, "Check").click()
    expect(page.locator("#cube-verdict")).to_contain_text("U1")
    expect(page.locator("#cube-verdict")).to_contain_text(f"'{other}' ({names[other]})")
    expect(page.locator("#cube-net [data-facelet=U1].marked")).to_be_visible()
    expect(button(page, "Solve this cube")).to_be_disabled()

    # A legal different cube: the one read, turned by U.
    corrected = cube.apply_moves(scanned, ["U"])
    assert corrected != scanned
    for index, colour in enumerate(corrected):
        if page.locator(f"#cube-net [data-facelet={cube.facelet_name(index)}]").get_attribute("data-colour") != colour:
            set_sticker(index, colour)
    assert "".join(net_stickers(page, "#cube-net")[cube.facelet_name(i)] for i in range(24)) == corrected
    button(page, "Check").click()
    expect(page.locator("#cube-verdict")).to_have_text("OK: a legal cube.")
    button(page, "Solve this cube").click()
    button(page, "Yes, solve it").click()
    expect(page.locator("#run-result-line")).to_contain_text("SIMULATED")
    report = get(panel_server, "/api/report").json()
    assert report["facelets"] == corrected, report
    assert report["corrected"]["scanned"] == scanned, report
    changed = [i for i in range(24) if corrected[i] != scanned[i]]
    assert sorted(report["corrected"]["stickers"]) == changed, report

def test_a_second_tab_only_watches_until_it_takes_control(panel_server, page, browser):
    from playwright.sync_api import expect

    open_page(page, panel_server)
    button(page, "Motors on").click()  # the first button that moves the robot makes this tab the controller
    expect(page.locator("#control-note")).to_contain_text("You control the robot")

    other_context = browser.new_context()
    other_context.set_default_timeout(BROWSER_GUARD_MS)
    errors: list[str] = []
    try:
        watcher = other_context.new_page()
        watcher.on("pageerror", lambda error: errors.append(str(error)))
        open_page(watcher, panel_server)
        expect(watcher.locator("#control-note")).to_contain_text("Watching")
        expect(button(watcher, "Start")).to_be_disabled()
        # A watcher cannot solve, so its net is not editable: no sticker is a button, no colour picker.
        expect(watcher.locator("#cube .watch-note")).to_contain_text("correcting and solving the cube need control")
        expect(watcher.locator("#cube-net [data-facelet]")).to_have_count(24)
        expect(watcher.locator("#cube-net button")).to_have_count(0)
        watcher.locator("#cube-net [data-facelet=U1]").click()
        expect(watcher.locator("#cube-palette")).to_contain_text("Watching: correcting the cube needs control")
        expect(watcher.locator("#cube-palette button")).to_have_count(0)
        expect(page.locator("#cube-net button")).to_have_count(24)  # the controller's net stays editable
        expect(watcher.locator("#run .watch-note")).to_be_visible()
        expect(button(watcher, "Motors off")).to_be_disabled()
        expect(button(watcher, "Emergency stop")).to_be_enabled()  # every tab may stop the robot
        # The API refuses its start as well (not only the page's disabled button).
        refused = watcher.evaluate("""async () => {
            const id = sessionStorage.getItem('cube-robot-client');
            const answer = await fetch('/api/run/start', {method: 'POST', body: '{}',
                headers: {'Content-Type': 'application/json', 'X-Cube-Robot-Client': id}});
            return {status: answer.status, body: await answer.json()};
        }""")
        assert refused["status"] == 409, refused
        assert get(panel_server, "/api/state").json()["run"]["state"] == "idle"

        # Emergency stop from the tab that does not control the robot: sent at once all the same.
        button(watcher, "Emergency stop").click()
        expect(watcher.locator("#estop-said")).to_contain_text("the stop byte was sent")
        # No run was going: the other tab says it at the top, not among a run's messages.
        expect(page.locator("#estop-said")).to_have_text("Emergency stop: the stop byte was sent (from another tab).")
        expect(page.locator("#alarm-box")).to_be_visible()
        expect(page.locator("#run-messages li")).to_have_count(0)

        button(watcher, "Take control").click()
        expect(watcher.locator("#control-note")).to_contain_text("You control the robot")
        # That stop latched the board's alarm: Start waits for it to be cleared.
        expect(watcher.locator("#run-start-note")).to_contain_text("Clear the alarm first")
        button(watcher, "Clear alarm").click()
        expect(button(watcher, "Start")).to_be_enabled()
        expect(page.locator("#control-note")).to_contain_text("Watching")
        expect(button(page, "Start")).to_be_disabled()
    finally:
        other_context.close()
    assert not errors, errors

@pytest.mark.viewport("phone")
def test_phone_page_keeps_the_emergency_stop_first_and_in_view(panel_server, page):
    from playwright.sync_api import expect

    open_page(page, panel_server)
    estop = button(page, "Emergency stop")
    # The first tab stop, and in view wherever the page is scrolled.
    page.keyboard.press("Tab")
    expect(estop).to_be_focused()
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_function("window.scrollY > 1000")
    page.wait_for_function("""() => {
        const r = document.querySelector('#estop').getBoundingClientRect();
        return r.top >= 0 && r.bottom <= window.innerHeight && r.height >= 44;
    }""")
    # No section wider than the screen.
    widest = page.evaluate("Math.max(...[...document.querySelectorAll('section')].map(s => s.getBoundingClientRect().right))")
    assert widest <= 390, widest
    # Escape is the keyboard's emergency stop (documented on the page).
    expect(page.locator("#control")).to_contain_text("Escape")
    # Enter on the focused button and Escape anywhere each send one stop (the panel tells every tab).
    estop.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#estop-said")).to_contain_text("the stop byte was sent")
    page.wait_for_function("window.panelEstop && window.panelEstop.presses === 1 && window.panelEstop.ok")
    page.locator("#cube-check").focus()
    page.keyboard.press("Escape")
    page.wait_for_function("window.panelEstop.presses === 2 && window.panelEstop.ok")
    # no run is going: the stop is said at the top, not in the last run's messages
    expect(page.locator("#run-messages li")).to_have_count(0)

def test_the_doctor_shows_the_checks(panel_server, page):
    from playwright.sync_api import expect

    open_page(page, panel_server)
    expect(page.locator("#doctor-table tbody tr").first).to_be_visible()
    rows = page.locator("#doctor-table tbody tr").count()
    answer = get(panel_server, "/api/doctor").json()
    assert rows == len(answer["rows"]) > 0
    expect(page.locator("#doctor-table")).to_contain_text("SIMULATED")
    assert page.locator("#doctor-table tbody td.status").all_inner_texts() == [r["status"] for r in answer["rows"]]


def test_a_trim_slider_moves_its_gripper_when_let_go_and_the_simulation_saves_nothing(panel_server, page):
    from playwright.sync_api import expect

    open_page(page, panel_server)
    slider = page.locator("#trim-L-open")
    expect(slider).to_be_enabled()
    before = get(panel_server, "/api/bringup/where").json()["board"]["widths"]["L"]["open"]
    wanted = before + 100
    slider.fill(str(wanted))  # sets the value, then the change event of a released slider
    expect(page.locator("#bringup-said")).to_contain_text(f"gripper L open: {wanted} us")
    assert get(panel_server, "/api/bringup/where").json()["board"]["widths"]["L"]["open"] == wanted
    config = (panel_server.folder / "config.yaml").read_text()
    button(page, "Save trims").click()
    # The simulated robot writes nothing into the config file, and says so next to the button.
    expect(page.locator("#bringup .field-error")).to_contain_text("SIMULATED")
    assert (panel_server.folder / "config.yaml").read_text() == config


def test_the_page_works_on_a_non_loopback_bind_with_the_token_from_its_url(panel_server_public, page):
    from playwright.sync_api import expect

    assert panel_server_public.token
    # The URL as printed, with 127.0.0.1 for the wildcard address it names.
    page.goto(panel_server_public.base + "/?token=" + panel_server_public.token)
    expect(page.locator("#mode")).to_have_text("SIMULATED")
    expect(page.locator("#connection")).to_have_text("live")  # the websocket
    page.wait_for_function("window.panelLive.frames > 0")  # the camera stream
    expect(page.locator("#doctor-table tbody tr").first).to_be_visible()


def test_every_control_of_the_page_has_a_name(panel_server, page):
    from playwright.sync_api import expect

    open_page(page, panel_server)
    expect(page.locator("#bringup-trims input").first).to_be_attached()
    unnamed = page.evaluate("""() => {
        const named = (n) => (n.getAttribute('aria-label') || '').trim() || (n.labels && n.labels.length
            && [...n.labels].some(l => l.textContent.trim())) || (n.tagName === 'BUTTON' && n.textContent.trim());
        return [...document.querySelectorAll('button, input, select')].filter(n => !named(n))
            .map(n => n.outerHTML.slice(0, 120));
    }""")
    assert unnamed == [], unnamed
    # Live regions say results and errors as they come.
    for selector in ("#run-result", "#cube-verdict", "#estop-said", "#bringup-said"):
        assert page.locator(selector).get_attribute("aria-live") or page.locator(selector).get_attribute("role") in (
            "status", "alert"), selector


def test_the_page_reads_mjpeg_parts_however_the_bytes_are_split(panel_server, page):
    open_page(page, panel_server)
    got = page.evaluate("""async () => {
        const { MultipartParser } = await import('/static/live.js');
        const enc = new TextEncoder();
        const bodies = ['\\xff\\xd8one\\r\\n--frame inside\\xff\\xd9', 'two', '\\r\\n\\r\\nthree'];
        const part = (body, i, sized) => '--frame\\r\\nContent-Type: image/jpeg\\r\\n'
            + (sized ? `Content-Length: ${enc.encode(body).length}\\r\\n` : '')
            + `X-Frame-Index: ${i + 1}\\r\\nX-Exposure-End: ${1000 + i}.5\\r\\n\\r\\n` + body + '\\r\\n';
        // The last part is unsized: its end is the next boundary.
        const stream = enc.encode(bodies.map((b, i) => part(b, i, i < 2)).join('') + '--frame\\r\\n');
        const results = [];
        for (const size of [1, 2, 3, 7, 64, stream.length]) {
            const parts = [];
            const parser = new MultipartParser('frame', (headers, body) => parts.push(
                [headers.get('x-frame-index'), headers.get('x-exposure-end'), new TextDecoder().decode(body)]));
            for (let at = 0; at < stream.length; at += size) parser.push(stream.subarray(at, at + size));
            results.push(parts);
        }
        return results;
    }""")
    bodies = ["\xff\xd8one\r\n--frame inside\xff\xd9", "two", "\r\n\r\nthree"]
    expected = [[str(i + 1), f"{1000 + i}.5", body] for i, body in enumerate(bodies)]
    for parts in got:
        assert parts == expected


def test_a_page_opened_during_a_run_watches_it_to_its_result_and_then_reads_the_checks(panel_server, page):
    from playwright.sync_api import expect

    assert post(panel_server, "/api/control", {}, client="script").status == 200
    assert post(panel_server, "/api/run/start", {}, client="script").status == 200
    while True:  # the page opens once the plan was found (each answer is the state of that moment)
        run = get(panel_server, "/api/state").json()["run"]
        if run["state"] == "idle" or run["stage"] in ("execute", "verify"):
            break
    doctor_answers: list[int] = []
    page.on("response", lambda r: doctor_answers.append(r.status) if "/api/doctor" in r.url else None)
    open_page(page, panel_server)
    expect(page.locator("#control-note")).to_contain_text("Watching: script controls the robot")
    expect(button(page, "Start")).to_be_disabled()
    expect(page.locator("#run-result-line")).to_have_text(SOLVED_RESULT)
    # The run's earlier events were replayed to the page when it connected: the whole plan is listed, done.
    report = get(panel_server, "/api/report").json()
    actions = report["plan"]["plan"]
    expect(page.locator("#run-plan li")).to_have_count(len(actions))
    expect(page.locator("#run-plan li[data-state=done]")).to_have_count(len(actions))
    # The doctor reads the board, which the run held: asked again once the run has ended.
    expect(page.locator("#doctor-table tbody tr").first).to_be_visible()
    assert page.locator("#doctor .errors").inner_text() == ""
    # Not asked while the run held the board (it would be refused, an error in the console): asked once.
    assert doctor_answers == [200], doctor_answers


def test_new_cube_says_it_is_made_and_forgets_the_old_run_and_a_latched_alarm_holds_start(panel_server, page):
    from playwright.sync_api import expect

    open_page(page, panel_server)
    button(page, "Start").click()
    expect(page.locator("#run-result-line")).to_have_text(SOLVED_RESULT)
    expect(page.locator("#run-after")).to_be_visible()
    # Every text the New cube status line shows, with the button's state at that moment.
    page.evaluate("""() => {
        const status = document.querySelector('#run-new-cube-status');
        const newCube = document.querySelector('#run-new-cube');
        window.newCubeSeen = [];
        new MutationObserver(() => window.newCubeSeen.push([status.textContent, newCube.disabled]))
            .observe(status, {childList: true, characterData: true, subtree: true});
    }""")
    button(page, "New cube").click()
    expect(page.locator("#run-new-cube-status")).to_contain_text("the new scrambled cube is in")
    seen = page.evaluate("window.newCubeSeen")
    making = [disabled for text, disabled in seen if text.startswith("Making a new simulated robot")]
    assert making == [True], seen  # said while it was made, the button off meanwhile
    expect(button(page, "New cube")).to_be_enabled()
    # The last run's result, its net and its stop box were about the old cube.
    expect(page.locator("#run-result")).to_have_text("No run yet with this cube.")
    expect(page.locator("#run-after")).to_be_hidden()
    expect(page.locator("#run-stopped")).to_be_hidden()

    # An emergency stop while idle latches the board's alarm: Start is off, and the page says why.
    button(page, "Emergency stop").click()
    expect(page.locator("#estop-said")).to_contain_text("the stop byte was sent")
    expect(page.locator("#alarm-box")).to_be_visible()
    expect(button(page, "Start")).to_be_disabled()
    expect(page.locator("#run-start-note")).to_have_text("Clear the alarm first (at the top).")
    button(page, "Clear alarm").click()
    expect(page.locator("#alarm-box")).to_be_hidden()
    # The stop's note in the header goes with the alarm it was about.
    expect(page.locator("#estop-said")).to_be_hidden()
    expect(button(page, "Start")).to_be_enabled()
    expect(page.locator("#run-start-note")).to_be_hidden()


@pytest.mark.viewport("phone")
def test_phone_history_lists_the_last_runs_and_says_each_failure_in_full(panel_server, page):
    import json

    from playwright.sync_api import expect

    # A solve log of 12 simulated runs: 10 solved, two failed for reasons that begin alike.
    reasons = ["the arm R did not reach its step count within the time allowed: the driver may be off",
               "the arm R did not reach its step count within the time allowed: the gripper slipped"]
    lines = [{"time": f"2026-11-20T10:{m:02d}:00", "simulated": True, "outcome": "SOLVED",
              "button_to_solved_ms": 20000 + 100 * m} for m in range(10)]
    lines += [{"time": f"2026-11-21T11:0{i}:00", "simulated": True, "outcome": "NOT SOLVED", "errors": [why]}
              for i, why in enumerate(reasons)]
    log = panel_server.folder / "data" / "solve-log.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))

    open_page(page, panel_server)
    # The section's heading is below the sticky header after its link is followed.
    page.locator("nav.sections a[href='#history']").click()
    page.wait_for_function("""() => {
        const bar = document.querySelector('#bar').getBoundingClientRect();
        const heading = document.querySelector('#history-title').getBoundingClientRect();
        return location.hash === '#history' && heading.top < window.innerHeight && heading.top >= bar.bottom;
    }""")
    expect(page.locator("#history-table tbody tr")).to_have_count(10)  # the last 10, newest first
    expect(page.locator("#history-table tbody tr").first).to_contain_text("2026-11-21T11:01:00")
    more = button(page, "Show all 12 runs")
    more.click()
    expect(page.locator("#history-table tbody tr")).to_have_count(12)
    # Each failure reason in full under the chart, with its count; the bars' labels stay inside the chart.
    items = page.locator("#history-charts ol.reasons li")
    expect(items).to_have_count(2)
    texts = sorted(items.all_inner_texts())
    assert [t.startswith("1 run: SIMULATED") and t.endswith(why) for t, why in zip(texts, sorted(reasons))] == [
        True, True], texts
    outside = page.evaluate("""() => [...document.querySelectorAll('#history-charts svg text')].filter(t => {
        const box = t.getBoundingClientRect();
        const chart = t.ownerSVGElement.getBoundingClientRect();
        return box.left < chart.left - 1 || box.right > chart.right + 1;
    }).map(t => t.textContent)""")
    assert outside == [], outside
    widest = page.evaluate("document.querySelector('#history').getBoundingClientRect().right")
    assert widest <= 390, widest


@pytest.mark.viewport("phone")
def test_phone_bringup_answers_by_the_control_used_and_a_jammed_cube_holds_start(panel_server, page):
    from playwright.sync_api import expect

    open_page(page, panel_server)
    said = page.locator("#bringup-said")
    # A gripper's answer: right under its row, on screen where the button was pressed.
    button(page, "Close R").click()
    expect(said).to_contain_text("SIMULATED")
    assert page.evaluate("document.querySelector('#bringup-said').previousElementSibling.contains("
                         "[...document.querySelectorAll('#bringup-grippers button')].find(b => b.textContent === 'Close R'))")
    expect(said).to_be_in_viewport()
    # Half a turn of a layer leaves the virtual cube between positions: the simulation's hint is said by
    # the Jog button too.
    page.fill("#jog-degrees", "45")
    page.check("#jog-with-cube")
    button(page, "Jog").click()
    expect(said).to_contain_text("press New cube")
    assert page.evaluate("document.querySelector('#bringup-said').previousElementSibling"
                         ".contains(document.querySelector('#jog-by-degrees'))")
    expect(said).to_be_in_viewport()
    # Start is off while the cube is jammed (it would only be refused), and the page says why.
    expect(page.locator("#run-jammed")).to_be_visible()
    expect(button(page, "Start")).to_be_disabled()
    expect(page.locator("#run-start-note")).to_have_text("Put a new cube in first (New cube).")
    button(page, "New cube").click()
    expect(page.locator("#run-jammed")).to_be_hidden()
    expect(button(page, "Start")).to_be_enabled()
    expect(page.locator("#run-start-note")).to_be_hidden()


def test_the_stop_box_keeps_what_it_was_told_and_the_report_has_the_last_word(panel_server, page):
    """Events put into the page's own websocket (the server's still come through): a later Stopped with
    no advice keeps the advice; the report's advice and cube state replace the events'; an emergency stop
    after the run ended is not listed under it."""
    import json

    from playwright.sync_api import expect

    sockets = []

    def route(ws):
        ws.connect_to_server()
        sockets.append(ws)

    page.route_web_socket(re.compile(r"/api/events"), route)
    open_page(page, panel_server)
    expect(page.locator("#connection")).to_have_text("live")

    def send(**event):  # to app.js's socket (the one that names this tab)
        next(ws for ws in sockets if "client=" in ws.url).send(json.dumps(event))

    send(type="RunStarted", run=90)
    expect(page.locator("#run-result")).to_have_text("The run is going.")
    send(type="Stopped", run=90, errors=["stopped by the test"], cube_state="between positions", advice="Turn R back")
    expect(page.locator("#run-advice")).to_have_text("Turn R back")
    send(type="Stopped", run=90, cube_state="SIMULATED: the virtual cube is stuck", advice=None)
    expect(page.locator("#run-cube-state")).to_have_text("SIMULATED: the virtual cube is stuck")
    expect(page.locator("#run-advice")).to_have_text("Turn R back")
    send(type="RunEnded", run=90, outcome="STOPPED")
    send(type="Report", run=90, result_line="SIMULATED STOPPED (test)", text="",
         report={"outcome": "STOPPED", "advice": "Press New cube", "cube_state_after_stop": "left mid-turn"})
    expect(page.locator("#run-advice")).to_have_text("Press New cube")
    expect(page.locator("#run-cube-state")).to_have_text("left mid-turn")
    expect(page.locator("#run-stage")).to_have_text("Ended: STOPPED")
    send(type="EmergencyStop", run=90)
    expect(page.locator("#estop-said")).to_have_text("Emergency stop: the stop byte was sent (from another tab).")
    expect(page.locator("#run-messages li")).to_have_count(0)
    expect(page.locator("#run-result-line")).to_have_text("SIMULATED STOPPED (test)")
