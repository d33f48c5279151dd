"""Alert rules read and show prices in their ``currency`` (USD by default), converted at
the exchange rate in force at the event; a missing rate leaves the alert out, counted and
logged, never converted at 1.0.

Rates stored (units per 1 EUR, in force from 00:00 UTC that day):
    2026-03-01  USD 1.10  CNY 7.70     → 1 CNY = 1.10 / 7.70 USD
    2026-03-02  USD 1.10  CNY 7.92     → 1 CNY = 1.10 / 7.92 USD
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Engine

from tests.alerts.conftest import offer
from tests.alerts.test_evaluate import fired, rules
from tests.listed_collector import collect
from tracker.alerts.evaluate import evaluate
from tracker.alerts.rules import RulesError
from tracker.fx import EcbRate
from tracker.store.series import record_rates

T0 = datetime(2026, 3, 1, tzinfo=UTC)
H = timedelta(hours=1)
DAY2 = T0 + 25 * H  # 2026-03-02 01:00: the second day's rates are in force


def store_rates(engine: Engine, *rates: tuple[date, str, str]) -> None:
    with engine.begin() as conn:
        record_rates(conn, [EcbRate(c, day, Decimal(v)) for day, c, v in rates], source="test")


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest) -> Engine:
    """Both engines: Postgres applies the rules' thresholds in SQL, SQLite in Python."""
    db: Engine = request.getfixturevalue(
        f"{'pg' if request.param == 'postgres' else 'sqlite'}_engine"
    )
    store_rates(
        db,
        (date(2026, 3, 1), "USD", "1.10"),
        (date(2026, 3, 1), "CNY", "7.70"),
        (date(2026, 3, 2), "CNY", "7.92"),
    )
    return db


def cny(instance: str, price: str, **kw: Any) -> Any:
    return offer(instance, price, currency="CNY", **kw)


def test_a_cny_price_change_in_usd_at_the_rate_in_force_at_the_change(engine: Engine) -> None:
    rule = rules({"name": "moves", "type": "price_change", "threshold_percent": 10})
    collect(engine, [cny("a", "30.00")], T0)
    assert evaluate(engine, rule, ["slack"], now=T0) == []  # seeds
    # the yuan moved on 03-02 but the price did not: no new interval, no alert
    collect(engine, [cny("a", "30.00")], T0 + 24 * H)
    assert evaluate(engine, rule, ["slack"], now=T0 + 24 * H) == []
    collect(engine, [cny("a", "27.00")], DAY2)
    assert len(evaluate(engine, rule, ["slack"], now=DAY2)) == 1
    # both at 03-02's rate: 30 × 1.10 / 7.92 = 4.16666… → 4.1667; 27 × 1.10 / 7.92 = 3.75;
    # the change is the yuan one, (27 - 30) / 30 = -10 % (at the threshold: fires)
    assert [t for _, t in fired(engine)] == [
        "testcloud a us-east-1 on_demand: 4.1667 → 3.75 USD/h (-10.00%) [30.00 CNY → 27.00 CNY]"
    ]


def test_a_rule_in_cny_shows_cny_prices_as_they_are(engine: Engine) -> None:
    rule = rules(
        {"name": "yuan", "type": "price_change", "threshold_percent": 10, "currency": "cny"}
    )
    collect(engine, [cny("a", "30.00")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [cny("a", "27.00")], DAY2)
    evaluate(engine, rule, ["slack"], now=DAY2)
    assert [t for _, t in fired(engine)] == [
        "testcloud a us-east-1 on_demand: 30.00 → 27.00 CNY/h (-10.00%)"
    ]


def test_a_rule_in_eur_converts_usd_prices(engine: Engine) -> None:
    rule = rules(
        {"name": "eur", "type": "price_change", "threshold_percent": 10, "currency": "EUR"}
    )
    collect(engine, [offer("a", "10.00")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [offer("a", "9.00")], T0 + H)
    evaluate(engine, rule, ["slack"], now=T0 + H)
    # 10 / 1.10 = 9.0909… → 9.0909 EUR; 9 / 1.10 = 8.1818… → 8.1818 EUR; -10 %
    assert [t for _, t in fired(engine)] == [
        "testcloud a us-east-1 on_demand: 9.0909 → 8.1818 EUR/h (-10.00%) [10.00 USD → 9.00 USD]"
    ]


def test_a_change_of_currency_compares_in_the_rules_currency(engine: Engine) -> None:
    store_rates(engine, (date(2026, 3, 1), "USD", "1.10"))  # unchanged: no row added
    rule = rules({"name": "moves", "type": "price_change", "threshold_percent": 10})
    collect(engine, [offer("a", "10.00")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [offer("a", "8.00", currency="EUR")], T0 + H)
    evaluate(engine, rule, ["slack"], now=T0 + H)
    # 8 EUR × 1.10 = 8.80 USD against 10.00 USD: (8.80 - 10) / 10 = -12 %
    assert [t for _, t in fired(engine)] == [
        "testcloud a us-east-1 on_demand: 10.00 → 8.80 USD/h (-12.00%) [10.00 USD → 8.00 EUR]"
    ]


def test_a_missing_rate_leaves_the_alert_out_counted_and_logged(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    rule = rules({"name": "moves", "type": "price_change", "threshold_percent": 10})
    start = [offer("a", "100.00", currency="AED"), offer("b", "10.00")]
    collect(engine, start, T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [offer("a", "50.00", currency="AED"), offer("b", "5.00")], T0 + H)
    with caplog.at_level(logging.WARNING, logger="tracker.alerts.evaluate"):
        assert len(evaluate(engine, rule, ["slack"], now=T0 + H)) == 1
    # AED: no ECB rate and no fx_rates entry — never shown at 1.0 (100 → 50 "USD")
    assert [t for _, t in fired(engine)] == [
        "testcloud b us-east-1 on_demand: 10.00 → 5.00 USD/h (-50.00%)"
    ]
    assert "rule moves: 1 alert left out: no exchange rate for AED (1)" in caplog.text


def test_the_manual_rate_fills_a_currency_the_ecb_lacks(engine: Engine) -> None:
    rule = rules({"name": "moves", "type": "price_change", "threshold_percent": 10})
    collect(engine, [offer("a", "100.00", currency="AED")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [offer("a", "50.00", currency="AED")], T0 + H)
    manual = {"AED": Decimal("0.27")}
    assert len(evaluate(engine, rule, ["slack"], now=T0 + H, fx_rates=manual)) == 1
    # 100 × 0.27 = 27.00 USD; 50 × 0.27 = 13.50 USD
    assert fired(engine)[0][1] == (
        "testcloud a us-east-1 on_demand: 27.00 → 13.50 USD/h (-50.00%) [100.00 AED → 50.00 AED]"
    )


def test_a_cny_spot_discount_shown_in_usd(engine: Engine) -> None:
    rule = rules({"name": "spot", "type": "spot_discount", "threshold_percent": 60})

    def market(spot: str) -> list[Any]:
        return [cny("g", "20.00"), cny("g", spot, pricing="spot", zone="us-east-1a")]

    collect(engine, market("10.00"), T0)  # (20 - 10) / 20 = 50 %
    assert evaluate(engine, rule, ["slack"], now=T0) == []
    collect(engine, market("8.00"), T0 + H)  # (20 - 8) / 20 = 60 %: crosses
    assert len(evaluate(engine, rule, ["slack"], now=T0 + H)) == 1
    # at 03-01's rate: 8 × 1.10 / 7.70 = 1.142857… → 1.1429; 20 × 1.10 / 7.70 = 2.857142… → 2.8571
    assert fired(engine)[0][1] == (
        "testcloud g us-east-1/us-east-1a spot 1.1429 USD/h is 60.00% below on-demand 2.8571"
        " [spot 8.00 CNY, on-demand 20.00 CNY]"
    )


def test_a_ranking_cost_alert_in_eur(engine: Engine) -> None:
    from tests.recommend.test_history import gpu_offer, profiles
    from tracker.recommend import recompute_rankings
    from tracker.settings import Settings

    store_rates(engine, (date(2026, 3, 1), "USD", "1.25"))  # corrects 03-01's USD rate
    rule = rules(
        {
            "name": "lora",
            "type": "ranking_change",
            "profile": "lora",
            "threshold_percent": 20,
            "events": ["cost"],
            "currency": "EUR",
        }
    )
    for price, at in (("4.00", T0), ("3.00", T0 + H)):
        collect(engine, [gpu_offer("A100-80GB", price)], at)
        recompute_rankings(engine, Settings(), now=at, profiles=profiles())
        evaluate(engine, rule, ["slack"], now=at)
    # job costs 11.51 → 8.63 USD (tests/alerts/test_evaluate.py works them out), at
    # 1.25 USD per EUR: 11.51 / 1.25 = 9.208 EUR, 8.63 / 1.25 = 6.904 EUR; same -25.02 %
    assert [t for _, t in fired(engine)] == ["lora job cost 9.208 → 6.904 EUR (-25.02%)"]


def test_a_currency_that_is_not_a_code_is_refused_with_the_rules_name() -> None:
    with pytest.raises(RulesError) as caught:
        rules({"name": "bad", "type": "price_change", "threshold_percent": 5, "currency": "euro"})
    assert "rule 'bad': currency:" in str(caught.value)
    assert "three-letter ISO 4217 code" in str(caught.value)
    with pytest.raises(RulesError, match="unknown key 'currency' for a new_hardware rule"):
        rules({"name": "hw", "type": "new_hardware", "currency": "EUR"})
