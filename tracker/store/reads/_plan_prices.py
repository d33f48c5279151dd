"""The prices a fleet plan reads: every stored price of one GPU's instance types.

A plan needs only who sells what where at which price, not the listing's bookkeeping
(when each offer was first seen, its confirmed sighting, its availability), so this
is one narrow select over the series and their interval in force, returned as plain
tuples: planning over 100,000 offers must not build 100,000 validated records.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import NamedTuple, cast

from sqlalchemy import Connection, Engine, or_, select

from tracker.catalog import GpuSelection
from tracker.models import PricingModel
from tracker.store.errors import database_errors
from tracker.store.reads._offers import gpu_filter
from tracker.store.schema import PricePoint, Series

__all__ = ["PlanPrice", "plan_prices"]

_ATTRIBUTES = ("interruption_max_pct", "upfront_usd", "recurring_hourly_usd")


class PlanPrice(NamedTuple):
    provider: str
    region: str
    instance_type: str
    pricing: str
    payment_option: str
    zone: str
    gpu_model: str
    gpu_count: Decimal
    price: Decimal
    currency: str
    interruption_max_pct: str | None
    """Of the offer's attributes only what a plan reads, as text (JSON parses nothing)."""
    upfront_usd: str | None
    recurring_hourly_usd: str | None
    offering_class: str = ""
    """A savings plan's type (``ec2_instance``, ``compute``); a reservation's class."""
    fabric: str = "unknown"
    """The inter-node network (``tracker.models.Fabric``): ``plan --fabric required``."""


def plan_prices(
    bind: Engine | Connection,
    *,
    gpu: GpuSelection,
    pricing: Sequence[PricingModel],
    provider: Sequence[str] | None = None,
    region: Sequence[str] | None = None,
    at: datetime | None = None,
) -> list[PlanPrice]:
    """Linux offers of ``gpu`` with the price in force now (listed offers' open
    intervals), or at ``at`` (the interval that began by then and had not ended by a
    change or a delisting); raises DatabaseError."""
    s, p = Series, PricePoint
    stmt = select(
        s.provider,
        s.region,
        s.instance_type,
        s.pricing,
        s.payment_option,
        s.zone,
        s.gpu_model,
        s.gpu_count,
        p.price,
        p.currency,
        *(s.attributes[key].as_string().label(key) for key in _ATTRIBUTES),
        s.offering_class,
        s.fabric,
    ).join_from(s, p, p.series_id == s.id)
    if at is None:
        stmt = stmt.where(p.ended_at.is_(None), s.delisted_at.is_(None))
    else:
        stmt = stmt.where(p.first_seen <= at, or_(p.ended_at.is_(None), p.ended_at > at))
    stmt = stmt.where(
        gpu_filter(gpu), s.os == "linux", s.pricing.in_([PricingModel(x).value for x in pricing])
    )
    if provider:
        stmt = stmt.where(s.provider.in_(list(provider)))
    if region:
        stmt = stmt.where(s.region.in_(list(region)))
    with database_errors("cannot read the prices to plan with"):
        if isinstance(bind, Engine):
            with bind.connect() as conn:
                rows = conn.execute(stmt).all()
        else:
            rows = bind.execute(stmt).all()
    # The rows have PlanPrice's fields by name; building 100,000 tuples again buys nothing.
    return cast(list[PlanPrice], rows)
