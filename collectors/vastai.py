"""Vast.ai marketplace prices from the public offer search (``/api/v0/bundles/``, no key).

Vast is a marketplace of individual machines that come and go by the minute, so an
offer per machine would be noise. The collector stores **aggregate series** per
(GPU model, GPU count, verified or not, country): instance type ``2x RTX 4090``,
region the ISO country code from ``geolocation``, ``offering_class``
``verified``/``unverified``. The price is the cheapest rentable offer's
``dph_total`` (which includes the disk the search allocates:
``vastai.allocated_storage`` GB); the median and the number of offers are
attributes. Interruptible offers (``type: bid``) give the spot series from
``min_bid`` plus the same storage cost.

The search returns at most ``limit`` offers, so pages are fetched in ascending
price bands (the next band starts at the last page's highest price, offers are
de-duplicated by id) until a page comes back short: nothing is silently cut off.
"""

from __future__ import annotations

import logging
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem
from collectors.gpucloud import GpuCloudCollector, number, text
from collectors.http import HttpClient
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, InvalidOffer, Offer, PricingModel

__all__ = [
    "DOCUMENTED_URL",
    "VastAiCollector",
    "aggregate",
    "search_body",
]

log = logging.getLogger(__name__)

PROVIDER = "vastai"
DOCUMENTED_URL = "https://console.vast.ai/api/v0/bundles/"
MAX_PAGES = 500
_MONEY = Decimal(1).scaleb(-10)
_COUNTRY = re.compile(r"^[A-Z]{2}$")
_MIB_PER_GIB = Decimal(1024)
# Search type and the field its price is read (and banded) by.
_SEARCHES: dict[PricingModel, tuple[str, str]] = {
    PricingModel.ON_DEMAND: ("on-demand", "dph_total"),
    PricingModel.SPOT: ("bid", "min_bid"),
}


@dataclass(frozen=True)
class Listing:
    """One machine offer reduced to what an aggregate needs."""

    key: tuple[str, int, str, str]  # gpu_name, num_gpus, verified|unverified, country
    price: Decimal
    gpu_ram_mib: Decimal | None


def search_body(
    kind: str, order_by: str, storage_gb: Decimal, limit: int, floor: Decimal | None
) -> dict[str, Any]:
    """The search for one price band (``floor`` and up, cheapest first)."""
    body: dict[str, Any] = {
        "rentable": {"eq": True},
        "type": kind,
        "allocated_storage": float(storage_gb),
        "order": [[order_by, "asc"]],
        "limit": limit,
    }
    if floor is not None:
        body[order_by] = {"gte": float(floor)}
    return body


def _country(offer: Mapping[str, Any]) -> str:
    geo = offer.get("geolocation")
    code = geo.rsplit(",", 1)[-1].strip() if isinstance(geo, str) else ""
    if not _COUNTRY.match(code):
        raise SkipItem("no_country", f"geolocation {geo!r} has no ISO country code")
    return code


def _verified(offer: Mapping[str, Any]) -> str:
    verification = offer.get("verification")
    if isinstance(verification, str) and verification:
        return "verified" if verification == "verified" else "unverified"
    raise SkipItem("malformed_item", f"verification missing ({verification!r})")


def listing(offer: Any, pricing: PricingModel) -> Listing | None:
    """The listing an offer contributes, ``None`` if it is not rentable right now."""
    if not isinstance(offer, Mapping):
        raise SkipItem("malformed_item", f"offer is {type(offer).__name__}")
    if offer.get("rentable") is False:
        return None
    gpus = offer.get("num_gpus")
    if not isinstance(gpus, int) or isinstance(gpus, bool) or gpus < 1:
        raise SkipItem("malformed_item", f"num_gpus is not a count ({gpus!r})")
    if pricing is PricingModel.SPOT:
        # A bid is for the machine's GPUs; storage is billed on top, as in dph_total.
        bid = number(offer, "min_bid")
        storage = number(offer, "storage_total_cost")
        assert bid is not None and storage is not None
        price = bid + storage
    else:
        dph = number(offer, "dph_total")
        assert dph is not None
        price = dph
    if price <= 0:
        raise SkipItem("zero_price", f"{_SEARCHES[pricing][1]} gives {price}")
    key = (text(offer, "gpu_name"), gpus, _verified(offer), _country(offer))
    return Listing(key, price, number(offer, "gpu_ram", required=False))


def _money(value: Decimal) -> Decimal:
    return value.quantize(_MONEY, rounding=ROUND_HALF_EVEN)


def aggregate(
    offers: Iterable[Any],
    pricing: PricingModel,
    storage_gb: Decimal,
    skip: Callable[[str, str], None],
) -> list[Offer]:
    """One offer per (GPU, count, verified, country): min price, median and count."""
    groups: dict[tuple[str, int, str, str], list[Listing]] = defaultdict(list)
    for raw in offers:
        try:
            found = listing(raw, pricing)
        except SkipItem as exc:
            where = raw.get("id") if isinstance(raw, Mapping) else None
            skip(exc.reason, f"offer {where}: {exc.detail}" if where else exc.detail)
            continue
        if found is not None:
            groups[found.key].append(found)
    result = []
    for (gpu_name, count, verified, country), members in sorted(groups.items()):
        cheapest = min(members, key=lambda m: m.price)
        median = statistics.median(m.price for m in members)
        memory = cheapest.gpu_ram_mib / _MIB_PER_GIB if cheapest.gpu_ram_mib else None
        match = resolve_gpu(gpu_name, memory)
        price = _money(cheapest.price)
        attributes: dict[str, AttributeValue] = {
            "median_price_per_hour": _money(median),
            "offer_count": len(members),
            "allocated_storage_gb": storage_gb,
        }
        if not match.known:
            attributes["gpu_unknown_reason"] = match.reason
        try:
            result.append(
                Offer(
                    provider=PROVIDER,
                    instance_type=f"{count}x {gpu_name}",
                    region=country,
                    pricing=pricing,
                    price_per_hour=price,
                    currency="USD",
                    gpu_model=match.name,
                    gpu_count=Decimal(count),
                    gpu_memory_gib=memory,
                    offering_class=verified,
                    gpu_raw_name=gpu_name,
                    gpu_known=match.known,
                    attributes=attributes,
                )
            )
        except InvalidOffer as exc:
            skip("invalid_offer", f"{count}x {gpu_name} {country}: {exc}")
    return result


class VastAiCollector(GpuCloudCollector):
    """Aggregate marketplace prices (on-demand and interruptible) on Vast.ai."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Vast.ai offer search, aggregated per GPU/count/verified/country"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(
        {PricingModel.ON_DEMAND, PricingModel.SPOT}
    )
    spot_fetched_separately: ClassVar[bool] = True
    """Bids are their own search: a spot-only run requests only them."""
    documented: ClassVar[str] = DOCUMENTED_URL

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        vast = self.settings.vastai
        models = [p for p in _SEARCHES if p in self.scope(ctx)]
        if not vast.include_bids and PricingModel.SPOT in models:
            models.remove(PricingModel.SPOT)
        with self.client() as http:
            for pricing in models:
                offers = self.search(http, pricing)
                found = aggregate(offers, pricing, vast.allocated_storage, ctx.skip)
                log.info("vastai: %s: %d offers -> %d series", pricing, len(offers), len(found))
                yield from found

    def search(self, http: HttpClient, pricing: PricingModel) -> list[Any]:
        """Every offer of one search type, band after band until a page is short."""
        kind, order_by = _SEARCHES[pricing]
        limit = self.settings.vastai.page_size
        seen: dict[Any, Any] = {}
        floor: Decimal | None = None
        for _ in range(MAX_PAGES):
            body = search_body(kind, order_by, self.settings.vastai.allocated_storage, limit, floor)
            page = self.fetch(http, "POST", json=body)
            offers = page.get("offers") if isinstance(page, Mapping) else None
            if not isinstance(offers, list):
                raise CollectorError("vastai: response has no 'offers' list")
            new = [o for o in offers if _identity(o) not in seen]
            seen.update((_identity(o), o) for o in new)
            if len(offers) < limit:
                return list(seen.values())
            prices = [p for p in (_band_value(o, order_by) for o in offers) if p is not None]
            if not new or not prices or (floor is not None and max(prices) <= floor):
                raise CollectorError(
                    f"vastai: more than {limit} {kind} offers at {order_by} {floor}; "
                    "raise vastai.page_size"
                )
            floor = max(prices)
        raise CollectorError(f"vastai: {kind} search still full after {MAX_PAGES} pages")


def _identity(offer: Any) -> Any:
    return offer.get("id") if isinstance(offer, Mapping) and "id" in offer else id(offer)


def _band_value(offer: Any, field: str) -> Decimal | None:
    if not isinstance(offer, Mapping):
        return None
    try:
        return number(offer, field, required=False)
    except SkipItem:
        return None
