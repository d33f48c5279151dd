"""Lium GPU-pod prices from its public nodes feed (``GET /api/public/v1/nodes``, no key).

Lium is a marketplace: the feed lists every node rentable now, each with ``gpu_model``,
``gpu_count``, ``available_gpu_count`` (free now), ``min_rentable_gpu_count`` (the
smallest order), ``price_per_gpu_hour`` in USD, the host's ``cpu_count``, ``ram_gb`` and
``disk_gb``, its ``tier`` (``secure``, or ``spot`` for interruptible) and its place
(``country_code`` plus the ISO subdivision ``region``). A node can be rented in part: any
count from the smallest order to the free GPUs, at ``price_per_gpu_hour`` each (gpuhunt's
reading of the feed). Nodes come and go, so like collectors/vastai.py the collector stores
**aggregate series**: one offer per (GPU model, GPU count, tier, place), instance type
``2x H200``, region ``us-ms``, ``offering_class`` the tier, priced at the cheapest node's
per-GPU price times the count, with the median and the number of nodes as attributes.
Every listed node is rentable, so a series is ``available``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import GpuCloudCollector, gpu_offer, group_nodes, number, text
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "LiumCollector", "aggregate"]


PROVIDER = "lium"
DOCUMENTED_URL = "https://lium.io/api/public/v1/nodes"
SPOT_TIER = "spot"

Key = tuple[str, int, str, str]
"""(GPU model as sent, GPU count, tier, place)."""


def _place(node: Mapping[str, Any]) -> str:
    """``us-ms`` from ``country_code`` US and ``region`` MS (``de`` without a region)."""
    country, region = node.get("country_code"), node.get("region")
    if not isinstance(country, str) or not country.strip():
        raise SkipItem("no_location", f"country_code is {country!r}")
    place = country.strip().lower()
    if isinstance(region, str) and region.strip():
        place = f"{place}-{region.strip().lower()}"
    return place.replace(" ", "")


def _count(node: Mapping[str, Any], field: str) -> int:
    value = number(node, field)
    if value is None or value != int(value) or value < 0:
        raise SkipItem("malformed_item", f"{field} is {node.get(field)!r}")
    return int(value)


def rentable(node: Any) -> dict[Key, tuple[Decimal, Mapping[str, Any]]]:
    """(key -> per-GPU price, node) for every GPU count one node can be rented with."""
    if not isinstance(node, Mapping):
        raise SkipItem("malformed_item", f"node is {type(node).__name__}")
    model, tier = text(node, "gpu_model"), text(node, "tier")
    price = number(node, "price_per_gpu_hour")
    assert price is not None
    if price <= 0:
        raise SkipItem("zero_price", f"price_per_gpu_hour {price}")
    total, free = _count(node, "gpu_count"), _count(node, "available_gpu_count")
    smallest = max(
        1, _count(node, "min_rentable_gpu_count") if node.get("min_rentable_gpu_count") else 1
    )
    place = _place(node)
    if total == 0 or min(free, total) < smallest:
        raise SkipItem("not_rentable", f"{free} of {total} GPUs free, smallest order {smallest}")
    return {(model, n, tier, place): (price, node) for n in range(smallest, min(free, total) + 1)}


def _offer(key: Key, members: list[tuple[Decimal, Mapping[str, Any]]]) -> Offer:
    model, count, tier, place = key
    price, node = min(members, key=lambda m: m[0])
    share = Decimal(count) / Decimal(node["gpu_count"])  # a part-rental's share of the host
    ram = number(node, "ram_gb", required=False)
    attributes: dict[str, AttributeValue] = {
        "median_price_per_gpu_hour": statistics.median(m[0] for m in members),
        "offer_count": len(members),
        "ram_gb": ram * share if ram is not None else None,
        "country": node.get("country") if isinstance(node.get("country"), str) else None,
    }
    cpus = number(node, "cpu_count", required=False)
    vram = number(node, "gpu_memory_gb", required=False)  # tells a bare "A100" 40 from 80 GB
    attributes["gpu_memory_gb"] = vram
    return gpu_offer(
        f"{count}x {model} {tier} {place}",
        resolve_gpu(model, vram),
        model,
        attributes,
        provider=PROVIDER,
        instance_type=f"{count}x {model}",
        region=place,
        pricing=PricingModel.SPOT if tier == SPOT_TIER else PricingModel.ON_DEMAND,
        offering_class=tier,
        price_per_hour=price * count,  # 2 GPUs at $3.99 -> $7.98
        currency="USD",
        gpu_count=Decimal(count),
        vcpus=cpus * share if cpus is not None else None,
        availability=Availability.AVAILABLE,
    )


def aggregate(
    payload: Any, skip: Callable[[str, str], None], scope: frozenset[PricingModel]
) -> list[Offer]:
    """One offer per (GPU, count, tier, place) of the feed; an unpriceable node skips."""
    nodes = payload.get("nodes") if isinstance(payload, Mapping) else None
    if not isinstance(nodes, list):
        raise CollectorError("lium: response has no 'nodes' list")
    groups = group_nodes(nodes, rentable, skip)
    offers = parse_each(sorted(groups.items()), lambda group: _offer(*group), skip)
    return [offer for offer in offers if offer.pricing in scope]


class LiumCollector(GpuCloudCollector):
    """Aggregate marketplace prices (secure and spot tiers) on Lium."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Lium public nodes feed, aggregated per GPU/count/tier/place"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(
        {PricingModel.ON_DEMAND, PricingModel.SPOT}
    )
    documented: ClassVar[str] = DOCUMENTED_URL

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return self.listing(ctx, lambda payload, scope: aggregate(payload, ctx.skip, scope))
