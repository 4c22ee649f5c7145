// Bring-up: drivers, jog, grippers, homing (sensors, or squaring by eye), load and release, gripper
// trims. Each button POSTs /api/bringup/<action>; the panel applies the bring-up commands' own safety
// rules (robot/panel/bringup_api.py) and answers with what the command would have said.

import { clearErrors, el, getJSON, postJSON, showError } from "./api.js";

const ARMS = ["R", "L", "F", "B"];
const WHICH = ["open", "closed"];

export function setupBringup(section, app) {
  const whereTable = section.querySelector("#bringup-where");
  const said = section.querySelector("#bringup-said");
  const squareRows = section.querySelector("#bringup-square");
  const trims = section.querySelector("#bringup-trims");
  const gripRows = section.querySelector("#bringup-grippers");
  const summary = section.querySelector("#bringup-summary");
  const homeNote = section.querySelector("#bringup-home-note");
  let mayMove = false;
  // The control last used (seen before its own handler runs): its answer is said right under its group,
  // not at the top of this long section, which on a phone is thousands of pixels away.
  let used = null;
  const remember = (event) => { if (event.target instanceof HTMLElement) used = event.target.closest("button, input"); };
  section.addEventListener("click", remember, true);
  section.addEventListener("change", remember, true);

  function say(lines) {
    said.replaceChildren(...lines.map((line) => el("li", { text: line })));
  }

  async function act(path, body, field) {
    clearErrors(section);
    if (used && section.contains(used)) (used.closest(".row, .trim") || used).after(said);
    if (!(await app.ensureControl(section))) return null;
    say(["..."]);
    const answer = await postJSON(path.startsWith("/") ? path : `/api/bringup/${path}`, body);
    const data = answer.data || {};
    say(data.messages || []);
    if (!answer.ok) {
      // Said with the messages, by the control (the field's own element may be elsewhere in the section).
      const text = data.error || `refused (${answer.status})`;
      said.append(el("li", { class: "field-error", role: "alert", text }));
      const target = section.querySelector(`[data-field="${CSS.escape(data.field || field || "")}"]`);
      if (target && target.contains(used)) target.setAttribute("aria-invalid", "true");
    } else if (!data.messages || !data.messages.length) say([`${path.split("/").pop()}: done`]);
    if (data.where) showWhere(data.where);
    else if (data.board) showWhere(data.board);
    return answer.ok ? data : null;
  }

  function showWhere(board) {
    if (!board) return;
    if (board.error) {
      summary.textContent = `The board does not answer: ${board.error}`;
      return;
    }
    const unknown = "unknown";
    const rows = [el("tr", {}, ...["arm", "steps", "degrees", "straight", "gripper"].map((t) => el("th", { scope: "col", text: t })))];
    for (const arm of ARMS) {
      const a = (board.arms || {})[arm] || {};
      const gripper = (board.grippers || {})[arm];
      rows.push(el("tr", { "data-arm": arm }, el("th", { scope: "row", text: arm }),
        el("td", { class: "steps", text: a.steps ?? unknown }),
        el("td", { text: a.degrees ?? unknown }),
        el("td", { text: a.straight === null || a.straight === undefined ? unknown : a.straight ? "yes" : "no" }),
        el("td", { text: gripper ?? "not set since the board started" })));
    }
    whereTable.replaceChildren(...rows);
    summary.textContent = board.summary || `Drivers ${board.drivers_on ? "on" : "off"}.`;
    homeNote.textContent = board.homing_sensors === false
      ? "No homing sensors in the config: square each arm by eye below."
      : board.homing_sensors ? "Homing sensors are configured." : "";
    updateTrims(board);
  }

  async function refresh() {
    const answer = await getJSON("/api/bringup/where");
    if (answer.ok) showWhere(answer.data.board);
    else showError(section, answer);
  }

  function on(id, handler) {
    section.querySelector(id).addEventListener("click", handler);
  }
  on("#bringup-motors-on", () => act("motors", { on: true }, "on"));
  on("#bringup-motors-off", () => act("motors", { on: false }, "on"));
  on("#bringup-home", () => act("home", {}, "arms"));
  on("#bringup-load-open", () => act("load", {}, "pair"));
  on("#bringup-load", () => act("load", { cube_in: true }, "cube_in"));
  on("#bringup-release", () => act("release", {}));
  on("#bringup-refresh", refresh);

  const jogArm = section.querySelector("#jog-arm");
  const jogDegrees = section.querySelector("#jog-degrees");
  const jogSteps = section.querySelector("#jog-steps");
  const withCube = section.querySelector("#jog-with-cube");
  on("#jog-by-degrees", () => {
    const degrees = Number(jogDegrees.value);
    if (jogDegrees.value.trim() === "" || !Number.isFinite(degrees)) {
      showError(section, { data: { error: "degrees: give a number, e.g. 90 or -90", field: "degrees" } });
      return;
    }
    act("jog", { arm: jogArm.value, degrees, with_cube: withCube.checked }, "degrees");
  });
  for (const [id, sign] of [["#jog-minus", -1], ["#jog-plus", 1]]) {
    on(id, () => {
      const steps = Number(jogSteps.value);
      if (!Number.isInteger(steps) || steps <= 0) {
        showError(section, { data: { error: "steps: give a whole number above 0", field: "steps" } });
        return;
      }
      act("jog", { arm: jogArm.value, steps: sign * steps, with_cube: withCube.checked }, "steps");
    });
  }

  const button = (text, onclick, label = null) =>
    el("button", { type: "button", class: "moves", "aria-label": label, onclick }, text);
  for (const arm of ARMS) {
    gripRows.append(el("div", { class: "row" }, el("span", { class: "arm", text: arm }),
      button(`Open ${arm}`, () => act("grip", { target: arm, close: false }, "target")),
      button(`Close ${arm}`, () => act("grip", { target: arm, close: true }, "target"))));
    const row = el("div", { class: "row", "data-arm": arm }, el("span", { class: "arm", text: arm }));
    for (const steps of [-10, -1, 1, 10]) {
      const text = `${steps > 0 ? "+" : ""}${steps}`;
      row.append(button(text, () => act("square", { arm, steps }, "steps"), `Square ${arm} ${text} steps`));
    }
    row.append(button("Straight", () => act("square", { arm, straight: true }, "straight"), `${arm} is straight`));
    squareRows.append(row);
  }
  gripRows.append(el("div", { class: "row" }, el("span", { class: "arm", text: "all" }),
    button("Open all", () => act("grip", { target: "all", close: false }, "target")),
    button("Close all", () => act("grip", { target: "all", close: true }, "target"))));

  // Trims: a slider per gripper and width; the servo moves when the slider is let go (change, not input).
  const sliders = {};
  for (const arm of ARMS) {
    for (const which of WHICH) {
      const id = `trim-${arm}-${which}`;
      const output = el("output", { for: id, text: "?" });
      const slider = el("input", { type: "range", id, class: "moves", min: 500, max: 2500, step: 10,
        "data-field": which === "open" ? `${arm}.open` : `${arm}.closed` });
      slider.addEventListener("input", () => { output.textContent = `${slider.value} us`; });
      slider.addEventListener("change", async () => {
        const done = await act("trim", { arm, which, us: Number(slider.value) }, "us");
        if (done) slider.dataset.trimmed = "true";
      });
      sliders[`${arm}.${which}`] = { slider, output };
      trims.append(el("div", { class: "trim" }, el("label", { for: id, text: `${arm} ${which}` }), slider, output));
    }
  }
  on("#bringup-save-trims", () => {
    const widths = {};
    for (const arm of ARMS) {
      widths[arm] = {};
      for (const which of WHICH) widths[arm][which] = Number(sliders[`${arm}.${which}`].slider.value);
    }
    act("save-trims", { widths }, "widths");
  });

  function updateTrims(board) {
    const widths = board.widths;
    if (!widths) return;
    for (const arm of ARMS) {
      for (const which of WHICH) {
        const s = sliders[`${arm}.${which}`];
        const value = widths[arm] ? widths[arm][which] : undefined;
        if (value === undefined || document.activeElement === s.slider) continue;
        if (board.servo_range_us) [s.slider.min, s.slider.max] = board.servo_range_us;
        s.slider.value = value;
        s.output.textContent = `${value} us`;
      }
    }
  }

  // One way to home, as the config says: the sensors, or squaring each arm by eye (the other is off).
  function homingWays(board) {
    const sensors = board ? board.homing_sensors : undefined;
    if (sensors === undefined || sensors === null) return;
    const home = section.querySelector("#bringup-home");
    home.disabled = home.disabled || !sensors;
    squareRows.querySelectorAll("button").forEach((b) => { b.disabled = b.disabled || sensors; });
    home.title = sensors ? "" : "No homing sensors in the config: square each arm by eye below.";
    squareRows.title = sensors ? "Homing sensors are configured: Home with the sensors above." : "";
  }

  refresh();

  return {
    update(state) {
      if (state.board) showWhere(state.board);
      mayMove = app.mayMove() && (!state.run || state.run.state === "idle");
      section.querySelectorAll(".moves").forEach((b) => { b.disabled = !mayMove; });
      homingWays(state.board);
      section.querySelector("#bringup-running").hidden = !state.run || state.run.state === "idle";
    },
  };
}
