"""Prime Intellect GPU offers from ``GET /api/v1/availability/gpus`` (API key, bearer).

Prime Intellect brokers the GPUs of other clouds (``provider``: ``hyperstack``,
``runpod``, ...) and its own datacenters. The endpoint pages (``page``, ``page_size`` up
to 100) through ``{"items": [...], "totalCount": n}``; each item is one offer: the
upstream ``provider`` and its plan (``cloudId``, e.g. ``n3-H100x1``), ``gpuType``
(``H100_80GB``), ``gpuCount``, ``gpuMemory`` (the offer's total VRAM), ``socket``, ``dataCenter`` and ``country``,
the ``vcpu``/``memory``/``disk`` blocks (``defaultCount``), ``security``
(``secure_cloud`` or ``community_cloud``), ``stockStatus`` (``Available``, ``Low``, ...)
and ``prices``: ``onDemand`` per hour for the **whole offer** (not per GPU) in
``prices.currency``. One offer here is one plan of one upstream provider in one
datacenter and security tier; several live offers of the same are one offer at the
lowest price (``listed`` says how many), as for Vast.ai.

The provider stays ``primeintellect`` (who bills); the instance type is
``<provider>/<cloudId>`` and the ``underlying_cloud`` attribute names the upstream, so a
box also collected from that cloud directly is a resale, not a second supply.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import GpuCloudCollector, gpu_offer, loose_number, text
from collectors.http import HttpClient
from tracker.catalog import GpuMatch, resolve_gpu
from tracker.models import AttributeValue, Availability, Interconnect, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "PrimeIntellectCollector", "parse_offer", "parse_page"]

log = logging.getLogger(__name__)

PROVIDER = "primeintellect"
DOCUMENTED_URL = "https://api.primeintellect.ai/api/v1/availability/gpus"
PAGE_SIZE = 100
_STOCK = {
    "available": Availability.AVAILABLE,
    "high": Availability.AVAILABLE,
    "medium": Availability.AVAILABLE,
    "low": Availability.LOW,
    "unavailable": Availability.UNAVAILABLE,
}


def _default(item: Mapping[str, Any], block: str) -> Decimal | None:
    value = item.get(block)
    return loose_number(value, "defaultCount") if isinstance(value, Mapping) else None


def _socket(socket: Any) -> Interconnect:
    if not isinstance(socket, str):
        return Interconnect.UNKNOWN
    if socket.upper().startswith("SXM"):
        return Interconnect.NVLINK
    return Interconnect.PCIE if socket.upper() == "PCIE" else Interconnect.UNKNOWN


def _match(gpu: str, socket: Any, vram: Decimal | None) -> GpuMatch:
    """The GPU with its socket first (``H100_80GB`` alone reads as the SXM part, but a
    ``PCIe`` socket is the PCIe card), else the type alone."""
    if isinstance(socket, str) and socket.strip():
        with_socket = resolve_gpu(f"{gpu} {socket.strip()}", vram)
        if with_socket.known:
            return with_socket
    return resolve_gpu(gpu, vram)


def parse_offer(item: Any) -> Offer:
    """One availability item as an offer; :class:`SkipItem` if it cannot be priced."""
    if not isinstance(item, Mapping) or not isinstance(item.get("prices"), Mapping):
        raise SkipItem("malformed_item", "offer without a prices object")
    prices: Mapping[str, Any] = item["prices"]
    upstream, plan, gpu = text(item, "provider"), text(item, "cloudId"), text(item, "gpuType")
    price = loose_number(prices, "onDemand")
    if price is None:
        raise SkipItem("no_price", f"{upstream}/{plan}: prices.onDemand is null")
    if price <= 0:
        raise SkipItem("zero_price", f"{upstream}/{plan}: prices.onDemand {price}")
    count = loose_number(item, "gpuCount")
    if count is None or count <= 0:
        raise SkipItem("malformed_item", f"{upstream}/{plan}: gpuCount {item.get('gpuCount')!r}")
    region = item.get("dataCenter") or item.get("country")
    if not isinstance(region, str) or not region.strip():
        raise SkipItem("malformed_item", f"{upstream}/{plan}: no dataCenter or country")
    total_vram = loose_number(item, "gpuMemory")
    # gpuMemory is the whole offer's (SkyPilot: a 2-GPU RTX PRO 6000 box reports 192)
    vram = total_vram / count if total_vram else None
    security = item.get("security")
    stock = item.get("stockStatus")
    attributes: dict[str, AttributeValue] = {
        "underlying_cloud": upstream,
        "security": security if isinstance(security, str) else None,
        "country": item.get("country") if isinstance(item.get("country"), str) else None,
        "stock_status": stock if isinstance(stock, str) else None,
        "disk_gb": _default(item, "disk"),
    }
    spot = item.get("isSpot") is True
    tier = f" {security}" if isinstance(security, str) and security != "secure_cloud" else ""
    return gpu_offer(
        f"{upstream}/{plan}",
        _match(gpu, item.get("socket"), vram),
        gpu,
        attributes,
        provider=PROVIDER,
        instance_type=f"{upstream}/{plan}{tier}",
        region=region.strip(),
        pricing=PricingModel.SPOT if spot else PricingModel.ON_DEMAND,
        price_per_hour=price,  # prices.onDemand: the whole offer per hour
        currency=text(prices, "currency").upper(),
        gpu_count=count,
        gpu_memory_gib=vram,
        vcpus=_default(item, "vcpu"),
        memory_gib=_default(item, "memory"),
        interconnect=_socket(item.get("socket")),
        availability=_STOCK.get(str(stock).lower(), Availability.UNKNOWN),
    )


def cheapest(offers: Iterator[Offer]) -> list[Offer]:
    """One offer per identity at its lowest price; ``listed`` counts the live offers."""
    best: dict[tuple[str, str, str], Offer] = {}
    listed: dict[tuple[str, str, str], int] = {}
    for offer in offers:
        key = (offer.instance_type, offer.region, offer.pricing.value)
        listed[key] = listed.get(key, 0) + 1
        if key not in best or offer.price_per_hour < best[key].price_per_hour:
            best[key] = offer
    return [replace(o, attributes={**o.attributes, "listed": listed[k]}) for k, o in best.items()]


def parse_page(payload: Any, skip: Callable[[str, str], None]) -> tuple[list[Offer], int, int]:
    """(offers, items on the page, totalCount) of one page; not a page fails the run."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("items"), list):
        raise CollectorError("primeintellect: response has no items list")
    total = payload.get("totalCount")
    items: list[Any] = payload["items"]
    offers = list(parse_each(items, parse_offer, skip))
    return offers, len(items), total if isinstance(total, int) else len(items)


class PrimeIntellectCollector(GpuCloudCollector):
    """Prices of the GPU offers Prime Intellect brokers, per upstream, datacenter and tier."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Prime Intellect GPU availability (on-demand and spot, API key)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(
        {PricingModel.ON_DEMAND, PricingModel.SPOT}
    )
    spot_fetched_separately: ClassVar[bool] = False  # one list holds both
    documented: ClassVar[str] = DOCUMENTED_URL

    def _pages(self, http: HttpClient, skip: Callable[[str, str], None]) -> Iterator[Offer]:
        page, seen = 1, 0
        while True:
            body = self.fetch(http, "GET", params={"page": page, "page_size": PAGE_SIZE})
            offers, count, total = parse_page(body, skip)
            yield from offers
            seen += count
            if count == 0 or seen >= total:
                return
            page += 1

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        offers = cheapest(iter(self.gather(ctx, self._pages)))
        log.info("primeintellect: %d offers", len(offers))
        yield from offers
