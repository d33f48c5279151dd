"""Novita AI GPU-instance prices from ``GET /gpu-instance/openapi/v1/products`` (API key).

Each product is one GPU shape (``id`` such as ``4090.16c62g``, ``name`` such as
``RTX 4090 24GB``) with ``cpuPerGpu``, ``memoryPerGpu`` (GB of RAM per GPU) and
``diskPerGpu``; an instance takes 1 to 8 of them, so one offer is one GPU. ``price``
(on-demand) and ``spotPrice`` are in units of 1/100000 USD per GPU-hour (SkyPilot's
fetcher divides both by 100000; ``35000`` is $0.35). ``regions`` names where the product
is sold (``US-CA-06 (California)``); the region is the code before the parenthesis.
``availableDeploy`` says whether it can be deployed now: ``available`` when true,
``unavailable`` when false, in every listed region (the API states no per-region stock).
Spot is an offer where ``billingMethods`` includes ``spot`` and ``spotPrice`` is positive.
Monthly subscriptions (``monthlyPrice``) are not collected: their unit is undocumented.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import GpuCloudCollector, gpu_offer, loose_number, number, text
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "NovitaCollector", "parse_products"]


PROVIDER = "novita"
DOCUMENTED_URL = "https://api.novita.ai/gpu-instance/openapi/v1/products"
PRICE_UNIT = Decimal(100000)
"""``price`` and ``spotPrice`` are 1/100000 USD per GPU-hour."""


def _regions(product: Mapping[str, Any]) -> dict[str, str]:
    """Region code -> the label Novita lists (``US-CA-06`` -> ``US-CA-06 (California)``)."""
    listed = product.get("regions")
    if not isinstance(listed, list) or not all(isinstance(r, str) for r in listed):
        raise SkipItem("malformed_item", f"regions is not a list of names ({listed!r:.80})")
    found = {label.split(" (", 1)[0].strip(): label for label in listed if label.strip()}
    if not found:
        raise SkipItem("no_location", "no region listed")
    return found


def _prices(
    product: Mapping[str, Any], scope: frozenset[PricingModel]
) -> dict[PricingModel, Decimal]:
    """Per-GPU hourly USD of each pricing model the product is sold under and ``scope`` wants."""
    prices: dict[PricingModel, Decimal] = {}
    if PricingModel.ON_DEMAND in scope:
        units = loose_number(product, "price")
        if units is None or units <= 0:
            raise SkipItem("zero_price", f"price {product.get('price')!r}")
        prices[PricingModel.ON_DEMAND] = units / PRICE_UNIT  # 35000 -> $0.35
    methods = product.get("billingMethods")
    if PricingModel.SPOT in scope and isinstance(methods, list) and "spot" in methods:
        spot = loose_number(product, "spotPrice")
        if spot is not None and spot > 0:
            prices[PricingModel.SPOT] = spot / PRICE_UNIT
    return prices


def parse_product(product: Any, scope: frozenset[PricingModel]) -> list[Offer]:
    """The offers of one product: one per listed region and pricing model."""
    if not isinstance(product, Mapping):
        raise SkipItem("malformed_item", f"product is {type(product).__name__}")
    name = text(product, "name")
    instance_type = text(product, "id")
    regions = _regions(product)
    prices = _prices(product, scope)
    deployable = product.get("availableDeploy")
    if not isinstance(deployable, bool):
        raise SkipItem("malformed_item", f"availableDeploy is {deployable!r}")
    match = resolve_gpu(name.strip(), None)
    attributes: dict[str, AttributeValue] = {
        "disk_gb_per_gpu": number(product, "diskPerGpu", required=False),
        "billing_methods": ",".join(str(m) for m in product.get("billingMethods") or []),
    }
    return [
        gpu_offer(
            f"{instance_type} in {code}",
            match,
            name.strip(),
            attributes | {"region_name": label},
            provider=PROVIDER,
            instance_type=instance_type,
            region=code,
            pricing=pricing,
            price_per_hour=price,
            currency="USD",
            gpu_count=Decimal(1),
            vcpus=number(product, "cpuPerGpu", required=False),
            memory_gib=number(product, "memoryPerGpu", required=False),
            availability=Availability.AVAILABLE if deployable else Availability.UNAVAILABLE,
        )
        for code, label in sorted(regions.items())
        for pricing, price in prices.items()
    ]


def parse_products(
    payload: Any, skip: Callable[[str, str], None], scope: frozenset[PricingModel]
) -> list[Offer]:
    """Every offer in a products answer; an unpriceable product is a counted skip."""
    products = payload.get("data") if isinstance(payload, Mapping) else None
    if not isinstance(products, list):
        raise CollectorError("novita: response has no 'data' list")
    found = parse_each(
        products,
        lambda p: parse_product(p, scope),
        skip,
        lambda p: str(p.get("id") or "") if isinstance(p, Mapping) else "",
    )
    return [offer for offers in found for offer in offers]


class NovitaCollector(GpuCloudCollector):
    """On-demand and spot GPU-instance prices on Novita AI."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Novita AI GPU instances (on-demand and spot, API key)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(
        {PricingModel.ON_DEMAND, PricingModel.SPOT}
    )
    documented: ClassVar[str] = DOCUMENTED_URL

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return self.listing(ctx, lambda payload, scope: parse_products(payload, ctx.skip, scope))
