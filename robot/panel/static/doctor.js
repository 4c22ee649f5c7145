// Doctor: the pre-flight checks (the same functions `cube-robot doctor` runs) with their fixes.

import { clearErrors, el, getJSON, showError } from "./api.js";

export function setupDoctor(section) {
  const table = section.querySelector("#doctor-table");
  const note = section.querySelector("#doctor-note");
  const button = section.querySelector("#doctor-run");
  let running = null; // null: no state yet; else whether a run holds the board
  let pending = false; // the checks are wanted once the board is free
  let loading = false;

  // Asked now when the board is free, else once the run ends (during a run /api/doctor is refused).
  function wanted() {
    pending = true;
    if (running === false) load();
    else if (running) note.textContent = "The checks read the board, which the run holds: they run when it ends.";
  }

  async function load() {
    if (loading) return;
    pending = false;
    loading = true;
    try {
      await ask();
    } finally {
      loading = false;
    }
  }

  async function ask() {
    clearErrors(section);
    note.textContent = "Checking...";
    const answer = await getJSON("/api/doctor");
    if (!answer.ok) {
      note.textContent = "";
      showError(section, answer);
      return;
    }
    const checks = Array.isArray(answer.data) ? answer.data : answer.data.rows || [];
    const failed = checks.filter((c) => c.status === "FAIL").length;
    note.textContent = `${checks.length} checks, ${failed} failed.` + (answer.data.simulated ? " SIMULATED robot." : "");
    const head = el("tr", {}, ...["check", "item", "status", "found, and the fix"].map((t) => el("th", { scope: "col", text: t })));
    const rows = checks.map((c) => el("tr", { class: `status-${String(c.status).toLowerCase()}` },
      el("td", { "data-label": "check", text: c.title || "" }),
      el("td", { "data-label": "item", text: c.item || "" }),
      el("td", { "data-label": "status", class: "status", text: c.status }),
      el("td", { "data-label": "found, and the fix", text: [c.detail, c.fix].filter(Boolean).join(" Fix: ") })));
    table.replaceChildren(el("thead", {}, head), el("tbody", {}, ...rows));
  }

  button.addEventListener("click", wanted);
  // Opening the section (its link, or the page opened at #doctor) asks for fresh checks.
  const opened = () => { if (location.hash === "#doctor") wanted(); };
  window.addEventListener("hashchange", opened);

  return {
    wanted,
    update(state) {
      const was = running;
      running = Boolean(state.run && state.run.state !== "idle");
      button.disabled = running;
      if (running && !was) pending = true; // the board changes under the run: read it again after
      if (!running && pending) load();
      else if (running && pending) wanted();
    },
  };
}
