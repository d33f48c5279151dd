"""Spheron GPU offers from ``GET https://app.spheron.ai/api/gpu-offers`` (API key, bearer).

Spheron resells the GPUs of other clouds (``provider``: ``sesterce``, ``data-crunch``,
``spheron-es``, ...). The endpoint pages (``page``, ``limit``) through ``{"data": [...],
"totalPages": n}``; each entry of ``data`` is one GPU type (``gpuType``, e.g.
``B300_SXM6``) with its ``offers``. An offer names its upstream ``provider`` and
``offerId``, ``gpuCount``, ``vcpus``, ``memory`` (GB), ``gpu_memory`` (GB per GPU),
``price``, ``spot_price`` (may be null), ``instanceType`` (``DEDICATED`` or ``SPOT``),
``available``, ``maintenance`` and ``clusters`` (the region names it runs in). This is
the shape SkyPilot's ``sky/catalog/data_fetchers/fetch_spheron.py`` reads
(skypilot-org/skypilot, commit 0e99adb0df61bfebc8ab201a25c070b0cdc303d9).

**The price is the whole instance's, in USD per hour**: Spheron's API docs, as quoted
by a SkyPilot-catalog fetcher for Spheron: an "8x H100 offer priced at 21.52 means 21.52
USD per hour total"; SkyPilot's fetcher writes ``price`` as the instance's hourly price
too. One offer here is one Spheron offer in one cluster and pricing model: on demand at
``price`` (a ``SPOT`` offer: spot at ``price``, as SkyPilot stores it), plus spot at
``spot_price`` when a dedicated offer also states one.

``available`` is reported true for nearly everything (that fetcher's snapshot: every one
of 312 offers, 106 of them under ``maintenance``), so ``maintenance: true`` is stored as
``unavailable`` rather than skipped: the offer and its price stay listed while the
provider has flagged the capacity, instead of being delisted and relisted each time.
An offer with ``gpuCount`` 0 (a CPU node) is not this tracker's market: dropped, not
counted (docs/development.md), as other collectors drop their CPU-only types.

The provider stays ``spheron`` (who bills); the instance type is ``<provider>/<offerId>``
and ``underlying_cloud`` names the upstream, so two upstreams are never one offer and a
box also collected from its own cloud is a resale, not a second supply.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import GpuCloudCollector, gpu_offer, loose_number, number, text
from collectors.http import HttpClient
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Interconnect, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "SpheronCollector", "parse_offer", "parse_page", "priced_as"]

log = logging.getLogger(__name__)

PROVIDER = "spheron"
DOCUMENTED_URL = "https://app.spheron.ai/api/gpu-offers"
PAGE_SIZE = 100
CURRENCY = "USD"
"""The docs' "21.52 USD per hour total"; the answer names no currency."""

Item = tuple[Any, Any, PricingModel, str]
"""(GPU group, offer, pricing model, the field holding that model's price)."""


def priced_as(offer: Any) -> list[tuple[PricingModel, str]]:
    """The pricing models one offer is sold at and the field each is priced by."""
    if not isinstance(offer, Mapping):
        return [(PricingModel.ON_DEMAND, "price")]  # parse_offer counts it malformed
    if str(offer.get("instanceType") or "").upper() == "SPOT":
        return [(PricingModel.SPOT, "price")]  # SkyPilot: a SPOT offer's price is spot
    spot = [(PricingModel.SPOT, "spot_price")] if offer.get("spot_price") is not None else []
    return [(PricingModel.ON_DEMAND, "price"), *spot]


def _interconnect(gpu_type: str) -> Interconnect:
    """``B300_SXM6`` -> nvlink, ``H100_PCIE`` -> pcie: the type names its socket."""
    suffix = gpu_type.upper().rsplit("_", 1)[-1]
    if suffix.startswith("SXM"):
        return Interconnect.NVLINK
    return Interconnect.PCIE if suffix == "PCIE" else Interconnect.UNKNOWN


def _availability(offer: Mapping[str, Any]) -> Availability:
    if offer.get("maintenance") is True or offer.get("available") is False:
        return Availability.UNAVAILABLE
    return Availability.AVAILABLE if offer.get("available") is True else Availability.UNKNOWN


def _clusters(offer: Mapping[str, Any]) -> list[str]:
    clusters = offer.get("clusters")
    if (
        not isinstance(clusters, list)
        or not clusters
        or not all(isinstance(c, str) and c.strip() for c in clusters)
    ):
        raise SkipItem("malformed_item", f"clusters {clusters!r:.60}")
    return [c.strip() for c in clusters]


def _attributes(offer: Mapping[str, Any], upstream: str, offer_id: str) -> dict[str, Any]:
    extras = offer.get("extras")
    technical = extras.get("technical") if isinstance(extras, Mapping) else None
    units = technical.get("units_available") if isinstance(technical, Mapping) else None
    kind = offer.get("instanceType")
    return {
        "underlying_cloud": upstream,
        "offer_id": offer_id,
        "spheron_instance_type": kind if isinstance(kind, str) else None,
        "maintenance": offer.get("maintenance") is True,
        "units_available": units if isinstance(units, int) else None,
    }


def parse_offer(group: Any, offer: Any, pricing: PricingModel, field: str) -> list[Offer]:
    """One offer of one GPU group at one pricing model, one :class:`Offer` per cluster;
    :class:`SkipItem` if it cannot be priced."""
    if not isinstance(group, Mapping) or not isinstance(offer, Mapping):
        raise SkipItem("malformed_item", "GPU group or offer is not an object")
    gpu, upstream, offer_id = (
        text(group, "gpuType"),
        text(offer, "provider"),
        text(offer, "offerId"),
    )
    instance_type = f"{upstream}/{offer_id}"  # two upstreams may share an offerId
    count = loose_number(offer, "gpuCount")
    if count is None:
        raise SkipItem("malformed_item", "no gpuCount")
    if count == 0:
        return []  # a CPU node: not this tracker's market, so not a counted skip
    price = number(offer, field, required=False)
    if price is None:
        raise SkipItem("no_price", f"{field} is null")
    if price <= 0:
        raise SkipItem("zero_price", f"{field} {price}")
    vram = loose_number(offer, "gpu_memory")  # GB per GPU (SkyPilot: ram_per_gpu_gb)
    attributes: dict[str, AttributeValue] = _attributes(offer, upstream, offer_id)
    return [
        gpu_offer(
            "",  # parse_each names the offer
            resolve_gpu(gpu, vram),
            gpu,
            attributes,
            provider=PROVIDER,
            instance_type=instance_type,
            region=cluster,
            pricing=pricing,
            price_per_hour=price,  # the whole instance per hour: 21.52 for 8x H100
            currency=CURRENCY,
            gpu_count=count,
            gpu_memory_gib=vram or None,
            vcpus=loose_number(offer, "vcpus"),
            memory_gib=loose_number(offer, "memory"),
            interconnect=_interconnect(gpu),
            availability=_availability(offer),
        )
        for cluster in _clusters(offer)
    ]


def _where(item: Item) -> str:
    offer = item[1]
    if not isinstance(offer, Mapping):
        return ""
    return f"{offer.get('provider')}/{offer.get('offerId')} {item[2].value}"


def _offers(group: Any, skip: Callable[[str, str], None]) -> list[Any]:
    offers = group.get("offers") if isinstance(group, Mapping) else None
    if not isinstance(offers, list):
        skip("malformed_item", f"GPU group without an offers list ({group!r:.60})")
        return []
    return offers


def parse_page(payload: Any, skip: Callable[[str, str], None]) -> tuple[list[Offer], int, int]:
    """(offers, GPU groups on the page, totalPages) of one page; not a page fails the run."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("data"), list):
        raise CollectorError("spheron: response has no data list")
    groups: list[Any] = payload["data"]
    items: list[Item] = [
        (group, offer, pricing, field)
        for group in groups
        for offer in _offers(group, skip)
        for pricing, field in priced_as(offer)
    ]
    per_item = parse_each(items, lambda i: parse_offer(*i), skip, _where)
    offers = [offer for parsed in per_item for offer in parsed]
    total = payload.get("totalPages")
    return offers, len(groups), total if isinstance(total, int) else 1


class SpheronCollector(GpuCloudCollector):
    """Prices of the GPU offers Spheron resells, per upstream offer, cluster and model."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Spheron GPU offers (on-demand and spot, API key)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(
        {PricingModel.ON_DEMAND, PricingModel.SPOT}
    )
    spot_fetched_separately: ClassVar[bool] = False  # one list holds both
    documented: ClassVar[str] = DOCUMENTED_URL

    def _pages(self, http: HttpClient, skip: Callable[[str, str], None]) -> Iterator[Offer]:
        page = 1
        while True:
            body = self.fetch(http, "GET", params={"page": page, "limit": PAGE_SIZE})
            offers, groups, total = parse_page(body, skip)
            yield from offers
            if groups == 0 or page >= total:
                return
            page += 1

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        offers = self.gather(ctx, self._pages)
        log.info("spheron: %d offers", len(offers))
        yield from offers
