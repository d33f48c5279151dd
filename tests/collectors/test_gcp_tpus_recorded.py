"""Held-out Cloud TPU prices: real recorded Billing Catalog TPU SKUs (not the derived page
the TPU code was written against) served to google-cloud-billing's REST client by the local
catalog server of test_gcp.py. Sources: tests/fixtures/gcp/SOURCES.md.

Every expected price is worked by hand from the recorded
``pricingInfo[-1].pricingExpression.tieredRates[0].unitPrice`` (``units + nanos / 1e9``,
USD per chip-hour) times the chips of the slice (Google's tables, collectors/gcp_tpus.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from google.cloud import billing_v1

from collectors.base import SkipItem
from collectors.gcp_skus import Resource, SkuKind, classify
from tracker.models import Offer, PricingModel
from tracker.settings import Settings

from .test_gcp import collect, make_settings, serving

FIXTURES = Path(__file__).parents[1] / "fixtures" / "gcp"
WAYNEORNN = (FIXTURES / "catalog_tpu_skus_wayneornn_capture.json").read_bytes()
COLUMBUS = (FIXTURES / "skus_tpu_v6e_columbus_capture.json").read_bytes()
D = Decimal
OD, SPOT, R1, R3 = (
    PricingModel.ON_DEMAND,
    PricingModel.SPOT,
    PricingModel.RESERVED_1Y,
    PricingModel.RESERVED_3Y,
)
Key = tuple[str, str, PricingModel]


@pytest.fixture(autouse=True)
def _no_google_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("GPU_TRACKER_GCP__API_KEY", "GPU_TRACKER_GCP__ENDPOINT_URL"):
        monkeypatch.delenv(key, raising=False)


def collected(page: bytes) -> tuple[dict[Key, Offer], Any]:
    with serving({"": page}) as s:
        settings: Settings = make_settings(s)
        return collect(settings)


@pytest.fixture
def recorded() -> Iterator[tuple[dict[Key, Offer], Any]]:
    """The seven wayneornn SKUs (captured live 2026-06-14), collected by the real client."""
    yield collected(WAYNEORNN)


# Per-chip prices from the recorded unitPrice (units + nanos / 1e9):
#   04C3-5B71-D137 "TpuV5e running in Delhi"            1 + 441,320,000 / 1e9 = 1.44132
#   082F-763E-B398 "TpuV5p running in Sao Paulo"        6 + 430,995,000 / 1e9 = 6.430995
#   2549-F208-72FA "TpuV6e running in Dallas"           2 + 700,000,000 / 1e9 = 2.7
#   0F71-4391-B6CA "TPU7x running in Americas"         12 +           0 / 1e9 = 12
#   0561-8741-3BC7 "TpuV5e attached to Spot Preemptible VMs running in Singapore"
#                                                       0 + 780,000,000 / 1e9 = 0.78
#   0115-21ED-7F03 "Commitment v1: TpuV5p running in Netherlands for 3 Years"
#                                                       1 + 911,000,000 / 1e9 = 1.911
# Slice = chips x chip price (v5e/v6e hosts of 1, 4, 8 chips; v5p and TPU7x 4 chips):
EXPECTED: dict[Key, Decimal] = {
    ("ct5lp-hightpu-1t", "asia-south2", OD): D("1.44132"),  # 1 x 1.44132
    ("ct5lp-hightpu-4t", "asia-south2", OD): D("5.76528"),  # 4 x 1.44132
    ("ct5lp-hightpu-8t", "asia-south2", OD): D("11.53056"),  # 8 x 1.44132
    ("ct5p-hightpu-4t", "southamerica-east1", OD): D("25.72398"),  # 4 x 6.430995
    ("ct6e-standard-1t", "us-south1", OD): D("2.7"),  # 1 x 2.7
    ("ct6e-standard-4t", "us-south1", OD): D("10.8"),  # 4 x 2.7
    ("ct6e-standard-8t", "us-south1", OD): D("21.6"),  # 8 x 2.7
    ("tpu7x-standard-4t", "us-west1", OD): D("48"),  # 4 x 12, each region the SKU lists
    ("tpu7x-standard-4t", "us-central1", OD): D("48"),
    ("tpu7x-standard-4t", "us-east1", OD): D("48"),
    ("ct5lp-hightpu-1t", "asia-southeast1", SPOT): D("0.78"),  # 1 x 0.78
    ("ct5lp-hightpu-4t", "asia-southeast1", SPOT): D("3.12"),  # 4 x 0.78
    ("ct5lp-hightpu-8t", "asia-southeast1", SPOT): D("6.24"),  # 8 x 0.78
    ("ct5p-hightpu-4t", "europe-west4", R3): D("7.644"),  # 4 x 1.911
}


def test_recorded_tpu_skus_give_exact_slice_prices_and_nothing_else(
    recorded: tuple[dict[Key, Offer], Any],
) -> None:
    offers, _ = recorded
    assert {k: o.price_per_hour for k, o in offers.items()} == EXPECTED
    assert all(o.currency == "USD" for o in offers.values())


@pytest.mark.parametrize(
    ("key", "chip_price", "sku_id"),
    [
        (("ct5lp-hightpu-8t", "asia-south2", OD), "1.44132", "04C3-5B71-D137"),
        (("ct5lp-hightpu-4t", "asia-southeast1", SPOT), "0.78", "0561-8741-3BC7"),
        (("ct5p-hightpu-4t", "europe-west4", R3), "1.911", "0115-21ED-7F03"),
        (("ct5p-hightpu-4t", "southamerica-east1", OD), "6.430995", "082F-763E-B398"),
    ],
)
def test_each_offer_keeps_the_exact_per_chip_price_and_its_sku(
    recorded: tuple[dict[Key, Offer], Any], key: Key, chip_price: str, sku_id: str
) -> None:
    offer = recorded[0][key]
    assert offer.attributes["chip_price_per_hour"] == D(chip_price)
    assert offer.attributes["sku_ids"] == sku_id


def test_the_three_year_commitment_is_billed_monthly_with_nothing_upfront(
    recorded: tuple[dict[Key, Offer], Any],
) -> None:
    v5p_3y = recorded[0][("ct5p-hightpu-4t", "europe-west4", R3)]
    assert v5p_3y.pricing is R3
    # CUDs have no upfront part: the whole 4 x 1.911 = 7.644 USD/h is the recurring charge.
    assert v5p_3y.attributes["upfront_usd"] == 0
    assert v5p_3y.attributes["recurring_hourly_usd"] == D("7.644")


def test_the_calendar_mode_sku_is_never_an_on_demand_price(
    recorded: tuple[dict[Key, Offer], Any],
) -> None:
    """026F-E6A1-BDBB "Reserved TpuV5p in Delhi in Calendar Mode" says usageType OnDemand
    at 2 + 940,000,000 / 1e9 = 2.94 per chip-hour: a reservation, so no v5p offer exists in
    asia-south2 at all (4 x 2.94 = 11.76 appears nowhere) and the SKU is a counted skip."""
    offers, ctx = recorded
    assert not [k for k in offers if k[0] == "ct5p-hightpu-4t" and k[1] == "asia-south2"]
    assert D("2.94") not in {o.attributes["chip_price_per_hour"] for o in offers.values()}
    assert D("11.76") not in {o.price_per_hour for o in offers.values()}
    assert ctx.skips["reservation_sku"] == 1
    assert sum(ctx.skips.values()) == 1
    assert any("026F-E6A1-BDBB" in d and "Calendar Mode" in d for d in ctx.details)


def test_tpu7x_is_priced_in_every_region_its_multi_regional_sku_lists(
    recorded: tuple[dict[Key, Offer], Any],
) -> None:
    # serviceRegions ["us-west1", "us-central1", "us-east1"], geoTaxonomy MULTI_REGIONAL
    offers, _ = recorded
    tpu7x = {k[1]: o for k, o in offers.items() if k[0] == "tpu7x-standard-4t"}
    assert sorted(tpu7x) == ["us-central1", "us-east1", "us-west1"]
    for offer in tpu7x.values():
        assert (offer.pricing, offer.price_per_hour) == (OD, D(48))
        assert offer.attributes["sku_ids"] == "0F71-4391-B6CA"
        assert (offer.gpu_model, offer.gpu_count, offer.gpu_memory_gib) == ("TPU7x", 4, 192)


# One-way ICI per chip from Google's bidirectional figures (collectors/gcp_tpus.py):
# v5e 400 GB/s -> 200 GB/s = 1,600 Gbit/s; v6e 800 -> 400 GB/s = 3,200;
# v5p and TPU7x 1,200 -> 600 GB/s = 4,800. network_gbps = chips x that.
ICI: dict[str, Decimal] = {
    "ct5lp-hightpu-1t": D(1600),  # 1 x 1,600
    "ct5lp-hightpu-4t": D(6400),  # 4 x 1,600
    "ct5lp-hightpu-8t": D(12800),  # 8 x 1,600
    "ct6e-standard-1t": D(3200),  # 1 x 3,200
    "ct6e-standard-4t": D(12800),  # 4 x 3,200
    "ct6e-standard-8t": D(25600),  # 8 x 3,200
    "ct5p-hightpu-4t": D(19200),  # 4 x 4,800
    "tpu7x-standard-4t": D(19200),  # 4 x 4,800
}


def test_ici_is_stated_on_every_recorded_tpu_offer(
    recorded: tuple[dict[Key, Offer], Any],
) -> None:
    offers, _ = recorded
    for (machine, _region, _pricing), offer in offers.items():
        assert offer.fabric == "ici", machine
        assert offer.network_gbps == ICI[machine], machine
        # chips of one host talk over ICI; a 1-chip host has no link of its own to state
        assert offer.interconnect == ("gpu_fabric" if offer.gpu_count > 1 else "unknown")


# The Columbus capture (us-east5, 2026-08-07) keeps only description, serviceRegions,
# category.usageType and units/nanos: no skuId, resourceGroup or currencyCode.
COLUMBUS_SKUS = json.loads(COLUMBUS)["skus"]


def columbus(description: str) -> billing_v1.Sku:
    raw = next(s for s in COLUMBUS_SKUS if s["description"] == description)
    return billing_v1.Sku.from_json(json.dumps(raw), ignore_unknown_fields=True)


@pytest.mark.parametrize(
    ("description", "kind"),
    [
        ("TpuV6e running in Columbus", SkuKind(Resource.TPU, OD, gpu="v6e")),
        (
            "TpuV6e attached to Spot Preemptible VMs running in Columbus",
            SkuKind(Resource.TPU, SPOT, gpu="v6e"),
        ),
        (
            "Commitment v1: TpuV6e running in Columbus for 1 Year",
            SkuKind(Resource.TPU, R1, gpu="v6e"),
        ),
        ("TpuV6e running in Tokyo", SkuKind(Resource.TPU, OD, gpu="v6e")),
    ],
)
def test_columbus_list_skus_are_read_as_their_pricing_model(
    description: str, kind: SkuKind
) -> None:
    assert classify(columbus(description)) == kind


@pytest.mark.parametrize(
    ("description", "reason"),
    [
        # flex-start and calendar-mode reservations, both usageType OnDemand
        ("DWS Defined Duration V6e running in Columbus", "reservation_sku"),
        ("Reserved V6e TPU in Columbus in Calendar Mode", "reservation_sku"),
        # OnDemand at the list rate 2.70, yet another product than "TpuV6e running in ..."
        ("Capacity Optimized TpuV6e running in Columbus", "unrecognised_sku"),
    ],
)
def test_columbus_decoys_naming_a_tpu_are_counted_skips_even_without_resource_group(
    description: str, reason: str
) -> None:
    with pytest.raises(SkipItem) as info:
        classify(columbus(description))
    assert info.value.reason == reason


def test_a_capture_without_currency_is_never_priced_as_usd() -> None:
    """Served as recorded, the Columbus SKUs have no currencyCode: each priceable one is a
    counted ``bad_price`` skip naming it, none becomes an offer, and the three decoys are
    counted skips too: 4 + 2 + 1 = all 7 SKUs accounted for."""
    offers, ctx = collected(COLUMBUS)
    assert offers == {}
    assert ctx.skips == {"bad_price": 4, "reservation_sku": 2, "unrecognised_sku": 1}
    assert any("TpuV6e running in Columbus" in d and "currencyCode" in d for d in ctx.details)
