// A run: Start and Stop, the plan with each action marked as its line is sent and its done arrives,
// the live waterfall, and the result in the terminal's words (result_line verbatim).

import { el, getJSON, postJSON, showError, clearErrors, svg } from "./api.js";
import { drawNet } from "./net.js";


// A plan action in words: {op:"grip", pair:"RL"} -> "grip RL"; {op:"turn", arms:{R:90, L:-90}} -> "turn R L'".
export function actionText(action) {
  if (action.op === "grip") return `grip ${action.pair}`;
  if (action.op === "turn") {
    const moves = Object.entries(action.arms).map(([face, angle]) => {
      const quarters = Math.abs(angle) >= 45 ? Math.round(angle / 90) : angle;
      return face + ["", "", "2", "'"][((quarters % 4) + 4) % 4];
    });
    return `turn ${moves.join(" ")}`;
  }
  return JSON.stringify(action);
}

function planActions(plan) {
  if (!plan) return [];
  return plan.plan || plan.actions || [];
}

export function setupRun(section, app) {
  const startButton = section.querySelector("#run-start");
  const stopButton = section.querySelector("#run-stop");
  const planList = section.querySelector("#run-plan");
  const planInfo = section.querySelector("#run-plan-info");
  const waterfall = section.querySelector("#run-waterfall");
  const result = section.querySelector("#run-result");
  const stopBox = section.querySelector("#run-stopped");
  const stage = section.querySelector("#run-stage");
  const after = section.querySelector("#run-after");
  const reportText = section.querySelector("#run-report-text");
  const messages = section.querySelector("#run-messages");
  const review = section.querySelector("#run-review");
  let runId = null;
  let bars = []; // {stage, start_ms, end_ms, floor_ms}
  let running = null; // {stage, since} the stage going on, page clock
  let pressedAt = null; // page clock at StartPressed
  let timer = null;
  let sent = 0;
  let done = 0;
  let total = 0;
  let lastRead = null; // the facelets of the rescan after the solve
  let making = false; // a new simulated cube is being made
  let forgotten = null; // the result line of a run whose cube was replaced (not shown again)
  let going = false; // a run is going (its events belong under it; an emergency stop after it does not)
  let stopInfo = {}; // what the stop box shows: each field kept until an event or the report gives a new one
  const newCubeButton = section.querySelector("#run-new-cube");
  const newCubeStatus = section.querySelector("#run-new-cube-status");
  const startNote = section.querySelector("#run-start-note");

  function newRun(id) {
    runId = id;
    bars = [];
    running = null;
    pressedAt = null;
    sent = done = total = 0;
    lastRead = null;
    stopInfo = {};
    planList.replaceChildren();
    messages.replaceChildren();
    planInfo.textContent = "No plan yet: the cube is scanned first.";
    result.textContent = "The run is going.";
    result.className = "result";
    stopBox.hidden = true;
    stopBox.replaceChildren();
    after.hidden = true;
    reportText.closest("details").hidden = true;
    drawWaterfall();
  }

  function mark() {
    planList.querySelectorAll("li").forEach((li, i) => {
      const n = i + 1;
      li.classList.toggle("sent", n <= sent && n > done);
      li.classList.toggle("done", n <= done);
      li.dataset.state = n <= done ? "done" : n <= sent ? "sent" : "waiting";
    });
    if (total) {
      planInfo.textContent = `${done} of ${total} actions done, ${sent} sent.`
        + (planList.children.length ? "" : " (The plan was found before this page opened: its actions are not listed.)");
    }
  }

  function showPlan(event) {
    const actions = planActions(event.plan);
    total = event.actions || actions.length;
    planList.replaceChildren(...actions.map((a, i) => el("li", { "data-state": "waiting" },
      el("span", { class: "n", text: `${i + 1}.` }), " ", actionText(a))));
    const predicted = event.predicted_ms === null || event.predicted_ms === undefined
      ? "" : `, predicted ${(event.predicted_ms / 1000).toFixed(2)} s of machine time`;
    planInfo.textContent = `Plan: ${event.moves} (${total} actions${predicted}).`;
    mark();
  }

  function drawWaterfall() {
    const rows = bars.slice();
    if (running && pressedAt !== null) {
      const now = performance.now() - pressedAt;
      rows.push({ stage: `${running.stage} (going on)`, start_ms: running.since, end_ms: Math.max(now, running.since),
        live: true });
    }
    // Drawn at the element's own width, so the text keeps its size on a phone.
    const width = Math.max(300, Math.round(waterfall.clientWidth || 600));
    const rowHeight = 22;
    const labelWidth = Math.min(190, Math.round(width * 0.42));
    const fits = Math.floor(labelWidth / 6.6);
    const height = Math.max(1, rows.length) * rowHeight + 24;
    const span = Math.max(1, ...rows.map((r) => r.end_ms));
    const scale = (width - labelWidth - 10) / span;
    waterfall.replaceChildren();
    waterfall.setAttribute("viewBox", `0 0 ${width} ${height}`);
    if (!rows.length) {
      waterfall.append(svg("text", { x: 4, y: 16, class: "axis" }, "The stages appear here as the run goes."));
      return;
    }
    rows.forEach((row, i) => {
      const y = i * rowHeight;
      const g = svg("g", { class: "bar" + (row.live ? " live" : ""), "data-stage": row.stage });
      g.append(svg("text", { x: 0, y: y + 15 }, row.stage.length > fits ? row.stage.slice(0, fits - 1) + "\u2026" : row.stage));
      g.append(svg("rect", { x: labelWidth + row.start_ms * scale, y: y + 3,
        width: Math.max(1, (row.end_ms - row.start_ms) * scale), height: rowHeight - 6 }));
      if (row.floor_ms !== null && row.floor_ms !== undefined) {
        g.append(svg("line", { class: "floor", x1: labelWidth + (row.start_ms + row.floor_ms) * scale, y1: y + 1,
          x2: labelWidth + (row.start_ms + row.floor_ms) * scale, y2: y + rowHeight - 1 }));
      }
      g.append(svg("title", {}, `${row.stage}: ${row.start_ms.toFixed(0)}-${row.end_ms.toFixed(0)} ms`
        + (row.floor_ms != null ? ` (floor ${row.floor_ms.toFixed(0)} ms)` : "")));
      waterfall.append(g);
    });
    waterfall.append(svg("text", { x: labelWidth, y: height - 4, class: "axis" },
      `0 to ${(span / 1000).toFixed(2)} s from the start press`));
  }

  function tick() {
    clearInterval(timer);
    timer = running ? setInterval(drawWaterfall, 200) : null;
    drawWaterfall();
  }

  // A field null or absent in this event leaves what was shown (a later Stopped may only add a note).
  function showStopped(event) {
    if (event.errors && event.errors.length) stopInfo.errors = event.errors;
    if (event.cube_state) stopInfo.cube_state = event.cube_state;
    if (event.advice) stopInfo.advice = event.advice;
    stopBox.hidden = false;
    stopBox.replaceChildren(el("h3", { text: "The run stopped" }));
    if (stopInfo.errors) stopBox.append(el("p", { text: stopInfo.errors.join("; ") }));
    if (stopInfo.cube_state) {
      stopBox.append(el("p", { class: "cube-state" }, el("strong", { text: "Cube state after the stop: " }),
        el("span", { id: "run-cube-state", text: stopInfo.cube_state })));
    }
    if (stopInfo.advice) {
      stopBox.append(el("p", { class: "advice" }, el("strong", { text: "What to do: " }),
        el("span", { id: "run-advice", text: stopInfo.advice })));
    }
  }

  function showAfter(title, facelets) {
    after.hidden = false;
    after.querySelector("h3").textContent = title;
    drawNet(after.querySelector(".net"), facelets, { label: title });
  }

  // As the terminal's report ends: RESULT and the result line, word for word.
  function showLine(line) {
    result.replaceChildren(el("strong", { text: "RESULT " }), el("span", { id: "run-result-line", text: line }));
  }

  function showReport(message) {
    showLine(message.result_line);
    const report = message.report || {};
    result.className = "result " + (report.outcome === "SOLVED" ? "good" : "bad");
    if (report.virtual_cube || report.final_state) {
      showAfter("SIMULATED: the virtual cube after the run", report.virtual_cube || report.final_state);
    } else if (lastRead) {
      showAfter("The rescan after the solve read", lastRead);
    }
    // The report has the last word on the stop: its state and advice replace what the events said.
    if (report.cube_state_after_stop || (report.advice && !stopBox.hidden)) {
      showStopped({ errors: report.errors, cube_state: report.cube_state_after_stop, advice: report.advice });
    }
    if (message.text) {
      reportText.textContent = message.text;
      reportText.closest("details").hidden = false;
    }
  }

  const handlers = {
    RunStarted: (e) => { newRun(e.run); going = true; newCubeStatus.textContent = ""; forgotten = null; },
    StartPressed: () => { pressedAt = performance.now(); },
    StageStarted: (e) => {
      running = { stage: e.stage, since: pressedAt === null ? 0 : performance.now() - pressedAt };
      stage.textContent = `Stage: ${e.stage}`;
      tick();
    },
    StageEnded: (e) => { bars.push(e); drawWaterfall(); },
    ViewDecoded: (e) => { if (e.facelets && e.view.startsWith("verify")) lastRead = e.facelets; },
    PlanFound: showPlan,
    ActionSent: (e) => { sent = Math.max(sent, e.action); total = e.total; mark(); },
    ActionDone: (e) => { done = Math.max(done, e.completed); sent = Math.max(sent, done); total = e.total; mark(); },
    Stopped: showStopped,
    RunEnded: (e) => {
      going = false;
      running = null;
      if (!total) planInfo.textContent = "No plan: the run ended before one was found.";
      tick();
      stage.textContent = `Ended: ${e.outcome}`;
      result.textContent = `${e.outcome} (the report follows)`;
    },
    Report: showReport,
    Message: (e) => messages.append(el("li", { text: e.text })),
    CubeCorrected: (e) => messages.append(el("li", {
      text: `The cube was corrected by hand: ${e.stickers.length} sticker(s) changed; solving ${e.facelets}.` })),
    EmergencyStop: () => messages.append(el("li", { class: "bad", text: "Emergency stop: the stop byte was sent." })),
  };

  // Said once, in the section's error line: not between Start and Stop, where it pushed Stop away.
  const lineOnly = (answer) => ({ ...answer, data: { ...(answer.data || {}), field: null } });

  async function start() {
    clearErrors(section);
    if (!(await app.ensureControl(section))) return;
    const answer = await postJSON("/api/run/start", { review: review.checked });
    if (!answer.ok) showError(section, lineOnly(answer));
  }

  async function stop() {
    clearErrors(section);
    if (!(await app.ensureControl(section))) return;
    const answer = await postJSON("/api/run/stop", {});
    if (!answer.ok) showError(section, lineOnly(answer));
  }

  // The last run's result, net and stop box are about the cube that was replaced.
  function forgetRun(line) {
    forgotten = line;
    runId = null;
    newRun(null);
    result.textContent = "No run yet with this cube.";
    planInfo.textContent = "No plan yet.";
    stage.textContent = "";
  }

  // Simulation only: a fresh simulated robot with a newly scrambled cube (a jammed virtual cube needs one).
  newCubeButton.addEventListener("click", async () => {
    clearErrors(section);
    if (!(await app.ensureControl(section))) return;
    making = true;
    newCubeButton.disabled = true;
    newCubeStatus.className = "note";
    newCubeStatus.textContent = "Making a new simulated robot with a scrambled cube...";
    app.clearEstopNote();
    const line = app.state() && app.state().run ? app.state().run.result_line : null;
    const answer = await postJSON("/api/sim/new-cube", {});
    making = false;
    if (answer.ok) {
      forgetRun(line);
      newCubeStatus.textContent = "SIMULATED: the new scrambled cube is in. Start solves it.";
    } else {
      newCubeStatus.textContent = "";
      showError(section, answer, "scramble");
    }
    if (app.state()) update(app.state());
  });

  function update(state) {
    const run = state.run || {};
    const idle = run.state === "idle";
    // A latched alarm: the board refuses every move, so Start would only fail.
    const alarm = Boolean(state.board && state.board.alarm);
    // A jammed virtual cube: the panel refuses Start until a new cube is in.
    startButton.disabled = !idle || !app.mayMove() || alarm || Boolean(state.jammed);
    startNote.textContent = !idle ? "" : alarm ? "Clear the alarm first (at the top)."
      : state.jammed ? "Put a new cube in first (New cube)." : "";
    if (idle) going = false;
    else if (run.id !== null && run.id !== undefined) going = true;
    review.disabled = !idle || !app.mayMove();
    const jammed = section.querySelector("#run-jammed");
    jammed.hidden = !state.jammed;
    jammed.querySelector("p").textContent = state.jammed || "";
    section.querySelector("#run-new-cube-row").hidden = !state.simulated;
    newCubeButton.disabled = making || !idle || !app.mayMove();
    if (!idle) newCubeStatus.textContent = "";
    stopButton.disabled = idle || !app.mayMove(); // a watcher has the Emergency stop
    if (run.state === "running" && run.stage) stage.textContent = `Stage: ${run.stage}`;
    if (!idle && runId === null && run.id !== null && run.id !== undefined) {
      // Opened while a run goes on: its earlier events were not seen here.
      runId = run.id;
      planInfo.textContent = `This page opened during run ${run.id}: what came before is not shown here; `
        + "the report shows all of it when the run ends.";
      result.textContent = "The run is going.";
    }
    const shown = result.querySelector("#run-result-line");
    if (idle && run.result_line && run.result_line !== forgotten && (!shown || shown.textContent !== run.result_line)) {
      showLine(run.result_line);
    }
  }

  startButton.addEventListener("click", start);
  stopButton.addEventListener("click", stop);
  drawWaterfall();

  return {
    onEvent(message) {
      // An emergency stop while no run goes is said at the top (header, alarm), not under the last run.
      if (message.type === "EmergencyStop" && !going) return;
      if (message.run !== undefined && message.run !== runId && message.type !== "RunStarted") newRun(message.run);
      const handler = handlers[message.type];
      if (handler) handler(message);
    },
    update: update,
    // The last run's report when the page opens (the events of a run that ended are gone).
    async loadLast(state) {
      const line = state && state.run ? state.run.result_line : null;
      if (!line) return; // no run has ended in this panel: there is no report to read
      const answer = await getJSON("/api/report");
      if (!answer.ok || !answer.data) return;
      const report = answer.data;
      showReport({ result_line: line, report });
      if (report.plan) {
        showPlan({ plan: report.plan, moves: report.plan.moves, actions: planActions(report.plan).length,
          predicted_ms: report.predicted_machine_ms });
        if (report.outcome === "SOLVED") {
          done = sent = total;
          mark();
        }
      }
      if (report.waterfall) {
        bars = report.waterfall.slice();
        drawWaterfall();
      }
    },
  };
}
