"""One currency rule: ``Rates.usd_per_unit`` (Python) and ``usd_sql`` (SQL) agree.

Table-driven over every stored currency, several times, a missing rate and rates <= 0,
on SQLite and Postgres. The stored ECB steps (units per EUR, in force from 00:00 UTC of
their day until the next one):

    2026-01-05  USD 1.10   GBP 0.85   JPY 160
    2026-02-02  USD 1.20   GBP 0      CNY 8      (GBP 0: a broken rate, which is no rate)

Manual ``fx_rates`` (USD per unit): AED 0.27, GBP 1.30, CNY 0.14, ZAR 0 (refused).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from sqlalchemy import Engine, Numeric, literal, select

from tracker.fx import EcbRate, Rates
from tracker.settings import Settings
from tracker.store import series as fx_store
from tracker.store.types import UTCDateTime

D = Decimal
BEFORE = datetime(2026, 1, 1, 12, tzinfo=UTC)  # no ECB step in force yet
JAN = datetime(2026, 1, 10, 12, tzinfo=UTC)
FEB = datetime(2026, 2, 10, 12, tzinfo=UTC)
MANUAL = {"AED": D("0.27"), "GBP": D("1.30"), "CNY": D("0.14"), "ZAR": D("0")}

# (currency, time, USD for 100 units worked out by hand; None: no rate, left out)
CASES = [
    ("USD", BEFORE, D("100")),  # USD is USD, rates or not
    ("EUR", BEFORE, None),  # no USD per EUR in force yet, no manual EUR
    ("EUR", JAN, D("110")),  # 100 x 1.10 / 1
    ("EUR", FEB, D("120")),  # 100 x 1.20 / 1
    ("GBP", JAN, D("129.4117647059")),  # 100 x 1.10 / 0.85 = 129.41176470588...
    ("GBP", FEB, D("130")),  # the stored 0 is no rate: the manual 1.30 -> 130
    ("CNY", JAN, D("14")),  # no ECB CNY before Feb: manual 0.14 -> 14
    ("CNY", FEB, D("15")),  # ECB wins once it has one: 100 x 1.20 / 8
    ("JPY", FEB, D("0.75")),  # 100 x 1.20 / 160 (the January step still in force)
    ("AED", FEB, D("27")),  # manual only: 100 x 0.27
    ("XYZ", FEB, None),  # no rate anywhere
    ("ZAR", FEB, None),  # a manual 0 is no rate
]


def _store_rates(engine: Engine) -> None:
    steps = [
        ("USD", date(2026, 1, 5), "1.10"),
        ("GBP", date(2026, 1, 5), "0.85"),
        ("JPY", date(2026, 1, 5), "160"),
        ("USD", date(2026, 2, 2), "1.20"),
        ("GBP", date(2026, 2, 2), "0"),
        ("CNY", date(2026, 2, 2), "8"),
    ]
    with engine.begin() as conn:
        fx_store.record_rates(conn, [EcbRate(c, d, D(v)) for c, d, v in steps], source="test")


def _sql_usd(engine: Engine, currency: str, at: datetime) -> Decimal | None:
    expr = fx_store.usd_sql(
        literal(D("100"), Numeric(38, 10)), literal(currency), literal(at, UTCDateTime()), MANUAL
    )
    with engine.connect() as conn:
        value = conn.execute(select(expr)).scalar()
    return None if value is None else D(str(value))


def test_python_and_sql_give_the_hand_worked_figures(engine: Engine) -> None:
    _store_rates(engine)
    rates = fx_store.load_rates(engine, MANUAL)
    # SQLite computes in REAL: compared to a millionth of a cent; Postgres exactly
    places = D("1e-6") if engine.dialect.name == "sqlite" else D("1e-10")
    for currency, at, expected in CASES:
        python = rates.to_usd(D("100"), currency, at)
        sql = _sql_usd(engine, currency, at)
        where = f"{currency} at {at:%Y-%m-%d}"
        if expected is None:
            assert (python, sql) == (None, None), where
            continue
        assert python == expected, where
        assert sql is not None and sql.quantize(places) == expected.quantize(places), where


def test_a_rate_at_or_below_zero_is_no_rate() -> None:
    rates = Rates(manual={"ZAR": D("0"), "AED": D("-0.27")})
    assert rates.usd_per_unit("ZAR") is None and rates.usd_per_unit("AED") is None
    assert not rates.knows("ZAR")
    # and the settings refuse to hold one, naming it
    with pytest.raises(ValueError, match=r"ZAR = 0 is not a rate"):
        Settings(fx_rates={"ZAR": "0"})
