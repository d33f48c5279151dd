"""How Lambda and RunPod report availability, from recorded responses (issue 13).

Lambda: ``regions_with_capacity_available`` (tests/fixtures/lambda/SOURCES.md); RunPod:
``lowestPrice.stockStatus`` and ``availableGpuCounts`` of the docs' "Check GPU type
availability" examples (tests/fixtures/runpod/SOURCES.md).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import respx
from sqlalchemy import Engine

from collectors.lambda_cloud import LambdaCollector, parse_instance_types
from collectors.runpod import parse_gpu_types
from tracker.collect import run_collector
from tracker.models import Availability, Offer
from tracker.settings import Settings
from tracker.store import migrate, reads
from tracker.store.series import availability_history

FIXTURES = Path(__file__).parent.parent / "fixtures"
LAMBDA_URL = "https://cloud.lambda.ai/api/v1/instance-types"
A, LOW, U, UNKNOWN = (
    Availability.AVAILABLE,
    Availability.LOW,
    Availability.UNAVAILABLE,
    Availability.UNKNOWN,
)
T0 = datetime(2026, 3, 1, tzinfo=UTC)


def load(path: str) -> Any:
    return json.loads((FIXTURES / path).read_text())


def no_skip(reason: str, detail: str) -> None:
    raise AssertionError(f"unexpected skip {reason}: {detail}")


# ------------------------------------------------------------------------- Lambda


def lambda_offers(body: Any, known: dict[str, set[str]] | None = None) -> dict[Any, Offer]:
    return {(o.instance_type, o.region): o for o in parse_instance_types(body, no_skip, known)}


def test_lambda_regions_with_capacity_are_available() -> None:
    offers = lambda_offers(load("lambda/instance_types.json"))
    # every (type, region) the response names has capacity there
    assert {k: o.availability for k, o in offers.items()} == {
        ("gpu_8x_h100_sxm5gdr", "us-west-1"): A,
        ("gpu_1x_a100_sxm4", "us-west-1"): A,
        ("gpu_1x_a100_sxm4", "us-east-1"): A,
    }


def test_lambda_known_region_without_capacity_stays_an_unavailable_offer() -> None:
    known = {
        # B200 was listed in us-east-1 before; now regions_with_capacity_available is []
        "gpu_8x_b200_sxm6": {"us-east-1"},
        # A100 was also in us-south-1, which the response no longer names
        "gpu_1x_a100_sxm4": {"us-west-1", "us-south-1"},
        # a type Lambda no longer lists at all: nothing to keep (it will be delisted)
        "gpu_1x_retired": {"us-west-1"},
    }
    offers = lambda_offers(load("lambda/instance_types.json"), known)
    b200 = offers[("gpu_8x_b200_sxm6", "us-east-1")]
    # still priced from the listed type: 4592 cents -> $45.92, 8 GPUs
    assert (b200.availability, b200.price_per_hour, b200.gpu_count) == (U, Decimal("45.92"), 8)
    assert offers[("gpu_1x_a100_sxm4", "us-south-1")].availability is U
    assert offers[("gpu_1x_a100_sxm4", "us-south-1")].price_per_hour == Decimal("1.48")
    assert offers[("gpu_1x_a100_sxm4", "us-west-1")].availability is A  # named: available
    assert not [k for k in offers if k[0] == "gpu_1x_retired"]
    assert len(offers) == 3 + 2


def _lambda_run(engine: Engine, body: Any, at: datetime) -> None:
    settings = Settings()
    with respx.mock:
        respx.get(LAMBDA_URL).mock(return_value=httpx.Response(200, json=body))
        summary = run_collector(engine, LambdaCollector(settings, "k"), settings, now=at)
    assert summary.error is None, summary.error


def test_lambda_type_out_of_capacity_is_kept_unavailable_not_delisted(engine: Engine) -> None:
    migrate.upgrade(engine)
    body = load("lambda/instance_types.json")
    _lambda_run(engine, body, T0)
    # the 8x H100 loses its only region's capacity: Lambda lists it with no region
    empty = json.loads(json.dumps(body))
    empty["data"]["gpu_8x_h100_sxm5gdr"]["regions_with_capacity_available"] = []
    _lambda_run(engine, empty, T0 + timedelta(hours=1))
    current = {(s.offer.instance_type, s.offer.region): s for s in reads.current_offers(engine)}
    h100 = current[("gpu_8x_h100_sxm5gdr", "us-west-1")]  # still listed
    assert h100.offer.availability is U
    assert h100.price_since == T0  # the price interval did not split
    assert {k for k, s in current.items() if s.offer.availability is A} == {
        ("gpu_1x_a100_sxm4", "us-west-1"),
        ("gpu_1x_a100_sxm4", "us-east-1"),
    }
    _lambda_run(engine, body, T0 + timedelta(hours=2))  # capacity is back
    history = availability_history(engine, h100.series_id)
    assert [(h.availability, h.first_seen) for h in history] == [
        (A, T0),
        (U, T0 + timedelta(hours=1)),
        (A, T0 + timedelta(hours=2)),
    ]


# ------------------------------------------------------------------------- RunPod


def runpod_offers(name: str) -> dict[tuple[str, str, str], Offer]:
    offers = parse_gpu_types(load(f"runpod/{name}"), no_skip)
    return {(o.instance_type, o.pricing.value, o.offering_class): o for o in offers}


def test_runpod_high_stock_secure_on_demand_by_available_gpu_counts() -> None:
    offers = runpod_offers("gpuTypes_stockStatus_high_docs_example.json")
    a4000 = "NVIDIA RTX A4000"
    secure = {n: offers[(f"{n}x {a4000}", "on_demand", "secure")] for n in (1, 2, 4, 8)}
    # stockStatus "High", availableGpuCounts [1, 2, 4]; maxGpuCount 8 (added, SOURCES.md)
    assert {n: o.availability for n, o in secure.items()} == {1: A, 2: A, 4: A, 8: U}
    # the unavailable 8x is still an offer at securePrice 0.35 x 8 = 2.80
    assert secure[8].price_per_hour == Decimal("2.80")
    assert secure[1].attributes["stock_status"] == "High"
    # the stock query asked about Secure Cloud: community and spot stay unknown
    others = [o for k, o in offers.items() if k[1:] != ("on_demand", "secure")]
    assert others and {o.availability for o in others} == {UNKNOWN}
    # communityPrice 0.2 x 4 = 0.80; secureSpotPrice 0.18 x 2 = 0.36
    assert offers[(f"4x {a4000}", "on_demand", "community")].price_per_hour == Decimal("0.80")
    assert offers[(f"2x {a4000}", "spot", "secure")].price_per_hour == Decimal("0.36")


def test_runpod_low_stock_is_low() -> None:
    offers = runpod_offers("gpuTypes_stockStatus_low_docs_example.json")
    a4000 = "NVIDIA RTX A4000"
    # stockStatus "Low", availableGpuCounts [1..7]: 1, 2, 4 low; 8 not in the list
    got = {n: offers[(f"{n}x {a4000}", "on_demand", "secure")].availability for n in (1, 2, 4, 8)}
    assert got == {1: LOW, 2: LOW, 4: LOW, 8: U}


def _with_stock(stock: Any) -> Any:
    body = load("runpod/gpuTypes_stockStatus_high_docs_example.json")
    body["data"]["gpuTypes"][0]["lowestPrice"] = stock
    return body


def test_runpod_null_stock_and_unknown_words() -> None:
    def secure_1x(body: Any) -> Offer:
        [o] = [
            o
            for o in parse_gpu_types(body, no_skip)
            if o.instance_type.startswith("1x ")
            and o.offering_class == "secure"
            and o.pricing.value == "on_demand"
        ]
        return o

    # null status and no count available: nothing to rent
    nothing = _with_stock({"stockStatus": None, "availableGpuCounts": []})
    assert secure_1x(nothing).availability is U
    # null status alone says nothing
    assert secure_1x(_with_stock({"stockStatus": None})).availability is UNKNOWN
    # no lowestPrice at all (an older query): unknown
    assert secure_1x(_with_stock(None)).availability is UNKNOWN
    # a word RunPod may add later is not guessed at; the raw word is kept
    odd = secure_1x(_with_stock({"stockStatus": "Plenty", "availableGpuCounts": [1]}))
    assert odd.availability is UNKNOWN and odd.attributes["stock_status"] == "Plenty"
    # "Medium" is rentable
    medium = secure_1x(_with_stock({"stockStatus": "Medium", "availableGpuCounts": [1, 2]}))
    assert medium.availability is A
