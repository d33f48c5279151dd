"""Column types that behave the same on Postgres and SQLite.

SQLite has no decimal or timezone-aware time type: SQLAlchemy's ``Numeric``
would store binary floats there and ``DateTime`` would drop the offset. Money is
stored as a fixed-scale decimal string on SQLite (exact, and equal strings mean
equal prices) and as ``NUMERIC`` on Postgres; times are UTC everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sqlalchemy import DateTime, Dialect, Numeric, String
from sqlalchemy.types import TypeDecorator, TypeEngine

__all__ = [
    "MONEY_SCALE",
    "Money",
    "UTCDateTime",
    "aggregate_datetime",
    "quantize_money",
    "utc_reader",
]

MONEY_SCALE = 10
_QUANTUM = Decimal(1).scaleb(-MONEY_SCALE)


def quantize_money(value: Decimal) -> Decimal:
    # Half-up, as Postgres rounds NUMERIC, so both engines store the same value.
    return value.quantize(_QUANTUM, rounding=ROUND_HALF_UP)


class Money(TypeDecorator[Decimal]):
    """NUMERIC(20, 10) on Postgres; a canonical decimal string on SQLite."""

    impl = Numeric(20, MONEY_SCALE)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(String(32))
        return dialect.type_descriptor(Numeric(20, MONEY_SCALE, asdecimal=True))

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        if not isinstance(value, Decimal):
            raise TypeError(f"money must be Decimal, got {type(value).__name__}")
        q = quantize_money(value)
        return format(q, "f") if dialect.name == "sqlite" else q

    def process_result_value(self, value: Any, dialect: Dialect) -> Decimal | None:
        if value is None:
            return None
        return Decimal(value) if not isinstance(value, Decimal) else value


def aggregate_datetime(value: object) -> datetime | None:
    """A time read back without its column type, as an aware UTC datetime (or None).

    Raw SQL (``text()``, a driver cursor) and aggregates over it bypass
    :class:`UTCDateTime`: SQLite then returns the stored naive-UTC text, Postgres an
    aware datetime. Typed expressions (``func.max(Model.column)``) keep the column type
    and need none of this. Anything but text, a datetime or None is a bug: it raises.
    """
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if not isinstance(value, datetime):
        raise TypeError(f"expected a time, got {type(value).__name__}: {value!r}")
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utc_reader() -> Callable[[object], datetime]:
    """:func:`aggregate_datetime` for a non-null column read raw, remembering what it
    converted: the many rows of a big read share a few times (a run's), each converted once."""
    seen: dict[object, datetime] = {}

    def utc(value: object) -> datetime:
        found = seen.get(value)
        if found is None:
            converted = aggregate_datetime(value)
            if converted is None:
                raise TypeError("expected a time, got NULL")
            found = seen[value] = converted
        return found

    return utc


class UTCDateTime(TypeDecorator[datetime]):
    """``timestamptz`` on Postgres; naive-UTC ISO text on SQLite; always aware UTC in Python."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise TypeError("times must be timezone-aware datetimes")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return aggregate_datetime(value)
