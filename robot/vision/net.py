"""Pictures of a cube net (PNG, drawn with OpenCV).

The 24 stickers on the standard cross net, each face row-major as in the
facelet order (robot.cube):

            U
        L   F   R   B
            D

Doubtful stickers get a thick magenta frame and a '?', so a person sees at
once which stickers to check; stickers inferred rather than seen (read past by
the decoder, or shown by no view) a cyan frame and a '*', explained below the
net.  Usage:

    image = draw_net("UUUURRRRFFFFDDDDLLLLBBBB")            # BGR uint8 array
    save_net(decode_result, "net.png")                       # decoded colours
    save_net(vision_error_readings, "net.png", doubtful=["F3"])
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..cube import FACELET_COUNT, FACES, facelet_name

# Where each face sits on the net, in face units (column, row).
NET_POSITIONS = {"U": (1, 0), "L": (0, 1), "F": (1, 1), "R": (2, 1), "B": (3, 1), "D": (1, 2)}
# Colours of the usual scheme (sRGB), used when only letters are known.
DEFAULT_PALETTE = {
    "U": (245, 245, 245), "R": (200, 20, 30), "F": (20, 160, 60),
    "D": (250, 215, 0), "L": (255, 120, 0), "B": (20, 60, 200),
}
# Colour letters (as in the help's example wwwwrrrrggggyyyyoooobbbb), either case: the same colours.
COLOUR_LETTERS = {"w": "U", "r": "R", "g": "F", "y": "D", "o": "L", "b": "B"}
for _letter, _face in COLOUR_LETTERS.items():
    DEFAULT_PALETTE.setdefault(_letter, DEFAULT_PALETTE[_face])
    DEFAULT_PALETTE.setdefault(_letter.upper(), DEFAULT_PALETTE[_face])
BACKGROUND = (40, 40, 40)  # BGR
DOUBT = (255, 0, 255)  # BGR magenta: unlike any sticker colour
INFERRED = (255, 255, 0)  # BGR cyan: unlike any sticker colour and unlike DOUBT
INFERRED_NOTE = "* inferred (not seen): the rest of the cube decides it"


def draw_net(facelets: str | None = None, colours: dict | None = None, rgb=None, doubtful=(),
             labels: bool = True, sticker_px: int = 48, inferred=()) -> np.ndarray:
    """The net as a BGR image.

    facelets: 24 letters (any 6 symbols); colours: symbol -> (R, G, B) for
    them (default: the usual scheme for URFDLB and the colour letters wrgyob, grey otherwise).  rgb: (24, 3)
    readings to paint instead (e.g. when decoding failed).  doubtful: facelet
    names to highlight.  labels: write each facelet's name (and letter).  inferred:
    facelet names whose colour was inferred, not seen (framed cyan, '*', explained below the net).
    """
    import cv2

    if facelets is None and rgb is None:
        raise ValueError("draw_net needs facelets or rgb readings")
    if facelets is not None and len(facelets) != FACELET_COUNT:
        raise ValueError(f"expected 24 facelets, got {len(facelets)}: {facelets!r}")
    if rgb is not None:
        fills = np.asarray(rgb, dtype=float).reshape(FACELET_COUNT, 3)
    else:
        assert facelets is not None  # one of the two was checked above
        palette = colours or DEFAULT_PALETTE
        fills = np.array([palette.get(c, (128, 128, 128)) for c in facelets], dtype=float)
    doubtful, inferred = set(doubtful), set(inferred) - set(doubtful)
    gap = max(2, sticker_px // 16)
    margin = sticker_px // 2
    face_px = 2 * sticker_px + 3 * gap
    note_px = sticker_px // 2 if inferred else 0  # a line below the net explaining the '*'
    image = np.full((3 * face_px + 2 * margin + note_px, 4 * face_px + 2 * margin, 3), BACKGROUND, dtype=np.uint8)
    for index in range(FACELET_COUNT):
        face, within = FACES[index // 4], index % 4
        column, row = NET_POSITIONS[face]
        x = margin + column * face_px + gap + (within % 2) * (sticker_px + gap)
        y = margin + row * face_px + gap + (within // 2) * (sticker_px + gap)
        r, g, b = (int(round(v)) for v in np.clip(fills[index], 0, 255))
        cv2.rectangle(image, (x, y), (x + sticker_px - 1, y + sticker_px - 1), (b, g, r), thickness=-1)
        name = facelet_name(index)
        if name in doubtful:
            cv2.rectangle(image, (x, y), (x + sticker_px - 1, y + sticker_px - 1), DOUBT,
                          thickness=max(3, sticker_px // 10))
        if name in inferred:
            cv2.rectangle(image, (x, y), (x + sticker_px - 1, y + sticker_px - 1), INFERRED,
                          thickness=max(2, sticker_px // 16))
        if labels or name in doubtful or name in inferred:
            ink = (0, 0, 0) if 0.299 * r + 0.587 * g + 0.114 * b > 110 else (255, 255, 255)
            text = name + (f" {facelets[index]}" if labels and facelets is not None else "")
            if name in doubtful:
                text += " ?"
            elif name in inferred:
                text += " *"
            scale = sticker_px / 110
            cv2.putText(image, text, (x + 4, y + sticker_px // 2 + 4), cv2.FONT_HERSHEY_SIMPLEX, scale, ink,
                        1, cv2.LINE_AA)
    if inferred:
        cv2.putText(image, INFERRED_NOTE, (margin, image.shape[0] - note_px // 2), cv2.FONT_HERSHEY_SIMPLEX,
                    sticker_px / 110, INFERRED, 1, cv2.LINE_AA)
    return image


def net_for(source, **options) -> np.ndarray:
    """draw_net for a DecodeResult, a scan result (.decoded / .readings / .error), a facelet string, or None
    (then `options` are draw_net's arguments)."""
    if source is None:
        return draw_net(**options)
    decoded = getattr(source, "decoded", source)
    if isinstance(source, str):
        return draw_net(source, **options)
    if decoded is not None and hasattr(decoded, "facelets"):
        doubtful = options.pop("doubtful", ())
        inferred = options.pop("inferred", None)
        if inferred is None:  # read past by the decoder, or on no view of a scan that stopped early
            samples = getattr(getattr(source, "readings", None), "samples", None) or ()
            inferred = set(getattr(decoded, "unread", ())) | {
                facelet_name(i) for i, sample in enumerate(samples) if sample is None}
        return draw_net(decoded.facelets, colours=decoded.centres_rgb, doubtful=doubtful, inferred=inferred,
                        **options)
    readings = getattr(source, "readings", None)
    rgb = getattr(readings, "rgb", readings)
    error = getattr(source, "error", None)
    doubtful = options.pop("doubtful", ()) or getattr(error, "stickers", ())
    return draw_net(rgb=rgb, doubtful=doubtful, **options)


def save_net(source, path, **options) -> Path:
    """Write net_for(source) as a PNG (creating the folder).  Raises OSError if it cannot be written."""
    import cv2

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    image = net_for(source, **options)
    try:
        written = cv2.imwrite(str(path), image)
    except cv2.error:  # OpenCV raises for a name it has no writer for (e.g. x.jpgx)
        written = False
    if not written:
        raise OSError(f"could not write the net picture {path} (is the name a .png, and the folder writable?)")
    return path
