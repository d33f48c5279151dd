"""What the store can hold (tracker.storable), enforced by the records themselves (issue 44).

The boundaries are NUMERIC(20, 10)'s, worked out by hand: 10 decimals, so a magnitude
below 0.00000000005 rounds half-up to 0.0000000000, and 0.00000000005 rounds to
0.0000000001; 10 digits before the point, so 9999999999.9999999999 is the largest value
and 9999999999.99999999995 already rounds up to 10000000000 (11 digits: overflow).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import String

from tests.conftest import make_offer
from tracker.models import InvalidOffer
from tracker.service_prices import ServicePrice
from tracker.storable import (
    OFFER_TEXT_CHARS,
    number_problem,
    text_problem,
    time_problem,
)
from tracker.store.schema import Series
from tracker.store.types import MONEY_SCALE, Money, quantize_money


@pytest.mark.parametrize(
    "text",
    ["0.00000000005", "0.0000000001", "9999999999.9999999999", "9999999999.99999999994", "1"],
)
def test_values_the_column_keeps(text: str) -> None:
    value = Decimal(text)
    assert number_problem(value) is None
    assert quantize_money(value) != 0  # and it is stored as a nonzero number
    assert len(format(quantize_money(value), "f").split(".")[0]) <= 10


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("0.00000000004", "would be stored as 0"),  # rounds to 0.0000000000
        ("0.000000000049999", "would be stored as 0"),
        ("1e-400", "would be stored as 0"),
        ("9999999999.99999999995", "does not fit"),  # rounds up to 10^10
        ("12345678901", "does not fit"),  # 11 digits: Postgres' numeric field overflow
        ("12345678901234567890123456789012345678", "does not fit"),  # 38 digits
        ("1e400", "does not fit"),
        ("-12345678901", "does not fit"),
    ],
)
def test_values_the_column_cannot_keep(text: str, reason: str) -> None:
    problem = number_problem(Decimal(text))
    assert problem is not None and reason in problem


def test_the_bounds_are_the_columns() -> None:
    """tracker.storable's numbers and text lengths are the schema's: one changes, the
    other must (or a value passes here and fails one engine)."""
    assert MONEY_SCALE == 10 and Money.impl.precision == 20 and Money.impl.scale == 10
    for name, chars in OFFER_TEXT_CHARS.items():
        column_type = Series.__table__.c[name].type
        assert isinstance(column_type, String) and column_type.length == chars, name


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("memory_gib", Decimal("0.00000000004"), "would be stored as 0"),
        ("vcpus", Decimal("1e-400"), "would be stored as 0"),
        ("gpu_memory_gib", Decimal("12345678901"), "does not fit"),
        ("gpu_count", Decimal("1e-400"), "would be stored as 0"),
        ("price_per_hour", Decimal("1e400"), "does not fit"),
        ("price_per_hour", "12345678901234567890123456789012345678", "does not fit"),
        ("provider", "a\0b", "NUL"),
        ("zone", "z\0", "NUL"),
        ("gpu_model", "x" * 129, "129 characters, at most 128"),
        ("instance_type", "i" * 131_073, "at most 128"),
        ("region", "r" * 65, "at most 64"),
    ],
)
def test_an_offer_refuses_what_the_store_cannot_hold(field: str, value: Any, reason: str) -> None:
    with pytest.raises(InvalidOffer, match=reason) as raised:
        make_offer(**{field: value})
    assert raised.value.field == field


def test_a_long_value_is_named_shortly() -> None:
    """A 131,073-character name is quoted by its first 40 characters and its length."""
    with pytest.raises(InvalidOffer) as raised:
        make_offer(instance_type="i" * 131_073)
    assert len(str(raised.value)) < 200 and "131073 characters" in str(raised.value)


def test_the_smallest_stored_values_are_offers() -> None:
    offer = make_offer(memory_gib=Decimal("0.00000000005"), gpu_count=Decimal("0.125"))
    assert offer.memory_gib == Decimal("0.00000000005")
    assert make_offer(price_per_hour=Decimal("9999999999.9999999999")).price_per_hour > 0


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("price", "0.00000000001", "would be stored as 0"),  # a paid tier made free
        ("price", "12345678901", "does not fit"),
        ("tier_end_gb", "1e400", "does not fit"),
        ("provider", "a\0b", "NUL"),
        ("region", "r" * 65, "at most 64"),
    ],
)
def test_a_service_price_refuses_what_the_store_cannot_hold(
    field: str, value: str, reason: str
) -> None:
    fields: dict[str, Any] = {
        "provider": "aws",
        "region": "us-east-1",
        "service": "egress_internet",
        "unit": "GB",
        "price": "0.09",
        "currency": "USD",
    }
    with pytest.raises(InvalidOffer, match=reason):
        ServicePrice(**{**fields, field: value})
    assert ServicePrice(**{**fields, "price": "0"}).price == 0  # a free tier is fine


def test_text_problem_names_nul_before_length() -> None:
    assert text_problem("ok", 2) is None
    assert "NUL" in (text_problem("\0" * 99, 2) or "")


def test_time_bounds() -> None:
    now = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    assert time_problem(now + timedelta(minutes=5), now) is None  # clocks drift
    assert "in the future" in (time_problem(now + timedelta(minutes=5, seconds=1), now) or "")
    assert "in the future" in (time_problem(datetime(9999, 12, 31, tzinfo=UTC), now) or "")
    assert "before 2000-01-01" in (time_problem(datetime(1, 1, 1, tzinfo=UTC), now) or "")
    assert time_problem(datetime(2000, 1, 1, tzinfo=UTC), now) is None
    minus_one = timezone(timedelta(hours=-1))
    edge = datetime(9999, 12, 31, 23, 59, 59, tzinfo=minus_one)  # the year 10000 in UTC
    assert "outside the years 1-9999" in (time_problem(edge, now) or "")
