"""Spot history (per zone, at its own timestamps) and the Spot Instance Advisor feed."""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pytest
import respx

from collectors.aws_spot import parse_spot_history
from collectors.aws_spot_advisor import fetch_spot_advisor, parse_spot_advisor
from collectors.base import RunContext
from tracker.models import PricingModel
from tracker.settings import HttpSettings

from .aws_helpers import hardware, load

ADVISOR_URL = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"


def test_several_zones_and_timestamps_become_points_per_zone_in_time_order(
    ctx: RunContext,
) -> None:
    items = load("ec2_describe_spot_price_history_g5_xlarge_derived.json")["SpotPriceHistory"]
    offers = parse_spot_history(items, hardware(), ctx.skip, region="us-east-1")
    assert not ctx.skips
    assert len(offers) == len(items) == 30
    per_zone: dict[str, list[tuple[datetime, Decimal]]] = defaultdict(list)
    for offer in offers:
        assert offer.pricing is PricingModel.SPOT
        assert offer.observed_at is not None
        per_zone[offer.zone].append((offer.observed_at, offer.price_per_hour))
    assert set(per_zone) == {"us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f"}
    for points in per_zone.values():
        assert [t for t, _ in points] == sorted(t for t, _ in points)
    # Newest us-east-1f point: 2021-02-09T01:40:10+00:00, derived as 0.0437 x 1.006 / 0.096
    # = 0.457939583... -> "0.457940" in the fixture (SpotPrice keeps 6 decimals).
    assert per_zone["us-east-1f"][-1] == (
        datetime(2021, 2, 9, 1, 40, 10, tzinfo=UTC),
        Decimal("0.457940"),
    )
    assert len(per_zone["us-east-1f"]) == 7
    g5 = offers[0]
    assert (g5.gpu_model, g5.instance_type, g5.region) == ("A10G", "g5.xlarge", "us-east-1")


def test_spot_items_for_unknown_types_and_bad_prices_are_skipped(ctx: RunContext) -> None:
    real = load("ec2_describe_spot_price_history_m5_large_trimmed.json")["SpotPriceHistory"]
    derived = load("ec2_describe_spot_price_history_g5_xlarge_derived.json")["SpotPriceHistory"]
    bad_price = dict(derived[0], SpotPrice="0.000000")
    bad_time = dict(derived[1], Timestamp="yesterday")
    windows = dict(derived[2], ProductDescription="Windows")
    offers = parse_spot_history(
        [real[0], bad_price, bad_time, windows, derived[3]],
        hardware(),
        ctx.skip,
        region="us-east-1",
    )
    assert ctx.skips == Counter(
        {"filtered_attributes": 1, "malformed_spot_item": 1, "unknown_gpu": 1, "zero_price": 1}
    )
    assert len(offers) == 1


def test_advisor_feed_parses_buckets_and_savings() -> None:
    advice = parse_spot_advisor(load("spot_advisor_data_trimmed.json"))
    assert set(advice) == {"us-east-1", "us-west-2", "eu-west-1"}
    # us-east-1 Linux: p3dn.24xlarge {"s": 87, "r": 4} and g6e.xlarge {"s": 58, "r": 1}.
    p3dn = advice["us-east-1"]["p3dn.24xlarge"]
    assert (p3dn.interruption_bucket, p3dn.interruption_max_pct, p3dn.spot_savings_pct) == (
        ">20%",
        100,
        87,
    )
    g6e = advice["us-east-1"]["g6e.xlarge"]
    assert (g6e.interruption_bucket, g6e.interruption_max_pct) == ("5-10%", 10)


def test_advisor_figures_ride_on_spot_offers(ctx: RunContext) -> None:
    advice = parse_spot_advisor(load("spot_advisor_data_trimmed.json"))
    items = load("ec2_describe_spot_price_history_g5_xlarge_derived.json")["SpotPriceHistory"]
    offers = parse_spot_history(
        items[:2], hardware(), ctx.skip, region="us-east-1", risk=advice["us-east-1"]
    )
    g5 = advice["us-east-1"]["g5.xlarge"]
    for offer in offers:
        assert offer.attributes["interruption_bucket"] == g5.interruption_bucket
        assert offer.attributes["interruption_max_pct"] == g5.interruption_max_pct
        assert offer.attributes["spot_savings_pct"] == g5.spot_savings_pct


@respx.mock
def test_advisor_fetch_uses_the_configured_url() -> None:
    url = "http://mirror.internal:8080/spot-advisor-data.json"
    route = respx.get(url).mock(
        return_value=httpx.Response(200, json=load("spot_advisor_data_trimmed.json"))
    )
    advice = fetch_spot_advisor(url, HttpSettings(max_retries=0))
    assert route.called
    assert "g5.xlarge" in advice["us-west-2"]


@respx.mock
@pytest.mark.parametrize(
    "response",
    [httpx.Response(404, text="NoSuchKey"), httpx.Response(200, json={"unexpected": True})],
)
def test_advisor_failure_is_a_warning_not_an_error(
    response: httpx.Response, caplog: pytest.LogCaptureFixture
) -> None:
    respx.get(ADVISOR_URL).mock(return_value=response)
    with caplog.at_level(logging.WARNING):
        assert fetch_spot_advisor(ADVISOR_URL, HttpSettings(max_retries=0)) == {}
    assert "spot advisor data unavailable" in caplog.text
