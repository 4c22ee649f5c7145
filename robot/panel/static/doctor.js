// Doctor: the pre-flight checks (the same functions `cube-robot doctor` runs) with their fixes.

import { clearErrors, el, getJSON, showError } from "./api.js";

export function setupDoctor(section) {
  const table = section.querySelector("#doctor-table");
  const note = section.querySelector("#doctor-note");

  async function load() {
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

  section.querySelector("#doctor-run").addEventListener("click", load);
  return { load };
}
