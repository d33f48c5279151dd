"""The SKU classifier and price reader, over SKUs parsed by google-cloud-billing's own types."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from google.cloud import billing_v1

from collectors.base import SkipItem
from collectors.gcp_skus import (
    HOURS_PER_MONTH,
    Resource,
    SkuKind,
    applicable_rate,
    classify,
    hourly_price,
)
from tracker.models import PricingModel

FIXTURES = Path(__file__).parents[1] / "fixtures" / "gcp"
PAGE_1 = json.loads((FIXTURES / "catalog_page_1_opencost.json").read_text())
GPU_SKU = next(s for s in PAGE_1["skus"] if s["skuId"] == "039F-D0DA-4055")
CORE_SKU = next(s for s in PAGE_1["skus"] if s["skuId"] == "2922-40C5-B19F")
RAM_SKU = next(s for s in PAGE_1["skus"] if s["skuId"] == "2390-DCAF-DA38")


def sku(raw: dict[str, Any]) -> billing_v1.Sku:
    return billing_v1.Sku.from_json(json.dumps(raw), ignore_unknown_fields=True)


def variant(base: dict[str, Any], description: str, usage: str, group: str | None = None) -> Any:
    """A real SKU with only its description/usageType/resourceGroup values changed."""
    raw = copy.deepcopy(base)
    raw["description"] = description
    raw["category"]["usageType"] = usage
    if group:
        raw["category"]["resourceGroup"] = group
    return sku(raw)


OD, SPOT, R1, R3 = (
    PricingModel.ON_DEMAND,
    PricingModel.SPOT,
    PricingModel.RESERVED_1Y,
    PricingModel.RESERVED_3Y,
)


@pytest.mark.parametrize(
    ("base", "description", "usage", "group", "expected"),
    [
        (
            GPU_SKU,
            "Nvidia Tesla A100 GPU running in Americas",
            "OnDemand",
            None,
            SkuKind(Resource.GPU, OD, gpu="a100-40gb"),
        ),
        (
            GPU_SKU,
            "Nvidia Tesla A100 80GB GPU running in Netherlands",
            "OnDemand",
            None,
            SkuKind(Resource.GPU, OD, gpu="a100-80gb"),
        ),
        (
            GPU_SKU,
            "Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Belgium",
            "Preemptible",
            None,
            SkuKind(Resource.GPU, SPOT, gpu="t4"),
        ),
        (
            GPU_SKU,
            "Spot Preemptible Nvidia L4 GPU running in Frankfurt",
            "Preemptible",
            None,
            SkuKind(Resource.GPU, SPOT, gpu="l4"),
        ),
        # spot wording wins over a usageType of OnDemand (seen on spot GPU SKUs)
        (
            GPU_SKU,
            "Nvidia H100 80GB Mega GPU attached to Spot Preemptible VMs running in Tokyo",
            "OnDemand",
            None,
            SkuKind(Resource.GPU, SPOT, gpu="h100-mega-80gb"),
        ),
        (
            GPU_SKU,
            "Nvidia H100 80GB Plus GPU running in Americas",
            "OnDemand",
            None,
            SkuKind(Resource.GPU, OD, gpu="h100-mega-80gb"),
        ),
        (
            GPU_SKU,
            "H200 141GB GPU running in Belgium",
            "OnDemand",
            None,
            SkuKind(Resource.GPU, OD, gpu="h200-141gb"),
        ),
        (
            GPU_SKU,
            "Commitment v1: Nvidia Tesla T4 GPU running in Americas for 1 Year",
            "Commit1Yr",
            None,
            SkuKind(Resource.GPU, R1, gpu="t4"),
        ),
        (
            GPU_SKU,
            "Commitment v1: Nvidia L4 GPU running in Americas for 3 Years",
            "Commit3Yr",
            None,
            SkuKind(Resource.GPU, R3, gpu="l4"),
        ),
        (
            CORE_SKU,
            "A2 Instance Core running in Americas",
            "OnDemand",
            None,
            SkuKind(Resource.CORE, OD, family="a2"),
        ),
        (
            RAM_SKU,
            "Spot Preemptible A3Plus Instance Ram running in Tokyo",
            "Preemptible",
            None,
            SkuKind(Resource.RAM, SPOT, family="a3plus"),
        ),
        (
            CORE_SKU,
            "Preemptible N1 Predefined Instance Core running in Americas",
            "Preemptible",
            "N1Standard",
            SkuKind(Resource.CORE, SPOT, family="n1"),
        ),
        (
            CORE_SKU,
            "Commitment v1: A2 Cpu in APAC for 1 Year",
            "Commit1Yr",
            None,
            SkuKind(Resource.CORE, R1, family="a2"),
        ),
        (
            CORE_SKU,
            "Commitment v1: Cpu in Montreal for 3 Year",
            "Commit3Yr",
            None,
            SkuKind(Resource.CORE, R3, family="n1"),
        ),
        (
            RAM_SKU,
            "Commitment v1: G2 Ram in Americas for 3 Years",
            "Commit3Yr",
            None,
            SkuKind(Resource.RAM, R3, family="g2"),
        ),
        (
            RAM_SKU,
            "SSD backed Local Storage attached to Spot Preemptible VMs in Iowa",
            "Preemptible",
            "LocalSSD",
            SkuKind(Resource.LOCAL_SSD, SPOT),
        ),
        (
            RAM_SKU,
            "Commitment v1: Local SSD In Americas for 1 Year",
            "Commit1Yr",
            "LocalSSD",
            SkuKind(Resource.LOCAL_SSD, R1),
        ),
    ],
)
def test_classify_recognises_catalog_wordings(
    base: dict[str, Any], description: str, usage: str, group: str | None, expected: SkuKind
) -> None:
    assert classify(variant(base, description, usage, group)) == expected


@pytest.mark.parametrize(
    ("base", "description", "usage"),
    [
        (CORE_SKU, "E2 Instance Core running in Americas", "OnDemand"),
        (CORE_SKU, "Custom Instance Core running in Los Angeles", "OnDemand"),
        (CORE_SKU, "Network Vpn Internet Egress from Americas to Africa", "OnDemand"),
    ],
)
def test_classify_ignores_other_products(
    base: dict[str, Any], description: str, usage: str
) -> None:
    assert classify(variant(base, description, usage)) is None


@pytest.mark.parametrize(
    ("description", "usage", "reason"),
    [
        (
            "Reserved Nvidia H100 80GB Mega GPU in Americas in Calendar Mode",
            "OnDemand",
            "unrecognised_sku",
        ),
        (
            "Nvidia L4 GPU attached to DWS Defined Duration VMs running in Frankfurt",
            "OnDemand",
            "unrecognised_sku",
        ),
        ("Reserved A2 Ram in Netherlands", "OnDemand", "unrecognised_sku"),
        (
            "Commitment v1: Nvidia Tesla T4 GPU running in Americas for 1 Year",
            "Commit3Yr",
            "inconsistent_usage",
        ),
        ("Nvidia Tesla T4 GPU running in Americas", "Commit1Yr", "inconsistent_usage"),
        ("Nvidia Tesla T4 GPU running in Americas", "Commit", "unsupported_usage_type"),
    ],
)
def test_classify_reports_unplaceable_skus_of_our_families(
    description: str, usage: str, reason: str
) -> None:
    with pytest.raises(SkipItem) as info:
        classify(variant(GPU_SKU, description, usage))
    assert info.value.reason == reason
    assert "039F-D0DA-4055" in str(info.value)


def test_hourly_price_is_units_plus_nanos_exactly() -> None:
    price = hourly_price(sku(GPU_SKU), Resource.GPU)
    assert price.amount == Decimal("2.933908")
    assert price.currency == "USD"
    assert hourly_price(sku(RAM_SKU), Resource.RAM).amount == Decimal("0.004237")


def test_hourly_price_reads_the_latest_pricing_info() -> None:
    raw = copy.deepcopy(GPU_SKU)
    newer = copy.deepcopy(raw["pricingInfo"][0])
    newer["pricingExpression"]["tieredRates"][0]["unitPrice"]["units"] = "3"
    newer["effectiveTime"] = "2024-01-01T00:00:00Z"
    raw["pricingInfo"].append(newer)
    assert hourly_price(sku(raw), Resource.GPU).amount == Decimal("3.933908")


def test_local_ssd_month_price_becomes_hourly_with_730_hours() -> None:
    raw = copy.deepcopy(RAM_SKU)
    expression = raw["pricingInfo"][0]["pricingExpression"]
    expression["usageUnit"] = "GiBy.mo"
    expression["tieredRates"][0]["unitPrice"].update(units="0", nanos=80000000)
    assert HOURS_PER_MONTH == 730
    assert hourly_price(sku(raw), Resource.LOCAL_SSD).amount == Decimal("0.08") / 730


def test_applicable_rate_is_the_highest_tier_starting_at_or_below_usage() -> None:
    tiered = sku(json.loads((FIXTURES / "sku_network_egress_tiered_cyclenerd.json").read_text()))
    tiers = tiered.pricing_info[0].pricing_expression.tiered_rates
    assert applicable_rate(tiers).unit_price.nanos == 120000000
    assert applicable_rate(tiers, Decimal(1024)).unit_price.nanos == 110000000
    assert applicable_rate(tiers, Decimal(5000)).unit_price.nanos == 110000000
    assert applicable_rate(tiers, Decimal(10240)).unit_price.nanos == 80000000
    assert applicable_rate(tiers[1:]) is None  # no tier starts at 0


@pytest.mark.parametrize(
    ("mutate", "resource", "reason"),
    [
        (lambda e: e.update(usageUnit="GiBy.h"), Resource.GPU, "unexpected_unit"),
        (lambda e: e.update(tieredRates=[]), Resource.GPU, "no_applicable_rate"),
        (
            lambda e: e["tieredRates"][0]["unitPrice"].update(units="0", nanos=0),
            Resource.GPU,
            "zero_price",
        ),
        (
            lambda e: e["tieredRates"][0]["unitPrice"].update(units="1", nanos=-5),
            Resource.GPU,
            "bad_price",
        ),
        (
            lambda e: e["tieredRates"][0]["unitPrice"].update(units="-1", nanos=0),
            Resource.GPU,
            "bad_price",
        ),
    ],
)
def test_malformed_prices_are_rejected_with_a_reason(
    mutate: Any, resource: Resource, reason: str
) -> None:
    raw = copy.deepcopy(GPU_SKU)
    mutate(raw["pricingInfo"][0]["pricingExpression"])
    with pytest.raises(SkipItem) as info:
        hourly_price(sku(raw), resource)
    assert info.value.reason == reason


def test_sku_without_pricing_info_is_malformed() -> None:
    raw = copy.deepcopy(GPU_SKU)
    raw["pricingInfo"] = []
    with pytest.raises(SkipItem, match="no pricingInfo"):
        hourly_price(sku(raw), Resource.GPU)


@pytest.mark.parametrize(
    ("description", "usage", "version", "pricing"),
    [
        ("TpuV5e running in Delhi", "OnDemand", "v5e", PricingModel.ON_DEMAND),
        (
            "TpuV5e attached to Spot Preemptible VMs running in Belgium",
            "OnDemand",
            "v5e",
            PricingModel.SPOT,
        ),
        (
            "Commitment v1: TpuV5p running in Netherlands for 3 Years",
            "Commit3Yr",
            "v5p",
            PricingModel.RESERVED_3Y,
        ),
        ("TPU7x running in Americas", "OnDemand", "tpu7x", PricingModel.ON_DEMAND),
        ("TpuV6e running in South Carolina", "OnDemand", "v6e", PricingModel.ON_DEMAND),
    ],
)
def test_classify_reads_tpu_chip_skus(
    description: str, usage: str, version: str, pricing: PricingModel
) -> None:
    assert classify(variant(GPU_SKU, description, usage, "TPU")) == SkuKind(
        Resource.TPU, pricing, gpu=version
    )


@pytest.mark.parametrize(
    ("description", "reason"),
    [
        ("Reserved TpuV5p in Americas in Calendar Mode", "reservation_sku"),
        ("TpuV5p attached to DWS Defined Duration VMs running in Ohio", "reservation_sku"),
        ("TpuV9z running in Ohio", "unrecognised_sku"),
    ],
)
def test_tpu_reservations_and_unknown_tpus_are_counted_skips(description: str, reason: str) -> None:
    with pytest.raises(SkipItem) as info:
        classify(variant(GPU_SKU, description, "OnDemand", "TPU"))
    assert info.value.reason == reason
