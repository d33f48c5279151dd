"""The Overview's trend: per GPU model, the cheapest USD per GPU-hour at each of a few
equally spaced times (the last 30 days, daily), for the 7- and 30-day change and the
sparkline.

:func:`tracker.store.history.cheapest_at` answers the same question with one index
probe per (time, series): 31 times × 100,000 offers is 3.1 M probes, seconds per page.
Here the intervals are split in two instead:

- *spanning*: open intervals that started by the first time. Each holds its price at
  every time, so one aggregate over them (per GPU model and currency) serves them all;
- *moving*: every other interval in force at some time of the window (closed after
  the first time, or opened after it). Only these are paired with the times they cover,
  found through the ``(ended_at, first_seen)`` index (migration 0008).

Prices are grouped by currency and converted afterwards, once per (currency, time),
with :class:`tracker.fx.Rates` (the rate in force at each time; a currency without a
rate then counts for nothing, never 1.0). A rate is positive, so the lowest price of a
currency is also its lowest USD figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Engine, and_, func, null, or_, select, union_all

from tracker.fx import Rates
from tracker.store.errors import database_errors
from tracker.store.history import SeriesFilter, Steps, _grid, _reading
from tracker.store.schema import PricePoint, Series

__all__ = ["GPU_HOUR", "cheapest_trend"]

Bind = Engine | Connection
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
    intervals already has them (the Overview's :func:`tracker.store.dashboard.cheapest`);
    then only the moving intervals are read here.

    Raises :class:`~tracker.store.engine.DatabaseError`.
    """
    if times.count < 1:
        return {}
    first, last = times.start, times.start + times.step * (times.count - 1)
    s, p = Series.__table__.c, PricePoint.__table__.c
    per_gpu = (p.price / s.gpu_count).label("per_gpu")
    filters = where.where()
    spans = (
        select(s.gpu_model, null().label("k"), p.currency, per_gpu)
        .select_from(Series.__table__.join(PricePoint.__table__, p.series_id == s.id))
        .where(*filters, p.ended_at.is_(None), p.first_seen <= first)
    )
    grid = _grid(engine, times)
    moving = (
        select(s.gpu_model, grid.c.k, p.currency, per_gpu)
        .select_from(
            PricePoint.__table__.join(Series.__table__, p.series_id == s.id).join(
                grid,
                and_(
                    p.first_seen <= grid.c.t,
                    or_(p.ended_at.is_(None), p.ended_at > grid.c.t),
                ),
            )
        )
        .where(
            *filters,
            or_(
                p.ended_at > first,
                and_(p.ended_at.is_(None), p.first_seen > first, p.first_seen <= last),
            ),
            p.first_seen <= last,
        )
    )
    both = (moving if spanning is not None else union_all(spans, moving)).subquery("found")
    stmt = select(both.c.gpu_model, both.c.k, both.c.currency, func.min(both.c.per_gpu)).group_by(
        both.c.gpu_model, both.c.k, both.c.currency
    )
    with database_errors("cannot read the price trend"), _reading(engine) as conn:
        rows: list[tuple[Any, ...]] = [tuple(r) for r in conn.execute(stmt).all()]
    rows += [(model, None, currency, low) for model, currency, low in spanning or ()]
    return _lowest(rows, rates, times)


def _lowest(rows: Sequence[Any], rates: Rates, times: Steps) -> dict[str, list[Decimal | None]]:
    """Convert each (GPU model, time or every time, currency) minimum at its time's rate
    and keep the lowest per GPU model and time."""
    moments = times.times()
    result: dict[str, list[Decimal | None]] = {}
    for model, k, currency, per_gpu in rows:
        values = result.setdefault(model, [None] * times.count)
        price = Decimal(str(per_gpu))
        for i in range(times.count) if k is None else (int(k),):
            usd = rates.to_usd(price, currency, moments[i])
            if usd is None:
                continue
            usd = usd.quantize(GPU_HOUR)
            current = values[i]
            if current is None or usd < current:
                values[i] = usd
    return result
