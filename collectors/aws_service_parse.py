"""AWS Price List items for EBS volumes and internet egress -> service prices (pure).

Nothing here talks to AWS: an item (the JSON string as ``GetProducts`` returns it, or
decoded) goes in, prices or a :class:`~collectors.base.SkipItem` come out. The region is
the item's ``regionCode`` (``fromRegionCode`` for transfer), or the region queried when
an older item lacks it. What is not this tracker's market (another volume type, a Local
Zone) is ``None``/``[]``, silently; what should have priced and cannot is a skip.
:mod:`collectors.aws_services` fetches and says which volume stands for which kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from collectors.aws_hardware import PROVIDER
from collectors.aws_pricelist import decode_item
from collectors.base import SkipItem
from tracker.models import InvalidOffer
from tracker.service_prices import ServiceKind, ServicePrice, ServiceUnit

__all__ = ["EGRESS_ATTRIBUTES", "VOLUME_KINDS", "parse_egress_item", "parse_storage_item"]

VOLUME_KINDS = {"gp3": ServiceKind.BLOCK_STORAGE_SSD, "st1": ServiceKind.BLOCK_STORAGE_HDD}
"""The EBS volume type (``volumeApiName``) that prices each kind of block storage."""
REGION_LOCATION = "AWS Region"
"""``locationType`` of a region (not a Local Zone, Wavelength Zone or Outpost)."""
EGRESS_ATTRIBUTES = {"transferType": "AWS Outbound", "toLocation": "External"}


def _dimensions(item: Mapping[str, Any], where: str) -> list[Mapping[str, Any]]:
    """The price dimensions of the item's one OnDemand term."""
    terms = (item.get("terms") or {}).get("OnDemand") or {}
    if not isinstance(terms, Mapping) or len(terms) != 1:
        count = len(terms) if isinstance(terms, Mapping) else 0
        raise SkipItem("malformed_term", f"{where}: {count} OnDemand terms, expected one")
    (term,) = terms.values()
    dims = term.get("priceDimensions") if isinstance(term, Mapping) else None
    if not isinstance(dims, Mapping) or not dims:
        raise SkipItem("malformed_term", f"{where}: no priceDimensions")
    return [d for d in dims.values() if isinstance(d, Mapping)]


def _price(dim: Mapping[str, Any], unit: str, where: str) -> tuple[str, Decimal]:
    """(currency, amount) of one dimension in ``unit``; raises SkipItem."""
    if dim.get("unit") != unit:
        raise SkipItem("malformed_term", f"{where}: unit {dim.get('unit')!r}, expected {unit}")
    per_unit = dim.get("pricePerUnit")
    if not isinstance(per_unit, Mapping) or len(per_unit) != 1:
        raise SkipItem("malformed_term", f"{where}: pricePerUnit {per_unit!r}")
    ((currency, raw),) = per_unit.items()
    try:
        amount = Decimal(str(raw))
    except InvalidOperation:
        raise SkipItem("malformed_term", f"{where}: price {raw!r} is not a number") from None
    if not amount.is_finite() or amount < 0:
        raise SkipItem("malformed_term", f"{where}: price {raw!r}")
    return currency, amount


def _gb(value: Any, where: str) -> Decimal | None:
    """A ``beginRange``/``endRange`` in GB; ``Inf`` is None (no upper bound)."""
    if value == "Inf":
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        raise SkipItem("malformed_tiers", f"{where}: range {value!r} is not a number") from None


def _product(item: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    product = item.get("product") or {}
    return (product.get("attributes") or {}), str(product.get("sku", "?"))


def parse_storage_item(
    item: Mapping[str, Any] | str | bytes, *, region_hint: str | None = None
) -> ServicePrice | None:
    """One ``AmazonEC2`` Storage item -> a GB-month price, or None for a volume type or
    location this tracker does not price; raises SkipItem for one it cannot price."""
    decoded = decode_item(item)
    attrs, sku = _product(decoded)
    name = attrs.get("volumeApiName") or str(attrs.get("usagetype", "")).rpartition(".")[2]
    kind = VOLUME_KINDS.get(name)
    if kind is None or attrs.get("locationType", REGION_LOCATION) != REGION_LOCATION:
        return None
    region = attrs.get("regionCode") or region_hint
    if not region:
        raise SkipItem("no_region", f"{name} sku {sku}: no regionCode and no region queried")
    where = f"{name} {region} sku {sku}"
    dims = _dimensions(decoded, where)
    if len(dims) != 1:
        raise SkipItem("malformed_term", f"{where}: {len(dims)} price dimensions, expected one")
    currency, amount = _price(dims[0], "GB-Mo", where)
    if amount == 0:
        raise SkipItem("zero_price", f"{where}: {amount} {currency} per GB-month")
    return _service_price(region, kind, ServiceUnit.GB_MONTH, amount, currency, where)


def parse_egress_item(
    item: Mapping[str, Any] | str | bytes, *, region_hint: str | None = None
) -> list[ServicePrice]:
    """One ``AWSDataTransfer`` AWS Outbound item -> its tiers (GB a month) as egress
    prices; [] for a non-region location; raises SkipItem for tiers it cannot price
    (a gap, an overlap, no open-ended last tier, every tier free)."""
    decoded = decode_item(item)
    attrs, sku = _product(decoded)
    if attrs.get("fromLocationType", REGION_LOCATION) != REGION_LOCATION:
        return []
    region = attrs.get("fromRegionCode") or region_hint
    if not region:
        raise SkipItem("no_region", f"egress sku {sku}: no fromRegionCode and no region queried")
    where = f"egress {region} sku {sku}"
    for key, expected in EGRESS_ATTRIBUTES.items():
        if attrs.get(key) != expected:
            detail = f"{where}: {key}={attrs.get(key)!r}, expected {expected!r}"
            raise SkipItem("filtered_attributes", detail)
    tiers = []
    for dim in _dimensions(decoded, where):
        currency, amount = _price(dim, "GB", where)
        start = _gb(dim.get("beginRange"), where)
        if start is None:
            raise SkipItem("malformed_tiers", f"{where}: a tier begins at Inf")
        tiers.append((start, _gb(dim.get("endRange"), where), amount, currency))
    tiers.sort(key=lambda t: t[0])
    _check_tiers(tiers, where)
    return [
        _service_price(region, ServiceKind.EGRESS_INTERNET, ServiceUnit.GB, p, c, where, s, e)
        for s, e, p, c in tiers
    ]


_Tier = tuple[Decimal, Decimal | None, Decimal, str]


def _check_tiers(tiers: Sequence[_Tier], where: str) -> None:
    """Tiers from 0 GB, each starting where the last ended, the last without an end:
    so every GB of a month's egress has exactly one price (``tiered_cost``)."""
    covered: Decimal | None = Decimal(0)
    for start, end, _, _ in tiers:
        if start != covered:
            raise SkipItem("malformed_tiers", f"{where}: a tier starts at {start}, not {covered}")
        covered = end
    if covered is not None:
        raise SkipItem("malformed_tiers", f"{where}: no tier above {covered} GB")
    if len({c for *_, c in tiers}) != 1:
        raise SkipItem("malformed_tiers", f"{where}: tiers in more than one currency")
    if all(price == 0 for _, _, price, _ in tiers):
        raise SkipItem("zero_price", f"{where}: every tier is free")


def _service_price(
    region: str,
    kind: ServiceKind,
    unit: ServiceUnit,
    amount: Decimal,
    currency: str,
    where: str,
    start: Decimal | None = None,
    end: Decimal | None = None,
) -> ServicePrice:
    try:
        return ServicePrice(
            PROVIDER, region, kind, unit, amount, currency, start or Decimal(0), end
        )
    except InvalidOffer as exc:
        raise SkipItem("invalid_price", f"{where}: {exc}") from None
