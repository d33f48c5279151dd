"""Price List ``GetProducts`` items -> on-demand and reserved offers (pure).

Nothing here talks to AWS: an item (the JSON string exactly as the API returns
it, or decoded) and the region's hardware go in, offers come out. What cannot be
priced raises :class:`~collectors.base.SkipItem` where it is found (the whole
item, or one of its terms) and is reported to the caller's skip sink, so the
item's other terms are still priced. This is the collector's hot path, and what
``bench/collect_aws.py`` times.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from types import MappingProxyType
from typing import Any

from collectors.aws_hardware import PROVIDER, InstanceHardware
from collectors.base import SkipItem, SkipSink, term_attributes
from tracker.models import AttributeValue, InvalidOffer, Offer, PricingModel, to_decimal

__all__ = ["decode_item", "effective_hourly", "parse_price_list_item"]

NO_HARDWARE = "no GPU/accelerator in DescribeInstanceTypes for this type"
_QUANTUM = Decimal("1e-10")  # the Price List's own precision (10 decimals)
_ZERO = Decimal(0)

# The Price List's words -> the offer fields the store keys on.
PAYMENT_OPTIONS = {
    "No Upfront": "no_upfront",
    "Partial Upfront": "partial_upfront",
    "All Upfront": "all_upfront",
}
LEASES = {"1yr": PricingModel.RESERVED_1Y, "3yr": PricingModel.RESERVED_3Y}
OFFERING_CLASSES = frozenset({"standard", "convertible"})
RESERVED = frozenset(LEASES.values())

# What the server-side filter asks for; re-checked per item so a loosened filter
# (or a proxy that ignores it) can never store a Windows or Dedicated price as Linux.
EXPECTED_ATTRIBUTES = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
}


def effective_hourly(hourly: Decimal, upfront: Decimal, term_hours: int) -> Decimal:
    """Reserved cost per hour over the whole term: recurring hourly + upfront spread evenly."""
    return (hourly + upfront / term_hours).quantize(_QUANTUM, rounding=ROUND_HALF_EVEN)


def _amount(value: Any, where: str) -> Decimal:
    """A Price List amount (always a decimal string on the wire) as a Decimal."""
    if type(value) is str:
        try:
            result = Decimal(value)
        except InvalidOperation:
            raise InvalidOffer(where, f"not a number: {value!r}") from None
        if not result.is_finite():
            raise InvalidOffer(where, f"must be finite, got {value!r}")
        return result
    return to_decimal(value, where)


def _dimensions(term: Mapping[str, Any], where: str) -> tuple[str, Decimal, Decimal]:
    """(currency, hourly, upfront) of one term's price dimensions.

    Hot path of the collector (13 terms per product): no work is done for the
    error messages unless there is an error.
    """
    hourly: Decimal | None = None
    upfront = _ZERO
    currency: str | None = None
    dims = term.get("priceDimensions")
    if not isinstance(dims, Mapping) or not dims:
        raise InvalidOffer(where, "no priceDimensions")
    for dim in dims.values():
        price_per_unit = dim.get("pricePerUnit")
        if not isinstance(price_per_unit, Mapping) or len(price_per_unit) != 1:
            raise InvalidOffer(
                f"{where}.pricePerUnit", f"expected one currency, got {price_per_unit!r}"
            )
        ((dim_currency, raw),) = price_per_unit.items()
        amount = _amount(raw, f"{where}.pricePerUnit")
        if currency is None:
            currency = dim_currency
        elif dim_currency != currency:
            raise InvalidOffer(where, f"mixed currencies {currency} and {dim_currency}")
        unit = dim.get("unit")
        if unit == "Hrs":
            if hourly is not None:
                raise InvalidOffer(where, "more than one hourly price dimension")
            hourly = amount
        elif unit == "Quantity":
            upfront += amount
        else:
            raise InvalidOffer(where, f"unexpected price unit {unit!r}")
    if hourly is None or currency is None:
        raise InvalidOffer(where, "no hourly (Hrs) price dimension")
    return currency, hourly, upfront


def decode_item(item: Mapping[str, Any] | str | bytes) -> Mapping[str, Any]:
    """A ``PriceList`` element as an object (the API sends each as a JSON string);
    raises a ``bad_json`` SkipItem for one that is not a JSON object."""
    if isinstance(item, str | bytes):
        try:
            item = json.loads(item)
        except ValueError as exc:
            raise SkipItem("bad_json", f"PriceList item is not JSON: {exc}") from None
    if not isinstance(item, Mapping):
        raise SkipItem("bad_json", f"PriceList item is a {type(item).__name__}, not an object")
    return item


def parse_price_list_item(
    item: Mapping[str, Any] | str | bytes,
    hardware: Mapping[str, InstanceHardware],
    skip: SkipSink,
    *,
    region_hint: str | None = None,
    pricing_scope: frozenset[PricingModel] = frozenset(PricingModel),
) -> list[Offer]:
    """One ``GetProducts`` ``PriceList`` element -> on-demand and reserved offers.

    ``item`` may be the JSON string exactly as the API returns it. The region is
    the item's ``regionCode`` (older items lack it: then ``region_hint``, the
    region the query was filtered on). Reserved offers are priced at their
    effective hourly cost (see :func:`effective_hourly`) with the upfront fee and
    recurring hourly kept in the attributes. An item that cannot be priced at all
    is one skip; otherwise every term that cannot be priced is a skip of its own
    and the item's other terms are still returned.
    """
    try:
        base, terms = _item(item, hardware, region_hint)
    except SkipItem as exc:
        skip(exc.reason, exc.detail)
        return []
    offers: list[Offer] = []
    if PricingModel.ON_DEMAND in pricing_scope:
        on_demand = terms.get("OnDemand") or {}
        if not on_demand:
            skip("missing_terms", f"{base.where}: no OnDemand term")
        for code, term in on_demand.items():
            try:
                offers.append(base.on_demand(code, term))
            except SkipItem as exc:
                skip(exc.reason, exc.detail)
    if not pricing_scope.isdisjoint(RESERVED):
        for code, term in (terms.get("Reserved") or {}).items():
            try:
                offer = base.reserved(code, term, pricing_scope)
            except SkipItem as exc:
                skip(exc.reason, exc.detail)
                continue
            if offer is not None:
                offers.append(offer)
    return offers


def _item(
    item: Mapping[str, Any] | str | bytes,
    hardware: Mapping[str, InstanceHardware],
    region_hint: str | None,
) -> tuple[_Base, Mapping[str, Any]]:
    """What the item's terms share, and its terms; raises SkipItem for an unusable item."""
    item = decode_item(item)
    product = item.get("product") or {}
    attrs = product.get("attributes") or {}
    sku = product.get("sku", "?")
    instance_type = attrs.get("instanceType")
    if not instance_type:
        raise SkipItem("not_an_instance", f"sku {sku}: no instanceType attribute")
    region = attrs.get("regionCode") or region_hint
    if not region:
        raise SkipItem(
            "no_region", f"{instance_type} sku {sku}: no regionCode and no region queried"
        )
    where = f"{instance_type} {region} sku {sku}"
    for key, expected in EXPECTED_ATTRIBUTES.items():
        value = attrs.get(key)
        if value is not None and value != expected:
            raise SkipItem(
                "filtered_attributes", f"{where}: {key}={value!r}, expected {expected!r}"
            )
    market = attrs.get("marketoption")
    if market is not None and market != "OnDemand":
        raise SkipItem("filtered_attributes", f"{where}: marketoption={market!r}")
    hw = hardware.get(instance_type)
    if hw is None:
        raise SkipItem("unknown_gpu", f"{where}: {NO_HARDWARE}")
    terms = item.get("terms")
    if not isinstance(terms, Mapping) or not (terms.get("OnDemand") or terms.get("Reserved")):
        raise SkipItem("missing_terms", f"{where}: no OnDemand or Reserved terms")
    return _Base(instance_type, region, hw, where), terms


class _Base:
    """What every offer of one Price List item shares; builds them term by term.

    Error labels (``where``) are only formatted when a term is skipped: this runs
    for every term of every product, and most terms are fine.
    """

    __slots__ = ("attrs", "hardware", "hw", "instance_type", "region", "where")

    def __init__(self, instance_type: str, region: str, hw: InstanceHardware, where: str) -> None:
        self.instance_type = instance_type
        self.region = region
        self.hw = hw
        self.where = where
        # Immutable and shared by this item's offers: Offer keeps a MappingProxyType as is.
        self.attrs = MappingProxyType(hw.attributes())
        self.hardware = hw.offer_fields()

    def _priced(self, currency: str, amount: Decimal, kind: str, code: str) -> None:
        """Raises SkipItem when ``amount`` cannot be a price. Any currency is kept as
        it is (AWS China prices in CNY): the USD figure is computed when read."""
        if amount <= 0:
            raise SkipItem("zero_price", f"{self.where} {kind} {code}: price {amount} {currency}")

    def _offer(
        self,
        pricing: PricingModel,
        amount: Decimal,
        currency: str,
        attrs: Mapping[str, AttributeValue],
        payment_option: str = "",
        offering_class: str = "",
    ) -> Offer:
        return Offer(
            provider=PROVIDER,
            instance_type=self.instance_type,
            region=self.region,
            pricing=pricing,
            price_per_hour=amount,
            currency=currency,
            payment_option=payment_option,
            offering_class=offering_class,
            attributes=attrs,
            **self.hardware,
        )

    def on_demand(self, code: str, term: Mapping[str, Any]) -> Offer:
        try:
            currency, hourly, upfront = _dimensions(term, "")
        except InvalidOffer as exc:
            raise SkipItem("malformed_term", f"{self.where} OnDemand {code}{exc}") from None
        if upfront:
            detail = f"{self.where} OnDemand {code}: on-demand term with an upfront fee"
            raise SkipItem("malformed_term", detail)
        self._priced(currency, hourly, "OnDemand", code)
        return self._offer(PricingModel.ON_DEMAND, hourly, currency, self.attrs)

    def reserved(
        self, code: str, term: Mapping[str, Any], scope: frozenset[PricingModel]
    ) -> Offer | None:
        """The reserved offer of one term; None for a term outside ``scope``."""
        ta = term.get("termAttributes") or {}
        pricing = LEASES.get(ta.get("LeaseContractLength", ""))
        payment = PAYMENT_OPTIONS.get(ta.get("PurchaseOption", ""))
        offering = ta.get("OfferingClass", "")
        if pricing is None or payment is None or offering not in OFFERING_CLASSES:
            detail = f"{self.where} Reserved {code}: termAttributes {dict(ta)!r}"
            raise SkipItem("unknown_reserved_term", detail)
        if pricing not in scope:
            return None
        try:
            currency, hourly, upfront = _dimensions(term, "")
        except InvalidOffer as exc:
            raise SkipItem("malformed_term", f"{self.where} Reserved {code}{exc}") from None
        hours = pricing.term_hours
        assert hours is not None
        amount = effective_hourly(hourly, upfront, hours)
        self._priced(currency, amount, "Reserved", code)
        attrs = dict(self.attrs)
        # The fee and the recurring rate in the price's own currency: the recommender
        # recomputes the effective rate from the USD pair exactly; another currency
        # keeps its pair under plain names and is converted at read time like the price.
        attrs.update(term_attributes(currency, upfront, hourly))
        return self._offer(pricing, amount, currency, MappingProxyType(attrs), payment, offering)
