"""BSS price inquiries for ECS flavors: request bodies and their rating responses.

``ListOnDemandResourceRatings`` prices one hour of each flavor; ``ListRateOnPeriodDetail``
prices a 1- or 3-year subscription. Both take up to 100 products per call, each with an
``id`` that its result echoes. ``amount`` is what this account pays (contract and
published discounts applied); ``official_website_amount`` is the public list price. A
subscription's discounted price is the ``optional_discount_rating_results`` entry marked
``best_offer`` (what auto-paid orders get); without one the list price is what is paid.
Amounts carry a ``measure_id`` unit: 1 currency unit, 2 a tenth (jiao), 3 a hundredth
(fen). Parsing is pure so tests feed it recorded responses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = [
    "MAX_PRODUCTS",
    "Rating",
    "RatingError",
    "on_demand_products",
    "parse_on_demand",
    "parse_period",
    "period_products",
]

MAX_PRODUCTS = 100
"""Products one rating call accepts."""
CLOUD_SERVICE_TYPE = "hws.service.type.ec2"
RESOURCE_TYPE = "hws.resource.type.vm"
USAGE_MEASURE_HOUR = 4
PERIOD_TYPE_YEAR = 3
_MEASURE_SCALE = {1: Decimal(1), 2: Decimal("0.1"), 3: Decimal("0.01")}


class RatingError(ValueError):
    """A rating response this module cannot read (one line, names the field)."""


@dataclass(frozen=True)
class Rating:
    amount: Decimal
    """What the account pays, in ``currency`` (per hour on demand, per term for periods)."""
    list_amount: Decimal | None
    currency: str
    discount_name: str = ""


def resource_spec(flavor: str) -> str:
    """BSS prices Linux ECS flavors under ``<flavor>.linux``."""
    return f"{flavor}.linux"


def on_demand_products(region: str, flavors: Sequence[str]) -> list[dict[str, Any]]:
    """One hour of each flavor; ``id`` is the flavor's position + 1 in ``flavors``."""
    return [
        {
            "id": str(i),
            "cloud_service_type": CLOUD_SERVICE_TYPE,
            "resource_type": RESOURCE_TYPE,
            "resource_spec": resource_spec(flavor),
            "region": region,
            "usage_factor": "Duration",
            "usage_value": 1,
            "usage_measure_id": USAGE_MEASURE_HOUR,
            "subscription_num": 1,
        }
        for i, flavor in enumerate(flavors, start=1)
    ]


def period_products(region: str, flavors: Sequence[str], years: int) -> list[dict[str, Any]]:
    """A ``years``-year subscription of each flavor; ids as in :func:`on_demand_products`."""
    return [
        {
            "id": str(i),
            "cloud_service_type": CLOUD_SERVICE_TYPE,
            "resource_type": RESOURCE_TYPE,
            "resource_spec": resource_spec(flavor),
            "region": region,
            "period_type": PERIOD_TYPE_YEAR,
            "period_num": years,
            "subscription_num": 1,
        }
        for i, flavor in enumerate(flavors, start=1)
    ]


def _money(row: Mapping[str, Any], field: str, where: str) -> Decimal | None:
    value = row.get(field)
    if value is None:
        return None
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        raise RatingError(f"{where}: {field} {value!r} is not a number") from None
    measure = row.get("measure_id", 1)
    scale = _MEASURE_SCALE.get(measure) if isinstance(measure, int) else None
    if scale is None:
        raise RatingError(f"{where}: unknown measure_id {measure!r}")
    return amount * scale


def _currency(body: Mapping[str, Any]) -> str:
    currency = body.get("currency")
    if not isinstance(currency, str) or len(currency.strip()) != 3:
        raise RatingError(f"response currency {currency!r} is not an ISO code")
    return currency.strip().upper()


def _rows(container: Any, where: str) -> list[Mapping[str, Any]]:
    rows = container.get("product_rating_results") if isinstance(container, Mapping) else None
    if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
        raise RatingError(f"{where}: no product_rating_results list")
    return rows


def parse_on_demand(body: Any) -> dict[str, Rating]:
    """``ListOnDemandResourceRatings`` response → rating per product id."""
    if not isinstance(body, Mapping):
        raise RatingError("on-demand rating response is not an object")
    currency = _currency(body)
    ratings: dict[str, Rating] = {}
    for row in _rows(body, "on-demand rating"):
        pid = str(row.get("id", ""))
        where = f"on-demand rating of product {pid}"
        amount = _money(row, "amount", where)
        if amount is None:
            raise RatingError(f"{where}: no amount")
        ratings[pid] = Rating(amount, _money(row, "official_website_amount", where), currency)
    return ratings


def parse_period(body: Any) -> dict[str, Rating]:
    """``ListRateOnPeriodDetail`` response → rating (whole term) per product id."""
    if not isinstance(body, Mapping):
        raise RatingError("period rating response is not an object")
    currency = _currency(body)
    official = {
        str(row.get("id", "")): _money(row, "official_website_amount", "period list price")
        for row in _rows(body.get("official_website_rating_result"), "period list price")
    }
    discounted: dict[str, tuple[Decimal, str]] = {}
    options = body.get("optional_discount_rating_results") or []
    if not isinstance(options, list):
        raise RatingError("optional_discount_rating_results is not a list")
    best = [o for o in options if isinstance(o, Mapping) and o.get("best_offer") == 1]
    for option in best[:1]:
        name = str(option.get("discount_name") or option.get("discount_id") or "")
        for row in _rows(option, "period discount"):
            pid = str(row.get("id", ""))
            amount = _money(row, "amount", f"period discount of product {pid}")
            if amount is not None:
                discounted[pid] = (amount, name)
    ratings: dict[str, Rating] = {}
    for pid, list_amount in official.items():
        if pid in discounted:
            amount, name = discounted[pid]
            ratings[pid] = Rating(amount, list_amount, currency, name)
        elif list_amount is not None:
            ratings[pid] = Rating(list_amount, list_amount, currency)
    return ratings
