"""Pure parsers of IBM's Global Catalog answers for collectors/ibm.py (which says what is
read and why): a profile entry -> :class:`Profile`, a plan's deployments -> offers."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from collectors.base import SkipItem, parse_each
from collectors.gpucloud import gpu_offer, number, text
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Offer, PricingModel

__all__ = [
    "COUNTRY",
    "CURRENCY",
    "GPUS",
    "PROFILE_NAME",
    "PROVIDER",
    "Profile",
    "hourly_price",
    "parse_prices",
    "parse_profile",
]

PROVIDER = "ibm"
COUNTRY, CURRENCY = "USA", "USD"
FLAT_METER = "INSTANCE_MULTI_TENANT"
HOURLY_UNIT = "INSTANCE_HOURS_MULTI_TENANT"
PROFILE_NAME = re.compile(
    r"^(?P<family>g[a-z]*[0-9]+[a-z]*)-(?P<vcpus>[1-9][0-9]*)x(?P<ram>[1-9][0-9]*)"
    r"x(?P<count>[1-9][0-9]*)(?P<gpu>[a-z][a-z0-9]*)$"
)

GPUS: dict[str, tuple[str, Decimal | None]] = {
    # profile suffix -> (catalog spelling, GiB per GPU), in the words of IBM's VPC profile docs
    "v100": ("V100 PCIe", Decimal(16)),  # "NVIDIA V100 PCIe 16 GB GPUs"
    "l4": ("L4", Decimal(24)),  # "NVIDIA L4 24 GB GPUs"
    "l40s": ("L40S", Decimal(48)),  # "NVIDIA L40S 48 GB GPUs"
    "a100p": ("A100 PCIe", Decimal(80)),  # "A100 Tensor Core 80 GB", table "a100 80 GB PCIe"
    "h100": ("H100 SXM", Decimal(80)),  # "HGX design"; accelerated family: H100 SXM5 (80 GB)
    "h200": ("H200", None),  # "HGX design"
    "gaudi3": ("Gaudi3", None),  # "Intel Gaudi 3 AI Accelerator"
    "mi300x": ("MI300X", None),  # "AMD Instinct MI300X Accelerator"
}


@dataclass(frozen=True)
class Profile:
    """One flat-rate GPU profile as the catalog entry and its name describe it."""

    name: str
    plan: str
    gpu: str
    gpu_count: Decimal
    vcpus: Decimal
    memory_gib: Decimal


def _mapping(item: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    value = item.get(field)
    return value if isinstance(value, Mapping) else {}


def _maps(item: Mapping[str, Any], field: str) -> list[Mapping[str, Any]]:
    value = item.get(field)
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _multi_tenant(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``instance`` component's one ``multi-tenant`` deployment (plan and meters)."""
    profile = _mapping(_mapping(_mapping(entry, "metadata"), "other"), "profile")
    found = [
        deployment
        for measure in _maps(profile, "measures")
        if measure.get("component") == "instance"
        for deployment in _maps(measure, "deployments")
        if deployment.get("type") == "multi-tenant"
    ]
    if len(found) != 1:
        raise SkipItem("malformed_item", f"{len(found)} multi-tenant instance deployments")
    return found[0]


def parse_profile(entry: Any) -> Profile | None:
    """A flat-rate GPU profile; ``None`` for another kind, an inactive entry or a CPU
    profile (no GPU segment in its name); a composite-priced one is a counted skip."""
    if not isinstance(entry, Mapping):
        raise SkipItem("malformed_item", f"entry is {type(entry).__name__}")
    if entry.get("kind") != "instance.profile":
        return None
    if entry.get("active") is False or entry.get("disabled") is True:
        return None
    name = text(entry, "name")
    shape = PROFILE_NAME.match(name)
    if shape is None:
        return None
    deployment = _multi_tenant(entry)
    plan = text(deployment, "plan")
    meters = {str(m.get("unit")): m.get("quantity") for m in _maps(deployment, "meters")}
    if meters.get(FLAT_METER) not in ("1", 1):
        units = ", ".join(sorted(meters)) or "none"
        raise SkipItem("composite_price", f"billed as a sum of meters ({units})")
    return Profile(
        name=name,
        plan=plan,
        gpu=shape["gpu"],
        gpu_count=Decimal(shape["count"]),
        vcpus=Decimal(shape["vcpus"]),
        memory_gib=Decimal(shape["ram"]),
    )


def hourly_price(metric: Mapping[str, Any]) -> Decimal:
    """The USA/USD price of one instance-hour, read only from a metric that says so."""
    unit, quantity = metric.get("charge_unit_name"), metric.get("charge_unit_quantity")
    tier = metric.get("tier_model")
    linear = isinstance(tier, str) and tier.strip().lower().replace(" ", "_") == "linear_tier"
    if unit != HOURLY_UNIT or quantity not in (1, "1") or quantity is True or not linear:
        raise SkipItem("non_hourly_metric", f"charged per {quantity!r} {unit!r} ({tier!r})")
    rows = [
        a
        for a in _maps(metric, "amounts")
        if a.get("country") == COUNTRY and a.get("currency") == CURRENCY
    ]
    if len(rows) != 1:
        raise SkipItem("no_usd_price", f"{len(rows)} {COUNTRY}/{CURRENCY} amounts")
    prices = _maps(rows[0], "prices")
    if len(prices) != 1 or prices[0].get("quantity_tier") != 1:
        raise SkipItem("non_hourly_metric", f"{len(prices)} price tiers, not one at quantity 1")
    price = number(prices[0], "price")
    assert price is not None
    if price <= 0:
        raise SkipItem("zero_price", f"price {price}")
    return price


def _region_offer(profile: Profile, deployment: Any, seen: set[str]) -> Offer:
    if not isinstance(deployment, Mapping):
        raise SkipItem("malformed_item", f"deployment is {type(deployment).__name__}")
    region = deployment.get("deployment_region") or deployment.get("deployment_location")
    if not isinstance(region, str) or not region.strip():
        raise SkipItem("malformed_item", "deployment names no region")
    metric_id = f"part-is.instance-hours-{profile.name}"
    metrics = [m for m in _maps(deployment, "metrics") if m.get("metric_id") == metric_id]
    if len(metrics) != 1:
        raise SkipItem("malformed_item", f"{region}: {len(metrics)} {metric_id} metrics")
    try:
        price = hourly_price(metrics[0])
    except SkipItem as exc:
        raise SkipItem(exc.reason, f"{region}: {exc.detail}") from None
    if region in seen:
        raise SkipItem("duplicate_region", f"{region} priced twice")
    seen.add(region)
    spelling, vram = GPUS.get(profile.gpu, (profile.gpu, None))
    attributes: dict[str, AttributeValue] = {
        "plan_id": profile.plan,
        "deployment_id": str(deployment.get("deployment_id") or ""),
        "effective_from": str(metrics[0].get("effective_from") or ""),
    }
    return gpu_offer(
        f"{profile.name} in {region}",
        resolve_gpu(spelling, vram),
        profile.gpu,
        attributes,
        provider=PROVIDER,
        instance_type=profile.name,
        region=region.strip(),
        pricing=PricingModel.ON_DEMAND,
        price_per_hour=price,  # the whole instance: gx3d-160x1792x8h100 is all eight GPUs
        currency=CURRENCY,
        gpu_count=profile.gpu_count,
        gpu_memory_gib=vram,
        vcpus=profile.vcpus,
        memory_gib=profile.memory_gib,
    )


def parse_prices(
    profile: Profile, deployments: list[Any], skip: Callable[[str, str], None]
) -> list[Offer]:
    """One on-demand offer per region of the profile's plan; the rest are counted skips."""
    seen: set[str] = set()
    return list(
        parse_each(
            deployments, lambda d: _region_offer(profile, d, seen), skip, lambda _d: profile.name
        )
    )
