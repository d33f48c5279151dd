"""EC2 Capacity Blocks for ML: offerings -> capacity_block offers priced per instance-hour.

The payload is the AWS CLI example's three p4d.24xlarge offerings (SOURCES.md, derived):
24 h for 283 USD, 19 h for 228 USD, 43 h for 511 USD, one instance each, us-east-2a.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from collectors.aws import AwsCollector
from collectors.aws_capacity_blocks import BlockShape, parse_capacity_block_offerings
from collectors.base import RunContext
from tracker.capacity_blocks import (
    CapacityBlockTerms,
    block_fits,
    capacity_block_terms,
    valid_block_hours,
)
from tracker.models import Fabric, PricingModel
from tracker.settings import Settings

from .aws_helpers import instance_type_items
from .conftest import run_context

FIXTURE = (
    Path(__file__).resolve().parent.parent
    / "fixtures"
    / "aws"
    / "ec2_describe_capacity_block_offerings_p4d_derived.json"
)
D = Decimal


def _offerings() -> list[dict[str, Any]]:
    """As boto3 returns them: StartDate/EndDate parsed to datetimes."""
    items: list[dict[str, Any]] = json.loads(FIXTURE.read_text())["CapacityBlockOfferings"]
    for item in items:
        for key in ("StartDate", "EndDate"):
            item[key] = datetime.fromisoformat(item[key])
    return items


def _hardware() -> dict[str, Any]:
    from collectors.aws_hardware import parse_instance_types

    ctx = run_context()
    return parse_instance_types(instance_type_items(), ctx.skip)


def test_the_exact_shape_asked_for_is_priced_per_instance_hour() -> None:
    ctx = run_context()
    shape = BlockShape(1, 24)
    offers = parse_capacity_block_offerings(
        _offerings(), _hardware(), ctx.skip, region="us-east-2", shape=shape
    )
    assert not ctx.skips
    [offer] = offers  # one per (type, zone): the 24 h block of the three
    # 283 USD / (1 instance × 24 h) = 11.791666666666... -> 11.7916666667 (10 places);
    # the published list price is 11.80 USD per instance-hour (us-east-2, 2026-01-31).
    assert offer.price_per_hour == D("11.7916666667")
    assert (offer.pricing, offer.currency) == (PricingModel.CAPACITY_BLOCK, "USD")
    assert (offer.zone, offer.offering_class) == ("us-east-2a", "1x24h")
    assert offer.attributes["capacity_block_fee"] == D(283)
    assert offer.attributes["capacity_block_offering_id"] == "cb-0bfad2f7fb1b4478a"
    # The hardware is the type's: 8 A100 40 GB over NVLink, EFA 4 × 100 Gbps.
    assert (offer.gpu_model, offer.gpu_count) == ("A100-40GB", D(8))
    assert (offer.fabric, offer.network_gbps) == (Fabric.EFA, D(400))
    assert capacity_block_terms(offer) == CapacityBlockTerms(
        instances=1,
        hours=D(24),
        start=datetime(2025, 2, 15, 11, 30, tzinfo=UTC),
        end=datetime(2025, 2, 16, 11, 30, tzinfo=UTC),
        fee=D(283),
    )


def test_without_the_exact_shape_the_cheapest_other_is_kept_with_its_real_terms() -> None:
    ctx = run_context()
    blocks = [o for o in _offerings() if o["CapacityBlockDurationHours"] != 24]
    [offer] = parse_capacity_block_offerings(
        blocks, _hardware(), ctx.skip, region="us-east-2", shape=BlockShape(1, 24)
    )
    # 228 / 19 = 12.00 vs 511 / 43 = 11.8837209302...: the 43-hour block is cheaper.
    assert offer.price_per_hour == D("11.8837209302")
    assert offer.offering_class == "1x24h"  # the series is the shape asked for
    terms = capacity_block_terms(offer)
    assert terms is not None and (terms.instances, terms.hours) == (1, D(43))


def test_minutes_count_in_the_hours_and_several_instances_divide_the_fee() -> None:
    ctx = run_context()
    item = copy.deepcopy(_offerings()[0])
    # 8 instances for 24 h 30 min at 2,352 USD: 2,352 / (8 × 24.5) = 12.00 per instance-hour.
    item |= {"InstanceCount": 8, "CapacityBlockDurationMinutes": 30, "UpfrontFee": "2352"}
    [offer] = parse_capacity_block_offerings(
        [item], _hardware(), ctx.skip, region="us-east-2", shape=BlockShape(8, 24)
    )
    assert offer.price_per_hour == D("12.0000000000")
    terms = capacity_block_terms(offer)
    assert terms is not None and (terms.instances, terms.hours) == (8, D("24.5"))


def test_ultraservers_unknown_types_and_bad_fees_are_counted_skips() -> None:
    ctx = run_context()
    ultra, unknown, free = (copy.deepcopy(_offerings()[0]) for _ in range(3))
    ultra |= {"UltraserverType": "u-p6e-gb200x72", "UltraserverCount": 1}
    unknown |= {"InstanceType": "p9.96xlarge"}
    free |= {"UpfrontFee": "0"}
    offers = parse_capacity_block_offerings(
        [ultra, unknown, free], _hardware(), ctx.skip, region="us-east-2", shape=BlockShape(1, 24)
    )
    assert offers == []
    assert set(ctx.skips) == {
        "ultraserver_capacity_block",
        "unknown_instance_type",
        "zero_price",
    }


@pytest.mark.parametrize(
    ("hours", "valid"),
    [(24, True), (336, True), (504, True), (4368, True), (12, False), (360, False), (4536, False)],
)
def test_block_lengths_aws_accepts(hours: int, valid: bool) -> None:
    # 14 days = 336 h; 21 days (504 h) is whole weeks; 15 days (360 h) is neither;
    # 182 days = 4,368 h is the longest; 189 days (4,536 h) is too long.
    assert valid_block_hours(hours) is valid


def test_a_block_fits_a_job_of_its_size_and_length() -> None:
    terms = CapacityBlockTerms(8, D(168), datetime(2026, 1, 5, 11, 30, tzinfo=UTC))
    assert block_fits(terms, 8, D(168))
    assert block_fits(terms, 2, D(10))
    assert not block_fits(terms, 9, D(10))  # more nodes than the block holds
    assert not block_fits(terms, 8, D("168.5"))  # longer than the block


def test_other_offers_have_no_block_terms() -> None:
    from tracker.capacity_blocks import terms_from_attributes

    assert terms_from_attributes(PricingModel.ON_DEMAND, {"capacity_block_hours": 24}) is None
    assert terms_from_attributes("capacity_block", {"capacity_block_hours": 24}) is None


def _collector(settings: Settings) -> tuple[AwsCollector, Stubber]:
    session = boto3.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-2"
    )
    collector = AwsCollector(settings, session=session)
    stubber = Stubber(collector.client("ec2", "us-east-2"))
    stubber.activate()
    return collector, stubber


def _ctx(settings: Settings) -> RunContext:
    return run_context(settings, scope=frozenset({PricingModel.CAPACITY_BLOCK}))


BLOCK_SETTINGS = {
    "regions": ["us-east-2"],
    "capacity_block_types": ["p4d.24xlarge", "p5.48xlarge"],
    "capacity_block_instance_counts": [1],
    "capacity_block_hours": [24],
}


def test_the_collector_asks_each_shape_of_each_type_through_boto3() -> None:
    settings = Settings(aws=BLOCK_SETTINGS)
    collector, stubber = _collector(settings)
    stubber.add_response("describe_instance_types", {"InstanceTypes": instance_type_items()}, {})
    for itype, items in (("p4d.24xlarge", _offerings()), ("p5.48xlarge", [])):
        expected = {"InstanceType": itype, "InstanceCount": 1, "CapacityDurationHours": 24}
        stubber.add_response(
            "describe_capacity_block_offerings", {"CapacityBlockOfferings": items}, expected
        )
    ctx = _ctx(settings)
    offers = list(collector.collect(ctx))
    stubber.assert_no_pending_responses()
    assert [(o.instance_type, o.price_per_hour) for o in offers] == [
        ("p4d.24xlarge", D("11.7916666667"))
    ]
    assert not ctx.partial


def test_a_refused_type_is_a_skip_and_throttling_marks_the_region_partial() -> None:
    settings = Settings(aws=BLOCK_SETTINGS | {"max_attempts": 1})
    collector, stubber = _collector(settings)
    stubber.add_response("describe_instance_types", {"InstanceTypes": instance_type_items()}, {})
    stubber.add_client_error("describe_capacity_block_offerings", "InvalidParameterValue")
    stubber.add_client_error("describe_capacity_block_offerings", "RequestLimitExceeded")
    ctx = _ctx(settings)
    assert list(collector.collect(ctx)) == []
    refused = "capacity_block_refused: us-east-2 p4d.24xlarge 1x24h: InvalidParameterValue"
    assert refused in ctx.details
    assert "RequestLimitExceeded" in ctx.partial["us-east-2"]


def test_bad_block_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="a capacity block holds 1-64"):
        Settings(aws={"capacity_block_instance_counts": [65]})
    with pytest.raises(ValueError, match="whole days"):
        Settings(aws={"capacity_block_hours": [36]})


def test_a_stored_block_reads_back_with_its_terms(db_url: str) -> None:
    from tracker.collect import run_collector
    from tracker.store import migrate
    from tracker.store.engine import make_engine
    from tracker.store.reads import current_offers

    engine = make_engine(db_url)
    migrate.upgrade(engine)
    settings = Settings(aws=BLOCK_SETTINGS | {"capacity_block_types": ["p4d.24xlarge"]})
    collector, stubber = _collector(settings)
    stubber.add_response("describe_instance_types", {"InstanceTypes": instance_type_items()}, {})
    stubber.add_response(
        "describe_capacity_block_offerings", {"CapacityBlockOfferings": _offerings()}, None
    )
    scope = frozenset({PricingModel.CAPACITY_BLOCK})
    summary = run_collector(
        engine, collector, settings, pricing_scope=scope, now=datetime(2025, 2, 14, tzinfo=UTC)
    )
    assert summary.status == "succeeded", summary.error
    [stored] = current_offers(engine)
    offer = stored.offer
    assert (offer.pricing, offer.offering_class) == (PricingModel.CAPACITY_BLOCK, "1x24h")
    assert offer.price_per_hour == D("11.7916666667")  # 283 / (1 × 24), to the store's scale
    terms = capacity_block_terms(offer)
    assert terms is not None
    assert (terms.instances, terms.hours, terms.fee) == (1, D(24), D(283))
    assert terms.start == datetime(2025, 2, 15, 11, 30, tzinfo=UTC)
    engine.dispose()
