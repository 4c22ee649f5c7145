// History: the solve log as a table (each run linking to its pictures and readings) and two SVG charts:
// start press to solved over time (real, simulated realtime and simulated sped-up runs apart) and
// failures by reason.

import { clearErrors, el, getJSON, showError, svg, withToken } from "./api.js";


// As robot/run/log.py groups them.
function simulated(run) {
  return run.simulated !== undefined ? Boolean(run.simulated) : run.mode === "simulated";
}

export function groupOf(run) {
  if (!simulated(run)) return "real robot";
  const spedUp = run.sped_up !== undefined ? run.sped_up : Boolean(run.timing_note);
  return spedUp ? "SIMULATED sped up (times compressed, not the robot's)" : "SIMULATED realtime";
}

function outcome(run) {
  return run.outcome || (run.solved ? "SOLVED" : "NOT SOLVED");
}

function reason(run) {
  if (run.reason) return run.reason;
  if (run.verified_solved === false) return "the rescan after the solve shows an unsolved cube";
  if (run.errors && run.errors.length) return run.errors.join("; ");
  return run.verify || "no reason logged";
}

// The panel gives URLs under /runs/ only for files inside the runs folder.
function links(run) {
  const cell = el("td", { class: "links", "data-label": "pictures" });
  const named = (urls, name) => (urls || []).map((url, i) => [`${name} ${i + 1}`, url]);
  const items = [...named(run.pictures, "scan"), ...named(run.check_pictures, "check"),
    ...named(run.refused_scan_pictures, "refused")];
  if (run.readings) items.push(["readings", run.readings]);
  for (const [name, url] of items) {
    cell.append(el("a", { href: withToken(url), target: "_blank", rel: "noopener", text: name }), " ");
  }
  if (!items.length) cell.textContent = "-";
  return cell;
}

// "2026-11-27T03:12:45.123" -> "11-27 03:12" (the full time is under the chart).
function shortTime(time) {
  const found = /^\d{4}-(\d\d-\d\d)[T ](\d\d:\d\d)/.exec(String(time || ""));
  return found ? `${found[1]} ${found[2]}` : String(time || "?").slice(0, 16);
}

function timeChart(points, width) {
  const box = el("div", { class: "charts" });
  const groups = new Map();
  for (const point of points) {
    if (typeof point.ms !== "number") continue;
    if (!groups.has(groupOf(point))) groups.set(groupOf(point), []);
    groups.get(groupOf(point)).push(point);
  }
  if (!groups.size) box.append(el("p", { class: "note", text: "No solved run with a measured time yet." }));
  for (const [group, points] of groups) {
    const height = 180;
    const left = 50;
    const top = 10;
    const bottom = 30;
    const most = Math.max(...points.map((p) => p.ms));
    const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", class: "chart",
      "aria-label": `start press to solved, ${group}: ${points.length} runs, up to ${(most / 1000).toFixed(2)} s` });
    chart.append(svg("line", { x1: left, y1: height - bottom, x2: width - 5, y2: height - bottom, class: "axis-line" }));
    chart.append(svg("line", { x1: left, y1: top, x2: left, y2: height - bottom, class: "axis-line" }));
    chart.append(svg("text", { x: 2, y: top + 10, class: "axis" }, `${(most / 1000).toFixed(1)} s`));
    chart.append(svg("text", { x: 2, y: height - bottom, class: "axis" }, "0 s"));
    // The first and last run's times at the two ends (short: a phone's chart has room for both).
    chart.append(svg("text", { x: left, y: height - 8, class: "axis" }, shortTime(points[0].time)));
    if (points.length > 1) {
      chart.append(svg("text", { x: width - 5, y: height - 8, class: "axis", "text-anchor": "end" },
        shortTime(points[points.length - 1].time)));
    }
    const step = points.length > 1 ? (width - left - 20) / (points.length - 1) : 0;
    let path = "";
    points.forEach((p, i) => {
      const x = left + 10 + i * step;
      const y = height - bottom - (p.ms / most) * (height - top - bottom);
      path += `${i ? "L" : "M"}${x.toFixed(1)},${y.toFixed(1)} `;
      const dot = svg("circle", { cx: x, cy: y, r: 4, class: "point" });
      dot.append(svg("title", {}, `${p.time}: ${(p.ms / 1000).toFixed(3)} s`));
      chart.append(dot);
    });
    chart.prepend(svg("path", { d: path, class: "trend" }));
    box.append(el("figure", {}, el("figcaption", { text: `Start press to solved: ${group}` }), chart,
      el("p", { class: "note", text: `${points.length} run${points.length === 1 ? "" : "s"} in order, the oldest left:`
        + ` ${points[0].time || "?"} to ${points[points.length - 1].time || "?"}.` })));
  }
  return box;
}

function failureChart(failures, width) {
  const counts = new Map();
  for (const [kind, reasons] of Object.entries(failures || {})) {
    for (const [why, n] of Object.entries(reasons)) {
      counts.set(`${kind === "simulated" ? "SIMULATED " : "real robot: "}${why}`, n);
    }
  }
  const figure = el("figure", {}, el("figcaption", { text: "Failures by reason" }));
  if (!counts.size) {
    figure.append(el("p", { class: "note", text: "No failed run logged." }));
    return figure;
  }
  const rows = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  const most = rows[0][1];
  const rowHeight = 40;
  // A bar's label is cut to the chart's width; the numbered list under it says each reason in full, so
  // two reasons that begin alike never look the same.
  const fits = Math.floor(width / 6.6) - 4;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${rows.length * rowHeight}`, role: "img", class: "chart",
    "aria-label": `failures by reason: ${rows.map(([k, n]) => `${n} ${k}`).join("; ")}` });
  rows.forEach(([key, n], i) => {
    const y = i * rowHeight;
    const text = `${i + 1}. ${key}`;
    const label = svg("text", { x: 0, y: y + 14, class: "axis" }, text.length > fits ? text.slice(0, fits - 1) + "\u2026" : text);
    label.append(svg("title", {}, key));
    chart.append(label);
    chart.append(svg("rect", { x: 0, y: y + 19, width: Math.max(2, ((width - 40) * n) / most), height: 14, class: "fail" }));
    chart.append(svg("text", { x: Math.max(2, ((width - 40) * n) / most) + 4, y: y + 31, class: "axis" }, String(n)));
  });
  figure.append(chart, el("ol", { class: "reasons" }, ...rows.map(([key, n]) =>
    el("li", { text: `${n} run${n === 1 ? "" : "s"}: ${key}` }))));
  return figure;
}

// Runs listed at first (newest first); the rest behind "Show all".
const SHOWN_RUNS = 10;

export function setupHistory(section) {
  const table = section.querySelector("#history-table");
  const charts = section.querySelector("#history-charts");
  const note = section.querySelector("#history-note");
  const warnings = section.querySelector("#history-warnings");
  const more = el("button", { type: "button", id: "history-more", hidden: true, text: "Show all runs" });
  table.closest(".scroll").after(more);
  let showAll = false;
  let rows = [];

  function showRows() {
    const body = table.querySelector("tbody");
    if (!body) return;
    body.replaceChildren(...(showAll ? rows : rows.slice(0, SHOWN_RUNS)));
    more.hidden = rows.length <= SHOWN_RUNS;
    more.textContent = showAll ? `Show the last ${SHOWN_RUNS} runs only` : `Show all ${rows.length} runs`;
  }
  more.addEventListener("click", () => {
    showAll = !showAll;
    showRows();
  });

  async function load() {
    clearErrors(section);
    const answer = await getJSON("/api/history");
    if (!answer.ok) {
      showError(section, answer);
      return;
    }
    const runs = answer.data.runs || [];
    note.textContent = runs.length ? `${runs.length} run${runs.length === 1 ? "" : "s"} in the solve log${answer.data.log ? ` (${answer.data.log})` : ""}.`
      : "The solve log is empty.";
    const head = el("tr", {}, ...["time", "mode", "outcome", "start press to solved", "why not solved", "pictures"]
      .map((t) => el("th", { scope: "col", text: t })));
    rows = runs.slice().reverse().map((run) => el("tr", {},
      el("td", { "data-label": "time", text: run.time || "?" }),
      el("td", { "data-label": "mode", text: groupOf(run) }),
      el("td", { "data-label": "outcome", text: (simulated(run) ? "SIMULATED " : "") + outcome(run) }),
      el("td", { "data-label": "start press to solved", text: typeof run.button_to_solved_ms === "number"
        ? `${(run.button_to_solved_ms / 1000).toFixed(3)} s` : "-" }),
      el("td", { "data-label": "why not solved", text: outcome(run) === "SOLVED" ? "" : reason(run) }),
      links(run)));
    table.replaceChildren(el("thead", {}, head), el("tbody"));
    showRows();
    const series = answer.data.series || {};
    // Drawn at the section's width, so the text keeps its size on a phone.
    const width = Math.max(300, Math.round(charts.clientWidth || 600));
    charts.replaceChildren(timeChart(series.solve_times || [], width), failureChart(series.failures, width));
    warnings.replaceChildren(...(answer.data.warnings || []).map((w) => el("li", { text: w })));
  }

  section.querySelector("#history-refresh").addEventListener("click", load);
  return { load };
}
