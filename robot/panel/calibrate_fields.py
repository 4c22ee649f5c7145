"""The calibration's request fields (pixels, stickers, quads; each refusal a 400 naming the field), the
JSON of what it measured, and the rule around each step (StepGuard)."""

from __future__ import annotations

import numpy as np

from .errors import RequestError


class StepGuard:
    """`with`: the session's lock, the client in control, no run going."""

    def __init__(self, session, client: str):
        self.session, self.client = session, client

    def __enter__(self) -> None:
        session = self.session
        session.lock.acquire()
        try:
            session.require_control(self.client)
            if session.run_state != "idle":
                raise RequestError(409, f"run {session.run_id} is going: the calibration waits until it ends")
        except BaseException:
            session.lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        self.session.lock.release()


def as_put_in(sequence, index: int) -> list[str]:
    """The stickers view `index` shows, named as the cube was put in (the face whose colour each shows on
    the solved cube); the view's own facelets name places in the robot frame after the turns before it."""
    from .. import cube

    tags = "".join(chr(0x100 + i) for i in range(cube.FACELET_COUNT))
    moved = cube.apply_moves(tags, sequence.moves_before(index))  # place -> the start facelet now there
    return [cube.facelet_name(ord(moved[cube.facelet_index(place)]) - 0x100)
            for place in sequence.views[index].facelets]


def sticker_index(sticker: object, facelets) -> int:
    if isinstance(sticker, bool):
        raise RequestError(400, "sticker: give a facelet name or a number, not true/false", "sticker")
    if isinstance(sticker, int) and 0 <= sticker < len(facelets):
        return sticker
    if isinstance(sticker, str) and sticker in facelets:
        return list(facelets).index(sticker)
    raise RequestError(400, f"sticker: {sticker!r} is not a sticker of this view ({' '.join(facelets)}, or 0.."
                            f"{len(facelets) - 1})", "sticker")


def finite(value: object, field_name: str, count: int) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise RequestError(400, f"{field_name}: numbers expected", field_name) from None
    if array.size != count or not np.isfinite(array).all() or has_bool(value):
        raise RequestError(400, f"{field_name}: expected {count} finite numbers in pixels", field_name)
    return array


def has_bool(value: object) -> bool:
    """JSON true/false are not pixels (numpy would take them as 1 and 0)."""
    if isinstance(value, (list, tuple)):
        return any(has_bool(item) for item in value)
    return isinstance(value, bool)


def offset_field(offset: object) -> np.ndarray:
    return finite(offset, "offset", 2).reshape(2)


def quad_field(quad: object) -> np.ndarray:
    array = finite(quad, "quad", 8).reshape(4, 2)
    x, y = array[:, 0], array[:, 1]
    area = 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))
    if area < 16.0:
        raise RequestError(400, f"quad: its corners enclose {area:.0f} square pixels: a region must cover part of "
                                "its sticker", "quad")
    return array


def within(quads: np.ndarray, size: tuple[int, int], field_name: str) -> None:
    width, height = size
    low, high = quads.reshape(-1, 2).min(axis=0), quads.reshape(-1, 2).max(axis=0)
    if low[0] < 0 or low[1] < 0 or high[0] > width or high[1] > height:
        raise RequestError(400, f"{field_name}: that puts a region outside the {width}x{height} picture", field_name)


def check_names(names: object) -> None:
    from .. import cube

    if not isinstance(names, dict) or any(k not in cube.FACES or not isinstance(v, str) or not v.strip()
                                          for k, v in names.items()):
        raise RequestError(400, "names: give {\"U\": \"white\", ...}: a face letter to a colour name", "names")


def same_cube(decoded: str, truth: str) -> bool:
    """The same stickers up to the letters' naming (the decoder names colours by its own scheme)."""
    pairs = set(zip(decoded, truth))
    return len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})


def sample_json(sample) -> dict:
    return {"rgb": [int(round(v)) for v in sample.rgb], "lab": floats(sample.lab), "spread": round(sample.spread, 1)}


def floats(values) -> list[float]:
    return [round(float(v), 1) for v in values]


def rounded(quads: np.ndarray) -> list:
    return [[[round(float(x), 1), round(float(y), 1)] for x, y in quad] for quad in quads]


def source_words(source: str) -> str:
    return {"rendered": "the simulated camera's own (where the renderer draws each sticker)",
            "camera.pose": "those expected from camera.pose (no regions file fits)"}.get(
        source, f"the regions file ({source})")
