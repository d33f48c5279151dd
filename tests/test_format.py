"""The one formatting rule per kind of value, checked on hand-picked figures."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from tracker import format as fmt


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Decimal("66.048"), "66.05"),  # cents from 1 up: 66.048 -> 66.05
        (Decimal("55.04"), "55.04"),
        (Decimal("26.4192"), "26.42"),
        (Decimal("19143.69"), "19,143.69"),  # thousands separated
        (Decimal("0.526"), "0.526"),  # a tenth of a cent below 1
        (Decimal("0.5265"), "0.526"),  # half-even: ...65 -> ...6
        (Decimal("2.125"), "2.12"),  # half-even: 2.125 -> 2.12 (not 2.13)
        (Decimal("1234567"), "1,234,567.00"),
        (3.1, "3.10"),  # a float goes through its repr, not its binary expansion
        (Decimal("0"), "0.00"),  # an exact zero: cents, not 0.000
        (Decimal("0.000"), "0.00"),  # a zero with places (a plan's storage part) too
        (Decimal("-0"), "0.00"),
        (Decimal("0.0004"), "0.000"),  # not zero: rounds to a tenth of a cent as before
    ],
)
def test_amount(value: object, text: str) -> None:
    assert fmt.amount(value) == text  # type: ignore[arg-type]


def test_money_units() -> None:
    assert fmt.money(Decimal("16.512")) == "16.51 USD"
    assert fmt.per_hour(Decimal("16.512"), "EUR") == "16.51 EUR/h"
    # 55.04 USD/h for 8 GPUs = 6.88 USD/GPU-h
    assert fmt.per_gpu_hour(Decimal("55.04") / 8) == "6.88 USD/GPU-h"


@pytest.mark.parametrize(
    ("value", "signed", "text"),
    [
        (Decimal("70.00"), False, "70 %"),
        (Decimal("-70.00"), True, "-70 %"),
        (Decimal("12.45"), False, "12.4 %"),  # half-even to one decimal
        (Decimal("3"), True, "+3 %"),
        (Decimal("-0.04"), True, "0 %"),
        (Decimal("1250"), False, "1,250 %"),
    ],
)
def test_percent(value: Decimal, signed: bool, text: str) -> None:
    assert fmt.percent(value, signed=signed) == text


def test_times() -> None:
    at = datetime(2026, 12, 1, 14, 6, 59, 123456, tzinfo=timezone(timedelta(hours=1)))
    assert fmt.when(at) == "2026-12-01 13:06 UTC"  # 14:06 at +01:00 is 13:06 UTC
    assert fmt.iso_z(at) == "2026-12-01T13:06:59.123456Z"
    assert fmt.iso_z(datetime(2026, 1, 2, tzinfo=UTC)) == "2026-01-02T00:00:00Z"
    with pytest.raises(ValueError, match="naive"):
        fmt.when(datetime(2026, 1, 1))


@pytest.mark.parametrize(
    ("pricing", "payment", "text"),
    [
        ("on_demand", None, "on-demand"),
        ("spot", None, "spot"),
        ("reserved_1y", "no_upfront", "reserved 1y, no upfront"),
        ("reserved_3y", "all_upfront", "reserved 3y, all upfront"),
        ("savings_plan_1y", None, "savings plan 1y"),
        ("committed_2y", None, "committed 2y"),  # unknown reads as itself
    ],
)
def test_pricing_label(pricing: str, payment: str | None, text: str) -> None:
    assert fmt.pricing_label(pricing, payment) == text


def test_counts() -> None:
    assert fmt.count(1, "GPU") == "1 GPU"
    assert fmt.count(8, "GPU") == "8 GPUs"
    assert fmt.count(Decimal("0.5"), "GPU") == "0.5 GPU"
    assert fmt.count(Decimal("8.000"), "GPU") == "8 GPUs"
    assert fmt.count(1000, "offer") == "1,000 offers"
    assert fmt.count(0, "offer") == "0 offers"
    assert fmt.gpus(8, "H100-SXM") == "8× H100-SXM"
    assert fmt.gpus(Decimal("0.50"), "A10") == "0.5× A10"
