"""``without_rate_at``: the offers a cheapest-offer read left out for want of an exchange
rate, each counted once, by currency (what ``history --gpu`` and ``compare`` report).

Rates stored: USD 1.10 per EUR from 2026-03-01, CNY 7.70 per EUR from 2026-03-03 only.
Offers (from 2026-03-01): a USD one, a CNY one, an AED one (the ECB publishes no AED).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from sqlalchemy import Engine

from tests.alerts.conftest import offer
from tests.listed_collector import collect
from tracker.catalog import select_gpus
from tracker.fx import EcbRate
from tracker.store.reads import SeriesFilter, Steps, without_rate_at
from tracker.store.series import record_rates

T0 = datetime(2026, 3, 1, tzinfo=UTC)
DAY = timedelta(days=1)
H100 = SeriesFilter(gpu=select_gpus(["H100"]))


def _store(engine: Engine) -> None:
    with engine.begin() as conn:
        record_rates(
            conn,
            [
                EcbRate("USD", date(2026, 3, 1), Decimal("1.10")),
                EcbRate("CNY", date(2026, 3, 3), Decimal("7.70")),
            ],
            source="test",
        )
    collect(
        engine,
        [
            offer("usd", "10.00"),
            offer("cny", "50.00", currency="CNY"),
            offer("aed", "30.00", currency="AED"),
        ],
        T0,
    )


def test_offers_without_a_rate_at_some_step_are_counted_once(engine: Engine) -> None:
    _store(engine)
    # 03-01 … 03-05: CNY has no rate on 03-01 and 03-02, AED on any day; each offer once
    assert without_rate_at(engine, Steps(T0, DAY, 5), H100) == {"CNY": 1, "AED": 1}


def test_a_rate_in_force_from_the_first_step_leaves_nothing_out(engine: Engine) -> None:
    _store(engine)
    # from 03-03 CNY has a rate at every step; AED still none
    assert without_rate_at(engine, Steps(T0 + 2 * DAY, DAY, 3), H100) == {"AED": 1}
    # a manual rate covers AED as well: nothing is left out
    manual = {"AED": Decimal("0.27")}
    assert without_rate_at(engine, [T0 + 2 * DAY, T0 + 4 * DAY], H100, fx_rates=manual) == {}


def test_the_filter_applies(engine: Engine) -> None:
    _store(engine)
    a100 = SeriesFilter(gpu=select_gpus(["A100"]))
    assert without_rate_at(engine, Steps(T0, DAY, 5), a100) == {}
