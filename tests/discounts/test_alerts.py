"""Alert rules compare the net price the account pays (``on = "list"``: the list one).

A spot_discount rule at 60 % over a p5.48xlarge listed at 55.04 USD/h on demand, whose
on-demand price the account gets 15 % off (the rule ``edp``, on_demand only):

    spot 30.00: list (55.04 − 30) / 55.04 = 45.49 %; net (46.784 − 30) / 46.784 = 35.88 %
    spot 20.00: list (55.04 − 20) / 55.04 = 63.66 %  (fires at list, not at net:
                net (46.784 − 20) / 46.784 = 57.25 %)
    spot 18.00: net (46.784 − 18) / 46.784 = 61.53 %  (fires at net)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine

from tests.alerts.conftest import offer
from tests.listed_collector import collect
from tracker.alerts.evaluate import evaluate
from tracker.alerts.rules import AlertRule, RulesError, parse_rules
from tracker.discounts import parse_discounts
from tracker.store.outbox import list_alerts

T0 = datetime(2026, 11, 20, tzinfo=UTC)
H = timedelta(hours=1)
EDP = parse_discounts(
    [{"name": "edp", "provider": "testcloud", "pricing": ["on_demand"], "percent": 15}]
)


def _rules(*tables: dict[str, Any]) -> list[AlertRule]:
    return parse_rules({"rules": list(tables)}, "test", ["slack"])


def _market(spot: str) -> list[Any]:
    return [
        offer("p5.48xlarge", "55.04"),
        offer("p5.48xlarge", spot, pricing="spot", zone="us-east-1a"),
    ]


def test_spot_discount_compares_spot_with_the_net_on_demand_price(engine: Engine) -> None:
    rules = _rules(
        {"name": "net", "type": "spot_discount", "threshold_percent": 60},
        {"name": "list", "type": "spot_discount", "threshold_percent": 60, "on": "list"},
    )
    fired: list[list[str]] = []
    for i, spot in enumerate(("30.00", "20.00", "18.00")):
        collect(engine, _market(spot), T0 + i * H)
        evaluate(engine, rules, ["slack"], now=T0 + i * H, discounts=EDP)
        fired.append(sorted({a.rule for a in list_alerts(engine)}))
    assert fired == [[], ["list"], ["list", "net"]]
    titles = {a.rule: a.title for a in list_alerts(engine)}
    assert titles["net"] == (
        "testcloud p5.48xlarge us-east-1/us-east-1a spot 18.00 USD/h is 61.53% below "
        "on-demand 46.784"
    )
    assert titles["list"].endswith("is 63.66% below on-demand 55.04")


def test_without_discount_rules_net_and_list_agree(engine: Engine) -> None:
    rules = _rules({"name": "net", "type": "spot_discount", "threshold_percent": 60})
    collect(engine, _market("30.00"), T0)
    evaluate(engine, rules, ["slack"], now=T0)
    collect(engine, _market("20.00"), T0 + H)
    assert evaluate(engine, rules, ["slack"], now=T0 + H)  # 63.66 % at list = net


def test_on_list_is_refused_for_a_profile_ranking_rule() -> None:
    with pytest.raises(RulesError) as caught:
        _rules({"name": "r", "type": "ranking_change", "profile": "llm-7b-lora", "on": "list"})
    assert str(caught.value).startswith("test: rule 'r': on: \"list\" is for plan rules")


def test_price_change_shows_the_net_move_and_a_fixed_price_never_moves(engine: Engine) -> None:
    """on-demand 55.04 → 44.032 (a 20 % cut: 55.04 × 0.8): under 15 % off, what the
    account pays goes 46.784 → 37.4272 (44.032 × 0.85), the same −20 %; the instance
    with a fixed net price (``fixed``) does not move at all."""
    discounts = parse_discounts(
        [
            {"name": "fixed", "provider": "testcloud", "instance_types": ["p4d.*"],
             "price_per_hour": "18.00"},
            {"name": "edp", "provider": "testcloud", "pricing": ["on_demand"], "percent": 15},
        ]
    )  # fmt: skip
    rules = _rules(
        {"name": "net", "type": "price_change", "threshold_percent": 10},
        {"name": "list", "type": "price_change", "threshold_percent": 10, "on": "list"},
    )
    before = [offer("p5.48xlarge", "55.04"), offer("p4d.24xlarge", "21.957642")]
    after = [offer("p5.48xlarge", "44.032"), offer("p4d.24xlarge", "17.566114")]
    collect(engine, before, T0)
    evaluate(engine, rules, ["slack"], now=T0, discounts=discounts)
    collect(engine, after, T0 + H)
    evaluate(engine, rules, ["slack"], now=T0 + H, discounts=discounts)
    titles = sorted((a.rule, a.title) for a in list_alerts(engine))
    assert titles == [
        # p4d: (17.566114 − 21.957642) / 21.957642 = −4.391528 / 21.957642 = −19.999998 %
        ("list", "testcloud p4d.24xlarge us-east-1 on_demand: 21.957642 → 17.566114 USD/h (-20.00%)"),
        ("list", "testcloud p5.48xlarge us-east-1 on_demand: 55.04 → 44.032 USD/h (-20.00%)"),
        ("net", "testcloud p5.48xlarge us-east-1 on_demand: 46.784 → 37.4272 USD/h (-20.00%)"),
    ]  # fmt: skip
