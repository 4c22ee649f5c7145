// The live camera: /api/camera.mjpeg read with fetch() and parsed part by part, the newest JPEG drawn
// to a canvas. Frames that arrive while one decodes are skipped (only the newest waits), so the view
// never builds up delay the way a plain <img> MJPEG stream can.

import { fetchStream } from "./api.js";

const CRLF2 = [13, 10, 13, 10];

// Measured in the page; the tests and the benchmark read it.
export const live = { fps: 0, ageMs: null, frames: 0, lastIndex: null, drawn: 0, skipped: 0 };
window.panelLive = live;

function indexOf(buffer, length, pattern, from) {
  const first = pattern[0];
  const last = length - pattern.length;
  for (let i = Math.max(0, from); i <= last; i++) {
    if (buffer[i] !== first) continue;
    let j = 1;
    while (j < pattern.length && buffer[i + j] === pattern[j]) j++;
    if (j === pattern.length) return i;
  }
  return -1;
}

// A growing byte buffer the parser consumes from the front.
class Bytes {
  constructor() {
    this.data = new Uint8Array(1 << 16);
    this.length = 0;
  }
  push(chunk) {
    if (this.length + chunk.length > this.data.length) {
      const bigger = new Uint8Array(Math.max(this.data.length * 2, this.length + chunk.length));
      bigger.set(this.data.subarray(0, this.length));
      this.data = bigger;
    }
    this.data.set(chunk, this.length);
    this.length += chunk.length;
  }
  drop(count) {
    this.data.copyWithin(0, count, this.length);
    this.length -= count;
  }
}

export class MultipartParser {
  // onPart(headers: Map lower-case name -> value, body: Uint8Array)
  constructor(boundary, onPart) {
    this.delimiter = new TextEncoder().encode("--" + boundary);
    this.next = new TextEncoder().encode("\r\n--" + boundary);
    this.onPart = onPart;
    this.bytes = new Bytes();
    this.headers = null; // the current part's headers once read
  }
  push(chunk) {
    this.bytes.push(chunk);
    while (this.step()) { /* parse every whole part received */ }
  }
  step() {
    const b = this.bytes;
    if (this.headers === null) {
      const start = indexOf(b.data, b.length, this.delimiter, 0);
      if (start < 0) return false;
      const end = indexOf(b.data, b.length, CRLF2, start);
      if (end < 0) return false;
      const text = new TextDecoder().decode(b.data.subarray(start + this.delimiter.length, end));
      this.headers = new Map();
      for (const line of text.split("\r\n")) {
        const colon = line.indexOf(":");
        if (colon > 0) this.headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      b.drop(end + 4);
      return true;
    }
    const declared = parseInt(this.headers.get("content-length"), 10);
    let size;
    if (Number.isFinite(declared)) {
      if (b.length < declared) return false;
      size = declared;
    } else {
      size = indexOf(b.data, b.length, this.next, 0);
      if (size < 0) return false;
    }
    const body = b.data.slice(0, size);
    const headers = this.headers;
    this.headers = null;
    b.drop(size);
    this.onPart(headers, body);
    return true;
  }
}

export function startLive(canvas, status) {
  const context = canvas.getContext("2d");
  const arrivals = []; // page times of the frames received in the last two seconds
  let pending = null; // the newest frame waiting for the decoder
  let decoding = false;
  let controller = null;
  let retry = null;
  let lastShown = 0;

  function measure(headers) {
    const now = performance.now();
    live.frames += 1;
    const index = parseInt(headers.get("x-frame-index"), 10);
    if (Number.isFinite(index)) live.lastIndex = index;
    const exposureEnd = parseFloat(headers.get("x-exposure-end"));
    live.ageMs = Number.isFinite(exposureEnd) ? Date.now() - exposureEnd : null;
    arrivals.push(now);
    while (arrivals.length && arrivals[0] < now - 2000) arrivals.shift();
    live.fps = arrivals.length > 1 ? ((arrivals.length - 1) * 1000) / (now - arrivals[0]) : 0;
    if (now - lastShown > 250) {
      lastShown = now;
      const age = live.ageMs === null ? "unknown" : `${Math.round(live.ageMs)} ms`;
      status.textContent = `${live.fps.toFixed(1)} frames/s, frame age ${age}, frame ${live.lastIndex ?? "?"}`;
    }
  }

  async function draw() {
    decoding = true;
    while (pending) {
      const frame = pending;
      pending = null;
      try {
        const bitmap = await createImageBitmap(new Blob([frame], { type: "image/jpeg" }));
        if (canvas.width !== bitmap.width || canvas.height !== bitmap.height) {
          canvas.width = bitmap.width;
          canvas.height = bitmap.height;
        }
        context.drawImage(bitmap, 0, 0);
        bitmap.close();
        live.drawn += 1;
        canvas.dataset.frames = String(live.drawn);
      } catch (e) {
        status.textContent = `a frame could not be decoded (${e.message})`;
      }
    }
    decoding = false;
  }

  function onPart(headers, body) {
    measure(headers);
    if (pending) live.skipped += 1;
    pending = body;
    if (!decoding) draw();
  }

  async function run() {
    controller = new AbortController();
    try {
      const response = await fetchStream("/api/camera.mjpeg", controller.signal);
      if (!response.ok) {
        let why = `${response.status}`;
        try { why = (await response.json()).error || why; } catch (e) { /* not JSON */ }
        throw new Error(`the camera stream was refused: ${why}`);
      }
      const type = response.headers.get("Content-Type") || "";
      const match = /boundary="?([^";]+)"?/i.exec(type);
      if (!match) throw new Error(`the camera stream is not multipart (${type})`);
      const parser = new MultipartParser(match[1], onPart);
      const reader = response.body.getReader();
      status.textContent = "waiting for the first frame";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.push(value);
      }
      status.textContent = "the camera stream ended; reconnecting";
    } catch (e) {
      if (e.name === "AbortError") return;
      status.textContent = `no live view: ${e.message}; retrying`;
    }
    retry = setTimeout(run, 2000);
  }

  function stop() {
    clearTimeout(retry);
    if (controller) controller.abort();
  }

  // A hidden tab does not stream (it would only cost the robot's computer).
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) {
      stop();
      status.textContent = "paused while the page is hidden";
    } else {
      run();
    }
  });
  run();
}
