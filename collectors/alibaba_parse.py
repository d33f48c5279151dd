"""Alibaba Cloud ECS payloads -> hardware and offers (pure; the SDK calls live in
:mod:`collectors.alibaba`).

Every function takes the response body as a plain mapping, shaped exactly as the
SDK's ``response.body.to_map()`` returns it (the API's own JSON field names), so
tests feed recorded payloads straight in.

* ``DescribeInstanceTypes``: ``GPUAmount`` whole GPUs of ``GPUSpec``. A vGPU slice is
  spelt ``"NVIDIA A10*1/6"``: the fraction scales the count (1 × 1/6), and
  ``GPUMemorySize`` is then the slice's memory (4 GiB), not one GPU's (24 GiB); for
  whole-GPU types ``GPUMemorySize`` is per GPU.
* ``DescribePrice``: ``TradePrice`` is what the account pays (public term and spot
  discounts plus its own contract); ``OriginalPrice`` is the list price, kept as
  ``list_price_per_hour`` when it differs. The instance's own line of ``DetailInfos``
  is used when present (the total also holds the system disk and bandwidth).
  ``PriceUnit=Year`` prices the whole term: hourly = price ÷ (years × 8,760).
* ``DescribeSpotPriceHistory``: one dated offer per point and zone, like AWS spot.
* ``DescribeSpotAdvice``: the 30-day release (interruption) rate per zone and type.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from collectors.base import SkipItem, SkipSink, parse_each
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, InvalidOffer, Offer, PricingModel, to_decimal

__all__ = [
    "PROVIDER",
    "AlibabaHardware",
    "SpotAdvice",
    "TermPrice",
    "parse_describe_price",
    "parse_instance_types",
    "parse_spot_advice",
    "parse_spot_history",
    "priced_offer",
]

PROVIDER = "alibaba"
_MONEY = Decimal(1).scaleb(-10)
"""The store's price scale (10 places): a stored figure equals the emitted one."""
_FRACTION = re.compile(r"^(?P<name>.+?)\s*\*\s*(?P<num>\d+)\s*/\s*(?P<den>\d+)\s*$")
_BUCKET = re.compile(r"^\s*\d+\s*-\s*(?P<high>\d+)\s*%\s*$")
"""``InterruptRateDesc`` ranges: ``0-3%``, ``3-5%``, ``5-10%``, ``10-100%``."""


# ---------------------------------------------------------------- currency


# ---------------------------------------------------------------- hardware


@dataclass(frozen=True, slots=True)
class AlibabaHardware:
    """One GPU instance type as ``DescribeInstanceTypes`` reports it."""

    instance_type: str
    gpu_spec: str
    gpu_name: str
    gpu_count: Decimal
    gpu_memory_gib: Decimal | None
    """Memory of one whole GPU (a slice's total memory divided by its share)."""
    total_gpu_memory_gib: Decimal | None
    vcpus: Decimal | None
    memory_gib: Decimal | None
    family: str

    def offer_fields(self) -> tuple[dict[str, Any], dict[str, AttributeValue]]:
        """The offer's hardware fields and attributes (the catalog match included)."""
        fractional = self.gpu_count != self.gpu_count.to_integral_value()
        # A slice's derived per-card memory is arithmetic, not the provider's figure:
        # resolve by name alone so it can never pick the wrong memory variant.
        match = resolve_gpu(self.gpu_name, None if fractional else self.gpu_memory_gib)
        fields: dict[str, Any] = {
            "gpu_model": match.name,
            "gpu_known": match.known,
            "gpu_raw_name": self.gpu_spec,
            "gpu_count": self.gpu_count,
            "gpu_memory_gib": self.gpu_memory_gib,
            "vcpus": self.vcpus,
            "memory_gib": self.memory_gib,
        }
        attrs: dict[str, AttributeValue] = {"instance_family": self.family}
        if self.total_gpu_memory_gib is not None:
            attrs["vram_total_gib"] = self.total_gpu_memory_gib
        if not match.known:
            attrs["gpu_unknown_reason"] = match.reason
        return fields, attrs


def _number(item: Mapping[str, Any], field: str, where: str) -> Decimal | None:
    value = item.get(field)
    if value is None or value == "":
        return None
    try:
        number = to_decimal(value, f"{where}.{field}")
    except InvalidOffer as exc:
        raise SkipItem("malformed_item", str(exc)) from None
    return number if number > 0 else None


def _hardware(item: Any) -> AlibabaHardware | None:
    if not isinstance(item, Mapping):
        raise SkipItem("malformed_item", f"instance type is {type(item).__name__}")
    name = str(item.get("InstanceTypeId") or "").strip()
    if not name:
        raise SkipItem("malformed_item", "InstanceTypeId missing")
    amount = _number(item, "GPUAmount", name)
    spec = str(item.get("GPUSpec") or "").strip()
    if amount is None:
        return None  # not a GPU type (GPUAmount 0)
    if not spec:
        raise SkipItem("unknown_gpu", f"{name}: GPUAmount {amount} but no GPUSpec")
    memory = _number(item, "GPUMemorySize", name)
    fraction = _FRACTION.match(spec)
    if fraction is None:
        gpu_name, count = spec, amount
        per_gpu = memory
        total = memory * count if memory is not None else None
    else:
        num, den = Decimal(fraction["num"]), Decimal(fraction["den"])
        if num <= 0 or den <= 0 or num > den:
            raise SkipItem("unknown_gpu", f"{name}: GPUSpec {spec!r} is not a GPU share")
        gpu_name = fraction["name"].strip()
        count = (amount * num / den).quantize(_MONEY)
        total = memory
        # GPUMemorySize is the slice's: 4 GiB of a 1/6 A10 is 4 × 6 / 1 = 24 GiB a card.
        per_gpu = (memory * den / (num * amount)).quantize(Decimal("0.01")) if memory else None
    return AlibabaHardware(
        instance_type=name,
        gpu_spec=spec,
        gpu_name=gpu_name,
        gpu_count=count,
        gpu_memory_gib=per_gpu,
        total_gpu_memory_gib=total,
        vcpus=_number(item, "CpuCoreCount", name),
        memory_gib=_number(item, "MemorySize", name),
        family=str(item.get("InstanceTypeFamily") or ""),
    )


def instance_type_items(body: Mapping[str, Any]) -> list[Any]:
    """The ``InstanceTypes.InstanceType`` list of one page (empty when absent)."""
    wrapper = body.get("InstanceTypes")
    items = wrapper.get("InstanceType") if isinstance(wrapper, Mapping) else None
    return list(items) if isinstance(items, list) else []


def parse_instance_types(items: Iterable[Any], skip: SkipSink) -> dict[str, AlibabaHardware]:
    """GPU instance types by name; types without a GPU are left out silently."""
    return {hw.instance_type: hw for hw in parse_each(items, _hardware, skip)}


# ---------------------------------------------------------------- fixed prices


@dataclass(frozen=True, slots=True)
class TermPrice:
    """One ``DescribePrice`` answer: per hour, in the response's currency."""

    hourly: Decimal
    list_hourly: Decimal
    currency: str
    term_price: Decimal | None
    """The whole term's price for subscriptions (``PriceUnit=Year``)."""
    basis: str
    """``instanceType`` when the instance's own line was used, ``total`` otherwise."""


def _money(value: Any, where: str) -> Decimal:
    try:
        return to_decimal(value, where)
    except InvalidOffer as exc:
        raise SkipItem("malformed_price", str(exc)) from None


def parse_describe_price(body: Mapping[str, Any], pricing: PricingModel, where: str) -> TermPrice:
    """Hourly trade and list price of one ``DescribePrice`` response.

    ``pricing`` says how the call was made: on-demand asks ``PriceUnit=Hour``; a
    reservation asks ``PriceUnit=Year`` with ``Period`` 1 or 3, and the answer is the
    whole term's price, so it is divided by its hours (``pricing.term_hours``).
    """
    info = body.get("PriceInfo")
    price = info.get("Price") if isinstance(info, Mapping) else None
    if not isinstance(price, Mapping):
        raise SkipItem("malformed_price", f"{where}: no PriceInfo.Price")
    currency = str(price.get("Currency") or "").strip().upper()
    if len(currency) != 3 or not currency.isalpha():
        raise SkipItem("malformed_price", f"{where}: Currency {price.get('Currency')!r}")
    line: Mapping[str, Any] = price
    basis = "total"
    details = price.get("DetailInfos")
    rows = details.get("DetailInfo") if isinstance(details, Mapping) else None
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, Mapping) and str(row.get("Resource", "")).lower() == "instancetype":
            if row.get("TradePrice") is not None:
                line, basis = row, "instanceType"
            break
    trade = _money(line.get("TradePrice"), f"{where}.TradePrice")
    listed = line.get("OriginalPrice")
    original = _money(listed, f"{where}.OriginalPrice") if listed is not None else trade
    if trade <= 0:
        raise SkipItem("zero_price", f"{where}: TradePrice {trade}")
    hours = pricing.term_hours
    if hours is None:
        return TermPrice(trade, original, currency, None, basis)
    return TermPrice(
        (trade / hours).quantize(_MONEY),
        (original / hours).quantize(_MONEY),
        currency,
        trade,
        basis,
    )


def priced_offer(
    hw: AlibabaHardware,
    region: str,
    pricing: PricingModel,
    price: TermPrice,
    *,
    zone: str = "",
    observed_at: datetime | None = None,
    extra: Mapping[str, AttributeValue] | None = None,
) -> Offer:
    """The offer for one instance type and price; raises SkipItem when it cannot be one."""
    fields, attributes = hw.offer_fields()
    if price.list_hourly != price.hourly:
        attributes["list_price_per_hour"] = price.list_hourly
    if price.term_price is not None:
        attributes["term_price"] = price.term_price
    if price.basis != "instanceType" and pricing is not PricingModel.SPOT:
        attributes["price_basis"] = price.basis
    attributes.update(extra or {})
    try:
        return Offer(
            provider=PROVIDER,
            instance_type=hw.instance_type,
            region=region,
            zone=zone,
            pricing=pricing,
            price_per_hour=price.hourly,
            currency=price.currency,
            observed_at=observed_at,
            attributes=attributes,
            **fields,
        )
    except InvalidOffer as exc:
        raise SkipItem("invalid_offer", f"{hw.instance_type} {region}: {exc}") from None


# ---------------------------------------------------------------- spot


@dataclass(frozen=True, slots=True)
class SpotAdvice:
    """``DescribeSpotAdvice`` figures for one zone and instance type (last 30 days)."""

    interruption_rate_pct: Decimal | None
    interruption_bucket: str
    average_spot_pct_of_on_demand: Decimal | None

    def attributes(self) -> dict[str, AttributeValue]:
        """Named as AWS's Spot Advisor figures are, so the recommender reads both alike:
        ``interruption_max_pct`` is the bucket's upper bound ("3-5%" -> 5)."""
        attrs: dict[str, AttributeValue] = {}
        if self.interruption_bucket:
            attrs["interruption_bucket"] = self.interruption_bucket
            bound = _BUCKET.match(self.interruption_bucket)
            if bound is not None:
                attrs["interruption_max_pct"] = int(bound["high"])
        if self.interruption_rate_pct is not None:
            attrs["interruption_rate_pct"] = self.interruption_rate_pct
        if self.average_spot_pct_of_on_demand is not None:
            attrs["average_spot_pct_of_on_demand"] = self.average_spot_pct_of_on_demand
        return attrs


def _optional_number(value: Any) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        return to_decimal(value, "advice")
    except InvalidOffer:
        return None


def parse_spot_advice(body: Mapping[str, Any]) -> dict[tuple[str, str], SpotAdvice]:
    """``(zone, instance type) -> advice``. The API lists zones without resources too
    (nothing to say there); the numbers arrive as numbers or strings."""
    advice: dict[tuple[str, str], SpotAdvice] = {}
    zones = body.get("AvailableSpotZones")
    for zone in _listed(zones, "AvailableSpotZone"):
        zone_id = str(zone.get("ZoneId") or "")
        for item in _listed(zone.get("AvailableSpotResources"), "AvailableSpotResource"):
            instance_type = str(item.get("InstanceType") or "")
            if not instance_type:
                continue
            advice[(zone_id, instance_type)] = SpotAdvice(
                _optional_number(item.get("InterruptionRate")),
                str(item.get("InterruptRateDesc") or ""),
                _optional_number(item.get("AverageSpotDiscount")),
            )
    return advice


def _listed(wrapper: Any, key: str) -> Iterator[Mapping[str, Any]]:
    items = wrapper.get(key) if isinstance(wrapper, Mapping) else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping):
            yield item


def spot_items(body: Mapping[str, Any]) -> list[Any]:
    wrapper = body.get("SpotPrices")
    items = wrapper.get("SpotPriceType") if isinstance(wrapper, Mapping) else None
    return list(items) if isinstance(items, list) else []


def _timestamp(value: Any, where: str) -> datetime:
    if not isinstance(value, str) or not value.strip():
        raise SkipItem("malformed_spot_item", f"{where}: Timestamp {value!r}")
    try:
        ts = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise SkipItem("malformed_spot_item", f"{where}: Timestamp {value!r}") from None
    return (ts if ts.tzinfo else ts.replace(tzinfo=UTC)).astimezone(UTC)


def parse_spot_history(
    items: Iterable[Any],
    hardware: Mapping[str, AlibabaHardware],
    currency: str,
    skip: SkipSink,
    *,
    region: str,
    advice: Mapping[tuple[str, str], SpotAdvice] | None = None,
) -> list[Offer]:
    """``SpotPriceType`` items -> spot offers per zone, each dated at its ``Timestamp``,
    oldest first (so a store applying them in order keeps every change at its time).
    ``currency`` is the response's top-level ``Currency``."""

    def parse(item: Any) -> tuple[datetime, Offer]:
        if not isinstance(item, Mapping):
            raise SkipItem("malformed_spot_item", f"item is {type(item).__name__}")
        instance_type = str(item.get("InstanceType") or "")
        zone = str(item.get("ZoneId") or "")
        where = f"spot {instance_type or '?'} {zone or region}"
        hw = hardware.get(instance_type)
        if hw is None:
            raise SkipItem("unknown_gpu", f"{where}: not a GPU type from DescribeInstanceTypes")
        ts = _timestamp(item.get("Timestamp"), where)
        trade = _money(item.get("SpotPrice"), f"{where}.SpotPrice")
        if trade <= 0:
            raise SkipItem("zero_price", f"{where}: SpotPrice {trade}")
        origin = item.get("OriginPrice")
        listed = _money(origin, f"{where}.OriginPrice") if origin is not None else trade
        found = advice.get((zone, instance_type)) if advice else None
        offer = priced_offer(
            hw,
            region,
            PricingModel.SPOT,
            TermPrice(trade, listed, currency, None, "spot"),
            zone=zone,
            observed_at=ts,
            extra=found.attributes() if found else None,
        )
        return ts, offer

    items = list(items)
    if len(currency) != 3 or not currency.isalpha():
        skip("malformed_spot_item", f"{region}: Currency {currency!r}; {len(items)} points dropped")
        return []
    dated = list(parse_each(items, parse, skip))
    dated.sort(key=lambda pair: (pair[0], pair[1].zone, pair[1].instance_type))
    return [offer for _, offer in dated]
