"""Hyperbolic GPU marketplace prices from ``POST /v1/marketplace`` (bearer key).

Hyperbolic's own CLI reads this call for ``hyperbolic spot`` (HyperbolicLabs/hyperbolic-cli
``cmd/spot.go``): the body ``{"filters": {}}`` lists every machine (node) of the marketplace
as ``{"instances": [...]}``, each with its ``hardware`` (``gpus[]`` with ``model`` and
``ram`` in MiB, ``cpus[].virtual_cores``, ``ram[].capacity`` and ``storage[].capacity`` in
GB), ``gpus_total``, ``gpus_reserved`` (rented now), ``location.region`` and
``pricing.price`` (``amount``, ``period``). **The price is a fixed rule cited, not guessed:**
``amount`` is USD cents per GPU per hour. The CLI converts it as ``amount / 100.0`` ("Convert
cents to dollars") and prints "Prices are shown per GPU per hour in USD."; coinbase/agentkit's
Hyperbolic provider (``hyperboliclabs/utils.py`` ``format_gpu_instance``, and its test
``"amount": 250  # $2.50 in cents`` -> "$2.50/hour per GPU") says the same, and the CLI
prices a rented instance at ``amount / 100 * gpu_count`` (``cmd/instances.go``).

A node rents in part: any ``gpu_count`` of its free GPUs (``cmd/rent.go``). Nodes come and
go, so as for collectors/lium.py the collector stores **aggregate series**: one offer per
(GPU model, GPU count, region), instance type ``2x NVIDIA-H100-80GB-HBM3``, priced at the
cheapest node's per-GPU price times the count, with the median per-GPU price and the number
of nodes as attributes. A node that is ``reserved`` or has no free GPU is a counted
``not_rentable`` skip (the CLI and agentkit leave both out). The CLI calls this market
``spot`` (its on-demand VMs are another API, ``/v2/marketplace``), so offers are stored as
``spot``. The GPUs' ``interface`` says ``PCIeX16`` even for SXM parts, so the interconnect
is left unknown.
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

__all__ = ["DOCUMENTED_URL", "HyperbolicCollector", "aggregate", "rentable"]

PROVIDER = "hyperbolic"
DOCUMENTED_URL = "https://api.hyperbolic.xyz/v1/marketplace"
REQUEST_BODY: dict[str, Any] = {"filters": {}}
CURRENCY = "USD"
CENTS = Decimal(100)
MIB_PER_GIB = Decimal(1024)

Key = tuple[str, int, str]
"""(GPU model as sent, GPU count, region)."""
Member = tuple[Decimal, Mapping[str, Any]]
"""(USD per GPU per hour, the node)."""


def _count(node: Mapping[str, Any], field: str) -> int:
    value = number(node, field)
    if value is None or value != int(value) or value < 0:
        raise SkipItem("malformed_item", f"{field} is {node.get(field)!r}")
    return int(value)


def _first(hardware: Mapping[str, Any], part: str) -> Mapping[str, Any]:
    """The first entry of ``hardware[part]`` (the CLI reads the first), or {}."""
    entries = hardware.get(part)
    if isinstance(entries, list) and entries and isinstance(entries[0], Mapping):
        return entries[0]
    return {}


def _per_gpu_usd(node: Mapping[str, Any]) -> Decimal:
    pricing = node.get("pricing")
    price = pricing.get("price") if isinstance(pricing, Mapping) else None
    if not isinstance(price, Mapping):
        raise SkipItem("malformed_item", "no pricing.price object")
    if price.get("period") != "hourly":
        raise SkipItem("unsupported_period", f"price period {price.get('period')!r}")
    cents = number(price, "amount")
    assert cents is not None
    if cents <= 0:
        raise SkipItem("zero_price", f"amount {cents}")
    return cents / CENTS  # 99 cents -> $0.99 per GPU-hour


def rentable(node: Any) -> dict[Key, Member]:
    """(key -> per-GPU USD price, node) for every GPU count the node can be rented with."""
    if not isinstance(node, Mapping) or not isinstance(node.get("hardware"), Mapping):
        raise SkipItem("malformed_item", "node without a hardware object")
    model = text(_first(node["hardware"], "gpus"), "model")
    total, taken = _count(node, "gpus_total"), _count(node, "gpus_reserved")
    location = node.get("location")
    region = location.get("region") if isinstance(location, Mapping) else None
    if not isinstance(region, str) or not region.strip():
        raise SkipItem("no_location", f"location is {location!r}")
    price = _per_gpu_usd(node)
    free = total - taken
    if node.get("reserved") is True or free <= 0:
        raise SkipItem("not_rentable", f"{max(free, 0)} of {total} GPUs free")
    return {(model, n, region.strip().lower()): (price, node) for n in range(1, free + 1)}


def _node_number(node: Mapping[str, Any], part: str, field: str) -> Decimal | None:
    return number(_first(node["hardware"], part), field, required=False)


def _offer(key: Key, members: list[Member]) -> Offer:
    model, count, region = key
    price, node = min(members, key=lambda m: m[0])
    mib = _node_number(node, "gpus", "ram")
    vram = mib / MIB_PER_GIB if mib is not None else None  # 81559 MiB -> 79.65 GiB
    attributes: dict[str, AttributeValue] = {
        "median_price_per_gpu_hour": statistics.median(m[0] for m in members),
        "offer_count": len(members),
        "node_gpus": int(node["gpus_total"]),
        "node_vcpus": _node_number(node, "cpus", "virtual_cores"),
        "node_ram_gb": _node_number(node, "ram", "capacity"),
        "node_storage_gb": _node_number(node, "storage", "capacity"),
    }
    return gpu_offer(
        f"{count}x {model} {region}",
        resolve_gpu(model, vram),
        model,
        attributes,
        provider=PROVIDER,
        instance_type=f"{count}x {model}",
        region=region,
        pricing=PricingModel.SPOT,
        offering_class="marketplace",
        price_per_hour=price * count,  # 2 GPUs at $0.99 -> $1.98
        currency=CURRENCY,
        gpu_count=Decimal(count),
        gpu_memory_gib=vram,
        availability=Availability.AVAILABLE,
    )


def aggregate(payload: Any, skip: Callable[[str, str], None]) -> list[Offer]:
    """One offer per (GPU, count, region) of the marketplace; an unpriceable node skips."""
    nodes = payload.get("instances") if isinstance(payload, Mapping) else None
    if not isinstance(nodes, list):
        raise CollectorError("hyperbolic: response has no 'instances' list")
    groups = group_nodes(nodes, rentable, skip)
    return list(parse_each(sorted(groups.items()), lambda group: _offer(*group), skip))


class HyperbolicCollector(GpuCloudCollector):
    """Aggregate GPU marketplace (spot) prices on Hyperbolic."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Hyperbolic GPU marketplace, aggregated per GPU/count/region"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.SPOT})
    documented: ClassVar[str] = DOCUMENTED_URL

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        # The market is spot only, so the scope leaves nothing out once a request is made.
        return self.listing(
            ctx, lambda payload, scope: aggregate(payload, ctx.skip), "POST", json=REQUEST_BODY
        )
