#!/usr/bin/env python3
"""Draw docs/wiring.svg, the robot's wiring diagram, from firmware/cube_robot/pins.h.

    python3 scripts/wiring_diagram.py            # rewrite docs/wiring.svg
    python3 scripts/wiring_diagram.py --check    # exit 1 if docs/wiring.svg is out of date

Which Uno pin carries which signal comes only from pins.h (parsed by robot/sim/pinlog.py, the one
reader of that file; standard library only).  This script knows what each signal is wired TO (a
driver's STEP input, a servo's signal lead, a switch); a pin it does not know is still drawn, to a
box named after it, so the picture never hides a pin.  tests/test_wiring_docs.py fails when pins.h
changed and the picture did not.  The output is deterministic (no dates), so the check is exact.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from robot.sim.pinlog import PINS_H, Pin, load_pin_map  # noqa: E402  (stdlib only)

OUTPUT = ROOT / "docs" / "wiring.svg"

ARMS = ("R", "L", "F", "B")
UNO_PINS = [f"D{n}" for n in range(14)] + [f"A{n}" for n in range(6)]
USB_SERIAL = {"D0": "RX (USB serial)", "D1": "TX (USB serial)"}
COLOURS = {"STEP": "#d9480f", "DIR": "#1c7ed6", "ENABLE": "#7048e8", "SERVO": "#e67700",
           "ESTOP": "#c92a2a", "START": "#2b8a3e", "HOME": "#0c8599", "other": "#495057"}
PITCH = 26  # px between rows; Uno pins sit on even half-rows, device terminals on odd ones
TOP = 150
UNO_X, UNO_W = 40, 200
HEADER_X = UNO_X + UNO_W
CHANNEL_X0, CHANNEL_STEP = HEADER_X + 50, 13
DEVICE_X, DEVICE_W = 560, 270
NOTE_X = DEVICE_X + DEVICE_W + 20
FONT = "font-family='DejaVu Sans, Arial, sans-serif'"


def uno_pin(pin: Pin) -> str:
    """The Uno header name of an ATmega328P port pin (PD2 -> D2, PB0 -> D8, PC0 -> A0)."""
    if pin.port == "D":
        return f"D{pin.bit}"
    if pin.port == "B" and pin.bit <= 5:
        return f"D{pin.bit + 8}"
    if pin.port == "C" and pin.bit <= 5:
        return f"A{pin.bit}"
    raise ValueError(f"PIN_{pin.name} is {pin.port}{pin.bit}, which is not on the Uno's headers")


@dataclass
class Device:
    title: str
    terminals: list[str]  # wired inputs, top to bottom (the signal names from pins.h they take)
    labels: dict[str, str]  # terminal -> text drawn at it
    notes: list[str] = field(default_factory=list)  # other connections, as net labels
    top: int = 0

    @property
    def rows(self) -> int:
        return max(len(self.terminals), len(self.notes)) + 1  # + the title row

    def terminal_y(self, signal: str) -> int:
        return self.top + PITCH + PITCH // 2 + PITCH * self.terminals.index(signal)


def devices_for(pins: dict[str, Pin]) -> list[Device]:
    """What each signal is wired to; unknown signals get a box of their own."""
    devices = []
    known = set()

    def add(device: Device):
        present = [t for t in device.terminals if t in pins]
        if present or not device.terminals:
            device.terminals = present
            devices.append(device)
            known.update(present)

    add(Device("E-stop switch (normally open)", ["ESTOP"], {"ESTOP": "contact 1"},
               ["contact 2 -> GND", "pressed = pin low: latches an alarm"]))
    add(Device("Start button (normally open)", ["START"], {"START": "contact 1"}, ["contact 2 -> GND"]))
    for arm in ARMS:
        add(Device(f"Stepper driver {arm} (A4988 / DRV8825)", [f"STEP_{arm}", f"DIR_{arm}", "ENABLE"],
                   {f"STEP_{arm}": "STEP", f"DIR_{arm}": "DIR", "ENABLE": "EN (active low)"},
                   ["VMOT -> stepper supply +  (100 uF across VMOT-GND)", "GND -> common GND",
                    f"1A 1B = coil 1, 2A 2B = coil 2 of motor {arm}",
                    "MS1 H, MS2 L, MS3 L = half step (400 steps/rev)", "RST -> SLP (RST must not float)",
                    "A4988 only: VDD -> Uno 5V (logic, a few mA)"]))
    for arm in ARMS:
        add(Device(f"Gripper servo {arm}", [f"SERVO_{arm}"], {f"SERVO_{arm}": "signal (orange/yellow)"},
                   ["+ (red) -> servo supply + (5-6 V)", "- (brown/black) -> common GND"]))
    add(Device("Homing sensors (reserved, unused)", ["HOME"], {"HOME": "OUT (open collector)"},
               ["one per arm, outputs in parallel, active low", "sensor power: Uno 5V and GND"]))
    for name in pins:
        if name not in known and name != "LED":  # the LED is on the Uno board itself
            add(Device(f"{name} (not described in wiring_diagram.py)", [name], {name: name}))
    return devices


@dataclass
class Wire:
    signal: str
    pin_y: int
    term_ys: list[int]
    colour: str
    channel_x: int = 0

    @property
    def span(self) -> tuple[int, int]:
        ys = [self.pin_y, *self.term_ys]
        return min(ys), max(ys)


def crossings(wires: list[Wire]) -> int:
    """Crossings of one wire's horizontals with the others' verticals, for channel order `wires`."""
    count = 0
    for i, a in enumerate(wires):
        for j, b in enumerate(wires):
            if i == j:
                continue
            lo, hi = b.span
            if j > i:  # b's vertical lies right of a's: a's terminal horizontals cross it
                count += sum(lo < y < hi for y in a.term_ys)
            else:  # b's vertical lies left of a's: a's pin horizontal crosses it
                count += lo < a.pin_y < hi
    return count


def colour(signal: str) -> str:
    return COLOURS.get(signal.split("_")[0], COLOURS["other"])


def text(x, y, s, size=12, anchor="start", weight="normal", fill="#212529") -> str:
    return (f"<text x='{x}' y='{y}' {FONT} font-size='{size}' text-anchor='{anchor}' "
            f"font-weight='{weight}' fill='{fill}'>{escape(s)}</text>")


def render(pins_path: Path = PINS_H) -> str:
    pins = load_pin_map(pins_path)
    by_uno = {}
    for name, pin in pins.items():
        by_uno.setdefault(uno_pin(pin), []).append(name)
    shared = {u: names for u, names in by_uno.items() if len(names) > 1}
    if shared:
        raise ValueError(f"{pins_path}: one Uno pin carries several signals: {shared}")
    signal_at = {u: names[0] for u, names in by_uno.items()}
    rows = UNO_PINS + ["5V", "GND"]
    pin_y = {u: TOP + PITCH * i for i, u in enumerate(rows)}

    devices = devices_for(pins)
    y = TOP - PITCH
    for d in devices:
        d.top = y
        y += PITCH * (d.rows + 1)
    height = max(y, pin_y["GND"] + 4 * PITCH) + 230

    wires = []
    for u, signal in signal_at.items():
        ends = [d.terminal_y(signal) for d in devices if signal in d.terminals]
        if ends:
            wires.append(Wire(signal, pin_y[u], ends, colour(signal)))
    # Channel order: the fewest crossings among a few simple orders (deterministic).
    orders = [sorted(wires, key=key, reverse=rev)
              for key in (lambda w: w.pin_y, lambda w: min(w.term_ys), lambda w: w.span[1] - w.span[0])
              for rev in (False, True)]
    wires = min(orders, key=crossings)
    for i, w in enumerate(wires):
        w.channel_x = CHANNEL_X0 + CHANNEL_STEP * i

    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{NOTE_X + 330}' height='{height}' "
           f"viewBox='0 0 {NOTE_X + 330} {height}'>",
           f"<rect width='100%' height='100%' fill='white'/>",
           text(UNO_X, 34, "cube-robot wiring", 20, weight="bold"),
           text(UNO_X, 56, f"Generated from firmware/cube_robot/pins.h by scripts/wiring_diagram.py "
                           f"(do not edit by hand).  Signals: {len(pins)} pins of the Uno's 18 free ones.", 12),
           text(UNO_X, 74, "Net labels (-> GND, -> servo supply +) mean a wire to that net.  "
                           "See docs/hardware.md for power, current limits and microstepping.", 12)]

    # The Uno and its header.
    uno_top, uno_bottom = TOP - 2 * PITCH, pin_y["GND"] + PITCH
    out.append(f"<rect x='{UNO_X}' y='{uno_top}' width='{UNO_W}' height='{uno_bottom - uno_top}' rx='8' "
               f"fill='#e7f5ff' stroke='#1864ab' stroke-width='2'/>")
    out.append(text(UNO_X + 14, uno_top + 20, "Arduino Uno", 13, weight="bold"))
    out.append(text(UNO_X + 14, uno_top + 36, "USB to the host: power + serial", 11, fill="#495057"))
    for u in rows:
        yy = pin_y[u]
        signal = signal_at.get(u)
        if u in USB_SERIAL:
            note, fill = USB_SERIAL[u], "#868e96"
        elif signal == "LED":
            note, fill = "LED (on-board)", "#212529"
        elif signal:
            note, fill = signal, colour(signal)
        elif u in ("5V", "GND"):
            note, fill = {"5V": "logic only: never servos", "GND": "common GND"}[u], "#212529"
        else:
            note, fill = "free", "#adb5bd"
        out.append(f"<circle cx='{HEADER_X}' cy='{yy}' r='4' fill='{fill}'/>")
        out.append(text(HEADER_X - 10, yy + 4, u, 12, anchor="end", weight="bold"))
        out.append(text(HEADER_X - 44, yy + 4, note, 11, anchor="end", fill=fill))

    # Wires: along the pin's row, down/up a channel of their own, along the terminal's row.
    for w in wires:
        x = w.channel_x
        lo, hi = w.span
        style = f"stroke='{w.colour}' stroke-width='2' fill='none'"
        out.append(f"<polyline points='{HEADER_X},{w.pin_y} {x},{w.pin_y}' {style}/>")
        out.append(f"<polyline points='{x},{lo} {x},{hi}' {style}/>")
        for ty in w.term_ys:
            out.append(f"<polyline points='{x},{ty} {DEVICE_X},{ty}' {style}/>")
            if len(w.term_ys) > 1:
                out.append(f"<circle cx='{x}' cy='{ty}' r='3.5' fill='{w.colour}'/>")

    # Devices.
    for d in devices:
        h = PITCH * (len(d.terminals) + 1) + PITCH // 2
        out.append(f"<rect x='{DEVICE_X}' y='{d.top + 4}' width='{DEVICE_W}' height='{h}' rx='6' "
                   f"fill='#f8f9fa' stroke='#495057' stroke-width='1.5'/>")
        out.append(text(DEVICE_X + 10, d.top + 22, d.title, 12, weight="bold"))
        for signal in d.terminals:
            ty = d.terminal_y(signal)
            out.append(f"<circle cx='{DEVICE_X}' cy='{ty}' r='4' fill='{colour(signal)}'/>")
            out.append(text(DEVICE_X + 10, ty + 4, d.labels.get(signal, signal), 11))
        for k, note in enumerate(d.notes):
            out.append(text(NOTE_X, d.top + PITCH + PITCH // 2 + PITCH * k + 4, note, 11, fill="#343a40"))

    # Power and the common ground.
    py = height - 200
    out.append(text(UNO_X, py, "Power", 15, weight="bold"))
    supplies = [
        ("Stepper supply 12-24 V DC", ["12 V, >= 3 A for four NEMA 17", "+ -> every driver's VMOT",
                                       "- -> common GND"], "#fff4e6", "#d9480f"),
        ("Servo supply 5-6 V DC", ["its own supply or BEC, >= 1 A per servo", "+ -> every servo's red lead",
                                   "- -> common GND", "NEVER the Uno's 5V pin"], "#fff9db", "#e67700"),
        ("Host USB cable", ["powers the Uno (and A4988 VDD)", "serial link at 115200 baud"],
         "#e7f5ff", "#1864ab"),
    ]
    x = UNO_X
    for title, lines, fill, stroke in supplies:
        out.append(f"<rect x='{x}' y='{py + 14}' width='290' height='{28 + 18 * len(lines)}' rx='6' "
                   f"fill='{fill}' stroke='{stroke}' stroke-width='2'/>")
        out.append(text(x + 10, py + 34, title, 12, weight="bold"))
        for k, line in enumerate(lines):
            out.append(text(x + 10, py + 54 + 18 * k, line, 11,
                            weight="bold" if line.startswith("NEVER") else "normal"))
        x += 310
    gy = py + 150
    out.append(f"<line x1='{UNO_X}' y1='{gy}' x2='{x - 20}' y2='{gy}' stroke='#212529' stroke-width='3'/>")
    out.append(text(UNO_X, gy + 22, "common GND: Uno GND, stepper supply -, servo supply -, every driver GND "
                                    "and servo - joined (star point near the drivers)", 12, weight="bold"))
    free = [u for u in UNO_PINS if u not in signal_at and u not in USB_SERIAL]
    out.append(text(UNO_X, gy + 42, f"Free Uno pins: {', '.join(free) or 'none'}.", 11, fill="#495057"))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pins", type=Path, default=PINS_H, help="pins.h to read (default: the firmware's)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="SVG to write (default: docs/wiring.svg)")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the SVG is out of date")
    args = parser.parse_args(argv)
    svg = render(args.pins)
    if args.check:
        current = args.output.read_text() if args.output.exists() else None
        if current != svg:
            print(f"{args.output} is out of date with {args.pins}: run python3 scripts/wiring_diagram.py",
                  file=sys.stderr)
            return 1
        print(f"{args.output} is up to date")
        return 0
    args.output.write_text(svg)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
