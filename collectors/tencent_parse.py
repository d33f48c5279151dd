"""Tencent Cloud ``DescribeZoneInstanceConfigInfos`` items as offers (pure functions).

One item is one instance type in one zone under one charge type, with its price
(``Price``, an ``ItemPrice``) and its stock (``Status``, ``StatusCategory``):

- ``POSTPAID_BY_HOUR`` (pay-as-you-go) and ``SPOTPAID`` (spot) items are priced per
  hour: ``UnitPriceDiscount`` is what the account pays, ``UnitPrice`` the list price.
  When the API adds ``UnitPrice…SecondStep``/``ThirdStep``, the first step covers the
  first 96 hours and the later, lower steps are kept as attributes.
- ``PREPAID`` items carry whole-term prices: ``DiscountPriceOneYear`` and
  ``DiscountPriceThreeYear`` (``OriginalPrice…`` the list prices, ``DiscountPrice``
  one month). A term's effective hourly price is its price ÷ (years × 8,760 h).

The offer's price is the discounted one (what the configured account would pay,
including the published term and spot discounts and the account's own contract);
the list price is kept as ``list_price_per_hour`` when it differs. A price field of
0 means "not offered" (the API's docs example prices a prepaid-only item with
``UnitPrice 0``), never "free". ``Discount`` (percent of the list price paid: 20.0
is "2折") arrives as a number or as text ("100.000000"); both are read as Decimal.

The payload carries no currency: ``[tencent] site`` decides CNY or USD.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

from collectors.base import SkipItem, text_field
from collectors.tencent_families import TencentFamily, family_of
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, InvalidOffer, Offer, PricingModel, to_decimal
from tracker.settings import Settings

__all__ = [
    "CHARGE_TYPES",
    "PROVIDER",
    "charge_types",
    "describe_item",
    "parse_item",
]

PROVIDER = "tencent"
_MONEY = Decimal(1).scaleb(-10)

CHARGE_TYPES: Mapping[str, frozenset[PricingModel]] = {
    "POSTPAID_BY_HOUR": frozenset({PricingModel.ON_DEMAND}),
    "SPOTPAID": frozenset({PricingModel.SPOT}),
    "PREPAID": frozenset({PricingModel.RESERVED_1Y, PricingModel.RESERVED_3Y}),
}
"""The ``instance-charge-type`` filter values and the pricing models each yields."""

_TERMS = ((PricingModel.RESERVED_1Y, "OneYear"), (PricingModel.RESERVED_3Y, "ThreeYear"))
_AVAILABILITY = {
    "EnoughStock": "available",
    "NormalStock": "available",
    "UnderStock": "low",
    "WithoutStock": "sold_out",
}


def charge_types(scope: frozenset[PricingModel]) -> list[str]:
    """The charge types a run with this pricing scope must ask for, in a fixed order."""
    return [charge for charge, models in CHARGE_TYPES.items() if models & scope]


# ---------------------------------------------------------------- fields


def _number(mapping: Mapping[str, Any], field: str) -> Decimal | None:
    """A number sent as a JSON number or as text; None when absent or null."""
    value = mapping.get(field)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        result = to_decimal(value, field)
    except InvalidOffer as exc:
        raise SkipItem("malformed_item", str(exc)) from None
    if result < 0:
        raise SkipItem("malformed_item", f"{field} is negative ({value!r})")
    return result


def _offered(mapping: Mapping[str, Any], field: str) -> Decimal | None:
    """A price or count that is offered: absent, null and 0 all mean "not offered"."""
    value = _number(mapping, field)
    return value if value else None


def describe_item(item: Any) -> str:
    """Names the item in a skip's detail."""
    if not isinstance(item, Mapping):
        return ""
    keys = ("InstanceType", "Zone", "InstanceChargeType")
    return " ".join(str(item[k]) for k in keys if item.get(k) is not None)


def _gpu_count(item: Mapping[str, Any]) -> Decimal | None:
    """Physical GPUs: ``GpuCount`` (fractional for vGPU types) where the API sends it,
    else ``Gpu`` (an integer count older responses carry alone)."""
    return _offered(item, "GpuCount") or _offered(item, "Gpu")


def _family(item: Mapping[str, Any]) -> tuple[str, TencentFamily]:
    name = text_field(item, "InstanceFamily", required=False)
    if not name:
        # "GN7.2XLARGE32": the family is what precedes the first dot.
        name = text_field(item, "InstanceType").split(".", 1)[0]
    family = family_of(name)
    if family is None:
        raise SkipItem(
            "unknown_gpu_family",
            f"instance family {name!r} has GPUs but is not in collectors/tencent_families.py",
        )
    return name, family


def _availability(item: Mapping[str, Any]) -> dict[str, AttributeValue]:
    """``Status`` (SELL / SOLD_OUT) and ``StatusCategory`` (stock level) as attributes,
    plus their reading as ``availability``: available, low or sold_out."""
    status = text_field(item, "Status", required=False)
    stock = text_field(item, "StatusCategory", required=False)
    attributes: dict[str, AttributeValue] = {}
    if status:
        attributes["status"] = status
    if stock:
        attributes["stock"] = stock
    reason = text_field(item, "SoldOutReason", required=False)
    if reason:
        attributes["sold_out_reason"] = reason
    if status == "SOLD_OUT":
        attributes["availability"] = "sold_out"
    elif stock in _AVAILABILITY:
        attributes["availability"] = _AVAILABILITY[stock]
    elif status == "SELL":
        attributes["availability"] = "available"
    return attributes


# ---------------------------------------------------------------- prices


_Priced = tuple[PricingModel, str, Decimal, dict[str, AttributeValue]]
"""(pricing model, payment option, hourly price, attributes) of one offer of an item."""


def _hourly_prices(price: Mapping[str, Any], model: PricingModel) -> Iterator[_Priced]:
    """The one hourly price of a pay-as-you-go or spot item."""
    unit = text_field(price, "ChargeUnit", required=False)
    if unit and unit.upper() != "HOUR":
        raise SkipItem("unexpected_charge_unit", f"ChargeUnit {unit!r}, expected HOUR")
    paid = _offered(price, "UnitPriceDiscount")
    if paid is None:
        raise SkipItem(
            "zero_price", f"UnitPriceDiscount {price.get('UnitPriceDiscount')!r}: not offered"
        )
    attributes: dict[str, AttributeValue] = {}
    listed = _offered(price, "UnitPrice")
    if listed is not None and listed != paid:
        attributes["list_price_per_hour"] = listed
    discount = _offered(price, "Discount")
    if discount is not None:
        attributes["discount_percent"] = discount
    for step, hours in (("SecondStep", "96"), ("ThirdStep", "360")):
        later = _offered(price, f"UnitPriceDiscount{step}")
        if later is not None:
            attributes[f"price_per_hour_after_{hours}h"] = later
    yield model, "", paid, attributes


def _term_prices(price: Mapping[str, Any], scope: frozenset[PricingModel]) -> Iterator[_Priced]:
    """One offer per prepaid term the item prices (a 0 term is not offered)."""
    offered = 0
    for model, suffix in _TERMS:
        paid = _offered(price, f"DiscountPrice{suffix}")
        if paid is None:
            continue
        offered += 1
        if model not in scope:
            continue
        hours = model.term_hours
        assert hours is not None  # _TERMS holds reservations only
        attributes: dict[str, AttributeValue] = {"term_price": paid}
        listed = _offered(price, f"OriginalPrice{suffix}")
        if listed is not None and listed != paid:
            attributes["list_term_price"] = listed
            attributes["list_price_per_hour"] = (listed / hours).quantize(_MONEY)
        discount = _offered(price, f"Discount{suffix}")
        if discount is not None:
            attributes["discount_percent"] = discount
        monthly = _offered(price, "DiscountPrice")
        if monthly is not None:
            attributes["monthly_price"] = monthly
        yield model, "all_upfront", (paid / hours).quantize(_MONEY), attributes
    if not offered:
        raise SkipItem("zero_price", "DiscountPriceOneYear and DiscountPriceThreeYear: not offered")


# ---------------------------------------------------------------- items


def parse_item(
    item: Any,
    region: str,
    settings: Settings,
    scope: frozenset[PricingModel] = frozenset(PricingModel),
) -> list[Offer] | None:
    """The offers of one item (two for a prepaid item priced for 1 and 3 years);
    ``None`` for an instance type without GPUs (not this tracker's market).

    Raises :class:`SkipItem` for a GPU item that cannot be priced.
    """
    if not isinstance(item, Mapping):
        raise SkipItem("malformed_item", f"item is {type(item).__name__}, not an object")
    count = _gpu_count(item)
    if count is None:
        name = text_field(item, "InstanceFamily", required=False)
        if name and family_of(name) is not None:
            raise SkipItem("no_gpu_count", f"GPU family {name} with Gpu/GpuCount 0 or absent")
        return None
    family_name, family = _family(item)
    instance_type = text_field(item, "InstanceType")
    zone = text_field(item, "Zone")
    charge = text_field(item, "InstanceChargeType")
    if charge not in CHARGE_TYPES:
        raise SkipItem("unknown_charge_type", f"InstanceChargeType {charge!r}")
    price = item.get("Price")
    if not isinstance(price, Mapping):
        raise SkipItem("malformed_item", f"Price missing or not an object ({price!r})")
    models = CHARGE_TYPES[charge]
    if not models & scope:
        return []
    currency = settings.tencent.currency
    match = resolve_gpu(family.gpu, family.vram_gib)
    common: dict[str, AttributeValue] = {
        "instance_family": family_name,
        "type_name": text_field(item, "TypeName", required=False),
        "cpu_type": text_field(item, "CpuType", required=False),
        "vram_total_gib": (count * family.vram_gib).quantize(Decimal("0.01")),
        "hardware_source": family.source,
        "site": settings.tencent.site,
        **_availability(item),
    }
    if not match.known:
        common["gpu_unknown_reason"] = match.reason
    if charge == "PREPAID":
        prices = _term_prices(price, scope)
    else:
        prices = _hourly_prices(price, next(iter(models)))
    offers = []
    for pricing, payment, hourly, extra in list(prices):
        try:
            offers.append(
                Offer(
                    provider=PROVIDER,
                    instance_type=instance_type,
                    region=region,
                    zone=zone,
                    pricing=pricing,
                    payment_option=payment,
                    price_per_hour=hourly,
                    currency=currency,
                    gpu_model=match.name,
                    gpu_count=count,
                    gpu_memory_gib=family.vram_gib,
                    vcpus=_offered(item, "Cpu"),
                    memory_gib=_offered(item, "Memory"),
                    interconnect=family.interconnect,
                    os="linux",
                    gpu_raw_name=family.gpu,
                    gpu_known=match.known,
                    attributes={**common, **extra},
                )
            )
        except InvalidOffer as exc:
            raise SkipItem("invalid_offer", str(exc)) from None
    return offers
