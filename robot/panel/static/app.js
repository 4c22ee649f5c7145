// The panel's page: the header (mode, run state, Emergency stop), who controls the robot, the state
// pushed over the websocket, and each section's module.

import { clearErrors, clientId, eventsURL, getJSON, postJSON, showError } from "./api.js";
import { startLive } from "./live.js";
import { setupCube } from "./cube.js";
import { setupRun } from "./run.js";
import { setupBringup } from "./bringup.js";
import { setupHistory } from "./history.js";
import { setupDoctor } from "./doctor.js";

const $ = (selector) => document.querySelector(selector);

let state = null;

// Emergency stop: POST at once, on the press itself (pointerdown), no confirmation, no queue in the
// page. The click that ends the same press is not sent again; a click with no pointer (detail 0: Enter
// or Space on the focused button, assistive technology) is. Escape does the same anywhere on the page.
const estopButton = $("#estop");
const estopSaid = $("#estop-said");

// For the tests and the benchmark: when the last press was sent (ms since the epoch) and answered.
window.panelEstop = { presses: 0, sentAtEpochMs: null, answerMs: null, ok: null };

async function estop() {
  const sentAt = performance.now();
  window.panelEstop.presses += 1;
  window.panelEstop.sentAtEpochMs = performance.timeOrigin + sentAt;
  estopSaid.className = "said";
  estopSaid.textContent = "Emergency stop: sending...";
  const answer = await postJSON("/api/estop", {});
  const ms = Math.round(performance.now() - sentAt);
  Object.assign(window.panelEstop, { answerMs: performance.now() - sentAt, ok: answer.ok });
  estopSaid.textContent = answer.ok
    ? `Emergency stop: the stop byte was sent (${ms} ms).`
    : `Emergency stop FAILED: ${answer.data.error || answer.status}. Switch the robot's power off.`;
  estopSaid.className = answer.ok ? "said" : "said bad";
  estopSaid.title = estopSaid.textContent;
}

estopButton.addEventListener("pointerdown", (event) => {
  if (event.button === 0) estop();
});
estopButton.addEventListener("click", (event) => {
  if (event.detail === 0) estop();
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && !event.repeat) {
    event.preventDefault();
    estop();
  }
});

// Who controls the robot.
const app = {
  mayMove() {
    return Boolean(state && (state.you_control || !state.controller));
  },
  // Ask for control when nobody has it (the first to ask gets it); a watcher must take it explicitly.
  async ensureControl(section) {
    if (state && state.you_control) return true;
    if (state && state.controller) {
      showError(section, { data: { error: `${state.controller} controls the robot: take control first` } });
      return false;
    }
    const answer = await postJSON("/api/control", { take: false });
    if (!answer.ok) {
      showError(section, answer);
      return false;
    }
    return true;
  },
  state() {
    return state;
  },
  // The header's "stop byte was sent" is about a stop that is over once its alarm is cleared or a new
  // cube or run begins.
  clearEstopNote() {
    if (!estopSaid.classList.contains("bad")) estopSaid.textContent = "";
  },
  scrollToRun() {
    $("#run").scrollIntoView({ behavior: "smooth" });
  },
};

const controlNote = $("#control-note");
const takeButton = $("#take-control");
takeButton.addEventListener("click", async () => {
  const section = $("#control");
  clearErrors(section);
  const answer = await postJSON("/api/control", { take: true });
  if (!answer.ok) showError(section, answer, "take");
  else await refreshState();
});

// A latched alarm: said at the top, with the button that clears it (as `cube-robot link reset-alarm`).
const alarmBox = $("#alarm-box");
$("#clear-alarm").addEventListener("click", async () => {
  const section = $("#control");
  clearErrors(section);
  if (!(await app.ensureControl(section))) return;
  const answer = await postJSON("/api/alarm/clear", {});
  if (!answer.ok) showError(section, answer, "alarm");
});

const cube = setupCube($("#cube"), app);
const run = setupRun($("#run"), app);
const bringup = setupBringup($("#bringup"), app);
const history = setupHistory($("#history"));
const doctor = setupDoctor($("#doctor"));

function showState(next) {
  const wasLatched = Boolean(state && state.board && state.board.alarm);
  state = next;
  document.body.classList.toggle("simulated", Boolean(state.simulated));
  const mode = $("#mode");
  mode.textContent = state.simulated ? "SIMULATED" : "REAL ROBOT";
  mode.title = `backend: ${state.backend}`;
  $("#backend").textContent = state.backend || "";
  const r = state.run || {};
  // A run that waits for the person's check says so (its stage may still name the scan).
  const stage = r.review ? "waiting for you to check the cube" : r.stage;
  $("#run-state").textContent = r.state === "idle" ? "idle" : `${r.state}${stage ? `: ${stage}` : ""}`
    + (r.id !== null && r.id !== undefined ? ` (run ${r.id})` : "");
  const board = state.board;
  // The header says it short (the control box below says what it means and clears it).
  $("#alarm").textContent = board && board.alarm ? `ALARM: ${board.alarm}`
    : board && board.error ? "The board does not answer" : "";
  $("#alarm").title = board && board.error ? board.error : "";
  if (state.you_control) controlNote.textContent = `You control the robot (this tab is ${clientId}).`;
  else if (state.controller) controlNote.textContent = `Watching: ${state.controller} controls the robot. Buttons that move it are off here until you take control.`;
  else controlNote.textContent = "Nobody controls the robot: the first button that moves it makes this tab the controller.";
  takeButton.hidden = !state.controller || state.you_control;
  const latched = board && board.alarm;
  if (wasLatched && !latched) app.clearEstopNote();
  alarmBox.hidden = !latched;
  if (latched) {
    alarmBox.querySelector("p").textContent = `Alarm latched: ${board.alarm}`
      + (board.alarm_text ? ` (${board.alarm_text})` : "") + ". Nothing moves until it is cleared: check the robot, then Clear alarm.";
  }
  $("#clear-alarm").disabled = !app.mayMove() || (state.run && state.run.state !== "idle");
  document.querySelectorAll(".watch-note").forEach((n) => { n.hidden = app.mayMove(); });
  cube.update(state);
  run.update(state);
  bringup.update(state);
  doctor.update(state);
}

async function refreshState() {
  const answer = await getJSON("/api/state");
  if (answer.ok) showState(answer.data);
  else $("#connection").textContent = `No state: ${answer.data.error}`;
  return answer.ok ? answer.data : null;
}

// The websocket: the state when it changes and the run's events. On a loss, reconnect and re-read.
let backoff = 500;
function connect() {
  const connection = $("#connection");
  const socket = new WebSocket(eventsURL());
  socket.addEventListener("open", () => {
    backoff = 500;
    connection.textContent = "live";
    connection.className = "connection up";
    refreshState();
    document.dispatchEvent(new Event("panel-connected")); // other modules re-read what they show
  });
  socket.addEventListener("message", (message) => {
    let data;
    try {
      data = JSON.parse(message.data);
    } catch (e) {
      return;
    }
    if (data.type === "RunStarted") app.clearEstopNote(); // said of the stop before
    // A stop pressed elsewhere is said at the top here too (this tab's own press has already said it).
    if (data.type === "EmergencyStop" && !estopSaid.textContent) {
      estopSaid.className = "said";
      estopSaid.textContent = "Emergency stop: the stop byte was sent (from another tab).";
      estopSaid.title = estopSaid.textContent;
    }
    if (data.type === "State") showState(data);
    else run.onEvent(data);
    document.dispatchEvent(new CustomEvent("panel-message", { detail: data })); // e.g. the calibration's steps
    if (data.type === "Report") {
      history.load();
    }
  });
  socket.addEventListener("close", () => {
    connection.textContent = "reconnecting to the panel...";
    connection.className = "connection down";
    setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, 5000);
  });
}

// The sticky header's height (it wraps on a phone, and grows with its notes): a section a link jumps to
// starts below it (style.css scroll-margin-top).
new ResizeObserver(() => {
  document.documentElement.style.setProperty("--bar-height", `${Math.ceil($("#bar").getBoundingClientRect().height)}px`);
}).observe($("#bar"));

startLive($("#live-canvas"), $("#live-status"));
refreshState().then((first) => run.loadLast(first));
connect();
history.load();
// The doctor reads the board, which a run holds: it is asked once the first state says no run is going.
doctor.wanted();
