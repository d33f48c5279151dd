"""Vast.ai collector over pages derived from one real offer (tests/fixtures/vastai/SOURCES.md)."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from collectors.base import CollectorError, NotConfigured, RunContext
from collectors.vastai import VastAiCollector, aggregate
from tracker.models import Offer, PricingModel
from tracker.settings import Settings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "vastai"
URL = "https://console.vast.ai/api/v0/bundles/"
OD, SPOT = PricingModel.ON_DEMAND, PricingModel.SPOT
STORAGE = Decimal(100)


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def by_key(offers: list[Offer]) -> dict[tuple[str, str, str], Offer]:
    return {(o.instance_type, o.region, o.offering_class): o for o in offers}


def test_min_and_median_per_aggregate_on_a_small_page() -> None:
    skips: list[tuple[str, str]] = []
    offers = by_key(
        aggregate(
            load("bundles_on_demand_page_derived.json")["offers"],
            OD,
            STORAGE,
            lambda r, d: skips.append((r, d)),
        )
    )
    assert set(offers) == {
        ("1x RTX 4090", "CN", "verified"),
        ("1x RTX 4090", "CN", "unverified"),
        ("2x RTX 4090", "US", "verified"),
    }
    cn = offers[("1x RTX 4090", "CN", "verified")]
    # dph_total of the rentable verified CN 1x offers: 0.2466759259259259, 0.31, 0.4
    # (0.12 is not rentable; the 0.2 one has no country). min = 0.2466759259259259,
    # stored to 10 places -> 0.2466759259; median of three = 0.31; count 3.
    assert cn.price_per_hour == Decimal("0.2466759259")
    assert cn.attributes["median_price_per_hour"] == Decimal("0.3100000000")
    assert cn.attributes["offer_count"] == 3
    assert cn.attributes["allocated_storage_gb"] == STORAGE
    assert cn.pricing is OD and cn.currency == "USD"
    # gpu_name "RTX 4090", gpu_ram 24564 MiB -> 24564 / 1024 = 23.98828125 GiB
    assert (cn.gpu_model, cn.gpu_known, cn.gpu_count) == ("RTX-4090", True, 1)
    assert cn.gpu_memory_gib == Decimal("23.98828125")

    us = offers[("2x RTX 4090", "US", "verified")]
    # 0.55 and 0.61: min 0.55, median (0.55 + 0.61) / 2 = 0.58, count 2
    assert us.price_per_hour == Decimal("0.5500000000")
    assert us.attributes["median_price_per_hour"] == Decimal("0.5800000000")
    assert us.attributes["offer_count"] == 2 and us.gpu_count == 2

    unverified = offers[("1x RTX 4090", "CN", "unverified")]
    assert unverified.price_per_hour == Decimal("0.2900000000")
    assert unverified.attributes["offer_count"] == 1

    # geolocation null -> counted skip, never filed under a guessed country
    assert skips == [("no_country", "offer 90000007: geolocation None has no ISO country code")]


def test_bid_offers_become_spot_from_min_bid_plus_storage() -> None:
    offers = aggregate(
        load("bundles_bid_page_derived.json")["offers"], SPOT, STORAGE, lambda r, d: None
    )
    assert len(offers) == 1
    spot = offers[0]
    assert (spot.instance_type, spot.region, spot.offering_class) == (
        "1x RTX 4090",
        "CN",
        "verified",
    )
    assert spot.pricing is SPOT
    # min_bid 0.2 + storage_total_cost 0.00000925925925925926 = 0.20000925925925925926
    # -> 10 places, half-even: 0.2000092593
    assert spot.price_per_hour == Decimal("0.2000092593")
    # the other bid: 0.25 + 0.00000925925925925926; median of the two =
    # (0.20000925925925925926 + 0.25000925925925925926) / 2 = 0.22500925925925925926
    assert spot.attributes["median_price_per_hour"] == Decimal("0.2250092593")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"dph_total": None}, "malformed_item"),
        ({"dph_total": "0.24"}, "malformed_item"),
        ({"num_gpus": 0}, "malformed_item"),
        ({"verification": None}, "malformed_item"),
        ({"geolocation": "Somewhere"}, "no_country"),
        ({"dph_total": 0}, "zero_price"),
    ],
)
def test_malformed_offer_is_a_counted_skip(change: dict[str, Any], reason: str) -> None:
    real = load("cli_search_offers_raw_rtx4090_single.json")[0]
    broken = {**copy.deepcopy(real), **change}
    skips: list[tuple[str, str]] = []
    offers = aggregate([broken], OD, STORAGE, lambda r, d: skips.append((r, d)))
    assert offers == [] and [r for r, _ in skips] == [reason]


# ----------------------------------------------------------------- collector


def run(
    settings: Settings, scope: frozenset[PricingModel] = frozenset({OD, SPOT})
) -> tuple[list[Offer], RunContext]:
    ctx = RunContext(settings=settings, pricing_scope=scope, source="vastai")
    collector = VastAiCollector.from_settings(settings)
    collector._sleep = lambda s: None
    return list(collector.collect(ctx)), ctx


def body(request: httpx.Request) -> Any:
    return json.loads(request.content)


@respx.mock
def test_collect_searches_on_demand_and_bids_with_the_storage_setting() -> None:
    on_demand = load("bundles_on_demand_page_derived.json")
    bids = load("bundles_bid_page_derived.json")

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=on_demand if body(request)["type"] == "on-demand" else bids)

    route = respx.post(URL).mock(side_effect=reply)
    offers, ctx = run(Settings(vastai={"allocated_storage": 50}))
    sent = [body(c.request) for c in route.calls]
    assert [s["type"] for s in sent] == ["on-demand", "bid"]
    assert all(s["allocated_storage"] == 50 and s["rentable"] == {"eq": True} for s in sent)
    assert sent[0]["order"] == [["dph_total", "asc"]] and sent[1]["order"] == [["min_bid", "asc"]]
    assert len([o for o in offers if o.pricing is OD]) == 3
    assert len([o for o in offers if o.pricing is SPOT]) == 1
    assert ctx.skips["no_country"] == 1


@respx.mock
def test_a_full_page_is_followed_by_the_next_price_band() -> None:
    page = load("bundles_on_demand_page_derived.json")["offers"]
    cheapest_first = sorted(
        (o for o in page if o["rentable"] and o["geolocation"]), key=lambda o: o["dph_total"]
    )  # dph_total 0.2466…, 0.29, 0.31, 0.4, 0.55, 0.61
    route = respx.post(URL).mock(
        side_effect=[
            # limit 3: a full page (0.2466…, 0.29, 0.31) may hide more offers ...
            httpx.Response(200, json={"offers": cheapest_first[:3]}),
            # ... so the next band starts at its top price, 0.31 (returned again, de-duplicated)
            httpx.Response(200, json={"offers": cheapest_first[2:5]}),
            # 0.55 again and 0.61: a short page, the search is complete
            httpx.Response(200, json={"offers": cheapest_first[4:]}),
        ]
    )
    offers, _ = run(Settings(vastai={"page_size": 3}), frozenset({OD}))
    sent = [body(c.request) for c in route.calls]
    assert "dph_total" not in sent[0]
    assert sent[1]["dph_total"] == {"gte": 0.31} and sent[1]["limit"] == 3
    assert sent[2]["dph_total"] == {"gte": 0.55}
    found = by_key(offers)
    cn = found[("1x RTX 4090", "CN", "verified")]
    # 0.2466…, 0.31, 0.4 once each: count 3, median 0.31
    assert cn.attributes["offer_count"] == 3
    assert cn.attributes["median_price_per_hour"] == Decimal("0.3100000000")
    # the 2x US pair spans pages 2 and 3: 0.55 and 0.61, counted once each
    assert found[("2x RTX 4090", "US", "verified")].attributes["offer_count"] == 2


@respx.mock
def test_a_band_that_cannot_advance_fails_instead_of_truncating() -> None:
    real = load("cli_search_offers_raw_rtx4090_single.json")[0]
    same_price = [{**real, "id": i} for i in (1, 2)]
    respx.post(URL).mock(return_value=httpx.Response(200, json={"offers": same_price}))
    with pytest.raises(
        CollectorError, match=r"more than 2 on-demand offers .* raise vastai\.page_size"
    ):
        run(Settings(vastai={"page_size": 2}), frozenset({OD}))


@respx.mock
def test_5xx_is_retried() -> None:
    route = respx.post(URL).mock(
        side_effect=[httpx.Response(502), httpx.Response(200, json={"offers": []})]
    )
    offers, _ = run(Settings(), frozenset({OD}))
    assert offers == [] and route.call_count == 2


@respx.mock
def test_endpoint_override_keeps_the_documented_path() -> None:
    route = respx.post("http://10.0.0.5:8080/api/v0/bundles/").mock(
        return_value=httpx.Response(200, json={"offers": []})
    )
    run(Settings(vastai={"endpoint_url": "http://10.0.0.5:8080"}), frozenset({OD}))
    assert route.called


def test_disabled_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"vastai\.enabled"):
        VastAiCollector.from_settings(Settings(vastai={"enabled": False}))


def test_allocated_storage_defaults_to_100_gb() -> None:
    assert Settings().vastai.allocated_storage == 100
