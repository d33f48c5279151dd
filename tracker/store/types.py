"""Column types that behave the same on Postgres and SQLite.

SQLite has no decimal or timezone-aware time type: SQLAlchemy's ``Numeric``
would store binary floats there and ``DateTime`` would drop the offset. Money is
stored as a fixed-scale decimal string on SQLite (exact, and equal strings mean
equal prices) and as ``NUMERIC`` on Postgres; times are UTC everywhere.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sqlalchemy import DateTime, Dialect, Numeric, String
from sqlalchemy.types import TypeDecorator, TypeEngine

__all__ = ["MONEY_SCALE", "Money", "UTCDateTime", "quantize_money"]

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
        if value is None:
            return None
        parsed: datetime = datetime.fromisoformat(value) if isinstance(value, str) else value
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
