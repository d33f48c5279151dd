"""Azure Retail Prices collector against recorded pages served through respx.

Fixtures: tests/fixtures/azure/ (see SOURCES.md there: real captures, and GPU
pages DERIVED from a real item by changing values only).
"""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
import respx

import collectors.azure as azure
from collectors.azure import (
    AzureCollector,
    build_queries,
    next_page_url,
    parse_item,
    parse_items,
)
from collectors.azure_sizes import SIZES, AzureSize
from collectors.base import CollectorError, NotConfigured, RunContext, SkipItem
from tracker.filters import OfferFilter
from tracker.models import Interconnect, Offer, PricingModel
from tracker.settings import Settings

from .conftest import run_context

FIXTURES = Path(__file__).parent.parent / "fixtures" / "azure"
ENDPOINT = "https://prices.azure.com/api/retail/prices"
ALL = frozenset(PricingModel)


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def page_route(request: httpx.Request) -> httpx.Response:
    """Serve the three derived pages by their $skip, as the live API would.

    When the filter names sizes (or asks for spot meters), only those items are
    served, as the server does (the pages' links are kept so pagination is still
    exercised).
    """
    query = parse_qs(request.url.query.decode())
    number = {"0": 1, "100": 2, "200": 3}[query.get("$skip", ["0"])[0]]
    page = load(f"retail_prices_gpu_page{number}_derived.json")
    flt = query["$filter"][0]
    if "armSkuName eq" in flt:
        page["Items"] = [i for i in page["Items"] if f"armSkuName eq '{i['armSkuName']}'" in flt]
    words = [w for w in ("Spot", "Low Priority") if f"contains(meterName, '{w}')" in flt]
    if words:
        page["Items"] = [i for i in page["Items"] if any(w in i["meterName"] for w in words)]
    if page["NextPageLink"]:  # the live API repeats the request's own filter in the link
        link = httpx.URL(page["NextPageLink"])
        page["NextPageLink"] = str(link.copy_merge_params({"$filter": flt}))
    return httpx.Response(200, json=page)


DISCOVER = Settings(azure={"discover_unknown_sizes": True})


def collect(
    settings: Settings, scope: frozenset[PricingModel] = ALL
) -> tuple[list[Offer], RunContext]:
    ctx = run_context(settings, scope=scope)
    offers = list(AzureCollector(settings, sleep=Sleeps()).collect(ctx))
    return offers, ctx


def by_key(offers: list[Offer]) -> dict[tuple[str, str, str], Offer]:
    return {(o.instance_type, o.pricing.value, o.offering_class): o for o in offers}


H100 = "Standard_ND96isr_H100_v5"
A100 = "Standard_ND96amsr_A100_v4"
A10 = "Standard_NV6ads_A10_v5"


# ------------------------------------------------------------ pagination end to end


@respx.mock
def test_every_page_is_consumed_and_offers_priced_per_model() -> None:
    route = respx.get(ENDPOINT).mock(side_effect=page_route)
    offers, ctx = collect(DISCOVER)

    assert route.call_count == 3  # page 1 -> NextPageLink $skip=100 -> $skip=200 -> null
    got = by_key(offers)
    # Page 1: pay-as-you-go and Spot of the same size, each at its own hourly price.
    assert got[(H100, "on_demand", "")].price_per_hour == Decimal("98.32")
    assert got[(H100, "spot", "")].price_per_hour == Decimal("18.169536")
    # Page 2: reservations are term prices; hand-checked effective hourly prices:
    #   555384.0 / 8760 h = 63.40 exactly;  1150801.2 / 26280 h = 43.79 exactly.
    assert got[(H100, "reserved_1y", "")].price_per_hour == Decimal("63.40")
    assert got[(H100, "reserved_3y", "")].price_per_hour == Decimal("43.79")
    assert got[(A100, "on_demand", "")].price_per_hour == Decimal("32.77")
    assert got[(A100, "spot", "")].price_per_hour == Decimal("14.4188")
    # Pages 2+3: the NV6ads row is listed twice; the newer effectiveStartDate wins.
    assert got[(A10, "on_demand", "")].price_per_hour == Decimal("0.454")
    # Low Priority is off by default; Windows and Dev/Test rows are dropped.
    assert all(o.offering_class != "low_priority" for o in offers)
    assert all(o.os == "linux" for o in offers)
    assert len(offers) == 7
    assert ctx.skips == Counter({"unknown_gpu_size": 1, "malformed_item": 1, "superseded_price": 1})
    assert ctx.partial == {}


@respx.mock
def test_default_mode_requests_table_sizes_only_and_follows_every_chain() -> None:
    route = respx.get(ENDPOINT).mock(side_effect=page_route)
    offers, ctx = collect(Settings())
    chunks = -(-len(SIZES) // azure.SKUS_PER_QUERY)
    assert route.call_count == 3 * chunks  # each size chunk's NextPageLink chain to the end
    assert len(offers) == len({o.key() for o in offers}) == 7
    # The unlisted GB200 size is never asked for, so nothing is reported about it.
    assert ctx.skips == Counter({"malformed_item": 1, "superseded_price": 1})


@respx.mock
def test_windows_rows_never_masquerade_as_linux() -> None:
    respx.get(ENDPOINT).mock(side_effect=page_route)
    offers, _ = collect(DISCOVER)
    h100_on_demand = [
        o for o in offers if o.instance_type == H100 and o.pricing.value == "on_demand"
    ]
    # The Windows meter (102.736) shares the meter name; only the Linux price survives.
    assert [o.price_per_hour for o in h100_on_demand] == [Decimal("98.32")]
    assert all("Windows" not in str(o.attributes["product_name"]) for o in offers)


@respx.mock
def test_low_priority_is_stored_apart_from_spot_when_enabled() -> None:
    respx.get(ENDPOINT).mock(side_effect=page_route)
    settings = Settings(azure={"include_low_priority": True, "discover_unknown_sizes": True})
    offers, _ = collect(settings)
    got = by_key(offers)
    spot, low = got[(A100, "spot", "")], got[(A100, "spot", "low_priority")]
    assert (spot.price_per_hour, low.price_per_hour) == (Decimal("14.4188"), Decimal("6.554"))
    assert spot.key() != low.key()
    assert spot.attributes["azure_priority"] == "spot"
    assert low.attributes["azure_priority"] == "low_priority"
    assert got[(H100, "spot", "low_priority")].price_per_hour == Decimal("19.664")


@respx.mock
def test_hardware_comes_from_the_size_table_and_the_catalog() -> None:
    respx.get(ENDPOINT).mock(side_effect=page_route)
    got = by_key(collect(DISCOVER)[0])
    h100 = got[(H100, "on_demand", "")]
    assert (h100.gpu_model, h100.gpu_known, h100.gpu_count) == ("H100-SXM", True, Decimal(8))
    assert (h100.gpu_memory_gib, h100.vcpus, h100.memory_gib) == (Decimal(80), 96, 1900)
    assert h100.interconnect is Interconnect.NVLINK
    a10 = got[(A10, "on_demand", "")]
    assert a10.gpu_model == "A10"
    assert a10.gpu_count == Decimal("0.1666666667")  # 1/6 of an A10
    assert a10.attributes["vram_total_gib"] == Decimal("4.00")
    assert a10.interconnect is Interconnect.PCIE
    reserved = got[(H100, "reserved_1y", "")]
    assert reserved.attributes["term_price"] == Decimal("555384.0")
    assert reserved.attributes["upfront_usd"] == Decimal("555384.0")
    assert reserved.attributes["reservation_term"] == "1 Year"


@respx.mock
def test_retry_after_429_and_5xx_then_success() -> None:
    page = load("retail_prices_gpu_page3_derived.json")
    route = respx.get(ENDPOINT).mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "7"}),
            httpx.Response(503),
            httpx.Response(200, json=page),
        ]
    )
    sleeps = Sleeps()
    ctx = run_context(DISCOVER)
    offers = list(AzureCollector(ctx.settings, sleep=sleeps).collect(ctx))
    assert route.call_count == 3
    assert sleeps[0] == 7.0  # the server's Retry-After, not our own backoff
    assert len(sleeps) == 2
    assert [o.instance_type for o in offers] == [A10]


@respx.mock
def test_endpoint_override_from_env_also_serves_next_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = "http://mirror.test:8080/api/retail/prices"
    monkeypatch.setenv("GPU_TRACKER_AZURE__ENDPOINT_URL", mirror)
    monkeypatch.setenv("GPU_TRACKER_AZURE__DISCOVER_UNKNOWN_SIZES", "true")
    official = respx.get(ENDPOINT).mock(return_value=httpx.Response(500))
    route = respx.get(mirror).mock(side_effect=page_route)
    offers, _ = collect(Settings())
    assert route.call_count == 3  # NextPageLink names prices.azure.com; we stay on the mirror
    assert official.call_count == 0
    assert len(offers) == 7


@respx.mock
def test_region_failure_marks_only_that_region_partial() -> None:
    def by_region(request: httpx.Request) -> httpx.Response:
        flt = parse_qs(request.url.query.decode())["$filter"][0]
        if "armRegionName eq 'westus'" in flt:
            return httpx.Response(400, json={"Error": "bad"})
        return httpx.Response(200, json=load("retail_prices_gpu_page3_derived.json"))

    respx.get(ENDPOINT).mock(side_effect=by_region)
    offers, ctx = collect(Settings(azure={"regions": "eastus,westus"}))
    assert list(ctx.partial) == ["westus"]
    assert {o.instance_type for o in offers} == {A10}


@respx.mock
def test_every_configured_region_failing_fails_the_run() -> None:
    respx.get(ENDPOINT).mock(return_value=httpx.Response(400, json={"Error": "bad"}))
    with pytest.raises(CollectorError, match=r"azure: every region failed \(2\); first: eastus"):
        collect(Settings(azure={"regions": "eastus,westus"}))


@respx.mock
def test_a_spot_only_run_asks_the_api_for_spot_meters_only() -> None:
    """The service's 15-minute spot job: every request carries the spot clause, so
    the pay-as-you-go and reservation meters are never downloaded."""
    route = respx.get(ENDPOINT).mock(side_effect=page_route)
    offers, ctx = collect(Settings(), frozenset({PricingModel.SPOT}))
    filters = [parse_qs(call.request.url.query.decode())["$filter"][0] for call in route.calls]
    chunks = -(-len(SIZES) // azure.SKUS_PER_QUERY)
    assert len(filters) == 3 * chunks
    for flt in filters:
        assert "priceType eq 'Consumption' and contains(meterName, 'Spot')" in flt
        assert "Reservation" not in flt
    got = by_key(offers)
    assert sorted(got) == [(A100, "spot", ""), (H100, "spot", "")]
    assert got[(H100, "spot", "")].price_per_hour == Decimal("18.169536")
    assert got[(A100, "spot", "")].price_per_hour == Decimal("14.4188")
    assert not ctx.skips


@respx.mock
def test_all_regions_failure_fails_the_run() -> None:
    respx.get(ENDPOINT).mock(return_value=httpx.Response(200, json={"unexpected": []}))
    with pytest.raises(CollectorError, match="no 'Items' list"):
        collect(Settings())


# ------------------------------------------------------------ request shape


def test_filter_asks_only_for_table_sizes_per_region_and_price_type() -> None:
    settings = Settings(azure={"regions": ["eastus", "westeurope"]})
    queries = build_queries(settings, ALL)
    chunks = -(-len(SIZES) // azure.SKUS_PER_QUERY)
    assert len(queries) == 2 * chunks
    first = queries[0].params["$filter"]
    assert first.startswith("serviceName eq 'Virtual Machines' and (priceType eq 'Consumption'")
    assert "armRegionName eq 'eastus'" in first
    assert queries[0].params["currencyCode"] == "'USD'"
    asked = {
        name
        for q in queries
        if q.region == "eastus"
        for name in SIZES
        if f"armSkuName eq '{name}'" in q.params["$filter"]
    }
    assert asked == set(SIZES)
    assert all(len(str(httpx.URL(ENDPOINT, params=dict(q.params)))) < 2000 for q in queries)


def test_reservation_scope_asks_only_for_reservations() -> None:
    (query, *_) = build_queries(Settings(), frozenset({PricingModel.RESERVED_3Y}))
    assert "priceType eq 'Reservation'" in query.params["$filter"]
    assert "Consumption" not in query.params["$filter"]
    assert "armRegionName" not in query.params["$filter"]


def test_only_a_spot_only_scope_narrows_the_query_to_spot_meters() -> None:
    spot = frozenset({PricingModel.SPOT})
    (query, *_) = build_queries(Settings(), spot)
    assert (
        "priceType eq 'Consumption' and contains(meterName, 'Spot') and ("
        in (query.params["$filter"])
    )
    # Low Priority meters are stored as spot (offering class low_priority) when enabled.
    (low, *_) = build_queries(Settings(azure={"include_low_priority": True}), spot)
    assert (
        "(contains(meterName, 'Spot') or contains(meterName, 'Low Priority'))"
        in low.params["$filter"]
    )
    standard = frozenset(PricingModel) - spot
    for scope in (ALL, standard):
        assert all("meterName" not in q.params["$filter"] for q in build_queries(Settings(), scope))


def test_discovery_mode_drops_the_size_clause() -> None:
    queries = build_queries(Settings(azure={"discover_unknown_sizes": True}), ALL)
    assert len(queries) == 1
    assert "armSkuName" not in queries[0].params["$filter"]


def test_next_page_url_keeps_query_and_uses_configured_base() -> None:
    page = {
        "NextPageLink": "https://prices.azure.com:443/api/retail/prices?$filter=a eq 'b'&$skip=100"
    }
    assert next_page_url(page, "http://proxy:9/p") == "http://proxy:9/p?$filter=a eq 'b'&$skip=100"
    assert next_page_url({"NextPageLink": None}, ENDPOINT) is None
    assert next_page_url({"NextPageLink": ""}, ENDPOINT) is None


# ------------------------------------------------------------ item rules on real captures


def test_real_non_gpu_and_windows_captures_yield_nothing_and_skip_nothing(
    ctx: RunContext,
) -> None:
    items = [
        *load("retail_prices_d8v4_westeurope_payg_and_reservations_capture.json")["Items"],
        *load("retail_prices_d2s_v3_windows_and_p10_westeurope_ace_capture.json")["Items"],
        load("retail_prices_item_d14_spot_windows_devtest_capture.json"),
    ]
    assert parse_items(items, Settings(), ctx.skip) == []
    assert not ctx.skips


def test_real_reservation_capture_converts_term_price_to_hourly(
    monkeypatch: pytest.MonkeyPatch, ctx: RunContext
) -> None:
    """The real D8 v4 capture, priced as if D8 v4 were in the size table."""
    fake = AzureSize("T4", Decimal(1), Decimal(16), 8, Decimal(32), Interconnect.PCIE, "test")
    monkeypatch.setattr(azure, "SIZES", {**SIZES, "Standard_D8_v4": fake})
    items = load("retail_prices_d8v4_westeurope_payg_and_reservations_capture.json")["Items"]
    got = {o.pricing: o.price_per_hour for o in parse_items(items, Settings(), ctx.skip)}
    assert not ctx.skips
    assert got == {
        PricingModel.ON_DEMAND: Decimal("0.46"),
        # 2377 / 8760 = 0.27134703196... -> 0.2713470320 at 10 places
        PricingModel.RESERVED_1Y: Decimal("0.2713470320"),
        # 4594 / 26280 = 0.17480974124... -> 0.1748097412
        PricingModel.RESERVED_3Y: Decimal("0.1748097412"),
    }


def test_windows_detected_in_truncated_product_names() -> None:
    item = load("retail_prices_gpu_page1_derived.json")["Items"][0]
    assert parse_item(item, Settings()) is not None
    for product in (
        "Virtual Machines NDsr H100 v5 Series Windows",
        "Virtual Machines NDsr Srs Win",
    ):
        assert parse_item({**item, "productName": product}, Settings()) is None


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"retailPrice": "n/a"}, "malformed_item"),
        ({"retailPrice": None}, "malformed_item"),
        ({"armRegionName": ""}, "malformed_item"),
        ({"retailPrice": 0}, "zero_price"),
        ({"unitOfMeasure": "1/Month"}, "unexpected_unit"),
        ({"type": "SavingsPlan"}, "unknown_price_type"),
        ({"type": "Reservation", "reservationTerm": "5 Years"}, "unknown_reservation_term"),
        ({"armSkuName": "Standard_NC8as_T4_v9"}, "unknown_gpu_size"),
        ({"skuName": "x Spot", "meterName": "x Low Priority"}, "malformed_item"),
    ],
)
def test_bad_items_are_skipped_with_a_reason(change: dict[str, Any], reason: str) -> None:
    item = {**load("retail_prices_gpu_page1_derived.json")["Items"][0], **change}
    settings = Settings(azure={"include_low_priority": True})
    with pytest.raises(SkipItem) as caught:
        parse_item(item, settings)
    assert caught.value.reason == reason


def test_non_items_are_counted_not_fatal(ctx: RunContext) -> None:
    good = load("retail_prices_gpu_page1_derived.json")["Items"][0]
    offers = parse_items(["junk", None, good], Settings(), ctx.skip)
    assert len(offers) == 1
    assert ctx.skips == Counter({"malformed_item": 2})


def test_unknown_gpu_size_in_discovery_is_reported_not_guessed(ctx: RunContext) -> None:
    items = load("retail_prices_gpu_page3_derived.json")["Items"]
    offers = parse_items(items, Settings(), ctx.skip)
    assert "Standard_ND128isr_NDR_GB200_v6" not in {o.instance_type for o in offers}
    assert ctx.skips["unknown_gpu_size"] == 1
    unknown = [d for d in ctx.details if d.startswith("unknown_gpu_size: ")]
    assert len(unknown) == 1 and "Standard_ND128isr_NDR_GB200_v6" in unknown[0]


def test_dedicated_host_rows_are_dropped() -> None:
    items = load("retail_prices_gpu_page3_derived.json")["Items"]
    host = next(i for i in items if "Dedicated Host" in i["productName"])
    assert host["armSkuName"] in SIZES  # a GPU size name, yet not a VM offer
    assert parse_item(host, Settings()) is None


def test_non_usd_prices_are_kept_in_their_currency(ctx: RunContext) -> None:
    items = load("retail_prices_gpu_eur_derived.json")["Items"]
    (offer,) = parse_items(items, Settings(), ctx.skip)
    assert not ctx.skips  # no rate needed to collect: USD is computed when read
    assert (offer.currency, offer.price_per_hour) == ("EUR", Decimal("3.38"))
    assert offer.price_per_hour_usd is None


def test_pricing_scope_filters_offers(ctx: RunContext) -> None:
    items = [
        *load("retail_prices_gpu_page1_derived.json")["Items"],
        *load("retail_prices_gpu_page2_derived.json")["Items"],
    ]
    scope = frozenset({PricingModel.RESERVED_1Y})
    offers = parse_items(items, Settings(), ctx.skip, scope)
    assert not ctx.skips
    assert [(o.instance_type, o.pricing) for o in offers] == [(H100, PricingModel.RESERVED_1Y)]


# ------------------------------------------------------------ table and wiring


def test_size_table_covers_the_required_series_and_cites_docs() -> None:
    required = {
        "Standard_NC6s_v3": "V100-PCIE-16GB",  # NCv3 is the PCIe card (issue 10 #16)
        "Standard_NC4as_T4_v3": "T4",
        "Standard_NC24ads_A100_v4": "A100-80GB-PCIE",
        "Standard_ND96asr_v4": "A100-40GB",
        "Standard_ND96amsr_A100_v4": "A100-80GB",
        "Standard_ND96isr_H100_v5": "H100-SXM",
        "Standard_NC40ads_H100_v5": "H100-NVL",
        "Standard_ND96isr_H200_v5": "H200",
        "Standard_NV36ads_A10_v5": "A10",
        "Standard_ND96isr_MI300X_v5": "MI300X",
    }
    from tracker.catalog import resolve_gpu

    for sku, canonical in required.items():
        size = SIZES[sku]
        assert resolve_gpu(size.gpu, size.vram_gib).name == canonical, sku
    assert all(s.source.startswith("https://learn.microsoft.com/") for s in SIZES.values())
    assert all(s.gpu_count > 0 and s.vram_gib > 0 for s in SIZES.values())


def test_disabled_collector_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match=r"azure\.enabled"):
        AzureCollector.from_settings(Settings(azure={"enabled": False}))
    assert isinstance(AzureCollector.from_settings(Settings()), AzureCollector)


def test_currency_code_setting_is_validated() -> None:
    assert Settings(azure={"currency_code": "eur"}).azure.currency_code == "EUR"
    with pytest.raises(ValueError, match="ISO 4217"):
        Settings(azure={"currency_code": "EURO"})


# ------------------------------------------------------------ through the runner and store


@respx.mock
def test_run_stores_hourly_reservation_prices_and_counts_skips(engine: Any) -> None:
    from tracker.collect import run_collector
    from tracker.store.reads import current_offers

    respx.get(ENDPOINT).mock(side_effect=page_route)
    summary = run_collector(engine, AzureCollector(DISCOVER, sleep=Sleeps()), DISCOVER)
    assert summary.status == "succeeded", summary.error
    assert summary.stats.offers_seen == 7
    assert summary.skip_reasons == {
        "unknown_gpu_size": 1,
        "malformed_item": 1,
        "superseded_price": 1,
    }
    stored = {
        (s.offer.instance_type, s.offer.pricing.value): s.offer
        for s in current_offers(engine, OfferFilter.of(provider="azure"))
    }
    assert stored[(H100, "reserved_3y")].price_per_hour == Decimal("43.79")
    assert stored[(H100, "reserved_1y")].price_per_hour_usd == Decimal("63.40")
    assert stored[(A10, "on_demand")].gpu_count == Decimal("0.1666666667")


@respx.mock
def test_nd_sizes_carry_microsofts_documented_infiniband() -> None:
    respx.get(ENDPOINT).mock(side_effect=page_route)
    got = by_key(collect(DISCOVER)[0])
    # ND H100 v5: "3.2 Tbps ... per VM", 8 × 400 Gb/s; NDm A100 v4: 8 × 200 Gb/s HDR.
    h100 = got[(H100, "on_demand", "")]
    assert (h100.fabric, h100.network_gbps) == ("infiniband", Decimal(3200))
    a100 = got[(A100, "on_demand", "")]
    assert (a100.fabric, a100.network_gbps) == ("infiniband", Decimal(1600))
    a10 = next(o for k, o in got.items() if k[0] == A10)
    assert (a10.fabric, a10.network_gbps) == ("unknown", None)  # no InfiniBand documented
