"""Latitude.sh bare-metal GPU plans from ``GET /plans?filter[gpu]=true`` (API token).

A plan (``attributes.slug`` such as ``g3-h100-small``) names its GPUs in ``specs.gpu``
(``count``, ``type``, ``vram_per_gpu``) and lists, per region (``name`` such as ``United
States``), its ``pricing`` per currency (``USD``, ``BRL``: ``hour``, ``month``, ``year`` for
the whole server), the sites it is sold at (``locations.available``) and those in stock now
(``locations.in_stock``) with a ``stock_level``. One on-demand offer per plan and region at
the ``USD`` ``hour`` price (the price Latitude quotes first; BRL is the same offer in another
currency and kept as an attribute). ``available`` where a site is in stock, ``unavailable``
where none is. A plan without GPUs is not a GPU offer; a region without an hourly USD price is
a counted skip. Monthly and yearly terms are kept as attributes, not as offers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import GpuCloudCollector, gpu_offer, number, text
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "LatitudeCollector", "parse_plans"]

log = logging.getLogger(__name__)

PROVIDER = "latitude"
DOCUMENTED_URL = "https://api.latitude.sh/plans"
QUERY = {"filter[gpu]": "true"}


def _mapping(item: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    value = item.get(field)
    return value if isinstance(value, Mapping) else {}


def _region_offer(plan: Mapping[str, Any], gpu: Mapping[str, Any], region: Any) -> Offer:
    if not isinstance(region, Mapping):
        raise SkipItem("malformed_item", f"region is {type(region).__name__}")
    name = text(region, "name")
    pricing = _mapping(region, "pricing")
    usd, brl = _mapping(pricing, "USD"), _mapping(pricing, "BRL")
    hour = number(usd, "hour", required=False)
    if hour is None or hour <= 0:
        raise SkipItem("zero_price", f"{name}: no hourly USD price ({usd.get('hour')!r})")
    sites = _mapping(region, "locations")
    in_stock = [s for s in sites.get("in_stock") or [] if isinstance(s, str)]
    gpu_type, vram = text(gpu, "type"), number(gpu, "vram_per_gpu", required=False)
    specs, cpu = _mapping(plan, "specs"), _mapping(_mapping(plan, "specs"), "cpu")
    cores, sockets = number(cpu, "cores", required=False), number(cpu, "count", required=False)
    attributes: dict[str, AttributeValue] = {
        "stock_level": region.get("stock_level")
        if isinstance(region.get("stock_level"), str)
        else None,
        "sites_in_stock": ",".join(in_stock),
        "price_month_usd": number(usd, "month", required=False),
        "price_year_usd": number(usd, "year", required=False),
        "price_hour_brl": number(brl, "hour", required=False),
        "memory_total": number(_mapping(specs, "memory"), "total", required=False),
    }
    return gpu_offer(
        f"{plan['slug']} in {name}",
        resolve_gpu(gpu_type, vram),
        gpu_type,
        attributes,
        provider=PROVIDER,
        instance_type=str(plan["slug"]),
        region=name,
        pricing=PricingModel.ON_DEMAND,
        price_per_hour=hour,  # the whole server: 3.37 USD an hour for one H100
        currency="USD",
        gpu_count=number(gpu, "count"),
        gpu_memory_gib=vram,
        vcpus=cores * sockets if cores is not None and sockets is not None else None,
        availability=Availability.AVAILABLE if in_stock else Availability.UNAVAILABLE,
    )


def parse_plan(plan: Any, skip: Callable[[str, str], None]) -> list[Offer] | None:
    """The offers of one plan, one per region; ``None`` for a plan without GPUs."""
    if not isinstance(plan, Mapping) or not isinstance(plan.get("attributes"), Mapping):
        raise SkipItem("malformed_item", "plan without attributes")
    attributes = plan["attributes"]
    slug = text(attributes, "slug")
    gpu = _mapping(_mapping(attributes, "specs"), "gpu")
    if not gpu or not number(gpu, "count", required=False):
        return None
    regions = attributes.get("regions")
    if not isinstance(regions, list):
        raise SkipItem("malformed_item", "regions is not a list")
    named = {**attributes, "slug": slug}
    return list(parse_each(regions, lambda r: _region_offer(named, gpu, r), skip, lambda _r: slug))


def parse_plans(payload: Any, skip: Callable[[str, str], None]) -> list[Offer]:
    """Every GPU offer in a plans answer; unpriceable plans and regions are counted skips."""
    plans = payload.get("data") if isinstance(payload, Mapping) else None
    if not isinstance(plans, list):
        raise CollectorError("latitude: response has no 'data' list")
    found = parse_each(
        plans,
        lambda p: parse_plan(p, skip),
        skip,
        lambda p: str(p.get("id") or "") if isinstance(p, Mapping) else "",
    )
    return [offer for offers in found for offer in offers]


class LatitudeCollector(GpuCloudCollector):
    """On-demand bare-metal GPU prices on Latitude.sh."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Latitude.sh bare-metal GPU plans (hourly USD, API token)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    documented: ClassVar[str] = DOCUMENTED_URL

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        if not self.scope(ctx):
            return
        with self.client() as http:
            payload = self.fetch(http, "GET", params=QUERY)
        offers = parse_plans(payload, ctx.skip)
        log.info("latitude: %d offers", len(offers))
        yield from offers
