"""Azure GPU VM prices from the public Retail Prices API (no credentials).

The API lists one *meter* per (size, region, product, price type): pay-as-you-go,
Spot, Low Priority, Windows variants and 1/3-year reservations all come back as
separate items, 100 per page, chained by ``NextPageLink``. The filter asks the
server for Virtual Machines meters of the sizes in :mod:`collectors.azure_sizes`
only (a few requests per region instead of thousands of pages); everything the
filter cannot express (Windows, Dev/Test, Low Priority, Dedicated Hosts) is
dropped here. ``discover_unknown_sizes`` drops the size clause so GPU sizes the
table lacks show up as counted ``unknown_gpu_size`` skips. A spot-only run (the
service's frequent spot job) also asks the server for spot meters only
(``contains(meterName, 'Spot')``), so it never downloads the pay-as-you-go and
reservation meters it would throw away.

Reservations are priced for the whole term even though their ``unitOfMeasure``
says "1 Hour"; the effective hourly price is term price / hours in the term
(8760 or 26280), rounded to the store's 10 decimal places.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar, Self
from urllib.parse import urlsplit, urlunsplit

import httpx

from collectors.azure_services import build_service_queries, parse_service_items
from collectors.azure_sizes import SIZES, AzureSize, looks_like_gpu_size
from collectors.base import (
    WITHOUT_SAVINGS_PLANS,
    CollectorError,
    NotConfigured,
    RunContext,
    SkipItem,
    SkipSink,
    text_field,
)
from collectors.fabric_docs import documented_network
from collectors.http import HttpClient, HttpError
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, InvalidOffer, Offer, OfferKey, PricingModel, to_decimal
from tracker.service_prices import ServicePrice
from tracker.settings import Settings

__all__ = [
    "AzureCollector",
    "RetailQuery",
    "build_queries",
    "classify_item",
    "parse_item",
    "parse_items",
]

log = logging.getLogger(__name__)

PROVIDER = "azure"
SERVICE_NAME = "Virtual Machines"
_MONEY = Decimal(1).scaleb(-10)
_HOURS_UNIT = re.compile(r"^\s*(\d+)\s+Hours?\s*$", re.IGNORECASE)
# Azure spells the Windows product "… Series Windows" and, where names are
# truncated, "… Srs Win"; a word match catches both without matching "Wind…".
_WINDOWS = re.compile(r"\bWin(dows)?\b", re.IGNORECASE)
_RESERVATION_TERMS: Mapping[str, PricingModel] = {
    "1 year": PricingModel.RESERVED_1Y,
    "3 years": PricingModel.RESERVED_3Y,
}
_CONSUMPTION_MODELS = frozenset({PricingModel.ON_DEMAND, PricingModel.SPOT})
_RESERVED_MODELS = frozenset({PricingModel.RESERVED_1Y, PricingModel.RESERVED_3Y})
SKUS_PER_QUERY = 12
"""Sizes OR-ed into one ``$filter``; keeps the encoded URL well under 2 KB."""


# ---------------------------------------------------------------- requests


@dataclass(frozen=True)
class RetailQuery:
    """One paginated request series. ``region`` is empty for an all-regions query."""

    region: str
    params: Mapping[str, str]


def _price_types(scope: frozenset[PricingModel]) -> list[str]:
    types = []
    if scope & _CONSUMPTION_MODELS:
        types.append("Consumption")
    if scope & _RESERVED_MODELS:
        types.append("Reservation")
    return types


def _spot_meters(scope: frozenset[PricingModel], include_low_priority: bool) -> str | None:
    """A clause keeping only spot (and Low Priority) meters, for a spot-only scope.

    Spot meters carry " Spot" in ``meterName`` (Low Priority ones " Low Priority");
    ``parse_item`` still classifies every item, so the clause only narrows the
    download and can never turn a pay-as-you-go meter into a spot offer.
    """
    if scope != {PricingModel.SPOT}:
        return None
    clause = "contains(meterName, 'Spot')"
    if include_low_priority:
        return f"({clause} or contains(meterName, 'Low Priority'))"
    return clause


def _any_of(field: str, values: Sequence[str]) -> str:
    clause = " or ".join(f"{field} eq '{v}'" for v in values)
    return f"({clause})" if len(values) > 1 else clause


def build_queries(
    settings: Settings, scope: frozenset[PricingModel], sizes: Iterable[str] = SIZES
) -> list[RetailQuery]:
    """The request series one run makes: per configured region (or one for all
    regions) × chunks of known sizes (or no size clause when discovering)."""
    azure = settings.azure
    types = _price_types(scope)
    if not types:
        return []
    base = [f"serviceName eq '{SERVICE_NAME}'", _any_of("priceType", types)]
    spot_only = _spot_meters(scope, azure.include_low_priority)
    if spot_only:
        base.append(spot_only)
    if azure.discover_unknown_sizes:
        size_clauses: list[str | None] = [None]
    else:
        names = sorted(sizes)
        chunks = [names[i : i + SKUS_PER_QUERY] for i in range(0, len(names), SKUS_PER_QUERY)]
        size_clauses = [_any_of("armSkuName", chunk) for chunk in chunks]
    regions: list[str] = list(dict.fromkeys(azure.regions)) or [""]
    queries = []
    for region in regions:
        for size_clause in size_clauses:
            clauses = list(base)
            if region:
                clauses.append(f"armRegionName eq '{region}'")
            if size_clause:
                clauses.append(size_clause)
            params = {"currencyCode": f"'{azure.currency_code}'", "$filter": " and ".join(clauses)}
            queries.append(RetailQuery(region, params))
    return queries


# ---------------------------------------------------------------- parsing


def _describe(item: Mapping[str, Any]) -> str:
    keys = ("armSkuName", "armRegionName", "meterName", "type", "reservationTerm")
    return " ".join(f"{k}={item[k]!r}" for k in keys if item.get(k) is not None)


def classify_item(item: Mapping[str, Any], *, include_low_priority: bool) -> str | None:
    """Why an item is not a Linux GPU VM offer we track (``None`` when it is).

    These drops are by design, not failures, so they are not counted as skips.
    """
    if item.get("serviceName") not in (None, SERVICE_NAME):
        return "not a virtual machine meter"
    product = str(item.get("productName") or "")
    if _WINDOWS.search(product):
        return "Windows"
    if "dedicated host" in product.lower():
        return "Dedicated Host"
    if item.get("type") == "DevTestConsumption":
        return "Dev/Test pricing"
    if _is_low_priority(item) and not include_low_priority:
        return "Low Priority (azure.include_low_priority is off)"
    sku = item.get("armSkuName")
    if isinstance(sku, str) and sku and sku not in SIZES and not looks_like_gpu_size(sku):
        return "not a GPU size"
    return None


def _suffix(item: Mapping[str, Any], suffix: str) -> bool:
    return any(
        isinstance(item.get(f), str) and item[f].strip().endswith(suffix)
        for f in ("skuName", "meterName")
    )


def _is_spot(item: Mapping[str, Any]) -> bool:
    return _suffix(item, " Spot")


def _is_low_priority(item: Mapping[str, Any]) -> bool:
    return _suffix(item, " Low Priority")


def _pricing(item: Mapping[str, Any]) -> tuple[PricingModel, str]:
    """Pricing model and offering class; Low Priority stays apart from Spot."""
    kind = text_field(item, "type")
    if kind == "Consumption":
        spot, low = _is_spot(item), _is_low_priority(item)
        if spot and low:
            raise SkipItem("malformed_item", "meter is marked both Spot and Low Priority")
        if low:
            return PricingModel.SPOT, "low_priority"
        return (PricingModel.SPOT if spot else PricingModel.ON_DEMAND), ""
    if kind == "Reservation":
        term = text_field(item, "reservationTerm")
        model = _RESERVATION_TERMS.get(term.lower())
        if model is None:
            raise SkipItem("unknown_reservation_term", f"reservationTerm {term!r}")
        return model, ""
    raise SkipItem("unknown_price_type", f"type {kind!r}")


def _hourly(item: Mapping[str, Any], pricing: PricingModel) -> tuple[Decimal, Decimal | None]:
    """(price per hour, whole-term price or None) in the item's currency."""
    raw = item.get("retailPrice")
    try:
        listed = to_decimal(raw, "retailPrice")
    except InvalidOffer as exc:
        raise SkipItem("malformed_item", str(exc)) from None
    if listed <= 0:
        raise SkipItem("zero_price", f"retailPrice {raw!r}")
    term_hours = pricing.term_hours
    if term_hours is not None:
        # unitOfMeasure says "1 Hour" on reservations too; the price is the term's.
        return (listed / term_hours).quantize(_MONEY), listed
    unit = text_field(item, "unitOfMeasure")
    match = _HOURS_UNIT.match(unit)
    if match is None or int(match.group(1)) == 0:
        raise SkipItem("unexpected_unit", f"unitOfMeasure {unit!r}")
    hours = int(match.group(1))
    return (listed if hours == 1 else (listed / hours).quantize(_MONEY)), None


def _size(sku: str) -> AzureSize:
    size = SIZES.get(sku)
    if size is None:
        raise SkipItem(
            "unknown_gpu_size",
            f"{sku} looks like a GPU size but is not in collectors/azure_sizes.py",
        )
    return size


def parse_item(item: Any, settings: Settings) -> Offer | None:
    """One Retail API item as an offer; ``None`` for items dropped by design.

    Raises :class:`SkipItem` for an item that should have been an offer.
    """
    if not isinstance(item, Mapping):
        raise SkipItem("malformed_item", f"item is {type(item).__name__}, not an object")
    if classify_item(item, include_low_priority=settings.azure.include_low_priority):
        return None
    sku = text_field(item, "armSkuName")
    region = text_field(item, "armRegionName")
    size = _size(sku)
    pricing, offering_class = _pricing(item)
    hourly, term_price = _hourly(item, pricing)
    # Kept in the API's currency (azure.currency); the USD figure is computed when read.
    currency = text_field(item, "currencyCode").upper()

    match = resolve_gpu(size.gpu, size.vram_gib)
    attributes: dict[str, AttributeValue] = {
        "meter_name": text_field(item, "meterName", required=False),
        "sku_name": text_field(item, "skuName", required=False),
        "product_name": text_field(item, "productName", required=False),
        "location": text_field(item, "location", required=False),
        "effective_start": text_field(item, "effectiveStartDate", required=False),
        "vram_total_gib": size.total_vram_gib,
        "hardware_source": size.source,
    }
    if offering_class == "low_priority":
        attributes["azure_priority"] = "low_priority"
    elif pricing is PricingModel.SPOT:
        attributes["azure_priority"] = "spot"
    if term_price is not None:
        attributes["reservation_term"] = text_field(item, "reservationTerm")
        attributes["term_price"] = term_price
        # Azure bills the same total upfront or monthly; this is the upfront figure
        # (named in USD only when it is USD: another currency converts like the price).
        if currency == "USD":
            attributes["upfront_usd"] = term_price
    if size.gpu_fabric:
        attributes["gpu_fabric"] = size.gpu_fabric
    if not match.known:
        attributes["gpu_unknown_reason"] = match.reason
    try:
        return Offer(
            provider=PROVIDER,
            instance_type=sku,
            region=region,
            pricing=pricing,
            price_per_hour=hourly,
            currency=currency,
            gpu_model=match.name,
            gpu_count=size.gpu_count,
            gpu_memory_gib=size.vram_gib,
            vcpus=Decimal(size.vcpus),
            memory_gib=size.memory_gib,
            interconnect=size.interconnect,
            **documented_network(PROVIDER, sku),
            offering_class=offering_class,
            os="linux",
            gpu_raw_name=size.gpu,
            gpu_known=match.known,
            attributes=attributes,
        )
    except InvalidOffer as exc:
        raise SkipItem("invalid_offer", str(exc)) from None


def parse_items(
    items: Iterable[Any],
    settings: Settings,
    skip: SkipSink,
    scope: frozenset[PricingModel] = frozenset(PricingModel),
) -> list[Offer]:
    """Offers from Retail API items, one per identity.

    When the API lists the same meter twice (a price change shows the old and new
    rows with different ``effectiveStartDate``), the newest row wins and the other
    is counted as ``superseded_price``.
    """
    chosen: dict[OfferKey, tuple[str, Offer]] = {}
    dropped = 0
    for item in items:
        try:
            offer = parse_item(item, settings)
        except SkipItem as exc:
            where = _describe(item) if isinstance(item, Mapping) else ""
            skip(exc.reason, f"{exc.detail} [{where}]" if where else exc.detail)
            continue
        if offer is None or offer.pricing not in scope:
            dropped += 1
            continue
        started = str(offer.attributes.get("effective_start") or "")
        key = offer.key()
        previous = chosen.get(key)
        if previous is None:
            chosen[key] = (started, offer)
            continue
        older, newer = (previous[1], offer) if started > previous[0] else (offer, previous[1])
        if newer is offer:
            chosen[key] = (started, offer)
        skip(
            "superseded_price",
            f"{older.instance_type} {older.region} {older.pricing.value}: "
            f"{older.price_per_hour} {older.currency} replaced by {newer.price_per_hour}",
        )
    if dropped:
        log.debug("azure: %d items were not Linux GPU offers in scope", dropped)
    return [offer for _, offer in chosen.values()]


def page_items(page: Any, where: str) -> list[Any]:
    if not isinstance(page, Mapping) or not isinstance(page.get("Items"), list):
        raise CollectorError(f"azure: {where}: response has no 'Items' list")
    return list(page["Items"])


# ---------------------------------------------------------------- collector


class AzureCollector:
    """Linux GPU VM prices (pay-as-you-go, Spot, 1y/3y reservations) for Azure."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Azure Retail Prices API: GPU VMs, PAYG/Spot/reservations"
    pricing_models: ClassVar[frozenset[PricingModel]] = WITHOUT_SAVINGS_PLANS
    spot_fetched_separately: ClassVar[bool] = True
    """A spot-only run asks the Retail Prices API for spot meters only."""

    def __init__(
        self,
        settings: Settings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self._sleep = sleep
        self._transport = transport

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        if not settings.azure.enabled:
            raise NotConfigured("azure is disabled (set azure.enabled = true to collect it)")
        return cls(settings)

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        queries = build_queries(ctx.settings, ctx.pricing_scope)
        for items in self._fetch_each(ctx, queries):
            yield from parse_items(items, ctx.settings, ctx.skip, ctx.pricing_scope)

    def collect_service_prices(self, ctx: RunContext) -> Iterator[ServicePrice]:
        """Managed disk and egress prices (:mod:`collectors.azure_services`), fetched
        with the same client, paging and per-region failure handling as the VMs."""
        queries = [RetailQuery(r, p) for r, p in build_service_queries(ctx.settings)]
        for items in self._fetch_each(ctx, queries):
            yield from parse_service_items(items, ctx.skip)

    def _fetch_each(self, ctx: RunContext, queries: list[RetailQuery]) -> Iterator[list[Any]]:
        """Each query's items; a failed region is marked partial and its other queries
        skipped; a failed all-regions query, or every region failing, fails the run."""
        endpoint = ctx.settings.azure.endpoint_url
        failed: set[str] = set()
        with HttpClient(ctx.settings.http, transport=self._transport, sleep=self._sleep) as http:
            for query in queries:
                if query.region in failed:
                    continue  # already partial; its other queries would fail the same way
                label = query.region or "all regions"
                try:
                    items = self._fetch(http, endpoint, query)
                except (HttpError, CollectorError) as exc:
                    if not query.region:
                        raise CollectorError(f"azure: {label}: {exc}") from exc
                    log.warning("azure: %s not collected: %s", label, exc)
                    ctx.mark_partial(query.region, str(exc))
                    failed.add(query.region)
                    continue
                yield items
        # Regions asked one by one and none answered: nothing was read, so not a success.
        ctx.fail_if_every_region_partial(
            "azure", list(dict.fromkeys(q.region for q in queries if q.region))
        )

    def _fetch(self, http: HttpClient, endpoint: str, query: RetailQuery) -> list[Any]:
        """Every item of one query, following NextPageLink to the end."""
        items: list[Any] = []
        pages = http.paginate(
            endpoint, next_url=lambda page: next_page_url(page, endpoint), params=query.params
        )
        for number, page in enumerate(pages, start=1):
            items.extend(page_items(page, f"page {number} of {query.params['$filter']!r}"))
        log.info("azure: %s: %d items", query.region or "all regions", len(items))
        return items


def next_page_url(page: Any, endpoint: str) -> str | None:
    """The next page, re-rooted on the configured endpoint.

    NextPageLink names prices.azure.com itself; following it verbatim would
    bypass a configured proxy or mirror, so only its query string is kept.
    """
    link = page.get("NextPageLink") if isinstance(page, Mapping) else None
    if not isinstance(link, str) or not link.strip():
        return None
    query = urlsplit(link.strip()).query
    base = urlsplit(endpoint)
    return urlunsplit((base.scheme, base.netloc, base.path, query, ""))
