"""Which offers a cheapest-offer read left out for want of an exchange rate.

Apart from the reads themselves (tracker.store.reads, tracker.store.reads):
their readers report the count, so nothing disappears silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from decimal import Decimal

from sqlalchemy import func, or_, select

from tracker.store.engine import Engine
from tracker.store.errors import database_errors
from tracker.store.reads._history import SeriesFilter, usd_price
from tracker.store.schema import PricePoint, Series
from tracker.store.series import load_rates
from tracker.store.sql import Steps, Times, in_force, reading

__all__ = ["without_rate_at"]


def without_rate_at(
    engine: Engine,
    times: Times,
    where: SeriesFilter,
    *,
    fx_rates: Mapping[str, Decimal] | None = None,
) -> dict[str, int]:
    """The selected offers :func:`cheapest_at` left out at some of ``times`` because
    their price had no USD figure then (no exchange rate), each counted once, by
    currency: what its reader reports, so nothing disappears silently.

    A currency with a rate at the first time has one at every later time, so only
    series with an interval in another currency during the span can have been left
    out: one scan of the span's intervals finds them (usually none), and only those
    are probed step by step.

    Raises :class:`~tracker.store.engine.DatabaseError`.
    """
    listed = times.times() if isinstance(times, Steps) else sorted(times)
    if not listed:
        return {}
    s, p = Series.__table__, PricePoint.__table__
    with database_errors("cannot read the price history"), engine.connect() as conn:
        covered = load_rates(conn, fx_rates).covered_from(listed[0])
        candidates = [
            sid
            for (sid,) in conn.execute(
                select(s.c.id)
                .select_from(s.join(p, p.c.series_id == s.c.id))
                .where(
                    *where.where(),
                    p.c.currency.not_in(sorted(covered)),
                    p.c.first_seen <= listed[-1],
                    or_(p.c.ended_at.is_(None), p.c.ended_at > listed[0]),
                )
                .distinct()
            )
        ]
    if not candidates:
        return {}
    f = in_force(engine, times, replace(where, series_ids=candidates))
    stmt = (
        select(f.p.c.currency, func.count(func.distinct(f.s.c.id)))
        .select_from(f.source)
        .where(usd_price(f.p, f.t, fx_rates).is_(None))
        .group_by(f.p.c.currency)
    )
    with database_errors("cannot read the price history"), reading(engine) as conn:
        return {str(currency): int(n) for currency, n in conn.execute(stmt).all()}
