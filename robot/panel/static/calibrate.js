// Calibrate colours: the guided calibration of `cube-robot calibrate colours`, one step per button
// (POST /api/calibrate/<step>, robot/panel/calibrate_api.py). The robot presents each view; its picture
// is shown with the sticker regions drawn over it as SVG: drag a region (mouse, pen or finger) or one of
// its corners onto its sticker, or move it with the arrow keys; the panel keeps the regions in image
// pixels and learns the colours with the command's own functions.

import { clearErrors, el, getJSON, postJSON, showError, svg, withToken } from "./api.js";

const section = document.querySelector("#calibrate");

const button = (id, text, extra = {}) => el("button", { type: "button", id, ...extra, text });

function build() {
  const parts = {
    intro: el("p", { class: "note", text: "The robot shows a SOLVED cube to the camera view by view, as a scan "
      + "does. Check that each outlined region sits on its sticker (drag it, or a corner of the chosen one, into "
      + "place) and confirm the view; once confirmed, Snap regions moves them onto the stickers found in its "
      + "picture. Then learn the colours and save them (scan.colours_file and scan.regions_file, as "
      + "`cube-robot calibrate colours`)." }),
    step: el("p", { id: "calibrate-step", role: "status", "aria-live": "polite" }),
    // app.js shows it while another tab controls the robot (it toggles every .watch-note).
    watching: el("p", { class: "watch-note note", hidden: true, text: "Watching: calibrating needs control of the robot." }),
    start: button("calibrate-start", "Start calibration", { class: "moves", "data-field": "start" }),
    present: button("calibrate-present", "Present next view", { class: "moves", "data-field": "view" }),
    confirm: button("calibrate-confirm", "Confirm view"),
    learn: button("calibrate-learn", "Learn colours", { "data-field": "names" }),
    views: el("ol", { id: "calibrate-views", class: "views" }),
    figure: el("div", { id: "calibrate-figure", style: "position: relative; max-width: 640px; touch-action: none;" }),
    image: el("img", { id: "calibrate-image", alt: "The camera's picture of the view, with its sticker regions",
      style: "display: block; width: 100%; height: auto; background: #000; border-radius: 4px;" }),
    regions: svg("svg", { id: "calibrate-regions", role: "group", "aria-label": "Sticker regions: drag onto stickers",
      style: "position: absolute; inset: 0; width: 100%; height: 100%; touch-action: none;",
      preserveAspectRatio: "none" }),
    together: el("input", { type: "checkbox", id: "calibrate-together" }),
    refresh: button("calibrate-refresh", "Refresh picture"),
    detect: button("calibrate-detect", "Snap regions to the stickers seen"),
    findings: el("div", { id: "calibrate-findings", "data-field": "sticker" }),
    check: button("calibrate-check", "Check on a scrambled cube", { class: "moves" }),
    checkShown: el("div", { id: "calibrate-check-net", hidden: true }),
    matches: button("calibrate-matches", "The net matches the cube", { "data-field": "matches" }),
    wrong: button("calibrate-wrong", "It does not match"),
    save: button("calibrate-save", "Save calibration", { "data-field": "anyway" }),
    cancel: button("calibrate-cancel", "Cancel calibration"),
    saved: el("p", { id: "calibrate-saved", role: "status", "aria-live": "polite" }),
    said: el("ul", { id: "calibrate-messages", class: "messages", "aria-live": "polite" }),
    errors: el("p", { class: "errors", "aria-live": "polite" }),
  };
  parts.figure.append(parts.image, parts.regions);
  section.append(
    parts.intro, parts.step, parts.watching,
    el("div", { class: "row" }, parts.start, parts.present, parts.confirm, parts.learn),
    parts.errors, parts.views, parts.figure,
    el("div", { class: "row" },
      el("label", {}, parts.together, " Move all regions of the view together"), parts.refresh, parts.detect),
    el("p", { class: "note", text: "Regions: drag one onto its sticker; choose one to show its corners and drag "
      + "those; or focus one (Tab) and use the arrow keys (Shift: 10 pixels)." }),
    parts.findings,
    el("div", { class: "row" }, parts.check, parts.save, parts.cancel),
    parts.checkShown, el("div", { class: "row" }, parts.matches, parts.wrong), parts.saved, parts.said);
  return parts;
}

const ui = build();
let state = null;
let busy = false;
let chosen = null; // the facelet whose corners are shown
let shownPicture = null;
export const calibrate = { state: null, pictures: 0 }; // read by the tests
window.panelCalibrate = calibrate;

async function ensureControl() {
  const answer = await getJSON("/api/state");
  if (!answer.ok) return true; // the step's own answer says what is wrong
  if (answer.data.you_control) return true;
  if (answer.data.controller) {
    showError(section, { data: { error: `${answer.data.controller} controls the robot: take control first (at the top)` } });
    return false;
  }
  const taken = await postJSON("/api/control", { take: false });
  if (!taken.ok) showError(section, taken);
  return taken.ok;
}

async function step(name, body = {}, doing = "") {
  clearErrors(section);
  if (busy) return null;
  busy = true;
  render();
  if (doing) ui.step.textContent = mark(doing);
  try {
    if (!(await ensureControl())) return null;
    const answer = await postJSON(`/api/calibrate/${name}`, body);
    if (answer.ok) show(answer.data);
    else {
      showError(section, answer);
      if (answer.data && answer.data.step) show(answer.data);
    }
    return answer.ok ? answer.data : null;
  } finally {
    busy = false;
    render();
  }
}

function mark(text) {
  return state && state.simulated && !text.startsWith("SIMULATED") ? `SIMULATED: ${text}` : text;
}

function current() {
  if (!state || !state.views) return null;
  return state.views.find((v) => v.name === state.current) || null;
}

// The view whose picture and regions are shown: the presented one, else the last confirmed.
function shown() {
  if (!state || !state.views) return null;
  return current() || [...state.views].reverse().find((v) => v.state === "confirmed") || null;
}

function show(next) {
  state = next;
  calibrate.state = next;
  render();
  picture();
}

function stepText() {
  const s = state;
  if (!s || s.step === "idle") {
    return s && s.simulated ? "Start calibration puts a solved cube in the virtual robot."
      : "Put a SOLVED cube in the robot, held as a run starts (Bring-up: Load), then press Start calibration.";
  }
  const total = s.views.length;
  const view = current();
  if (s.stale) return `${s.stale}.`;
  switch (s.step) {
    case "solved-cube-in": return `Press Present next view: the robot shows view 1 of ${total} (${s.next}).`;
    case "presented": return `View ${view.number} of ${total} (${view.name}) faces the camera. If a region is off its `
      + "sticker, drag it into place; then press Confirm view.";
    case "confirmed": return `View ${view.name}'s picture is taken. Present next view (${s.next}).`;
    case "views-done": return "Every view is confirmed: press Learn colours.";
    case "learned": return s.findings && s.findings.ok
      ? "Learned: the separability is below. Check on a scrambled cube (optional), or Save calibration."
      : "The scan does not look solved (see below): drag the regions named onto their stickers and Learn colours again, or Start calibration again.";
    case "checked": return s.verified === "asked" ? "Does the decoded net below match the cube in the robot?"
      : s.verified === "confirmed" ? "The check matched: Save calibration."
        : s.verified === "rejected" ? "The check was wrong: nothing will be saved. Start calibration again."
          : "The check scan could not be read: Start calibration again, or save anyway.";
    case "saved": return s.saved ? s.saved.message : "Saved.";
    default: return s.step;
  }
}

function render() {
  const s = state || { step: "idle", views: [] };
  const walking = s.step !== "idle";
  const view = current();
  const allDone = walking && s.views.length > 0 && s.views.every((v) => v.state === "confirmed");
  const ok = Boolean(s.findings && s.findings.ok);
  ui.step.textContent = mark(stepText());
  ui.start.textContent = walking ? "Start calibration again" : "Start calibration";
  ui.start.disabled = busy;
  ui.present.disabled = busy || !walking || !s.next || Boolean(view && view.state !== "confirmed") || Boolean(s.stale);
  ui.confirm.disabled = busy || !view || Boolean(s.stale);
  ui.learn.disabled = busy || !allDone;
  const showing = shown();
  ui.detect.disabled = busy || !showing || showing.state !== "confirmed";
  ui.check.disabled = busy || !ok || Boolean(s.stale);
  ui.save.disabled = busy || !ok || ["asked", "rejected"].includes(s.verified) || s.step === "saved";
  ui.cancel.disabled = busy || !walking;
  ui.matches.hidden = ui.wrong.hidden = s.verified !== "asked";
  ui.matches.disabled = ui.wrong.disabled = busy;
  ui.views.replaceChildren(...s.views.map((v) => el("li", {
    "data-view": v.name, "data-state": v.state, "data-adjusted": v.adjusted ? "true" : "false",
    text: `${v.name}: ${v.state}${v.adjusted ? " (regions moved)" : ""}`,
  })));
  ui.said.replaceChildren(...(s.messages || []).slice(-8).map((line) => el("li", { text: line })));
  ui.saved.textContent = s.saved ? s.saved.message : "";
  drawRegions(shown(), s.image_size);
  showFindings(s.findings, s.simulated);
  showCheck(s.check, s.simulated);
}

// -- the picture and its regions ---------------------------------------------------------------

function picture() {
  const view = shown();
  const wanted = !view ? null : view.state === "confirmed"
    ? `/api/calibrate/picture.jpg?view=${encodeURIComponent(view.name)}` : "/api/camera.jpg";
  ui.figure.hidden = wanted === null; // no view presented yet: no empty picture
  if (wanted === null) {
    ui.image.removeAttribute("src");
    shownPicture = null;
    return;
  }
  const key = `${wanted}#${view.state}`;
  if (key === shownPicture && view.state === "confirmed") return;
  shownPicture = key;
  ui.image.dataset.pending = `${view.name}:${view.state}`;
  ui.image.src = withToken(wanted + (wanted.includes("?") ? "&" : "?") + `t=${Date.now()}`);
}
ui.image.addEventListener("load", () => {
  calibrate.pictures += 1;
  ui.image.dataset.loaded = String(calibrate.pictures);
  ui.image.dataset.shown = ui.image.dataset.pending || ""; // which view's picture, and in which state
});
ui.refresh.addEventListener("click", () => {
  shownPicture = null;
  picture();
});

function pointsText(quad) {
  return quad.map(([x, y]) => `${x},${y}`).join(" ");
}

function drawRegions(view, size) {
  const box = ui.regions;
  box.replaceChildren();
  if (!view || !size) return;
  box.setAttribute("viewBox", `0 0 ${size[0]} ${size[1]}`);
  // Handles and labels keep their size on screen (a phone shows the picture small): image px per CSS px.
  const scale = size[0] / (ui.regions.clientWidth || size[0]);
  view.quads.forEach((quad, k) => {
    const name = view.facelets[k];
    const sample = view.samples ? view.samples[k] : null;
    const group = svg("g", { class: "region", "data-sticker": name });
    const outline = svg("polygon", {
      points: pointsText(quad), "data-sticker": name, tabindex: "0", role: "button",
      "aria-label": `Region ${name}: drag it, or use the arrow keys to move it`,
      fill: "rgba(0,255,255,0.08)", stroke: name === chosen ? "#ffb000" : "#00ffff", "stroke-width": "2",
      "vector-effect": "non-scaling-stroke", style: "cursor: move;",
    });
    group.append(outline);
    const [cx, cy] = centre(quad);
    if (sample) {
      group.append(svg("circle", { cx, cy, r: 5 * scale, fill: `rgb(${sample.rgb.join(",")})`, stroke: "#000",
        "pointer-events": "none" }));
    }
    const label = svg("text", { x: cx + 7 * scale, y: cy - 7 * scale, fill: "#fff", stroke: "#000",
      "stroke-width": 0.6 * scale, "font-size": 13 * scale, "pointer-events": "none" });
    label.textContent = name;
    group.append(label);
    box.append(group);
    outline.addEventListener("pointerdown", (event) => startDrag(event, view, k, null));
    outline.addEventListener("keydown", (event) => nudge(event, view, k));
  });
  const k = view.facelets.indexOf(chosen);
  if (k >= 0) {
    view.quads[k].forEach(([x, y], corner) => {
      const handle = svg("circle", { cx: x, cy: y, r: 11 * scale, class: "corner", "data-corner": corner,
        fill: "#ffb000", stroke: "#000", style: "cursor: crosshair;" });
      handle.addEventListener("pointerdown", (event) => startDrag(event, view, k, corner));
      box.append(handle);
    });
  }
}

function centre(quad) {
  const n = quad.length;
  return [quad.reduce((a, p) => a + p[0], 0) / n, quad.reduce((a, p) => a + p[1], 0) / n];
}

function imagePoint(event) {
  const matrix = ui.regions.getScreenCTM();
  const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse());
  return [point.x, point.y];
}

// A drag moves the outline(s) on screen; letting go sends the move to the panel in image pixels.
function startDrag(event, view, k, corner) {
  if (busy || event.button > 0) return;
  event.preventDefault();
  const target = event.currentTarget;
  target.setPointerCapture(event.pointerId);
  const start = imagePoint(event);
  const all = corner === null && ui.together.checked;
  const outlines = [...ui.regions.querySelectorAll("polygon")];
  let moved = [0, 0];
  const move = (e) => {
    const [x, y] = imagePoint(e);
    moved = [x - start[0], y - start[1]];
    outlines.forEach((outline, i) => {
      if (!all && i !== k) return;
      const quad = view.quads[i].map(([px, py], c) => corner === null || c === corner
        ? [px + moved[0], py + moved[1]] : [px, py]);
      outline.setAttribute("points", pointsText(quad));
    });
    if (corner !== null) {
      target.setAttribute("cx", view.quads[k][corner][0] + moved[0]);
      target.setAttribute("cy", view.quads[k][corner][1] + moved[1]);
    }
  };
  const end = async () => {
    target.removeEventListener("pointermove", move);
    target.removeEventListener("pointerup", end);
    target.removeEventListener("pointercancel", end);
    const distance = Math.hypot(moved[0], moved[1]);
    if (distance < 0.5) { // a tap: choose this region (its corners become draggable)
      chosen = corner === null ? view.facelets[k] : chosen;
      render();
      return;
    }
    const offset = moved.map((v) => Math.round(v * 10) / 10);
    if (corner !== null) {
      const quad = view.quads[k].map(([px, py], c) => c === corner ? [px + offset[0], py + offset[1]] : [px, py]);
      await step("adjust", { view: view.name, sticker: view.facelets[k], quad });
    } else {
      await step("adjust", all ? { view: view.name, offset } : { view: view.name, sticker: view.facelets[k], offset });
    }
  };
  target.addEventListener("pointermove", move);
  target.addEventListener("pointerup", end);
  target.addEventListener("pointercancel", end);
}

function nudge(event, view, k) {
  const arrows = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  const by = arrows[event.key];
  if (!by || busy) return;
  event.preventDefault();
  const scale = event.shiftKey ? 10 : 1;
  const offset = [by[0] * scale, by[1] * scale];
  const body = ui.together.checked ? { view: view.name, offset } : { view: view.name, sticker: view.facelets[k], offset };
  step("adjust", body).then(() => {
    const again = ui.regions.querySelector(`polygon[data-sticker="${CSS.escape(view.facelets[k])}"]`);
    if (again) again.focus();
  });
}

// -- findings and the check ----------------------------------------------------------------------

function showFindings(findings, simulated) {
  if (!findings) {
    ui.findings.replaceChildren();
    return;
  }
  const title = simulated ? "Colours learned (SIMULATED: the simulated camera's colours)" : "Colours learned";
  const colours = el("table", { id: "calibrate-colours" },
    el("thead", {}, el("tr", {}, ...["face", "colour", "", "Lab"].map((t) => el("th", { scope: "col", text: t })))),
    el("tbody", {}, ...findings.colours.map((c) => el("tr", {},
      el("td", { text: c.face }), el("td", { text: c.name }),
      el("td", {}, el("span", { class: "swatch", title: c.name,
        style: `display: inline-block; width: 1.4em; height: 1.4em; border: 1px solid #000; background: rgb(${c.rgb.join(",")});` })),
      el("td", { text: c.lab.join(", ") })))));
  const pairs = el("table", { id: "calibrate-separations" },
    el("caption", { text: "How far apart each pair of colours is (Delta-E, and in units of their spread)" }),
    el("thead", {}, el("tr", {}, ...["pair", "Delta-E", "x spread", ""].map((t) => el("th", { scope: "col", text: t })))),
    el("tbody", {}, ...findings.separations.map((p) => el("tr", { "data-too-close": p.too_close ? "true" : "false" },
      el("td", { text: `${p.first} / ${p.second}` }), el("td", { text: p.delta_e }), el("td", { text: p.ratio }),
      el("td", { class: p.too_close ? "bad" : "good", text: p.too_close ? `TOO CLOSE: ${p.advice}` : "apart" })))));
  const verdict = !findings.ok ? "The scan does not look solved: nothing can be saved."
    : findings.separated ? "Every pair of colours is well apart." : `${findings.warnings.length} pair(s) too close: see the advice.`;
  ui.findings.replaceChildren(
    el("h3", { text: title }),
    el("p", { id: "calibrate-verdict", class: findings.ok && findings.separated ? "verdict" : "verdict bad", text: verdict }),
    el("ul", { id: "calibrate-problems", class: "messages" },
      ...findings.problems.map((p) => el("li", { class: "bad", text: p })),
      ...findings.warnings.map((w) => el("li", { text: `WARNING: ${w}` }))),
    colours, el("div", { class: "scroll" }, pairs));
}

function showCheck(check, simulated) {
  ui.checkShown.hidden = !check;
  if (!check) {
    ui.checkShown.replaceChildren();
    return;
  }
  const parts = [el("h3", { text: simulated ? "The check (SIMULATED: a scrambled virtual cube)" : "The check" })];
  if (check.refused) parts.push(el("p", { class: "bad", text: `The check scan could not be read: ${check.refused}` }));
  else {
    parts.push(el("p", { text: `Decoded with confidence ${check.confidence}, the cube as it stands after the scan's turns:` }),
      el("pre", { id: "calibrate-decoded", text: check.net.join("\n") }));
  }
  if (check.virtual) {
    parts.push(el("p", { text: `SIMULATED: the virtual cube (face letters) after the scan's turns; the decode is `
      + (check.virtual.same ? "the same cube." : "NOT the same cube.") }),
    el("pre", { text: check.virtual.net.join("\n") }));
  }
  ui.checkShown.replaceChildren(...parts);
}

// -- the buttons -------------------------------------------------------------------------------

ui.start.addEventListener("click", () => {
  chosen = null;
  step("start", {}, "Readying the arms...");
});
ui.present.addEventListener("click", () => step("present", {}, `The robot presents ${state && state.next}...`));
ui.confirm.addEventListener("click", () => step("confirm", {}, "Taking the view's picture..."));
ui.learn.addEventListener("click", () => step("learn", {}, "Learning the colours..."));
ui.check.addEventListener("click", () => step("check", {}, "Scanning the scrambled cube..."));
ui.matches.addEventListener("click", () => step("verify", { matches: true }));
ui.wrong.addEventListener("click", () => step("verify", { matches: false }));
ui.save.addEventListener("click", () => step("save", state && state.verified === "refused" ? { anyway: true } : {}));
ui.cancel.addEventListener("click", () => step("cancel"));
ui.detect.addEventListener("click", () => {
  const view = shown();
  if (view) step("detect", { view: view.name }, "Looking for the stickers in the picture...");
});

function load() {
  getJSON("/api/calibrate").then((answer) => {
    if (answer.ok) show(answer.data);
    else showError(section, answer);
  });
}
load();

// Another tab's steps: the panel sends the state after each one ({"type": "Calibration", ...}) on the
// page's websocket (app.js hands every message on as a "panel-message" event).
document.addEventListener("panel-connected", load); // what changed while the page was away
document.addEventListener("panel-message", (event) => {
  const data = event.detail;
  if (!data || data.type !== "Calibration") return;
  const { type, ...next } = data;
  if (JSON.stringify(next) !== JSON.stringify(state)) show(next);
});
