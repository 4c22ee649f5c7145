"""A request the panel refuses, and readers of a JSON body's fields that name the field at fault.

    body = fields(raw)                                   # a JSON object, else 400
    only(body, ("arm", "degrees", "steps"))              # a misspelt field is named, not ignored
    arm = require(body, "arm", choices=("R", "L", "F", "B"))
    degrees = number(body, "degrees", -360, 360, default=None)

Each raises RequestError(400, field=...) whose message says what the field must be.  The server
answers any RequestError with its status and `to_json()`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

_REQUIRED: Any = object()  # no default: the field must be there


class RequestError(Exception):
    """A request refused: `status` (4xx), `field` (the request field at fault, or None) and `message`.
    `details` adds keys to the JSON answer (e.g. the robot's state after a refusal)."""

    def __init__(self, status: int, message: str, field: str | None = None, details: Mapping[str, Any] | None = None):
        if not 400 <= status < 500:
            raise ValueError(f"a refused request's status is 4xx, not {status}")
        super().__init__(message)
        self.status, self.message, self.field = status, message, field
        self.details = dict(details or {})

    def to_json(self) -> dict:
        return {**self.details, "error": self.message, "field": self.field}


def bad(field: str, message: str) -> RequestError:
    """A 400 naming `field`: `message` says what it must be."""
    return RequestError(400, f"{field}: {message}", field=field)


def fields(body: object) -> dict:
    """The request body as a dict; anything but a JSON object is a 400."""
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise RequestError(400, f"the request body must be a JSON object, not {type(body).__name__}")
    return body


def only(body: Mapping, allowed: Iterable[str], where: str = "") -> None:
    """Refuse a field that is not one of `allowed` (a misspelt one would otherwise be ignored)."""
    allowed = tuple(allowed)
    for name in body:
        if name not in allowed:
            field = f"{where}{name}"
            expected = ", ".join(allowed) if allowed else "none"
            raise RequestError(400, f"{field}: unknown field (expected: {expected})", field=field)


def _get(body: Mapping, name: str, default: Any, where: str) -> tuple[bool, Any]:
    """(present, value); a missing field without a default is a 400."""
    if name in body and body[name] is not None:
        return True, body[name]
    if default is _REQUIRED:
        raise bad(f"{where}{name}", "missing")
    return False, default


def require(body: Mapping, name: str, choices: Iterable[str] | None = None, default: Any = _REQUIRED,
            where: str = "") -> Any:
    """A string field (one of `choices`, when given)."""
    present, value = _get(body, name, default, where)
    if not present:
        return value
    field = f"{where}{name}"
    if not isinstance(value, str):
        raise bad(field, f"must be a string, not {json_type(value)}")
    if choices is not None:
        choices = tuple(choices)
        if value not in choices:
            raise bad(field, f"{value!r} is not one of {', '.join(choices)}")
    return value


def boolean(body: Mapping, name: str, default: Any = _REQUIRED, where: str = "") -> Any:
    present, value = _get(body, name, default, where)
    if present and not isinstance(value, bool):
        raise bad(f"{where}{name}", f"must be true or false, not {json_type(value)}")
    return value


def number(body: Mapping, name: str, low: float, high: float, default: Any = _REQUIRED, where: str = "") -> Any:
    """A number within low..high."""
    present, value = _get(body, name, default, where)
    if not present:
        return value
    field = f"{where}{name}"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:  # NaN is not a number here
        raise bad(field, f"must be a number, not {json_type(value)}")
    if not low <= value <= high:
        raise bad(field, f"{value:g} is outside {low:g}..{high:g}")
    return value


def integer(body: Mapping, name: str, low: int, high: int, default: Any = _REQUIRED, where: str = "") -> Any:
    """A whole number within low..high (1.0 counts as 1: JSON does not tell them apart)."""
    present, value = _get(body, name, default, where)
    if not present:
        return value
    field = f"{where}{name}"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad(field, f"must be a whole number, not {json_type(value)}")
    if not low <= value <= high:
        raise bad(field, f"{value} is outside {low}..{high}")
    return value


def optional(body: Mapping, name: str) -> bool:
    """Whether the field is given (null counts as not given)."""
    return body.get(name) is not None


def json_type(value: object) -> str:
    """A value's type as JSON names it, for messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    names = {str: "a string", int: "a number", float: "a number", list: "a list", dict: "an object"}
    return next((text for kind, text in names.items() if isinstance(value, kind)), "null")
