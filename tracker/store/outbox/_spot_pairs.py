"""The spot offers a spot-discount rule compares, each with the on-demand price it is
compared with, read in one statement per rule.

A listed spot offer is compared with the cheapest listed on-demand offer (no payment
option) of the same provider, instance type, region and OS; the rule's filters select
the spot side only. The join and the filters run in SQL, so a rule reads the spot
offers it covers that have an on-demand counterpart, not every open price of the store
(130,000 rows after a big run, for each rule).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any, NamedTuple

from sqlalchemy import DateTime, and_, select, type_coerce

from tracker.models import PricingModel
from tracker.store.engine import Engine
from tracker.store.errors import database_errors
from tracker.store.reads import SeriesFilter
from tracker.store.schema import PricePoint, Series
from tracker.store.types import utc_reader

__all__ = ["SpotPair", "spot_pairs"]


class SpotPair(NamedTuple):
    """A spot offer's open price and its cheapest on-demand counterpart's."""

    provider: str
    instance_type: str
    region: str
    zone: str
    os: str
    gpu_model: str
    gpu_count: Decimal
    price: Decimal
    currency: str
    price_since: datetime
    od_price: Decimal
    od_currency: str
    od_since: datetime


def spot_pairs(engine: Engine, where: SeriesFilter | None = None) -> list[SpotPair]:
    """Every listed spot offer ``where`` selects that has a listed on-demand counterpart,
    with the cheapest one (the first by series id among equal prices, compared as stored,
    whatever their currencies), in spot series order."""
    s, o = Series.__table__.alias("s"), Series.__table__.alias("o")
    p, op = PricePoint.__table__.alias("p"), PricePoint.__table__.alias("op")
    aware = DateTime(timezone=True)  # converted once per distinct time below
    stmt = (
        select(
            s.c.id,
            s.c.provider,
            s.c.instance_type,
            s.c.region,
            s.c.zone,
            s.c.os,
            s.c.gpu_model,
            s.c.gpu_count,
            p.c.price,
            p.c.currency,
            type_coerce(p.c.first_seen, aware),
            op.c.price,
            op.c.currency,
            type_coerce(op.c.first_seen, aware),
        )
        .select_from(
            s.join(p, and_(p.c.series_id == s.c.id, p.c.ended_at.is_(None)))
            .join(
                o,
                and_(
                    o.c.provider == s.c.provider,
                    o.c.instance_type == s.c.instance_type,
                    o.c.region == s.c.region,
                    o.c.os == s.c.os,
                    o.c.pricing == PricingModel.ON_DEMAND.value,
                    o.c.payment_option == "",
                    o.c.delisted_at.is_(None),
                ),
            )
            .join(op, and_(op.c.series_id == o.c.id, op.c.ended_at.is_(None)))
        )
        .where(
            s.c.delisted_at.is_(None),
            s.c.pricing == PricingModel.SPOT.value,
            *(where.where(s) if where is not None else ()),
        )
        .order_by(s.c.id, o.c.id)
    )
    with database_errors("cannot read the spot and on-demand prices"), engine.connect() as conn:
        rows = conn.execute(stmt).all()
    return list(_cheapest(rows))


def _cheapest(rows: Any) -> Iterator[SpotPair]:
    """One pair per spot series: its rows come together, the on-demand side in series
    order, and the first of the lowest prices wins."""
    utc = utc_reader()
    current: Any = None
    for row in rows:
        if current is not None and row[0] == current[0]:
            if row[11] < current[11]:
                current = row
            continue
        if current is not None:
            yield _pair(current, utc)
        current = row
    if current is not None:
        yield _pair(current, utc)


def _pair(row: Any, utc: Callable[[object], datetime]) -> SpotPair:
    return SpotPair(*row[1:10], utc(row[10]), row[11], row[12], utc(row[13]))  # type: ignore[call-arg]
