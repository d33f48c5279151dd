"""GCP persistent disk and internet egress prices: ``GcpCollector.collect_service_prices``
through google-cloud-billing's client against the local catalog server of test_gcp.py,
and ``parse_service_skus`` on real-shaped SKUs (tests/fixtures/gcp/SOURCES.md)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from google.cloud import billing_v1

from collectors.base import CollectorError
from collectors.gcp import GcpCollector
from collectors.gcp_services import parse_service_skus
from tracker.service_prices import ServiceKind, ServicePrice, ServiceUnit, tiered_cost

from .conftest import run_context
from .test_gcp import PAGE_3, CatalogServer, error_body, make_settings, serving

FIXTURES = Path(__file__).parents[1] / "fixtures" / "gcp"
SERVICES_PAGE = (FIXTURES / "catalog_services_page_derived.json").read_bytes()
NEXT = json.loads(SERVICES_PAGE)["nextPageToken"]
SSD, HDD, EGRESS = (
    ServiceKind.BLOCK_STORAGE_SSD,
    ServiceKind.BLOCK_STORAGE_HDD,
    ServiceKind.EGRESS_INTERNET,
)
D = Decimal


@pytest.fixture
def server() -> Iterator[CatalogServer]:
    """The catalog server of test_gcp.py serving the services page, then its page 3
    (machine SKUs and the VPN egress SKU, none of which are read here)."""
    with serving({"": SERVICES_PAGE, NEXT: PAGE_3}) as s:
        yield s


@pytest.fixture(autouse=True)
def _no_google_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("GPU_TRACKER_GCP__API_KEY", "GPU_TRACKER_GCP__ENDPOINT_URL"):
        monkeypatch.delenv(key, raising=False)


def price(
    region: str, kind: ServiceKind, amount: str, start: int = 0, end: int | None = None
) -> ServicePrice:
    return ServicePrice(
        "gcp", region, kind, kind.unit, D(amount), "USD",
        tier_start_gb=D(start), tier_end_gb=None if end is None else D(end),
    )  # fmt: skip


# GiBy.mo and GiBy are stored as GB-month and GB one for one (1 TB = 1,024 GB).
# units "0" + nanos 44,000,000 / 1e9 = 0.044; 187,000,000 -> 0.187; 40,000,000 -> 0.04.
EXPECTED = [
    price("europe-west1", HDD, "0.04"),  # "Regional Storage PD Capacity" is not read
    price("us-east4", HDD, "0.044"),
    price("us-east4", SSD, "0.187"),
    # Two destinations: Americas 0.12/0.11/0.08 (real), EMEA 0.13/0.11/0.08 (derived):
    # the dearer is kept; China (0.23/...) is priced apart and left out. Tiers start at
    # startUsageAmount 0, 1024, 10240 GiB and end where the next starts.
    price("us-east4", EGRESS, "0.13", 0, 1024),
    price("us-east4", EGRESS, "0.11", 1024, 10240),
    price("us-east4", EGRESS, "0.08", 10240),
]


def collect(settings: Any) -> tuple[list[ServicePrice], Any]:
    ctx = run_context(settings)
    prices = list(GcpCollector.from_settings(settings).collect_service_prices(ctx))
    return prices, ctx


def test_disk_and_egress_prices_from_the_paginated_catalog(server: CatalogServer) -> None:
    prices, ctx = collect(make_settings(server))
    assert prices == EXPECTED
    assert [r["query"].get("pageToken", "") for r in server.sku_requests()] == ["", NEXT]
    # page 3's "Network Vpn Internet Egress" (VPNInternetEgress) and machine SKUs: not ours
    assert ctx.skips == Counter()
    assert [p.unit for p in prices] == [ServiceUnit.GB_MONTH] * 3 + [ServiceUnit.GB] * 3
    assert [p.tier_start_gb for p in prices][3:] == [0, 1024, 10240]


def test_egress_ladder_prices_a_month_tier_by_tier(server: CatalogServer) -> None:
    prices, _ = collect(make_settings(server))
    tiers = [(p.tier_start_gb, p.tier_end_gb, p.price) for p in prices if p.service is EGRESS]
    # 15 TB = 15,360 GiB: 1,024 x 0.13 + 9,216 x 0.11 + 5,120 x 0.08
    #                    = 133.12 + 1,013.76 + 409.60 = 1,556.48
    assert tiered_cost(D(15360), tiers) == D("1556.48")


def test_regions_setting_limits_regions(server: CatalogServer) -> None:
    prices, _ = collect(make_settings(server, regions="europe-west1"))
    assert prices == [EXPECTED[0]]


def test_retried_then_failing_catalog_fails_the_run(server: CatalogServer) -> None:
    server.failures[NEXT] = [(503, error_body(503, "UNAVAILABLE", "down"))] * 1000
    with pytest.raises(CollectorError, match="page 2"):
        collect(make_settings(server, retry_deadline_seconds=0.2))


def skus(**change: Any) -> list[Any]:
    """The real us-east4 captures as billing_v1.Sku, the first one's fields changed."""
    raw = json.loads((FIXTURES / "skus_pd_and_egress_us_east4_capture.json").read_text())
    for path, value in change.items():
        target = raw[0]
        *parents, leaf = path.split("__")
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        target[leaf] = value
    return [billing_v1.Sku.from_json(json.dumps(s), ignore_unknown_fields=True) for s in raw]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"pricingInfo__0__pricingExpression__usageUnit": "GiBy.h"}, "unexpected_unit"),
        ({"pricingInfo__0__pricingExpression__tieredRates__0__unitPrice__nanos": 0}, "zero_price"),
        ({"pricingInfo__0__pricingExpression__tieredRates__0__startUsageAmount": 5}, "missing_tier"),
        ({"pricingInfo__0__pricingExpression__tieredRates__0__unitPrice__currencyCode": ""}, "bad_price"),
        ({"category__resourceGroup": "SSD"}, "inconsistent_sku"),
        ({"pricingInfo": []}, "no_pricing_info"),
        ({"serviceRegions": []}, "malformed_item"),
    ],
)  # fmt: skip
def test_an_unreadable_sku_is_a_counted_skip(change: dict[str, Any], reason: str) -> None:
    ctx = run_context()
    prices = list(parse_service_skus(skus(**change), ctx.skip))
    assert ctx.skips == Counter({reason: 1})
    assert HDD not in {p.service for p in prices}  # the Storage PD SKU was the one changed
    assert {p.service for p in prices} == {SSD, EGRESS}


def test_two_disk_skus_disagreeing_on_a_region_price_neither() -> None:
    ctx = run_context()
    twin = billing_v1.Sku(skus()[0])
    twin.sku_id = "D002-PD00-9999"
    twin.pricing_info[0].pricing_expression.tiered_rates[0].unit_price.nanos = 48000000
    prices = list(parse_service_skus([*skus(), twin], ctx.skip))
    assert HDD not in {p.service for p in prices}
    assert ctx.skips == Counter({"conflicting_sku": 1})


def test_only_on_demand_premium_internet_egress_is_read() -> None:
    ctx = run_context()
    raw = skus()
    raw[2].category.resource_group = "StandardInternetEgress"
    raw[0].category.usage_type = "Commit1Yr"
    prices = list(parse_service_skus(raw, ctx.skip))
    assert [(p.service, p.price) for p in prices] == [(SSD, D("0.187"))]
    assert ctx.skips == Counter()


def test_a_premium_egress_sku_of_an_unknown_wording_is_reported() -> None:
    ctx = run_context()
    raw = skus()
    raw[2].description = "Network Internet Data Transfer Out from Virginia"
    prices = list(parse_service_skus(raw, ctx.skip))
    assert EGRESS not in {p.service for p in prices}
    assert ctx.skips == Counter({"unrecognised_sku": 1})


def test_an_offers_run_before_leaves_the_services_run_no_download(server: CatalogServer) -> None:
    # `collect --provider gcp` runs one collector's offers, then its services: the disk and
    # egress SKUs are in the catalog the offers run just read (2 pages), so the services
    # run reads them from there: still 2 page requests in all, and the same prices.
    collector = GcpCollector.from_settings(make_settings(server))
    list(collector.collect(run_context(make_settings(server))))
    assert len(server.sku_requests()) == 2
    prices = list(collector.collect_service_prices(run_context(make_settings(server))))
    assert len(server.sku_requests()) == 2
    assert prices == EXPECTED
    # A new collector (the scheduler's next services job) reads the catalog afresh.
    collect(make_settings(server))
    assert len(server.sku_requests()) == 4
