"""Azure block storage and internet egress prices from the Retail Prices API.

The same API, client, pagination and region handling as the VM prices
(:mod:`collectors.azure`); only the filters and the parsing differ.

* **Block storage.** Managed disks are sold per disk, not per GB: a ``P10 LRS Disk``
  meter (``unitOfMeasure "1/Month"``) is one 128 GiB disk for a month. The price per
  GB-month of a tier is its monthly price / its size in GiB (the size tables of
  MicrosoftDocs/azure-docs ``includes/disk-storage-premium-ssd-sizes.md`` and
  ``disk-storage-standard-hdd-sizes.md``), and a region's figure is the **lowest** of
  its tiers: storage held by the terabyte is bought as the largest disks, which are the
  cheapest per GB. ``block_storage_ssd`` is Premium SSD (P tiers: the disks Azure's GPU
  sizes are documented with), ``block_storage_hdd`` Standard HDD (S tiers), both LRS.
  Premium SSD v2 and Ultra (per ``1 GiB/Hour``) are not read. 1 GiB counts as 1 GB,
  as the project's units do (1 TB = 1,024 GB).
* **Egress.** ``serviceName 'Bandwidth'``, product ``Rtn Preference: MGN`` (routing over
  Microsoft's network, the default; ``Routing Preference: Internet`` is an opt-in and
  not read), meter ``Standard Data Transfer Out``, ``unitOfMeasure "1 GB"``: one item per
  tier, whose ``tierMinimumUnits`` (GB a month) is its start; a tier ends where the next
  starts. The first tier (0-100 GB) is free and stored at price 0.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from typing import Any

from collectors.base import SkipItem, SkipSink, parse_each, text_field
from tracker.models import InvalidOffer, to_decimal
from tracker.service_prices import ServiceKind, ServicePrice, ServiceUnit
from tracker.settings import Settings

__all__ = [
    "DISK_GIB",
    "DISK_PRODUCTS",
    "build_service_queries",
    "parse_bandwidth_items",
    "parse_disk_items",
    "parse_service_items",
]

PROVIDER = "azure"
_MONEY = Decimal(1).scaleb(-10)

DISK_PRODUCTS: Mapping[str, ServiceKind] = {
    "Premium SSD Managed Disks": ServiceKind.BLOCK_STORAGE_SSD,
    "Standard HDD Managed Disks": ServiceKind.BLOCK_STORAGE_HDD,
}
EGRESS_PRODUCT = "Rtn Preference: MGN"
EGRESS_METER = "Standard Data Transfer Out"

DISK_GIB: Mapping[int, int] = {
    1: 4, 2: 8, 3: 16, 4: 32, 6: 64, 10: 128, 15: 256, 20: 512, 30: 1024,
    40: 2048, 50: 4096, 60: 8192, 70: 16384, 80: 32767,
}  # fmt: skip
"""Size in GiB of the P/S tier number (the same for P and S; P1-P3 are Premium only)."""

_DISK_METER = re.compile(r"^(?P<kind>[PS])(?P<tier>\d+) LRS Disk$")
_LETTER = {ServiceKind.BLOCK_STORAGE_SSD: "P", ServiceKind.BLOCK_STORAGE_HDD: "S"}


def build_service_queries(settings: Settings) -> list[tuple[str, dict[str, str]]]:
    """(region, params) of two request series per configured region (or one pair for
    all regions, region ""): the disks, the egress."""
    azure = settings.azure
    products = " or ".join(f"productName eq '{p}'" for p in DISK_PRODUCTS)
    filters = [
        f"serviceName eq 'Storage' and ({products}) and priceType eq 'Consumption'",
        f"serviceName eq 'Bandwidth' and productName eq '{EGRESS_PRODUCT}' "
        f"and meterName eq '{EGRESS_METER}' and priceType eq 'Consumption'",
    ]
    queries = []
    for region in list(dict.fromkeys(azure.regions)) or [""]:
        for flt in filters:
            if region:
                flt = f"{flt} and armRegionName eq '{region}'"
            params = {"currencyCode": f"'{azure.currency_code}'", "$filter": flt}
            queries.append((region, params))
    return queries


def _describe(item: Any) -> str:
    if not isinstance(item, Mapping):
        return ""
    keys = ("armRegionName", "productName", "meterName", "tierMinimumUnits")
    return " ".join(f"{k}={item[k]!r}" for k in keys if item.get(k) is not None)


def _amount(item: Mapping[str, Any], field: str, negative: str) -> Decimal:
    """``item[field]`` as a Decimal; unreadable is ``malformed_item``, below 0 ``negative``."""
    try:
        value = to_decimal(item.get(field), field)
    except InvalidOffer as exc:
        raise SkipItem("malformed_item", str(exc)) from None
    if value < 0:
        raise SkipItem(negative, f"{field} {value} is negative")
    return value


def _currency(item: Mapping[str, Any]) -> str:
    code = text_field(item, "currencyCode").upper()
    if not re.fullmatch(r"[A-Z]{3}", code):
        raise SkipItem("malformed_item", f"currencyCode {code!r} is not an ISO code")
    return code


def _price(item: Mapping[str, Any]) -> Decimal:
    return _amount(item, "retailPrice", "bad_price")


def _consumption(item: Any) -> Mapping[str, Any] | None:
    if not isinstance(item, Mapping):
        raise SkipItem("malformed_item", f"item is {type(item).__name__}, not an object")
    return item if item.get("type") == "Consumption" else None


def _disk(item: Any) -> tuple[str, ServiceKind, str, Decimal, str, str] | None:
    """(region, kind, currency, price per GB-month, meter, effectiveStartDate) of one
    LRS disk tier item."""
    row = _consumption(item)
    kind = DISK_PRODUCTS.get(str(row.get("productName"))) if row is not None else None
    if row is None or kind is None:
        return None
    meter = text_field(row, "meterName")
    match = _DISK_METER.match(meter)
    if match is None or match.group("kind") != _LETTER[kind]:
        return None  # operations, snapshots, ZRS, bursting: not a disk-month of LRS
    size = DISK_GIB.get(int(match.group("tier")))
    if size is None:
        raise SkipItem("unknown_disk_tier", f"{meter}: size not in collectors/azure_services.py")
    unit = text_field(row, "unitOfMeasure")
    if unit != "1/Month":
        raise SkipItem("unexpected_unit", f"{meter}: unitOfMeasure {unit!r}, expected '1/Month'")
    price = _price(row)
    if price == 0:
        raise SkipItem("zero_price", f"{meter}: retailPrice 0")
    currency = _currency(row)
    per_gb = (price / size).quantize(_MONEY)
    started = text_field(row, "effectiveStartDate", required=False)
    return text_field(row, "armRegionName"), kind, currency, per_gb, meter, started


Listed = tuple[str, Decimal, str]  # (effectiveStartDate, price, currency)


def _newer(held: Listed | None, current: Listed, label: str, skip: SkipSink) -> Listed:
    """The row to keep when a meter is listed again: the newer ``effectiveStartDate``
    (a price change shows old and new rows); a different older price is a skip."""
    if held is None:
        return current
    if held[1:] != current[1:]:
        old, new = sorted([held, current])
        skip("superseded_price", f"{label}: {old[1]} by {new[1]}")
    return max(held, current)


def parse_disk_items(items: Iterable[Any], skip: SkipSink) -> Iterator[ServicePrice]:
    """One price per (region, kind): the lowest per-GB-month figure of its disk tiers.

    A tier listed twice at different prices keeps the newer ``effectiveStartDate`` (the
    other is a ``superseded_price`` skip), so an old cheaper row never wins the minimum.
    """
    latest: dict[tuple[str, ServiceKind, str], tuple[str, Decimal, str]] = {}
    for region, kind, currency, per_gb, meter, started in parse_each(items, _disk, skip, _describe):
        key, label = (region, kind, meter), f"{region} {meter} per GB"
        latest[key] = _newer(latest.get(key), (started, per_gb, currency), label, skip)
    best: dict[tuple[str, ServiceKind], tuple[Decimal, str]] = {}
    for (region, kind, meter), (_, per_gb, currency) in sorted(latest.items()):
        held_best = best.get((region, kind))
        if held_best is not None and held_best[1] != currency:
            skip("mixed_currency", f"{region} {meter}: {currency}, other tiers {held_best[1]}")
        elif held_best is None or per_gb < held_best[0]:
            best[(region, kind)] = (per_gb, currency)
    for (region, kind), (per_gb, currency) in sorted(best.items()):
        yield ServicePrice(PROVIDER, region, kind, ServiceUnit.GB_MONTH, per_gb, currency)


def _egress_tier(item: Any) -> tuple[str, Decimal, Decimal, str, str] | None:
    """(region, tier start GB, price per GB, currency, effectiveStartDate) of one item."""
    row = item if isinstance(item, Mapping) and item.get("type") == "Consumption" else None
    if row is None or row.get("productName") != EGRESS_PRODUCT:
        return None
    if row.get("meterName") != EGRESS_METER:
        return None
    unit = text_field(row, "unitOfMeasure")
    if unit != "1 GB":
        raise SkipItem("unexpected_unit", f"unitOfMeasure {unit!r}, expected '1 GB'")
    start = _amount(row, "tierMinimumUnits", "malformed_item")
    started = text_field(row, "effectiveStartDate", required=False)
    currency = _currency(row)
    return text_field(row, "armRegionName"), start, _price(row), currency, started


def parse_bandwidth_items(items: Iterable[Any], skip: SkipSink) -> Iterator[ServicePrice]:
    """Each region's egress ladder: a tier runs from its start to the next tier's start.

    A tier listed twice at different prices keeps the newer ``effectiveStartDate`` (the
    other is a ``superseded_price`` skip). A region with an unreadable tier, tiers in
    two currencies or no tier at 0 GB is skipped whole: a missing tier would price its
    GB at the tier below it, or at nothing. An unreadable tier that names no region
    makes every ladder of the response incomplete.
    """
    tiers: dict[str, dict[Decimal, tuple[str, Decimal, str]]] = defaultdict(dict)
    broken: set[str] = set()
    for item in items:
        try:
            tier = _egress_tier(item)
        except SkipItem as exc:
            skip(exc.reason, f"{_describe(item)}: {exc.detail}")
            # A tier of no readable region could belong to any ladder of this response.
            broken.add(str(item.get("armRegionName") or "").strip() or "*")  # a Mapping
            continue
        if tier is None:
            continue
        region, start, price, currency, started = tier
        label = f"{region} egress from {start} GB"
        tiers[region][start] = _newer(
            tiers[region].get(start), (started, price, currency), label, skip
        )
    for region, ladder in sorted(tiers.items()):
        starts = sorted(ladder)
        currencies = {ladder[s][2] for s in starts}
        if region in broken or "*" in broken:
            skip("incomplete_tiers", f"{region} egress: a tier could not be read")
        elif len(currencies) != 1:
            skip("mixed_currency", f"{region} egress tiers priced in {sorted(currencies)}")
        elif starts[0] != 0:
            skip("missing_tier", f"{region} egress: first tier starts at {starts[0]} GB, not 0")
        else:
            for start, end in zip(starts, [*starts[1:], None], strict=True):
                _, price, currency = ladder[start]
                yield ServicePrice(
                    PROVIDER, region, ServiceKind.EGRESS_INTERNET, ServiceUnit.GB, price,
                    currency, tier_start_gb=start, tier_end_gb=end,
                )  # fmt: skip


def parse_service_items(items: Iterable[Any], skip: SkipSink) -> Iterator[ServicePrice]:
    """Disk and egress prices from one query's items (each parser ignores the other's;
    a malformed item is reported once, by the disk parser)."""
    listed = list(items)
    yield from parse_disk_items(listed, skip)
    yield from parse_bandwidth_items(listed, skip)
