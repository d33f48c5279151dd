"""What the store now applies in SQL for the rules (their offer filters; on Postgres the
price-change threshold, exactly, and each change's previous price by a LATERAL probe;
spot offers paired with their on-demand counterpart) gives the alerts the rules' own
exact tests give, on both engines: at the threshold's last digit, on the right side of
a direction, against the cheapest on-demand offer, and only for the filtered offers."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine

from tests.alerts.conftest import offer
from tests.alerts.test_evaluate import fired, rules
from tests.listed_collector import collect
from tracker.alerts.evaluate import evaluate
from tracker.alerts.rules import AlertRule
from tracker.models import Offer

T0 = datetime(2026, 3, 1, tzinfo=UTC)
H = timedelta(hours=1)


def moves(threshold: str, **kw: object) -> list[AlertRule]:
    return rules({"name": "moves", "type": "price_change", "threshold_percent": threshold, **kw})


@pytest.mark.parametrize(
    ("threshold", "fires"),
    [
        # 3.00 → 5.00: (5 - 3) / 3 × 100 = 66.666… exactly, which a division rounded to
        # 28 digits would make 66.66666666666666666666666667. The test is exact on both
        # engines and both paths (2 × 100 >= threshold × 3, no division): the threshold
        # one digit short of the repeating sixes is reached, the rounded one is not.
        ("66.66666666666666666666666666", True),
        ("66.66666666666666666666666667", False),
    ],
)
def test_the_threshold_at_its_last_digit(engine: Engine, threshold: str, fires: bool) -> None:
    rule = moves(threshold)
    collect(engine, [offer("a", "3.00")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [offer("a", "5.00")], T0 + H)
    assert len(evaluate(engine, rule, ["slack"], now=T0 + H)) == (1 if fires else 0)
    if fires:
        assert [t for _, t in fired(engine)] == [
            "testcloud a us-east-1 on_demand: 3.00 → 5.00 USD/h (+66.67%)"
        ]


def test_direction_up_reads_rises_only_and_at_exactly_the_threshold(engine: Engine) -> None:
    rule = moves("10", direction="up")
    start = [offer("a", "10.00"), offer("b", "10.00"), offer("c", "10.00")]
    collect(engine, start, T0)
    evaluate(engine, rule, ["slack"], now=T0)
    # a: (11 - 10) / 10 = +10 % (at the threshold: fires); b: -10 % (wrong way);
    # c: (10.99 - 10) / 10 = +9.9 % (below)
    collect(engine, [offer("a", "11.00"), offer("b", "9.00"), offer("c", "10.99")], T0 + H)
    evaluate(engine, rule, ["slack"], now=T0 + H)
    assert [t for _, t in fired(engine)] == [
        "testcloud a us-east-1 on_demand: 10.00 → 11.00 USD/h (+10.00%)"
    ]


def test_the_previous_price_is_the_latest_earlier_interval(engine: Engine) -> None:
    """Three intervals of one offer, two of them new since the rule looked: each is
    compared with the interval just before it, not the first one."""
    rule = moves("10")
    collect(engine, [offer("a", "10.00")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [offer("a", "8.00")], T0 + H)  # (8 - 10) / 10 = -20 %
    collect(engine, [offer("a", "7.60")], T0 + 2 * H)  # (7.60 - 8) / 8 = -5 %: quiet
    collect(engine, [offer("a", "9.12")], T0 + 3 * H)  # (9.12 - 7.60) / 7.60 = +20 %
    evaluate(engine, rule, ["slack"], now=T0 + 3 * H)
    assert [t for _, t in fired(engine)] == [
        "testcloud a us-east-1 on_demand: 10.00 → 8.00 USD/h (-20.00%)",
        "testcloud a us-east-1 on_demand: 7.60 → 9.12 USD/h (+20.00%)",
    ]


def test_a_change_below_the_threshold_needs_no_rate(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    """A rule in AED (no rate stored) cannot show any price; a change in one currency
    that does not reach its threshold is no alert, so it is not counted as one left
    out: only the 50 % move is."""
    rule = moves("10", currency="AED")
    collect(engine, [offer("a", "10.00"), offer("b", "10.00")], T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [offer("a", "9.90"), offer("b", "5.00")], T0 + H)  # -1 %, -50 %
    with caplog.at_level(logging.WARNING, logger="tracker.alerts.evaluate"):
        assert evaluate(engine, rule, ["slack"], now=T0 + H) == []
    assert "rule moves: 1 alert left out: no exchange rate for AED (1)" in caplog.text


def test_a_family_filtered_rule_reads_only_that_familys_changes(engine: Engine) -> None:
    rule = moves("5", gpu_model="A100", provider="testcloud")
    start = [
        offer("h", "10.00"),
        offer("a40", "10.00", gpu="A100-40GB"),
        offer("a80", "10.00", gpu="A100-80GB"),
        offer("l4", "10.00", gpu="L4"),
    ]
    collect(engine, start, T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, [offer(o.instance_type, "5.00", gpu=o.gpu_model) for o in start], T0 + H)
    evaluate(engine, rule, ["slack"], now=T0 + H)
    # every price halved (-50 %); only the two A100 variants are the rule's
    assert [t for _, t in fired(engine)] == [
        "testcloud a40 us-east-1 on_demand: 10.00 → 5.00 USD/h (-50.00%)",
        "testcloud a80 us-east-1 on_demand: 10.00 → 5.00 USD/h (-50.00%)",
    ]


def test_spot_is_compared_with_the_cheapest_on_demand_offer(engine: Engine) -> None:
    """Two on-demand offers of one machine (zones differ; the comparison ignores zones):
    10.00 and 8.00. Spot 6.00 is (8 - 6) / 8 = 25 % below the cheaper, (10 - 6) / 10 =
    40 % below the dearer: a 30 % rule stays quiet, a 25 % one fires at exactly 25 %."""
    market = [
        offer("g", "10.00"),
        offer("g", "8.00", zone="us-east-1b"),
        offer("g", "9.00", pricing="spot", zone="us-east-1a"),
    ]
    both = rules(
        {"name": "s30", "type": "spot_discount", "threshold_percent": 30},
        {"name": "s25", "type": "spot_discount", "threshold_percent": 25},
    )
    collect(engine, market, T0)  # spot 9.00: (8 - 9) / 8, no discount
    evaluate(engine, both, ["slack"], now=T0)
    collect(engine, [*market[:2], offer("g", "6.00", pricing="spot", zone="us-east-1a")], T0 + H)
    evaluate(engine, both, ["slack"], now=T0 + H)
    assert fired(engine) == [
        ("s25", "testcloud g us-east-1/us-east-1a spot 6.00 USD/h is 25.00% below on-demand 8.00")
    ]


def test_a_spot_rule_filters_the_spot_side_only(engine: Engine) -> None:
    """The rule names the A100 family; the on-demand offer it is compared with is found
    whatever the filters say (here the same machine's, of course the same GPU), and an
    H100 spot offer crossing the threshold is not the rule's."""
    rule = rules(
        {"name": "spot", "type": "spot_discount", "threshold_percent": 50, "gpu_model": "A100"}
    )

    def market(spot: str) -> list[Offer]:
        return [
            offer("a", "10.00", gpu="A100-80GB"),
            offer("a", spot, gpu="A100-80GB", pricing="spot", zone="us-east-1a"),
            offer("h", "10.00"),
            offer("h", spot, pricing="spot", zone="us-east-1a"),
        ]

    collect(engine, market("9.00"), T0)
    evaluate(engine, rule, ["slack"], now=T0)
    collect(engine, market("4.00"), T0 + H)  # (10 - 4) / 10 = 60 % for both machines
    evaluate(engine, rule, ["slack"], now=T0 + H)
    assert [t for _, t in fired(engine)] == [
        "testcloud a us-east-1/us-east-1a spot 4.00 USD/h is 60.00% below on-demand 10.00"
    ]
