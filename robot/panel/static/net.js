// The cube's net (Kociemba's facelet order U R F D L B, each face 2x2 row-major) drawn as the usual
// cross, as robot/vision/net.py draws it:
//         U
//     L   F   R   B
//         D

import { el } from "./api.js";

export const FACES = "URFDLB";
const NET_POSITIONS = { U: [1, 0], L: [0, 1], F: [1, 1], R: [2, 1], B: [3, 1], D: [1, 2] };
// The usual scheme for face letters, and the colour letters (wrgyob) of `cube-robot solve`.
const PALETTE = {
  U: "#f5f5f5", R: "#c8141e", F: "#14a03c", D: "#fad700", L: "#ff7800", B: "#143cc8",
};
const COLOUR_LETTERS = { w: "U", r: "R", g: "F", y: "D", o: "L", b: "B" };
const COLOUR_NAMES = { U: "white", R: "red", F: "green", D: "yellow", L: "orange", B: "blue" };

export function faceletName(index) {
  return FACES[Math.floor(index / 4)] + String((index % 4) + 1);
}

// A symbol's colour: as the scan saw it when given (seen: letter -> [r, g, b]), else the usual scheme's.
export function colourOf(symbol, seen = null) {
  const rgb = seen && seen[symbol];
  if (Array.isArray(rgb) && rgb.length === 3) {
    return "#" + rgb.map((v) => Math.max(0, Math.min(255, Math.round(v))).toString(16).padStart(2, "0")).join("");
  }
  if (PALETTE[symbol]) return PALETTE[symbol];
  const face = COLOUR_LETTERS[symbol.toLowerCase()];
  return face ? PALETTE[face] : "#808080";
}

export function colourName(symbol) {
  const face = PALETTE[symbol] ? symbol : COLOUR_LETTERS[symbol.toLowerCase()];
  return face ? COLOUR_NAMES[face] : `colour ${symbol}`;
}

function ink(hex) {
  const v = parseInt(hex.slice(1), 16);
  const [r, g, b] = [(v >> 16) & 255, (v >> 8) & 255, v & 255];
  return 0.299 * r + 0.587 * g + 0.114 * b > 110 ? "#000" : "#fff";
}

// The six symbols of a cube as read (the centre-less 2x2 has no fixed centres: the symbols present),
// else the face letters.
export function paletteOf(facelets) {
  const symbols = facelets ? Array.from(new Set(facelets.replace(/\?/g, ""))) : [];
  return symbols.length === 6 ? symbols.sort((a, b) => order(a) - order(b)) : FACES.split("");
}

function order(symbol) {
  const face = PALETTE[symbol] ? symbol : COLOUR_LETTERS[symbol.toLowerCase()];
  return face ? FACES.indexOf(face) : 99;
}

// Draw `facelets` (24 symbols; '?' or null: unknown) into `container` as a grid of buttons.
// options: seen (24 booleans; false: inferred), unread (names read past: inferred too), colours (letter
// -> [r, g, b] as the scan saw them), marked (facelet names to flag), corrected (names set by hand),
// selected (a name),
// onPick(index) (stickers become clickable), label (the net's accessible name).
export function drawNet(container, facelets, options = {}) {
  const { seen = null, unread = [], colours = null, marked = [], corrected = [], selected = null, onPick = null,
    label = "cube net" } = options;
  container.replaceChildren();
  container.classList.add("net");
  container.setAttribute("role", "group");
  container.setAttribute("aria-label", label);
  for (let i = 0; i < 24; i++) {
    const name = faceletName(i);
    const symbol = facelets ? facelets[i] : "?";
    const known = symbol && symbol !== "?";
    const [column, row] = NET_POSITIONS[FACES[Math.floor(i / 4)]];
    const byHand = corrected.includes(name);
    const inferred = !byHand && known && ((seen && seen[i] === false) || unread.includes(name));
    const fill = known ? colourOf(symbol, colours) : "#3a3a3a";
    const description = (known ? `${colourName(symbol)} (${symbol})` : "not known")
      + (inferred ? ", inferred (not seen)" : "") + (byHand ? ", set by hand" : "");
    const sticker = el(onPick ? "button" : "span", {
      class: "sticker" + (inferred ? " inferred" : "") + (byHand ? " corrected" : "") + (marked.includes(name) ? " marked" : "")
        + (selected === name ? " selected" : ""),
      type: onPick ? "button" : null,
      "data-facelet": name,
      "data-colour": known ? symbol : "?",
      "aria-label": `${name}: ${description}`,
      "aria-pressed": onPick ? String(selected === name) : null,
      title: `${name}: ${description}`,
      style: `grid-column: ${column * 2 + (i % 2) + 1}; grid-row: ${row * 2 + Math.floor((i % 4) / 2) + 1};`
        + ` background: ${fill}; color: ${ink(fill)};`,
      onclick: onPick ? () => onPick(i) : null,
    }, name + (inferred ? "*" : "") + (byHand ? "+" : "") + (known ? "" : "?"));
    container.append(sticker);
  }
}
