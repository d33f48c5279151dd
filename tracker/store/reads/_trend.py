"""The Overview's trend: per GPU model, the cheapest USD per GPU-hour at each of a few
equally spaced times (the last 30 days, daily), for the 7- and 30-day change and the
sparkline.

:func:`tracker.store.reads.cheapest_at` answers the same question with one index
probe per (time, series): 31 times × 100,000 offers is 3.1 M probes, seconds per page.
Here the intervals are split in two instead:

- *spanning*: open intervals that started by the first time. Each holds its price at
  every time, so one aggregate over them (per GPU model, currency and GPU count)
  serves them all; the Overview takes it from its own scan of the open intervals;
- *moving*: every other interval in force at some time of the window (closed after
  the first time, or opened after it), found through the ``(ended_at, first_seen)``
  index (migration 0008). On Postgres they are grouped by the range of times each
  covers (at most 496 ranges for 31 times), one pass whatever their number; SQLite
  (small stores) pairs each with the times it covers.

Each group's lowest price per GPU-hour then "paints" the times of its range, cheapest
range first, per GPU model and currency; the lows are converted once per (currency,
time) with :class:`tracker.fx.Rates` (the rate in force at each time; a currency
without a rate then counts for nothing, never 1.0). A rate is positive, so the lowest
price of a currency is also its lowest USD figure.

Cost (bench data, 100,000 offers, loaded 2-core machine): ~5 ms when prices did not
move in the window; ~0.2-0.5 s at a time when every offer's price changed within it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    Engine,
    Interval,
    and_,
    bindparam,
    case,
    func,
    literal,
    or_,
    select,
    union_all,
)
from sqlalchemy.dialects.postgresql import ARRAY

from tracker.fx import Rates
from tracker.store.errors import database_errors
from tracker.store.reads._history import SeriesFilter
from tracker.store.reads._rollup_read import answerable, group_where
from tracker.store.schema import PricePoint, PriceRollup, RollupGroup, Series
from tracker.store.sql import Steps, grid, reading
from tracker.store.types import UTCDateTime

__all__ = ["GPU_HOUR", "cheapest_trend"]

log = logging.getLogger(__name__)
GPU_HOUR = Decimal("1e-6")
"""USD per GPU-hour to a millionth of a dollar, as ``offers`` and ``history`` show it."""


def cheapest_trend(
    engine: Engine,
    rates: Rates,
    times: Steps,
    where: SeriesFilter,
    *,
    spanning: Sequence[tuple[str, str, Decimal]] | None = None,
) -> dict[str, list[Decimal | None]]:
    """Per GPU model of the selected series, the lowest USD per GPU-hour in force at each
    of ``times`` (None where none with a rate was), the same figures as
    ``cheapest_at(..., per=("gpu_model",))`` (see the module docstring for how).

    ``spanning``: the (GPU model, currency, lowest price per GPU-hour) of the selected
    open intervals started by the first time, when the caller's own scan of the open
    intervals already has them (the Overview's :func:`tracker.store.reads.cheapest`);
    then only the moving intervals are read here.

    Raises :class:`~tracker.store.engine.DatabaseError`.
    """
    if times.count < 1:
        return {}
    first, last = times.start, times.start + times.step * (times.count - 1)
    s, p = Series.__table__.c, PricePoint.__table__.c
    filters = where.where()
    both = Series.__table__.join(PricePoint.__table__, p.series_id == s.id)
    stmts: list[Any] = []
    if spanning is None:
        spans = select(
            s.gpu_model,
            p.currency,
            s.gpu_count,
            literal(0).label("k0"),
            literal(times.count - 1).label("k1"),
            p.price,
        )
        stmts.append(
            spans.select_from(both).where(*filters, p.ended_at.is_(None), p.first_seen <= first)
        )
    # The moving part from the rollup where it can answer: its intervals in force at
    # some time of the window are the groups' lows, far fewer than the offers' own.
    why = answerable(where)
    if why is None:
        g, r = RollupGroup.__table__, PriceRollup.__table__
        src: Any = g.join(r, r.c.group_id == g.c.id).join(Series.__table__, s.id == r.c.series_id)
        m, model, currency, where_m = r.c, g.c.gpu_model, g.c.currency, group_where(g, where)
    else:
        log.debug("trend from the raw intervals: the rollup has no %s", why)
        src, m, model, currency, where_m = both, p, s.gpu_model, p.currency, filters
    moved = or_(
        m.ended_at > first,
        and_(m.ended_at.is_(None), m.first_seen > first, m.first_seen <= last),
    )
    if engine.dialect.name == "postgresql":
        lo, hi = _day_range(times, m)
        moving: Any = src
    else:
        grid_ = grid(engine, times)
        covers = and_(m.first_seen <= grid_.c.t, or_(m.ended_at.is_(None), m.ended_at > grid_.c.t))
        lo, hi = grid_.c.k.label("k0"), grid_.c.k.label("k1")
        moving = src.join(grid_, covers)
    stmts.append(
        select(model, currency, s.gpu_count, lo, hi, m.price)
        .select_from(moving)
        .where(*where_m, moved, m.first_seen <= last)
    )
    combined: Any = union_all(*stmts) if len(stmts) > 1 else stmts[0]
    found = combined.subquery("found")
    col = found.c
    keys = [col.gpu_model, col.currency, col.gpu_count, col.k0, col.k1]
    stmt = select(*keys, func.min(col.price)).group_by(*keys)
    with database_errors("cannot read the price trend"), reading(engine) as conn:
        found_rows: list[Any] = list(conn.execute(stmt).all())
    rows: list[tuple[str, str, Decimal, int, int]] = [
        (str(r[0]), str(r[1]), Decimal(str(r[5])) / Decimal(r[2]), int(r[3]), int(r[4]))
        for r in found_rows
    ]
    rows += [(m, c, low, 0, times.count - 1) for m, c, low in spanning or ()]
    return _lowest(rows, rates, times)


def _day_range(times: Steps, p: Any) -> tuple[Any, Any]:
    """The first and last grid number an interval is in force at: in force at ``t_k``
    when it started by then and had not ended. ``width_bucket(x, grid)`` counts the grid
    times at or before ``x`` (a binary search, exact on timestamps), so the times before
    ``x`` are those at or before ``x − 1 µs``. Grouping by this range instead of pairing
    each interval with every time it covers keeps the read at one pass over them."""
    grid = bindparam("grid", [t.astimezone(UTC) for t in times.times()], ARRAY(UTCDateTime))
    tick = literal(timedelta(microseconds=1), Interval())
    lo = func.width_bucket(p.first_seen - tick, grid)
    hi = case(
        (p.ended_at.is_(None), times.count - 1),
        else_=func.width_bucket(p.ended_at - tick, grid) - 1,
    )
    return lo.label("k0"), hi.label("k1")


def _lowest(
    rows: Sequence[tuple[str, str, Decimal, int, int]], rates: Rates, times: Steps
) -> dict[str, list[Decimal | None]]:
    """Each (GPU model, currency)'s lowest price per GPU-hour at each time, painted from
    the cheapest range up (a time takes the first, so lowest, range covering it), then
    converted at each time's rate; the lowest in USD per GPU model and time."""
    moments = times.times()
    lowest: dict[tuple[str, str], list[Decimal | None]] = {}
    for model, currency, low, k0, k1 in sorted(rows, key=lambda r: r[2]):
        days = lowest.setdefault((model, currency), [None] * times.count)
        for k in range(max(k0, 0), min(k1, times.count - 1) + 1):
            if days[k] is None:
                days[k] = low
    result: dict[str, list[Decimal | None]] = {}
    for (model, currency), days in lowest.items():
        values = result.setdefault(model, [None] * times.count)
        for k, day_low in enumerate(days):
            usd = None if day_low is None else rates.to_usd(day_low, currency, moments[k])
            if usd is None:
                continue
            figure = usd.quantize(GPU_HOUR)
            current = values[k]
            if current is None or figure < current:
                values[k] = figure
    return result
