"""What a capacity-block offer sells: how many instances, for how long, from when.

An AWS EC2 Capacity Block for ML is one upfront fee for ``instances`` instances held
for ``hours`` from ``start``. It is stored as an offer priced per instance-hour
(fee ÷ (instances × hours), pricing ``capacity_block``) so it lists and compares with
hourly prices, but it only serves a job that fits it: at most ``instances`` nodes for
at most ``hours``, and it is paid in full whatever the job uses. This module is the
one reading of the block's shape from an offer's attributes, for the recommender's
eligibility rule, the views and the faces alike.

The attributes, written by :mod:`collectors.aws_capacity_blocks`:
``capacity_block_instances`` (int), ``capacity_block_hours`` (Decimal: hours plus
minutes ÷ 60), ``capacity_block_start`` / ``capacity_block_end`` (ISO-8601 UTC),
``capacity_block_fee`` (the whole upfront fee, in the offer's currency).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation

from tracker.models import Offer, PricingModel

__all__ = [
    "END",
    "FEE",
    "HOURS",
    "INSTANCES",
    "START",
    "CapacityBlockTerms",
    "block_fits",
    "capacity_block_terms",
    "terms_from_attributes",
    "valid_block_hours",
]

INSTANCES = "capacity_block_instances"
HOURS = "capacity_block_hours"
START = "capacity_block_start"
END = "capacity_block_end"
FEE = "capacity_block_fee"


@dataclass(frozen=True, slots=True)
class CapacityBlockTerms:
    """The shape of one capacity block: ``instances`` nodes for ``hours`` from ``start``."""

    instances: int
    hours: Decimal
    start: datetime
    end: datetime | None = None
    fee: Decimal | None = None
    """The whole upfront fee in the offer's currency (None when not recorded)."""


def _decimal(value: object) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return None
    return number if number.is_finite() and number > 0 else None


def _when(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def terms_from_attributes(
    pricing: PricingModel | str, attributes: Mapping[str, object] | None
) -> CapacityBlockTerms | None:
    """The block's terms from a stored row's pricing and attributes (what the
    recommender's table holds); None for any other pricing or a row missing a term."""
    if str(pricing) != PricingModel.CAPACITY_BLOCK.value or not attributes:
        return None
    instances = _decimal(attributes.get(INSTANCES))
    hours = _decimal(attributes.get(HOURS))
    start = _when(attributes.get(START))
    if instances is None or instances != instances.to_integral_value() or hours is None:
        return None
    if start is None:
        return None
    return CapacityBlockTerms(
        instances=int(instances),
        hours=hours,
        start=start,
        end=_when(attributes.get(END)),
        fee=_decimal(attributes.get(FEE)),
    )


def capacity_block_terms(offer: Offer) -> CapacityBlockTerms | None:
    """``(instances, hours, start)`` of a capacity-block offer, None for any other offer.

    For the recommender's cluster sizing: a block is eligible only for a job that
    :func:`block_fits` it."""
    return terms_from_attributes(offer.pricing, offer.attributes)


def valid_block_hours(hours: int) -> bool:
    """The durations AWS accepts: 1-14 days in whole days, then whole weeks up to 182
    days (botocore's model: "1-day increments up 14 days, and in 7-day increments up to
    182 days")."""
    days, rest = divmod(hours, 24)
    if rest or days < 1:
        return False
    return days <= 14 or (days % 7 == 0 and days <= 182)


def block_fits(terms: CapacityBlockTerms, nodes: int, job_hours: Decimal) -> bool:
    """Whether a job of ``nodes`` instances running ``job_hours`` fits in the block
    (it then pays the whole fee: ``hourly price × instances × hours``)."""
    return 1 <= nodes <= terms.instances and Decimal(0) < job_hours <= terms.hours
