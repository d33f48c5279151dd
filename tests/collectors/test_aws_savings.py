"""AWS Savings Plans rates -> savings_plan_1y/3y offers: the pure parser on the recorded
shape, the nextToken loop through botocore's Stubber, and the whole collector against a
local server that answers ``POST /DescribeSavingsPlansOfferingRates`` as the API does."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from sqlalchemy import Engine, select

from collectors.aws_savings import (
    SAVINGS_PLANS,
    fetch_savings_plan_rates,
    parse_savings_plan_rates,
    savings_plan_request,
)
from tracker.collect import run_collector
from tracker.models import PricingModel
from tracker.store.schema import PricePoint, Series

from .aws_helpers import Answer, LocalAwsServer, hardware, load
from .conftest import MakeContext, run_context
from .test_aws_collector import ALL_TYPES, NOW, US, Harness, _price_list, _settings

PAGES: list[dict[str, Any]] = load("savingsplans_describe_offering_rates_gpu_pages_derived.json")
RATES = [r for page in PAGES for r in page["searchResults"]]
JSON = {"Content-Type": "application/json"}


def _parse(rates: list[dict[str, Any]], **kw: Any) -> tuple[list[Any], Any]:
    ctx = run_context()
    offers = list(parse_savings_plan_rates(rates, hardware(), ctx.skip, region="us-east-1", **kw))
    return offers, ctx


# ------------------------------------------------------------------------------ parser


def test_each_plan_type_term_and_payment_option_is_its_own_offer() -> None:
    offers, ctx = _parse(RATES)
    got = {
        (o.instance_type, o.pricing.value, o.offering_class, o.payment_option): o.price_per_hour
        for o in offers
    }
    # the fixture's Linux/UNIX shared rates, as they come (the rate is already per hour)
    assert got == {
        ("p5.48xlarge", "savings_plan_1y", "ec2_instance", "no_upfront"): Decimal("33.8"),
        ("p5.48xlarge", "savings_plan_3y", "ec2_instance", "no_upfront"): Decimal("21.0"),
        ("p5.48xlarge", "savings_plan_3y", "ec2_instance", "all_upfront"): Decimal("18.9"),
        ("p5.48xlarge", "savings_plan_3y", "compute", "partial_upfront"): Decimal("22.6"),
        ("p5.48xlarge", "savings_plan_1y", "compute", "all_upfront"): Decimal("36.2"),
        ("g5.xlarge", "savings_plan_1y", "ec2_instance", "no_upfront"): Decimal("0.636"),
    }
    # Windows (RunInstances:0002) and Dedicated are re-checked out; the repeat is one skip
    assert ctx.skips == {"filtered_attributes": 2, "duplicate_offer": 1}
    p5 = next(o for o in offers if o.pricing is PricingModel.SAVINGS_PLAN_3Y)
    assert (p5.gpu_model, p5.gpu_count, p5.currency, p5.region) == (
        "H100-SXM", Decimal(8), "USD", "us-east-1"
    )  # fmt: skip
    assert p5.attributes["savings_plan_type"] == "EC2Instance"
    assert (
        p5.attributes["savings_plan_offering_id"] == RATES[1]["savingsPlanOffering"]["offeringId"]
    )
    assert p5.price_per_hour_usd == Decimal("21.0000000000")


def test_the_run_scope_keeps_only_the_terms_it_asks_for() -> None:
    offers, _ = _parse(RATES, scope=frozenset({PricingModel.SAVINGS_PLAN_3Y}))
    assert {o.pricing for o in offers} == {PricingModel.SAVINGS_PLAN_3Y}
    assert len(offers) == 3


def _changed(**changes: Any) -> dict[str, Any]:
    rate = copy.deepcopy(RATES[1])
    for path, value in changes.items():
        *parents, leaf = path.split("__")
        target = rate
        for p in parents:
            target = target[p]
        if value is None:
            del target[leaf]
        else:
            target[leaf] = value
    return rate


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"savingsPlanOffering__durationSeconds": 15_768_000}, "unknown_savings_plan"),  # ½ year
        ({"savingsPlanOffering__planType": "SageMaker"}, "unknown_savings_plan"),
        ({"savingsPlanOffering__paymentOption": "Monthly"}, "unknown_savings_plan"),
        ({"savingsPlanOffering__currency": None}, "malformed_item"),
        ({"rate": "n/a"}, "malformed_item"),
        ({"rate": "0.0000000000"}, "zero_price"),
        ({"unit": "Lambda-GB-Second"}, "filtered_attributes"),
        ({"usageType": "DedicatedUsage:p5.48xlarge"}, "filtered_attributes"),
        ({"properties": [{"name": "region", "value": "us-east-1"}]}, "not_an_instance"),
    ],
)
def test_a_rate_that_cannot_be_priced_is_one_skip(changes: dict[str, Any], reason: str) -> None:
    offers, ctx = _parse([_changed(**changes), RATES[0]])
    assert len(offers) == 1  # the other rate is still priced
    assert ctx.skips == {reason: 1}


def test_a_rate_of_another_region_or_type_without_a_gpu_is_skipped() -> None:
    other = _changed()
    other["properties"][0]["value"] = "eu-west-1"
    cpu = _changed(usageType="BoxUsage:c7i.large")
    cpu["properties"][1]["value"] = "c7i.large"
    offers, ctx = _parse([other, cpu])
    assert offers == []
    assert ctx.skips == {"filtered_attributes": 1, "unknown_gpu": 1}


# ------------------------------------------------------------- nextToken (no paginator)


def _client() -> Any:
    return boto3.client(
        "savingsplans",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def test_botocore_has_no_paginator_so_pages_follow_next_token() -> None:
    client = _client()
    assert not client.can_paginate("describe_savings_plans_offering_rates")
    request = savings_plan_request("us-east-1", ["p5.48xlarge", "g5.xlarge"])
    with Stubber(client) as stub:
        stub.add_response("describe_savings_plans_offering_rates", PAGES[0], request)
        stub.add_response(
            "describe_savings_plans_offering_rates",
            PAGES[1],
            {**request, "nextToken": PAGES[0]["nextToken"]},
        )
        rates = fetch_savings_plan_rates(client, "us-east-1", ["p5.48xlarge", "g5.xlarge"])
        stub.assert_no_pending_responses()
    assert rates == RATES
    assert request["filters"][3] == {"name": "instanceType", "values": ["g5.xlarge", "p5.48xlarge"]}


def test_a_repeated_token_ends_the_pages() -> None:
    client = _client()
    looping = {**PAGES[1], "nextToken": "same"}
    with Stubber(client) as stub:
        stub.add_response("describe_savings_plans_offering_rates", looping)
        stub.add_response("describe_savings_plans_offering_rates", looping)
        rates = fetch_savings_plan_rates(client, "us-east-1", ["g5.xlarge"])
        stub.assert_no_pending_responses()
    assert len(rates) == 2 * len(PAGES[1]["searchResults"])


# ------------------------------------------------------- the collector, local server


class SavingsPlansServer:
    """The Savings Plans REST-JSON endpoint: ``POST /DescribeSavingsPlansOfferingRates``
    answers the recorded pages by ``nextToken``, or an error when ``error`` is set."""

    def __init__(self, error: tuple[int, str] | None = None) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []

        def respond(path: str, headers: Mapping[str, str], raw: bytes) -> Answer:
            body = json.loads(raw or b"{}")
            self.requests.append((path, body))
            if error is not None:
                status, code = error
                # REST-JSON errors: the code in x-amzn-ErrorType, the text in the body
                return status, {**JSON, "x-amzn-ErrorType": code}, {"message": f"{code} (local)"}
            later = body.get("nextToken") == PAGES[0]["nextToken"]
            return 200, JSON, PAGES[1] if later else PAGES[0]

        self._server = LocalAwsServer(respond)
        self.url = self._server.url

    def close(self) -> None:
        self._server.close()


@pytest.fixture
def plans_server() -> Iterator[SavingsPlansServer]:
    server = SavingsPlansServer()
    yield server
    server.close()


def _harness(url: str) -> tuple[Harness, Any]:
    settings = _settings(spot=False, savings_plans=True, savingsplans_endpoint_url=url)
    h = Harness(settings)
    h.instance_types("us-east-1")
    h.products("us-east-1", _price_list(f"p5.48xlarge@{US}", f"g5.xlarge@{US}"), ALL_TYPES)
    return h, settings


def test_a_run_stores_the_savings_plans_of_the_types_the_price_list_priced(
    sqlite_engine: Engine, plans_server: SavingsPlansServer
) -> None:
    h, settings = _harness(plans_server.url)
    summary = run_collector(sqlite_engine, h.collector, settings, now=NOW)
    h.verify()
    assert summary.status == "succeeded", summary.error
    # two pages, the second asked for with the first's token; the filters are the offers'
    assert [path for path, _ in plans_server.requests] == ["/DescribeSavingsPlansOfferingRates"] * 2
    first, second = (body for _, body in plans_server.requests)
    assert first == savings_plan_request("us-east-1", ["g5.xlarge", "p5.48xlarge"])
    assert second == {**first, "nextToken": PAGES[0]["nextToken"]}
    assert summary.skip_reasons == {"filtered_attributes": 2, "duplicate_offer": 1}
    stmt = (
        select(Series.pricing, Series.offering_class, Series.payment_option, PricePoint.price)
        .join(PricePoint, PricePoint.series_id == Series.id)
        .where(Series.pricing.in_([m.value for m in SAVINGS_PLANS]))
        .where(Series.instance_type == "p5.48xlarge")
    )
    with sqlite_engine.connect() as conn:
        stored = {(p, c, o): price for p, c, o, price in conn.execute(stmt)}
    assert stored[("savings_plan_3y", "ec2_instance", "all_upfront")] == Decimal("18.9")
    assert len(stored) == 5


def test_savings_plans_failing_mark_the_region_partial_and_keep_the_rest(
    sqlite_engine: Engine,
) -> None:
    server = SavingsPlansServer(error=(400, "AccessDeniedException"))
    try:
        h, settings = _harness(server.url)
        summary = run_collector(sqlite_engine, h.collector, settings, now=NOW)
    finally:
        server.close()
    h.verify()
    # the only region failed only its savings plans: the run succeeds, nothing is delisted
    assert summary.status == "succeeded", summary.error
    assert "AccessDeniedException" in summary.partial_regions["us-east-1"]
    assert summary.partial_regions["us-east-1"].startswith("savings plans: ")
    with sqlite_engine.connect() as conn:
        pricings = set(conn.execute(select(Series.pricing).distinct()).scalars())
    assert pricings == {"on_demand", "reserved_1y", "reserved_3y"}


def test_savings_plans_off_or_out_of_scope_make_no_call(
    plans_server: SavingsPlansServer, make_ctx: MakeContext
) -> None:
    h, settings = _harness(plans_server.url)
    scope = frozenset({PricingModel.ON_DEMAND})
    offers = list(h.collector.collect(make_ctx(settings, scope=scope)))
    assert offers and plans_server.requests == []
    off = _settings(spot=False, savings_plans=False, savingsplans_endpoint_url=plans_server.url)
    h2 = Harness(off)
    h2.instance_types("us-east-1")
    h2.products("us-east-1", _price_list(f"g5.xlarge@{US}"), ALL_TYPES)
    assert {o.pricing for o in h2.collector.collect(make_ctx(off))} <= {
        PricingModel.ON_DEMAND, PricingModel.RESERVED_1Y, PricingModel.RESERVED_3Y
    }  # fmt: skip
    assert plans_server.requests == []
