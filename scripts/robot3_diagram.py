#!/usr/bin/env python3
"""Draw docs/robot3.svg, the four-arm 3x3x3 robot's actions, from its profile (robot/plan3.py).

    python3 scripts/robot3_diagram.py            # rewrite docs/robot3.svg
    python3 scripts/robot3_diagram.py --check    # exit 1 if docs/robot3.svg is out of date

Four panels, the cube seen from above (U towards you): at rest, TURN, TILT, RESTORE.  Arm names,
pairs and every duration come from the robot3 profile (robot/plan3.py: config.yaml's robot3 layout,
robot.timing and the `motion` settings the firmware times its grippers by), so a change of layout or timing without a new picture fails tests/test_robot3_docs.py.  Deterministic
output (no dates), so the check is exact.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from robot import config as config_module  # noqa: E402
from robot.plan3 import Robot3Profile  # noqa: E402

OUTPUT = ROOT / "docs" / "robot3.svg"
FONT = "font-family='DejaVu Sans, Arial, sans-serif'"
PANEL_W, PANEL_H, CELL = 250, 330, 22
CLOSED, OPEN, BLOCKING, MOVING = "#495057", "#adb5bd", "#e67700", "#1c7ed6"
# Where each robot-frame face's arm sits in the top view: (dx, dy) from the cube centre.
SIDE = {"R": (1, 0), "L": (-1, 0), "F": (0, 1), "B": (0, -1)}


def text(x, y, s, size=12, anchor="middle", weight="normal", fill="#212529"):
    return (f"<text x='{x}' y='{y}' {FONT} font-size='{size}' text-anchor='{anchor}' "
            f"font-weight='{weight}' fill='{fill}'>{escape(s)}</text>")


def arm(cx, cy, face, state, label):
    """One arm: a bar pressed on its face (closed) or pulled back (open); colour = its state."""
    dx, dy = SIDE[face]
    gap = 16 if state == "open" else 0
    half = 1.5 * CELL
    length, width = 44, 34
    colour = {"closed": CLOSED, "open": OPEN, "blocking": BLOCKING, "moving": MOVING}[state]
    if dx:
        x = cx + dx * (half + gap) + (0 if dx > 0 else -length)
        shape = f"<rect x='{x}' y='{cy - width / 2}' width='{length}' height='{width}' rx='4' fill='{colour}'/>"
        lx, ly = cx + dx * (half + gap + length / 2), cy + 4
    else:
        y = cy + dy * (half + gap) + (0 if dy > 0 else -length)
        shape = f"<rect x='{cx - width / 2}' y='{y}' width='{width}' height='{length}' rx='4' fill='{colour}'/>"
        lx, ly = cx, cy + dy * (half + gap + length / 2) + 4
    return shape + text(lx, ly, label, 11, weight="bold", fill="white")


def cube(cx, cy, shade=None):
    """The U face as a 3x3 grid; `shade` = a side whose layer is drawn turning."""
    parts = []
    for row in range(3):
        for col in range(3):
            x, y = cx + (col - 1.5) * CELL, cy + (row - 1.5) * CELL
            on = shade and (("R" in shade and col == 2) or ("L" in shade and col == 0)
                            or ("F" in shade and row == 2) or ("B" in shade and row == 0) or shade == "all")
            fill = "#a5d8ff" if on else "#f8f9fa"
            parts.append(f"<rect x='{x}' y='{y}' width='{CELL}' height='{CELL}' fill='{fill}' stroke='#343a40'/>")
    parts.append(text(cx, cy + 4, "U", 11, fill="#868e96"))
    return "".join(parts)


def panel(index, title, states, shade, lines):
    x0 = 10 + index * (PANEL_W + 10)
    cx, cy = x0 + PANEL_W / 2, 150
    out = [f"<rect x='{x0}' y='10' width='{PANEL_W}' height='{PANEL_H}' rx='8' fill='white' stroke='#ced4da'/>",
           text(cx, 34, title, 14, weight="bold"), cube(cx, cy, shade)]
    for face, (state, label) in states.items():
        out.append(arm(cx, cy, face, state, label))
    for k, line in enumerate(lines):
        out.append(text(cx, 262 + 16 * k, line, 11))
    return "".join(out)


def draw(profile: Robot3Profile) -> str:
    (p1, (a1, b1)), (p2, (a2, b2)) = profile.pairs
    q, h = profile.quarter_turn_ms, profile.half_turn_ms
    o, c = profile.open_ms_of((a1, b1)), profile.close_ms_of((a1, b1))  # the tilt's opening pair
    o2, c2 = profile.open_ms_of((a2, b2)), profile.close_ms_of((a2, b2))  # the restoring pair
    rest = {f: ("closed", f"{f} 0") for f in profile.arms}
    panels = [
        panel(0, "at rest", {**rest, a2: ("blocking", f"{a2} 90")}, None,
              [f"pairs {p1} ({a1} {b1}) and {p2} ({a2} {b2})", "every arm closed; gripper at 0 or 90",
               f"{a2} at 90 (orange) blocks turns of", f"{a1} and {b1}: only {a2}/{b2} may turn"]),
        panel(1, f"TURN ({a1} and/or {b1})", {**rest, a1: ("moving", f"{a1}"), b1: ("moving", f"{b1}")}, a1 + b1,
              [f"{p2} closed, both at 0: holds", f"{a1}/{b1} turn their layers: {q} ms (90)",
               f"or {h} ms (180); both at once:", "the slower one", f"then {a1}/{b1} sit at 90 after a 90"]),
        panel(2, f"TILT (by {p2})", {a1: ("open", a1), b1: ("open", b1), a2: ("moving", a2), b2: ("moving", b2)},
              "all",
              [f"{p1} opens ({o} ms), {a2} and {b2} turn", f"90 the same way ({q} ms): the whole",
               f"cube turns, U/D come to {a1}/{b1};", f"{p1} closes ({c} ms): {o + q + c} ms",
               f"{a2}/{b2} now at 90: they block {p1}"]),
        panel(3, f"RESTORE ({a2}, {b2})", {a1: ("closed", f"{a1} 0"), b1: ("closed", f"{b1} 0"),
                                          a2: ("open", f"{a2} 90"), b2: ("open", f"{b2} 90")}, None,
              [f"an arm opens ({o2} ms), turns back", f"to 0 ({q} ms), closes ({c2} ms):",
               f"{o2 + q + c2} ms; the opposite arm", "may restore at the same time"]),
    ]
    width = 4 * (PANEL_W + 10) + 10
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{PANEL_H + 20}' "
            f"viewBox='0 0 {width} {PANEL_H + 20}'>\n<rect width='100%' height='100%' fill='#f1f3f5'/>\n"
            + "\n".join(panels) + "\n</svg>\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=None, help="config file (default: config.yaml)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="SVG to write (default: docs/robot3.svg)")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the SVG is out of date")
    args = parser.parse_args(argv)
    svg = draw(Robot3Profile.from_config(config_module.load(args.config)))
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current != svg:
            print(f"{args.output} is out of date: run python3 scripts/robot3_diagram.py", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(svg)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
