// The cube as read: the decoded net, stickers seen or inferred, the confidence. A sticker can be
// corrected by hand; the corrected cube is checked by the panel (the same validation as
// `cube-robot solve`) and solved only after a legal check and the person's confirmation, in a run
// started with "let me check the cube first" (it waits after the scan for this page's answer).

import { clearErrors, el, postJSON, showError } from "./api.js";
import { colourName, colourOf, drawNet, explainLetters, faceletName, paletteOf, seenName } from "./net.js";

const UNKNOWN = "?".repeat(24);

export function setupCube(section, app) {
  const net = section.querySelector("#cube-net");
  const info = section.querySelector("#cube-info");
  const waiting = section.querySelector("#cube-waiting");
  const palette = section.querySelector("#cube-palette");
  const checkButton = section.querySelector("#cube-check");
  const resetButton = section.querySelector("#cube-reset");
  const solveButton = section.querySelector("#cube-solve");
  const cancelButton = section.querySelector("#cube-cancel");
  const solveNote = section.querySelector("#cube-solve-note");
  const confirmBox = section.querySelector("#cube-confirm");
  const verdict = section.querySelector("#cube-verdict");
  let read = null; // the cube read: {facelets, seen, confidence}
  let review = null; // a run waiting for this page to confirm the cube: {facelets, confidence}
  let draft = UNKNOWN; // what the net shows (24 symbols, '?' unknown)
  let selected = null; // the sticker being corrected
  let checked = null; // the facelets of the last legal check
  let marked = [];

  const readFacelets = () => (read && read.facelets ? read.facelets : UNKNOWN);
  const edited = () => draft !== readFacelets();

  function render() {
    // Set by hand: differing from the read here, or named by the run that solved a corrected cube.
    const corrected = ((read && read.corrected) || []).map((i) => faceletName(i));
    for (let i = 0; i < 24; i++) if (read && read.facelets && draft[i] !== read.facelets[i]) corrected.push(faceletName(i));
    // A watching tab cannot solve, so it does not edit either (its stickers are not buttons).
    const editable = app.mayMove();
    if (!editable) selected = null;
    drawNet(net, draft, {
      seen: read && read.facelets ? read.seen : null, unread: (read && read.unread) || [],
      colours: read && read.colours_rgb, marked, selected, corrected,
      onPick: editable ? pick : null,
      label: editable ? "The cube as read; choose a sticker to correct it" : "The cube as read (watching: not editable)",
    });
    const parts = [];
    if (read && read.facelets) {
      const confidence = read.confidence === null || read.confidence === undefined
        ? "no confidence given" : `confidence ${(read.confidence * 100).toFixed(1)} %`;
      const inferred = read.seen ? read.seen.filter((s) => s === false).length : 0;
      parts.push(`Read: ${read.facelets} (${confidence}`
        + (inferred ? `; ${inferred} sticker${inferred === 1 ? "" : "s"} inferred, marked *` : "") + ").");
    } else {
      parts.push("No cube read yet: the scan of a run fills this net.");
    }
    if (edited()) {
      const changed = draft.split("").filter((c, i) => c !== readFacelets()[i]).length;
      parts.push(changed === 1 ? "Corrected by hand: 1 sticker differs from what was read (marked +)."
        : `Corrected by hand: ${changed} stickers differ from what was read (marked +).`);
    }
    info.textContent = parts.join(" ");
    waiting.hidden = !review;
    resetButton.disabled = !edited();
    const legal = checked !== null && checked === draft;
    solveButton.disabled = !legal || !review || !app.mayMove();
    cancelButton.hidden = !review;
    cancelButton.disabled = !app.mayMove();
    solveNote.textContent = review
      ? (legal ? "" : "Check the cube first: only a legal cube is solved.")
      : "Solving a cube shown here needs a run that waits for it: tick \"Check the cube before solving\" by Start.";
    if (!legal || !review) confirmBox.hidden = true;
    renderPalette();
  }

  function renderPalette() {
    palette.replaceChildren();
    if (selected === null) {
      palette.append(el("p", { class: "note", text: app.mayMove() ? "Choose a sticker on the net to change its colour."
        : "Watching: correcting the cube needs control of the robot." }));
      return;
    }
    palette.append(el("p", { class: "note", text: `Colour for ${selected}:` }));
    const seen = read && read.colours_rgb;
    for (const symbol of paletteOf(read && read.facelets ? read.facelets : draft)) {
      // The swatch shows the colour the scan saw, its name and its face letter.
      const name = colourName(symbol, seen);
      palette.append(el("button", {
        type: "button", class: "swatch", "data-colour": symbol, "aria-label": `Colour ${symbol}: ${name}`, title: name,
        style: `background: ${colourOf(symbol, seen)}`, onclick: () => choose(symbol),
      }, el("span", { class: "letter", text: symbol }), el("span", { class: "name", text: seenName(symbol, seen) })));
    }
  }

  function pick(index) {
    selected = faceletName(index);
    render();
    // The palette next, for a keyboard (otherwise the rest of the net's stickers lie between).
    const swatch = palette.querySelector("button");
    if (swatch) swatch.focus({ preventScroll: true });
  }

  function choose(symbol) {
    const index = "URFDLB".indexOf(selected[0]) * 4 + Number(selected[1]) - 1;
    draft = draft.slice(0, index) + symbol + draft.slice(index + 1);
    const name = selected;
    selected = null;
    verdict.textContent = "";
    net.removeAttribute("aria-invalid");
    marked = [];
    render();
    const sticker = net.querySelector(`[data-facelet="${name}"]`);
    if (sticker) sticker.focus();
  }

  async function check() {
    clearErrors(section);
    verdict.textContent = "Checking...";
    verdict.className = "verdict";
    const asked = draft;
    const result = await postJSON("/api/cube/check", { facelets: asked });
    if (draft !== asked) return; // changed while the answer came: that check is stale
    if (result.ok) {
      checked = asked;
      marked = [];
      verdict.textContent = "OK: a legal cube.";
      verdict.className = "verdict good";
    } else {
      checked = null;
      const text = result.data.error || `refused (${result.status})`;
      net.setAttribute("aria-invalid", "true");
      const stickers = result.data.stickers || [];
      marked = stickers.map((s) => (typeof s === "number" ? faceletName(s) : s));
      // The letters explained by the colours seen; the stickers named are marked on the net.
      verdict.textContent = explainLetters(text, read && read.colours_rgb)
        + (marked.length ? ` (marked on the net: ${marked.join(" ")})` : "");
      verdict.className = "verdict bad";
    }
    render();
  }

  async function solve() {
    confirmBox.hidden = true;
    clearErrors(section);
    if (!(await app.ensureControl(section))) return;
    const result = await postJSON("/api/run/confirm", { facelets: checked });
    if (result.ok) {
      verdict.textContent = edited() ? "Solving the cube as corrected here." : "Solving the cube as read.";
      verdict.className = "verdict good";
    } else {
      showError(section, result, "facelets");
    }
  }

  async function cancel() {
    clearErrors(section);
    const result = await postJSON("/api/run/stop", {});
    if (!result.ok) showError(section, result);
  }

  checkButton.addEventListener("click", check);
  resetButton.addEventListener("click", () => {
    draft = readFacelets();
    selected = null;
    checked = null;
    marked = [];
    verdict.textContent = "";
    clearErrors(section);
    render();
  });
  solveButton.addEventListener("click", () => {
    confirmBox.hidden = false;
    confirmBox.querySelector("button").focus();
  });
  cancelButton.addEventListener("click", cancel);
  section.querySelector("#cube-confirm-yes").addEventListener("click", solve);
  section.querySelector("#cube-confirm-no").addEventListener("click", () => {
    confirmBox.hidden = true;
    solveButton.focus();
  });
  render();

  return {
    // The state's cube (or the one a run waits to have confirmed): a new read replaces the net unless
    // the person is correcting it.
    update(state) {
      review = state.run && state.run.review ? state.run.review : null;
      const cube = state.cube && state.cube.facelets ? state.cube : null;
      const same = cube && review && cube.facelets === review.facelets;
      const fresh = review ? { facelets: review.facelets, confidence: review.confidence, seen: same ? cube.seen : null,
        unread: same ? cube.unread : null, colours_rgb: cube ? cube.colours_rgb : null } : cube;
      const before = readFacelets();
      const wasEdited = edited();
      read = fresh;
      if (readFacelets() !== before && !(wasEdited && review)) {
        draft = readFacelets();
        checked = null;
        selected = null;
        marked = [];
      }
      render();
    },
  };
}
