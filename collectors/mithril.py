"""Mithril (formerly Foundry / ML Foundry) spot prices from its Compute API (API key).

Mithril sells GPU VMs through a spot auction (and reservations priced per request, which
have no list price). ``GET /v2/instance-types`` lists the shapes (``fid``, ``name`` such as
``h100.80gb.sxm``, ``num_gpus``, ``gpu_type``, ``gpu_memory_gb``, ``gpu_socket``,
``num_cpus``, ``ram_gb``); ``GET /v2/spot/availability`` lists one auction per instance type
and region with ``capacity`` (instances available) and ``last_instance_price``, the last
clearing price as a dollar string (``"$25.60"``). SkyPilot's catalog fetcher reads that price
as the instance type's spot price per hour in the region, and so does this collector: one
spot offer per auction, ``available`` with capacity and ``unavailable`` without. An auction
whose instance type is not listed, or whose price is not a dollar amount, is a counted skip.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import GpuCloudCollector, documented_url, gpu_offer, number, text
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Offer, PricingModel

__all__ = ["AVAILABILITY_URL", "DOCUMENTED_URL", "MithrilCollector", "parse_auctions"]

log = logging.getLogger(__name__)

PROVIDER = "mithril"
DOCUMENTED_URL = "https://api.mithril.ai/v2/instance-types"
AVAILABILITY_URL = "https://api.mithril.ai/v2/spot/availability"


def _dollars(auction: Mapping[str, Any]) -> Decimal:
    raw = auction.get("last_instance_price")
    if not isinstance(raw, str) or not raw.strip().startswith("$"):
        raise SkipItem("malformed_item", f"last_instance_price is {raw!r}, not a dollar amount")
    try:
        price = Decimal(raw.strip()[1:].replace(",", ""))
    except InvalidOperation:
        raise SkipItem("malformed_item", f"last_instance_price is {raw!r}") from None
    if not price.is_finite() or price <= 0:
        raise SkipItem("zero_price", f"last_instance_price {raw!r}")
    return price


def parse_auction(auction: Any, shapes: Mapping[str, Mapping[str, Any]]) -> Offer:
    """The spot offer of one auction (an instance type in a region)."""
    if not isinstance(auction, Mapping):
        raise SkipItem("malformed_item", f"auction is {type(auction).__name__}")
    fid, region = text(auction, "instance_type"), text(auction, "region")
    shape = shapes.get(fid)
    if shape is None:
        raise SkipItem("unknown_instance_type", f"instance type {fid} is not listed")
    price = _dollars(auction)
    capacity = number(auction, "capacity", required=False)
    gpu, vram = text(shape, "gpu_type"), number(shape, "gpu_memory_gb", required=False)
    attributes: dict[str, AttributeValue] = {
        "instance_type_fid": fid,
        "capacity": capacity,
        "gpu_socket": shape.get("gpu_socket") if isinstance(shape.get("gpu_socket"), str) else None,
        "local_storage_gb": number(shape, "local_storage_gb", required=False),
    }
    return gpu_offer(
        f"{fid} in {region}",
        resolve_gpu(gpu, vram),
        gpu,
        attributes,
        provider=PROVIDER,
        instance_type=text(shape, "name"),
        region=region,
        pricing=PricingModel.SPOT,
        price_per_hour=price,  # "$5.00" -> 5.00 for the whole instance
        currency="USD",
        gpu_count=number(shape, "num_gpus"),
        gpu_memory_gib=vram,
        vcpus=number(shape, "num_cpus", required=False),
        memory_gib=number(shape, "ram_gb", required=False),
        availability=Availability.AVAILABLE if capacity else Availability.UNAVAILABLE,
    )


def parse_auctions(
    shapes_payload: Any, auctions_payload: Any, skip: Callable[[str, str], None]
) -> list[Offer]:
    """Every spot offer: the auctions joined to the instance types they name."""
    if not isinstance(shapes_payload, list) or not isinstance(auctions_payload, list):
        raise CollectorError("mithril: instance-types or spot/availability is not a list")
    shapes = {
        s["fid"]: s
        for s in shapes_payload
        if isinstance(s, Mapping) and isinstance(s.get("fid"), str)
    }
    return list(
        parse_each(
            auctions_payload,
            lambda a: parse_auction(a, shapes),
            skip,
            lambda a: str(a.get("fid") or "") if isinstance(a, Mapping) else "",
        )
    )


class MithrilCollector(GpuCloudCollector):
    """Spot-auction prices on Mithril."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Mithril spot auctions (last clearing price per region, API key)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.SPOT})
    documented: ClassVar[str] = DOCUMENTED_URL

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        if not self.scope(ctx):
            return
        with self.client() as http:
            shapes = self.fetch(http, "GET")
            origin = self.section(self.settings).endpoint_url
            auctions = self.fetch(http, "GET", documented_url(AVAILABILITY_URL, origin))
        offers = parse_auctions(shapes, auctions, ctx.skip)
        log.info("mithril: %d offers", len(offers))
        yield from offers
