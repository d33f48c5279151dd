"""Cheapest-offer history read from the rollup (tracker.store.rollup) where it can answer.

:func:`tracker.store.reads.cheapest_at` probes every selected offer at every time:
366 days × 600 offers is 219,600 index probes. The rollup already holds each
(GPU model, pricing, provider, region, currency) group's cheapest offer as intervals,
so the same answer needs one probe per time × group (a few dozen groups), then the
same ranking: each group's price converted at the rate in force at that time (no
rate: never the cheapest), the lowest USD per GPU-hour per ``per`` group, ties to the
first offer identity. Within a group the cheapest in its own currency is also the
cheapest in USD, a rate being positive.

A filter the rollup does not keep (instance type, zone, payment option, series ids,
GPUs named by their raw name, a ``per`` column it has not) falls back to the raw
probe, and says so at DEBUG.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    Integer,
    Interval,
    and_,
    bindparam,
    case,
    cast,
    func,
    literal,
    literal_column,
    or_,
    select,
)

from tracker.models import PricingModel
from tracker.store.engine import Engine
from tracker.store.reads._history import CheapestStep, SeriesFilter, cheapest_at, cheapest_in
from tracker.store.schema import ROLLUP_KEY, PriceRollup, RollupGroup, Series
from tracker.store.sql import InForce, Steps, Times, grid
from tracker.store.types import UTCDateTime

__all__ = ["answerable", "cheapest_from_rollup", "group_where"]

log = logging.getLogger(__name__)

GROUP_COLUMNS = ROLLUP_KEY


def answerable(where: SeriesFilter, per: Sequence[str] = ()) -> str | None:
    """Why the rollup cannot answer ``where`` grouped by ``per`` (None: it can)."""
    if where.gpu is not None and where.gpu.names:
        return "GPUs named by their raw name"
    for field in ("instance_type", "zone", "payment_option", "series_ids"):
        if getattr(where, field) is not None:
            return f"a filter on {field.replace('_', ' ')}"
    extra = [c for c in per if c not in GROUP_COLUMNS]
    if extra:
        return f"grouping by {', '.join(extra)}"
    return None


def cheapest_from_rollup(
    engine: Engine,
    times: Times,
    where: SeriesFilter,
    *,
    per: Sequence[str] = (),
    fx_rates: Mapping[str, Decimal] | None = None,
) -> list[CheapestStep]:
    """The same rows as :func:`tracker.store.reads.cheapest_at`, from the rollup when
    it can answer (see the module docstring), else from the raw intervals.

    Raises :class:`~tracker.store.engine.DatabaseError`.
    """
    why = answerable(where, per)
    if why is not None:
        log.debug("cheapest history from the raw intervals: the rollup has no %s", why)
        return cheapest_at(engine, times, where, per=per, fx_rates=fx_rates)
    return cheapest_in(engine, _rollup_in_force(engine, times, where), per=per, fx_rates=fx_rates)


def group_where(g: Any, where: SeriesFilter) -> list[Any]:
    clauses: list[Any] = []
    if where.gpu is not None:
        clauses.append(g.c.gpu_model.in_(list(where.gpu.models)))
    if where.provider:
        clauses.append(g.c.provider.in_(list(where.provider)))
    if where.region:
        clauses.append(g.c.region.in_(list(where.region)))
    if where.pricing:
        clauses.append(g.c.pricing.in_([PricingModel(p).value for p in where.pricing]))
    return clauses


def _rollup_in_force(engine: Engine, times: Times, where: SeriesFilter) -> InForce:
    """For every grid time × selected group, the rollup interval in force then (one
    backward probe of ``(group_id, first_seen)``), with its offer's series row; the
    interval's ``currency`` is its group's. Shaped as the raw probe's pairs."""
    g = RollupGroup.__table__.alias("g")
    clauses = group_where(g, where)
    on = and_(*clauses) if clauses else literal_column("1") == 1
    if engine.dialect.name == "postgresql" and isinstance(times, Steps) and times.count:
        return _expanded(times, g, on)
    grid_ = grid(engine, times)
    r = PriceRollup.__table__
    started = [r.c.group_id == g.c.id, r.c.first_seen <= grid_.c.t]
    newest = r.c.first_seen.desc()
    s = Series.__table__.alias("s")
    if engine.dialect.name == "postgresql":
        wanted = [r.c.series_id, r.c.price, g.c.currency, r.c.ended_at]
        p = select(*wanted).where(*started).order_by(newest).limit(1).lateral("p")
        in_force = or_(p.c.ended_at.is_(None), p.c.ended_at > grid_.c.t)
        source = grid_.join(g, on).join(p, in_force).join(s, s.c.id == p.c.series_id)
        return InForce(grid_.c.k, grid_.c.t, s, p, source)
    latest = select(r.c.id).where(*started).order_by(newest).limit(1).scalar_subquery()
    probe = (
        select(grid_.c.k, grid_.c.t, g.c.currency, latest.label("rollup_id"))
        .select_from(grid_)
        .join(g, on)
        .subquery("probe")
    )
    found = PriceRollup.__table__.alias("r")
    in_force_then = or_(found.c.ended_at.is_(None), found.c.ended_at > probe.c.t)
    hit = (
        select(probe.c.k, probe.c.t, found.c.series_id, found.c.price, probe.c.currency)
        .select_from(probe.join(found, and_(found.c.id == probe.c.rollup_id, in_force_then)))
        .subquery("hit")
    )
    source = hit.join(s, s.c.id == hit.c.series_id)
    return InForce(hit.c.k, hit.c.t, s, hit, source)


def _expanded(times: Steps, g: Any, on: Any) -> InForce:
    """Postgres, equally spaced times: each selected group's intervals that overlap the
    window (the one in force at its start, then those started in it: index range reads,
    a few thousand rows for a year of a GPU family) expanded to the steps each covers,
    instead of one index probe per step × group (30,000 for a daily year of 84 groups).

    A group's intervals never overlap (a step function), so the interval holding a
    time is the one the probe finds. The steps an interval covers are worked out from
    its ends in (exact, numeric) seconds, one step of margin either side, each step's
    time computed as the grid computes it, and kept only where it is really inside."""
    r = PriceRollup.__table__.alias("r")
    first = times.start
    last = times.end if times.end is not None else times.start + times.step * (times.count - 1)
    cols = [r.c.series_id, r.c.price, r.c.first_seen, r.c.ended_at]
    started_in = (
        select(*cols)
        .where(r.c.group_id == g.c.id, r.c.first_seen > first, r.c.first_seen <= last)
        .correlate(g)
    )
    latest = (
        select(*cols)
        .where(r.c.group_id == g.c.id, r.c.first_seen <= first)
        .order_by(r.c.first_seen.desc())
        .limit(1)
        .correlate(g)
        .lateral("at_start")
    )
    iv = started_in.union_all(select(*latest.c)).lateral("iv")
    # The last index: the regular steps', or the window's end after them (``count``).
    top = times.count if times.end is not None else times.count - 1
    step_s = literal(Decimal(str(times.step.total_seconds())))

    def index(at: Any) -> Any:
        return cast(func.floor(func.extract("epoch", at - first) / step_s), Integer)

    lo = func.greatest(0, func.least(top, index(iv.c.first_seen) - 1))
    hi = func.least(top, func.coalesce(index(iv.c.ended_at) + 1, top))
    ks = func.generate_series(lo, hi).table_valued("k").render_derived("ks")
    step = bindparam("roll_step", times.step, Interval())
    start = bindparam("roll_start", times.start, UTCDateTime())
    t: Any = start + ks.c.k * step
    if times.end is not None:
        t = case((ks.c.k == times.count, bindparam("roll_end", times.end, UTCDateTime())), else_=t)
    steps = select(ks.c.k, t.label("t")).lateral("steps")
    covered = and_(
        steps.c.t >= iv.c.first_seen, or_(iv.c.ended_at.is_(None), iv.c.ended_at > steps.c.t)
    )
    hit = (
        select(steps.c.k, steps.c.t, iv.c.series_id, iv.c.price, g.c.currency)
        .select_from(g.join(iv, literal_column("true")).join(steps, literal_column("true")))
        .where(on, covered)
        .subquery("hit")
    )
    s = Series.__table__.alias("s")
    return InForce(hit.c.k, hit.c.t, s, hit, hit.join(s, s.c.id == hit.c.series_id))
