"""Azure storage and egress prices: ``AzureCollector.collect_service_prices`` against
Retail Prices pages served through respx.

Fixtures (tests/fixtures/azure/SOURCES.md): the eastus Bandwidth items are a real
capture (ratecard-cloud/ratecard); the disk page holds the real P10 (westeurope) and S4
(brazilsouth) items plus two items derived from them by changing values only.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
import respx

from collectors.azure import AzureCollector
from collectors.azure_services import parse_bandwidth_items, parse_disk_items
from collectors.base import CollectorError, RunContext
from tracker.service_prices import ServiceKind, ServicePrice, ServiceUnit, tiered_cost
from tracker.settings import Settings

from .conftest import run_context

FIXTURES = Path(__file__).parent.parent / "fixtures" / "azure"
ENDPOINT = "https://prices.azure.com/api/retail/prices"
SSD, HDD, EGRESS = (
    ServiceKind.BLOCK_STORAGE_SSD,
    ServiceKind.BLOCK_STORAGE_HDD,
    ServiceKind.EGRESS_INTERNET,
)


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


BANDWIDTH = "retail_prices_bandwidth_eastus_ratecard_capture.json"
DISKS = "retail_prices_managed_disks_derived.json"


def egress(start: str, end: str | None, price: str) -> ServicePrice:
    return ServicePrice(
        "azure", "eastus", EGRESS, ServiceUnit.GB, Decimal(price), "USD",
        tier_start_gb=Decimal(start), tier_end_gb=None if end is None else Decimal(end),
    )  # fmt: skip


# The six real "Standard Data Transfer Out" tiers of "Rtn Preference: MGN" in eastus, each
# ending where the next starts (tierMinimumUnits 0, 100, 10335, 51295, 153695, 512095);
# the Routing Preference: Internet ladder, "- to China", inter-region, inter-zone,
# "Data Transfer In" and the hourly China meters in the same page are not read.
EASTUS_LADDER = [
    egress("0", "100", "0"),
    egress("100", "10335", "0.087"),
    egress("10335", "51295", "0.083"),
    egress("51295", "153695", "0.07"),
    egress("153695", "512095", "0.05"),
    egress("512095", None, "0.05"),
]


def by_filter(request: httpx.Request) -> httpx.Response:
    flt = parse_qs(request.url.query.decode())["$filter"][0]
    name = BANDWIDTH if "serviceName eq 'Bandwidth'" in flt else DISKS
    return httpx.Response(200, json=load(name))


def collect(settings: Settings) -> tuple[list[ServicePrice], RunContext]:
    ctx = run_context(settings)
    prices = list(AzureCollector(settings, sleep=lambda _: None).collect_service_prices(ctx))
    return prices, ctx


@respx.mock
def test_disks_and_egress_of_every_region_from_two_queries() -> None:
    route = respx.get(ENDPOINT).mock(side_effect=by_filter)
    prices, ctx = collect(Settings())

    filters = [parse_qs(c.request.url.query.decode())["$filter"][0] for c in route.calls]
    assert filters == [
        "serviceName eq 'Storage' and (productName eq 'Premium SSD Managed Disks' or "
        "productName eq 'Standard HDD Managed Disks') and priceType eq 'Consumption'",
        "serviceName eq 'Bandwidth' and productName eq 'Rtn Preference: MGN' and "
        "meterName eq 'Standard Data Transfer Out' and priceType eq 'Consumption'",
    ]
    assert prices == [
        # S4 (32 GiB) at 3.6864 a month: 3.6864 / 32 = 0.1152 per GB-month.
        ServicePrice("azure", "brazilsouth", HDD, ServiceUnit.GB_MONTH, Decimal("0.1152"), "USD"),
        # P10 (128 GiB) at 21.68: 21.68 / 128 = 0.169375; P30 (1,024 GiB) at 135.17:
        # 135.17 / 1024 = 0.132001953125 -> 0.1320019531 (10 places). The lower wins.
        ServicePrice(
            "azure", "westeurope", SSD, ServiceUnit.GB_MONTH, Decimal("0.1320019531"), "USD"
        ),
        *EASTUS_LADDER,
    ]
    # "S4 LRS Disk Operations" (per 10K) is not a disk-month: left out, not a skip.
    assert ctx.skips == Counter()
    assert ctx.partial == {}


def test_the_ladder_prices_a_month_of_egress_tier_by_tier() -> None:
    prices = list(parse_bandwidth_items(load(BANDWIDTH)["Items"], run_context().skip))
    tiers = [(p.tier_start_gb, p.tier_end_gb, p.price) for p in prices]
    # 15 TB = 15,360 GB: 100 x 0 + (10,335 - 100) x 0.087 + (15,360 - 10,335) x 0.083
    #                  = 0 + 890.445 + 417.075 = 1,307.520
    assert tiered_cost(Decimal(15360), tiers) == Decimal("1307.520")


def test_a_repriced_tier_keeps_the_newer_row() -> None:
    items = load(BANDWIDTH)["Items"]
    newer = copy.deepcopy(next(i for i in items if i["tierMinimumUnits"] == 100 and
                                i["productName"] == "Rtn Preference: MGN" and
                                i["meterName"] == "Standard Data Transfer Out"))  # fmt: skip
    newer.update(retailPrice=0.08, unitPrice=0.08, effectiveStartDate="2024-01-01T00:00:00Z")
    ctx = run_context()
    prices = list(parse_bandwidth_items([newer, *items], ctx.skip))
    assert [p.price for p in prices if p.tier_start_gb == 100] == [Decimal("0.08")]
    assert ctx.skips == Counter({"superseded_price": 1})
    assert "eastus egress from 100 GB: 0.087 by 0.08" in ctx.details[0]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"unitOfMeasure": "10 GB"}, "unexpected_unit"),
        ({"tierMinimumUnits": None}, "malformed_item"),
        ({"retailPrice": -1}, "bad_price"),
        ({"currencyCode": "US"}, "malformed_item"),
        ({"armRegionName": ""}, "malformed_item"),
    ],
)
def test_an_unreadable_tier_drops_the_region_ladder(change: dict[str, Any], reason: str) -> None:
    """Without its 100 GB tier, eastus would price 100-10,335 GB at 0: nothing is kept."""
    items = load(BANDWIDTH)["Items"]
    for item in items:
        if item["tierMinimumUnits"] == 100 and item["productName"] == "Rtn Preference: MGN":
            item.update(change)
    ctx = run_context()
    assert list(parse_bandwidth_items(items, ctx.skip)) == []
    assert ctx.skips == Counter({reason: 1, "incomplete_tiers": 1})


def test_a_ladder_not_starting_at_zero_is_skipped() -> None:
    items = [i for i in load(BANDWIDTH)["Items"] if i["tierMinimumUnits"] != 0]
    ctx = run_context()
    assert list(parse_bandwidth_items(items, ctx.skip)) == []
    assert ctx.skips == Counter({"missing_tier": 1})


def disk_items() -> list[dict[str, Any]]:
    return list(load(DISKS)["Items"])


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"retailPrice": 0}, "zero_price"),
        ({"unitOfMeasure": "1 Hour"}, "unexpected_unit"),
        ({"meterName": "P90 LRS Disk"}, "unknown_disk_tier"),
        ({"retailPrice": "n/a"}, "malformed_item"),
    ],
)
def test_an_unreadable_disk_tier_is_a_skip_and_the_others_still_price(
    change: dict[str, Any], reason: str
) -> None:
    items = disk_items()
    items[1].update(change)  # the P30 item: westeurope falls back on P10 alone
    ctx = run_context()
    prices = {(p.region, p.service): p.price for p in parse_disk_items(items, ctx.skip)}
    assert prices == {
        ("westeurope", SSD): Decimal("0.169375"),  # 21.68 / 128
        ("brazilsouth", HDD): Decimal("0.1152"),  # 3.6864 / 32
    }
    assert ctx.skips == Counter({reason: 1})


def test_an_s_tier_meter_under_the_premium_product_is_not_read_as_ssd() -> None:
    items = disk_items()
    items[0].update(meterName="S10 LRS Disk")  # a product/meter mismatch
    prices = list(parse_disk_items(items, run_context().skip))
    assert [(p.region, p.price) for p in prices if p.service is SSD] == [
        ("westeurope", Decimal("0.1320019531"))
    ]


def test_disk_prices_stay_in_the_listed_currency() -> None:
    items = disk_items()
    for item in items:
        item["currencyCode"] = "EUR"
    prices = list(parse_disk_items(items, run_context().skip))
    assert {p.currency for p in prices} == {"EUR"}


@respx.mock
def test_configured_regions_are_asked_apart_and_a_failed_one_is_partial() -> None:
    def by_region(request: httpx.Request) -> httpx.Response:
        flt = parse_qs(request.url.query.decode())["$filter"][0]
        if "armRegionName eq 'westeurope'" in flt:
            return httpx.Response(400, json={"Error": "bad"})
        return by_filter(request)

    route = respx.get(ENDPOINT).mock(side_effect=by_region)
    prices, ctx = collect(Settings(azure={"regions": "eastus,westeurope", "currency_code": "EUR"}))
    # eastus: disks + bandwidth; westeurope: the disk query fails, its bandwidth is not asked.
    assert route.call_count == 3
    first = parse_qs(route.calls[0].request.url.query.decode())
    assert first["currencyCode"] == ["'EUR'"]
    assert first["$filter"][0].endswith(" and armRegionName eq 'eastus'")
    assert list(ctx.partial) == ["westeurope"]
    assert [p for p in prices if p.service is EGRESS] == EASTUS_LADDER


@respx.mock
def test_every_configured_region_failing_fails_the_run() -> None:
    # Nothing was read anywhere: a run that stored no price must not pass for a success.
    respx.get(ENDPOINT).mock(return_value=httpx.Response(400, json={"Error": "bad"}))
    with pytest.raises(CollectorError, match=r"azure: every region failed \(2\); first: eastus"):
        collect(Settings(azure={"regions": "eastus,westeurope"}))


@respx.mock
def test_a_failed_all_regions_query_fails_the_run() -> None:
    respx.get(ENDPOINT).mock(return_value=httpx.Response(400, json={"Error": "bad"}))
    with pytest.raises(CollectorError, match="azure: all regions"):
        collect(Settings())


def test_a_reservation_row_is_not_a_pay_as_you_go_disk_price() -> None:
    items = disk_items()
    reserved = copy.deepcopy(items[1])  # the P30 row as a 1-year reservation (values changed)
    reserved.update(type="Reservation", retailPrice=10.0, unitPrice=10.0)
    reserved["reservationTerm"] = "1 Year"
    ctx = run_context()
    prices = list(parse_disk_items([*items, reserved], ctx.skip))
    # Read as a disk-month it would win: 10 / 1024 = 0.009765625 < 0.1320019531.
    assert [p.price for p in prices if p.service is SSD] == [Decimal("0.1320019531")]
    assert ctx.skips == Counter()


def test_disk_tiers_of_one_region_in_two_currencies_are_a_skip() -> None:
    items = disk_items()
    items[1]["currencyCode"] = "EUR"  # P30 in EUR, P10 in USD, both westeurope
    ctx = run_context()
    prices = list(parse_disk_items(items, ctx.skip))
    assert [(p.price, p.currency) for p in prices if p.service is SSD] == [
        (Decimal("0.169375"), "USD")
    ]
    assert ctx.skips == Counter({"mixed_currency": 1})


def test_an_older_cheaper_row_of_a_repriced_disk_tier_does_not_win() -> None:
    items = disk_items()
    older = copy.deepcopy(items[1])  # P30 at an older, lower price (values changed)
    older.update(retailPrice=102.4, unitPrice=102.4, effectiveStartDate="2016-01-01T00:00:00Z")
    ctx = run_context()
    prices = list(parse_disk_items([older, *items], ctx.skip))
    # The older row would give 102.4 / 1024 = 0.1; the current P30 row's 0.1320019531 stays.
    assert [p.price for p in prices if p.service is SSD] == [Decimal("0.1320019531")]
    assert ctx.skips == Counter({"superseded_price": 1})
    assert "westeurope P30 LRS Disk per GB: 0.1000000000 by 0.1320019531" in ctx.details[0]
