"""Lium collector over gpuhunt's recorded nodes feed (tests/fixtures/lium/SOURCES)."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import ALL_PRICING, CollectorError, NotConfigured, RunContext
from collectors.lium import LiumCollector, aggregate
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "lium" / "nodes.json"
URL = "https://lium.io/api/public/v1/nodes"
OD, SPOT = PricingModel.ON_DEMAND, PricingModel.SPOT


def payload() -> Any:
    return json.loads(FIXTURE.read_text())


def parse(
    body: Any, scope: frozenset[PricingModel] = ALL_PRICING
) -> tuple[dict[tuple[str, str, PricingModel], Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    offers = aggregate(body, lambda r, d: skips.append((r, d)), scope)
    return {(o.instance_type, o.region, o.pricing): o for o in offers}, skips


def test_one_series_per_rentable_count_priced_per_gpu_times_count() -> None:
    offers, skips = parse(payload())
    assert skips == []
    # 8x RTX 5090 (smallest order 8) at 0.5 -> 4.0; H200 5 of 8 free, smallest 1 -> 1..5 at
    # 3.99 each: 3.99, 7.98, 11.97, 15.96, 19.95; 1x RTX 5090 spot tier 0.5; 8x A100 1.23 -> 9.84
    assert {k: o.price_per_hour for k, o in offers.items()} == {
        ("8x RTX 5090", "jp-13", OD): Decimal("4.0"),
        ("1x H200", "us-ms", OD): Decimal("3.99"),
        ("2x H200", "us-ms", OD): Decimal("7.98"),
        ("3x H200", "us-ms", OD): Decimal("11.97"),
        ("4x H200", "us-ms", OD): Decimal("15.96"),
        ("5x H200", "us-ms", OD): Decimal("19.95"),
        ("1x RTX 5090", "us-mn", SPOT): Decimal("0.5"),
        ("8x A100-SXM4-80GB", "us-va", OD): Decimal("9.84"),
    }
    two = offers[("2x H200", "us-ms", OD)]
    # a part-rental's share of the host: 192 CPUs x 2/8 = 48, 2015 GB x 2/8 = 503.75
    assert (two.vcpus, two.attributes["ram_gb"]) == (Decimal(48), Decimal("503.75"))
    assert (two.gpu_model, two.gpu_count, two.offering_class) == ("H200", Decimal(2), "secure")
    assert two.availability == Availability.AVAILABLE and two.currency == "USD"
    assert offers[("1x RTX 5090", "us-mn", SPOT)].offering_class == "spot"
    assert offers[("8x A100-SXM4-80GB", "us-va", OD)].gpu_model == "A100-80GB"


def test_same_series_on_two_nodes_is_the_cheapest_with_median_and_count() -> None:
    body = payload()
    dearer = copy.deepcopy(body["nodes"][1])
    dearer.update(id="other", price_per_gpu_hour=4.59, available_gpu_count=1)
    body["nodes"].append(dearer)
    offers, _ = parse(body)
    one = offers[("1x H200", "us-ms", OD)]
    # min(3.99, 4.59) = 3.99; median (3.99 + 4.59) / 2 = 4.29; two nodes
    assert one.price_per_hour == Decimal("3.99")
    assert one.attributes["median_price_per_gpu_hour"] == Decimal("4.29")
    assert one.attributes["offer_count"] == 2
    assert offers[("2x H200", "us-ms", OD)].attributes["offer_count"] == 1


def test_gpu_memory_tells_a_bare_a100_apart() -> None:
    body = payload()
    body["nodes"][3]["gpu_model"] = "A100"  # gpu_memory_gb 80
    offers, _ = parse(body)
    a100 = offers[("8x A100", "us-va", OD)]
    assert (a100.gpu_model, a100.gpu_raw_name, a100.gpu_known) == ("A100-80GB", "A100", True)
    assert a100.attributes["gpu_memory_gb"] == Decimal(80)


def test_scope_leaves_out_the_spot_tier() -> None:
    offers, _ = parse(payload(), frozenset({OD}))
    assert SPOT not in {p for _, _, p in offers} and len(offers) == 7


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"price_per_gpu_hour": None}, "malformed_item"),
        ({"price_per_gpu_hour": 0}, "zero_price"),
        ({"gpu_model": None}, "malformed_item"),
        ({"country_code": None}, "no_location"),
        ({"available_gpu_count": 3, "min_rentable_gpu_count": 4}, "not_rentable"),
    ],
)
def test_unpriceable_node_is_a_counted_skip(change: dict[str, Any], reason: str) -> None:
    body = payload()
    body["nodes"][1].update(change)
    offers, skips = parse(body)
    assert [r for r, _ in skips] == [reason]
    assert skips[0][1].startswith("node f092246d-5704-4c9e-b57f-7c0710a06deb: ")
    assert len(offers) == 3  # the other nodes still count


def test_region_is_the_country_alone_without_a_subdivision() -> None:
    body = payload()
    body["nodes"] = [body["nodes"][2] | {"region": None}]
    offers, _ = parse(body)
    assert list(offers) == [("1x RTX 5090", "us", SPOT)]


def test_response_without_nodes_fails_the_run() -> None:
    with pytest.raises(CollectorError, match=r"^lium: response has no 'nodes' list$"):
        parse({"nodes": {}})


@respx.mock
def test_collect_needs_no_key_and_sends_none() -> None:
    route = respx.get(URL).mock(return_value=httpx.Response(200, json=payload()))
    settings = Settings()
    offers = list(LiumCollector.from_settings(settings).collect(RunContext(settings=settings)))
    assert "authorization" not in route.calls[0].request.headers and len(offers) == 8
    with pytest.raises(NotConfigured, match=r"lium.enabled = false"):
        LiumCollector.from_settings(Settings(lium={"enabled": False}))
