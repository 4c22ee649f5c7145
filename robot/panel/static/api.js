// The page's one way to talk to the panel: JSON GETs, POSTs with the client header, errors shown
// next to the input or button that caused them.

const CLIENT_KEY = "cube-robot-client";

function newClientId() {
  // crypto.getRandomValues works on plain http too (a phone on the LAN); randomUUID needs https.
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  return "tab-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export const clientId = (() => {
  let id = sessionStorage.getItem(CLIENT_KEY);
  if (!id) {
    id = newClientId();
    sessionStorage.setItem(CLIENT_KEY, id);
  }
  return id;
})();

// A token given in the page's URL (a non-loopback bind) goes with every request too, in case the
// cookie was refused.
const token = new URLSearchParams(location.search).get("token");

export function withToken(path) {
  if (!token) return path;
  return path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
}

function headers(extra) {
  const h = Object.assign({}, extra);
  if (token) h["X-Cube-Robot-Token"] = token;
  return h;
}

async function answer(response) {
  let data = null;
  try {
    data = await response.json();
  } catch (e) {
    data = { error: `the panel answered ${response.status} without JSON` };
  }
  return { ok: response.ok, status: response.status, data };
}

export async function getJSON(path) {
  try {
    // The client header on a GET too: the state says whether this tab controls the robot.
    return await answer(await fetch(withToken(path), { headers: headers({ "X-Cube-Robot-Client": clientId }),
      cache: "no-store" }));
  } catch (e) {
    return { ok: false, status: 0, data: { error: `the panel did not answer (${e.message})` } };
  }
}

export async function postJSON(path, body = {}) {
  try {
    const response = await fetch(withToken(path), {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", "X-Cube-Robot-Client": clientId }),
      body: JSON.stringify(body),
    });
    return await answer(response);
  } catch (e) {
    return { ok: false, status: 0, data: { error: `the panel did not answer (${e.message})` } };
  }
}

export function fetchStream(path, signal) {
  return fetch(withToken(path), { headers: headers(), cache: "no-store", signal });
}

export function eventsURL() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return withToken(`${scheme}//${location.host}/api/events?client=${encodeURIComponent(clientId)}`);
}

// Show an API error in `section`: next to the element marked data-field=<the error's field> when
// there is one, else in the section's error line (both are announced).
export function showError(section, result, fallbackField) {
  clearErrors(section);
  const data = result.data || {};
  const text = data.error || `refused (${result.status})`;
  const field = data.field || fallbackField;
  const target = field ? section.querySelector(`[data-field="${CSS.escape(field)}"]`) : null;
  if (target) {
    target.setAttribute("aria-invalid", "true");
    target.insertAdjacentElement("afterend", el("p", { class: "field-error", role: "alert", text }));
  } else {
    const line = section.querySelector(".errors");
    if (line) line.textContent = text;
  }
  return text;
}

export function clearErrors(section) {
  section.querySelectorAll(".field-error").forEach((n) => n.remove());
  section.querySelectorAll("[aria-invalid]").forEach((n) => n.removeAttribute("aria-invalid"));
  const line = section.querySelector(".errors");
  if (line) line.textContent = "";
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const SVG = "http://www.w3.org/2000/svg";

// An SVG element (the charts and the waterfall).
export function svg(tag, attrs = {}, text = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}
