"""One-line messages from pydantic validation errors: "field: what is wrong".

A profile typo would otherwise silently rank the wrong job, so every error names the
field; cross-field checks raise :class:`FieldError` to say which field they blame.
"""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["FieldError", "describe"]


class FieldError(ValueError):
    """A cross-field problem attributed to one field, so the message can name it."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field_name = field_name
        self.message = message


def describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    error = first.get("ctx", {}).get("error")
    if isinstance(error, FieldError):
        return f"{error.field_name}: {error.message}"
    loc = ".".join(str(part) for part in first["loc"] if not isinstance(part, int)) or "profile"
    message = str(first["msg"]).removeprefix("Value error, ")
    ctx = first.get("ctx", {})
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    elif first["type"] == "missing":
        message = "required"
    elif first["type"] in _BOUND_TYPES:
        kind = _BOUND_TYPES[first["type"]]
        bound = ctx.get(kind)
        shown = f"{bound:g}" if isinstance(bound, float) else bound  # 1.0 reads as 1
        message = f"must be {_BOUNDS[kind]} {shown}, got {first['input']!r}"
    return f"{loc}: {message}"


_BOUNDS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
_BOUND_TYPES = {
    "greater_than": "gt",
    "greater_than_equal": "ge",
    "less_than": "lt",
    "less_than_equal": "le",
}
