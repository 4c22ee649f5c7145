"""A cube typed or corrected in the page, checked by the same code as `cube-robot solve` (robot/cube.py)."""

from __future__ import annotations

from .errors import RequestError


def check_facelets(facelets: object) -> dict:
    """{"ok": True, "facelets"} for a legal cube; else RequestError 422 with the cube module's own words and
    the stickers it names (facelet indices, 0-23 in Kociemba's order)."""
    from .. import cube

    if not isinstance(facelets, str):
        raise RequestError(400, "facelets must be a string of 24 colour letters (U R F D L B order)", "facelets")
    try:
        cube.parse_facelets(facelets)
    except cube.CubeError as exc:
        raise RequestError(422, exc.args[0], "facelets", details={"stickers": list(exc.facelets),
                                                               "problem": type(exc).__name__}) from None
    return {"ok": True, "facelets": facelets}
