// The cube's net (Kociemba's facelet order U R F D L B, each face 2x2 row-major) drawn as the usual
// cross, as robot/vision/net.py draws it:
//         U
//     L   F   R   B
//         D

import { el } from "./api.js";

export const FACES = "URFDLB";
const NET_POSITIONS = { U: [1, 0], L: [0, 1], F: [1, 1], R: [2, 1], B: [3, 1], D: [1, 2] };
// The colours drawn when the scan gave none: a stand-in per face letter (the usual scheme), never named
// as a colour (a face letter names whichever colour the decoder called that face).
const PALETTE = {
  U: "#f5f5f5", R: "#c8141e", F: "#14a03c", D: "#fad700", L: "#ff7800", B: "#143cc8",
};
// The colour letters (wrgyob) of `cube-robot solve`: they do name a colour.
const COLOUR_LETTERS = { w: "U", r: "R", g: "F", y: "D", o: "L", b: "B" };
const LETTER_NAMES = { w: "white", r: "red", g: "green", y: "yellow", o: "orange", b: "blue" };

export function faceletName(index) {
  return FACES[Math.floor(index / 4)] + String((index % 4) + 1);
}

function seenRGB(symbol, seen) {
  const rgb = seen && seen[symbol];
  return Array.isArray(rgb) && rgb.length === 3 && rgb.every((v) => Number.isFinite(Number(v))) ? rgb.map(Number) : null;
}

// A symbol's colour: as the scan saw it when given (seen: letter -> [r, g, b]), else a stand-in.
export function colourOf(symbol, seen = null) {
  const rgb = seenRGB(symbol, seen);
  if (rgb) {
    return "#" + rgb.map((v) => Math.max(0, Math.min(255, Math.round(v))).toString(16).padStart(2, "0")).join("");
  }
  if (PALETTE[symbol]) return PALETTE[symbol];
  const face = COLOUR_LETTERS[symbol.toLowerCase()];
  return face ? PALETTE[face] : "#808080";
}

// The nearest of the six cube colours to an [r, g, b] (0..255), by hue, saturation and lightness.
export function rgbName(rgb) {
  const [r, g, b] = rgb.map((v) => Math.max(0, Math.min(255, v)) / 255);
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const chroma = max - min;
  if (max === 0 || chroma / max < 0.25) return "white"; // a grey under a dim light is the white sticker too
  let hue;
  if (max === r) hue = (60 * ((g - b) / chroma) + 360) % 360;
  else if (max === g) hue = 60 * ((b - r) / chroma) + 120;
  else hue = 60 * ((r - g) / chroma) + 240;
  if (hue < 15 || hue >= 300) return "red";
  if (hue < 42) return "orange";
  if (hue < 75) return "yellow";
  if (hue < 165) return "green";
  return "blue";
}

// A symbol in words: the scan's colour named from what it saw, and always the letter said.
// "green (face F's colour)"; with no colour seen, only "face F's colour".
export function colourName(symbol, seen = null) {
  const rgb = seenRGB(symbol, seen);
  if (FACES.includes(symbol)) {
    return rgb ? `${rgbName(rgb)} (face ${symbol}'s colour)` : `face ${symbol}'s colour`;
  }
  const named = LETTER_NAMES[symbol.toLowerCase()];
  if (named) return `${named} (${symbol})`;
  return rgb ? `${rgbName(rgb)} (colour ${symbol})` : `colour ${symbol}`;
}

// The plain name of the colour the scan saw for a symbol, or "" when it gave none.
export function seenName(symbol, seen = null) {
  const rgb = seenRGB(symbol, seen);
  return rgb ? rgbName(rgb) : "";
}

// A check's message with each quoted face letter explained: "colour 'R' appears 5 times" ->
// "colour 'R' (green) appears 5 times".
export function explainLetters(text, seen = null) {
  return text.replace(/'([URFDLB])'/g, (quoted, symbol) => {
    const rgb = seenRGB(symbol, seen);
    return rgb ? `${quoted} (${rgbName(rgb)})` : quoted;
  });
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
    const description = (known ? colourName(symbol, colours) : "not known")
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
