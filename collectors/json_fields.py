"""Reading one field of a GPU cloud's JSON item, as Decimal or text, or a counted skip.

The GPU-cloud APIs send numbers as numbers, decimal strings or numeric strings; each
reader here says which it accepts, so a changed format becomes a :class:`SkipItem`
naming the field instead of a guessed price. (Split from collectors/gpucloud.py, which
re-exports them.)
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from collectors.base import SkipItem
from tracker.models import InvalidOffer, to_decimal

__all__ = ["decimal_text", "loose_number", "number", "text"]


def text(item: Mapping[str, Any], field: str) -> str:
    value = item.get(field)
    if not isinstance(value, str) or not value.strip():
        raise SkipItem("malformed_item", f"{field} missing or not text ({value!r})")
    return value.strip()


def number(item: Mapping[str, Any], field: str, *, required: bool = True) -> Decimal | None:
    """A JSON number as Decimal (never through a binary float); ``None`` if absent."""
    value = item.get(field)
    if value is None:
        if required:
            raise SkipItem("malformed_item", f"{field} missing")
        return None
    if isinstance(value, str):  # these APIs send numbers; a string is a changed format
        raise SkipItem("malformed_item", f"{field} is text, not a number ({value!r})")
    try:
        return to_decimal(value, field)
    except InvalidOffer as exc:
        raise SkipItem("malformed_item", str(exc)) from None


def decimal_text(item: Mapping[str, Any], field: str) -> Decimal | None:
    """A price an API sends as a decimal string (``"3.95"``); None when absent or null."""
    value = item.get(field)
    if value is None:
        return None
    if not isinstance(value, str):
        raise SkipItem("malformed_item", f"{field} is not a decimal string ({value!r})")
    try:
        result = Decimal(value.strip())
    except InvalidOperation:
        raise SkipItem("malformed_item", f"{field} is not a number ({value!r})") from None
    if not result.is_finite() or result < 0:
        raise SkipItem("malformed_item", f"{field} is {value!r}")
    return result


def loose_number(item: Mapping[str, Any], field: str) -> Decimal | None:
    """A number sent as a number or a numeric string; None when absent, null or ""."""
    value = item.get(field)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise SkipItem("malformed_item", f"{field} is {value!r}")
    try:
        result = Decimal(repr(value) if isinstance(value, float) else str(value).strip())
    except InvalidOperation:
        raise SkipItem("malformed_item", f"{field} is not a number ({value!r})") from None
    if not result.is_finite() or result < 0:
        raise SkipItem("malformed_item", f"{field} is {value!r}")
    return result
