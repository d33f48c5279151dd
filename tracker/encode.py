"""Rows as JSON values: the one encoding the CLI's JSON/CSV and /api/v1 share.

Decimals are exact strings (no trailing zeros, no exponent), times ISO-8601 UTC with a
``Z``, enums their value; keys never disappear (a missing value is ``null``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from tracker.format import iso_z

__all__ = ["jsonable"]


def jsonable(value: Any) -> Any:
    """``value`` with every Decimal, datetime and enum turned into its JSON form."""
    if isinstance(value, Decimal):
        # Exact, without the storage scale's trailing zeros or an exponent.
        text = format(value, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, datetime):
        # The store's times are UTC; a naive one (an old SQLite row) is read as such.
        return iso_z(value if value.tzinfo is not None else value.replace(tzinfo=UTC))
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, Mapping):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value
