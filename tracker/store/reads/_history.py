"""History reads: prices in force at a list of times, and intervals for export.

A price is a step function: the price in force at ``t`` is the interval that started
at or before ``t`` and had not ended by then (a change or a delisting ends it). Every
read here is one SQL statement over a *grid* of times: for each (time, series) pair an
index probe on ``(series_id, first_seen)`` finds the latest interval started by then
(``ORDER BY first_seen DESC LIMIT 1``), and a join keeps it only if it was still in
force. A time where nothing was in force yields no row: the caller shows it empty.

USD is read through :func:`usd_price` only: prices are stored in their own currency, and
the USD figure is the price at the exchange rate in force at each step (the stored ECB
series, then the manual ``fx_rates``; NULL without a rate, and such a step never counts
as the cheapest), see :func:`tracker.store.series.usd_sql`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, NamedTuple

from sqlalchemy import (
    Select,
    and_,
    false,
    func,
    or_,
    select,
)
from sqlalchemy.sql.elements import ColumnElement

from tracker.catalog import GpuSelection
from tracker.filters import OfferFilter
from tracker.models import PricingModel
from tracker.store.engine import Engine
from tracker.store.errors import database_errors
from tracker.store.last_seen import effective_last_seen, join_confirmations
from tracker.store.schema import PricePoint, Series
from tracker.store.series import usd_sql
from tracker.store.sql import Steps, Times, in_force, reading
from tracker.store.types import quantize_money

__all__ = [
    "EXPORT_COLUMNS",
    "CheapestStep",
    "OfferStep",
    "SeriesFilter",
    "Steps",
    "cheapest_at",
    "export_batches",
    "offer_steps",
    "stored_gpu_names",
    "usd_price",
]

RANK_KEYS = ("provider", "instance_type", "region", "zone", "pricing", "payment_option")
"""Ties in the cheapest price are broken by offer identity, so a step has one answer."""


def usd_price(
    points: Any, at: Any, fx_rates: Mapping[str, Decimal] | None = None
) -> ColumnElement[Decimal]:
    """The USD figure of an interval of ``points`` (a price_points table or alias) as it
    reads at time ``at`` (a column or bound time), at the rate in force then; ``fx_rates``
    is the manual setting for currencies without ECB rates. The one place USD comes from."""
    return usd_sql(points.c.price, points.c.currency, at, fx_rates)


@dataclass(frozen=True, slots=True)
class SeriesFilter:
    """Which series a read covers: every given field narrows it (None: no filter)."""

    gpu: GpuSelection | None = None
    provider: Sequence[str] | None = None
    region: Sequence[str] | None = None
    pricing: Sequence[PricingModel] | None = None
    instance_type: str | None = None
    zone: str | None = None
    payment_option: str | None = None
    series_ids: Sequence[int] | None = None

    @classmethod
    def of(cls, offers: OfferFilter) -> SeriesFilter:
        """The series ``offers`` selects by identity (its hardware minimums and
        availability are the current listing's, not a history's)."""
        return cls(
            gpu=offers.gpus(),
            provider=offers.provider or None,
            region=offers.region or None,
            pricing=offers.pricing or None,
        )

    def where(self, series: Any = None) -> list[ColumnElement[bool]]:
        """The clauses over ``series`` (the series table or an alias of it)."""
        s = (Series.__table__ if series is None else series).c
        clauses: list[ColumnElement[bool]] = []
        if self.gpu is not None:
            matches: list[ColumnElement[bool]] = []
            if self.gpu.models:
                matches.append(s.gpu_model.in_(self.gpu.models))
            if self.gpu.names:
                names = list(self.gpu.names)
                matches.append(func.lower(s.gpu_model).in_(names))
                matches.append(func.lower(s.gpu_raw_name).in_(names))
            clauses.append(or_(*matches) if matches else false())
        if self.provider:
            clauses.append(s.provider.in_(list(self.provider)))
        if self.region:
            clauses.append(s.region.in_(list(self.region)))
        if self.pricing:
            clauses.append(s.pricing.in_([PricingModel(p).value for p in self.pricing]))
        for column in ("instance_type", "zone", "payment_option"):
            value = getattr(self, column)
            if value is not None:
                clauses.append(s[column] == value)
        if self.series_ids is not None:
            clauses.append(s.id.in_(list(self.series_ids)))
        return clauses


def stored_gpu_names(engine: Engine, names: Sequence[str]) -> set[str]:
    """Which of the lower-cased ``names`` some stored series has as its GPU model or
    raw GPU name (how an unrecognised GPU is found by name).

    Raises :class:`~tracker.store.engine.DatabaseError`.
    """
    if not names:
        return set()
    s = Series.__table__.c
    wanted = list(names)
    stmt = select(func.lower(s.gpu_model), func.lower(s.gpu_raw_name)).where(
        or_(func.lower(s.gpu_model).in_(wanted), func.lower(s.gpu_raw_name).in_(wanted))
    )
    with database_errors("cannot read the stored GPU names"), engine.connect() as conn:
        found = {name for row in conn.execute(stmt.distinct()) for name in row}
    return found & set(wanted)


class OfferStep(NamedTuple):
    """One series at grid time number ``k``: the price in force then (None where none
    was). Times are numbered, not read back: converting thousands of returned
    ``timestamptz`` values costs more than the query."""

    k: int
    provider: str
    instance_type: str
    region: str
    zone: str
    pricing: str
    payment_option: str
    price: Decimal | None
    currency: str | None
    price_usd: Decimal | None


class CheapestStep(NamedTuple):
    """The offer with the lowest USD price per GPU-hour at grid time number ``k``
    (within one group, see :func:`cheapest_at`)."""

    k: int
    gpu_model: str
    provider: str
    instance_type: str
    region: str
    zone: str
    pricing: str
    payment_option: str
    gpu_count: Decimal
    price: Decimal
    currency: str
    price_usd: Decimal


def offer_steps(
    engine: Engine,
    times: Times,
    where: SeriesFilter,
    *,
    fx_rates: Mapping[str, Decimal] | None = None,
) -> list[OfferStep]:
    """Every selected series at every time, with the price in force then (None where
    none was), ordered by offer then time; no rows when no series matches.

    Raises :class:`~tracker.store.engine.DatabaseError`.
    """
    f = in_force(engine, times, where, outer=True)
    s, p = f.s, f.p
    stmt = select(
        f.k,
        *(s.c[c] for c in RANK_KEYS),
        p.c.price,
        p.c.currency,
        usd_price(p, f.t, fx_rates),
    ).select_from(f.source)
    with database_errors("cannot read the price history"), reading(engine) as conn:
        steps = [OfferStep._make(row) for row in conn.execute(stmt).all()]
    # Sorted here, not in SQL: cheaper than a sort node over the steps.
    steps.sort(key=lambda p: (*p[1:7], p.k))
    return steps


def cheapest_at(
    engine: Engine,
    times: Times,
    where: SeriesFilter,
    *,
    per: Sequence[str] = (),
    fx_rates: Mapping[str, Decimal] | None = None,
) -> list[CheapestStep]:
    """At each time, the offer with the lowest USD price per GPU-hour among the selected
    series, one per group of the ``per`` series columns (e.g. gpu_model, provider, pricing);
    ties go to the first offer identity in :data:`RANK_KEYS` order.

    Raises :class:`~tracker.store.engine.DatabaseError`.
    """
    return cheapest_in(engine, in_force(engine, times, where), per=per, fx_rates=fx_rates)


def cheapest_in(
    engine: Engine, f: Any, *, per: Sequence[str], fx_rates: Mapping[str, Decimal] | None
) -> list[CheapestStep]:
    """:func:`cheapest_at` over the pairs of ``f`` (an :class:`InForce`; the rollup's
    reads build theirs from its intervals, tracker.store.reads)."""
    s, p = f.s, f.p
    usd = usd_price(p, f.t, fx_rates)
    # The lowest per group first (a hashed MIN over every pair), then the identity order
    # among the few pairs at it: sorting every pair by price and identity costs more.
    priced = (
        select(
            f.k.label("k"),
            s.c.gpu_model,
            *(s.c[c] for c in RANK_KEYS),
            s.c.gpu_count,
            p.c.price,
            p.c.currency,
            usd.label("price_usd"),
            (usd / s.c.gpu_count).label("per_gpu"),
        )
        .select_from(f.source)
        .where(usd.is_not(None))  # no rate at that step: never the cheapest, never 1.0
        .cte("priced")
    )
    groups = [priced.c.k, *(priced.c[c] for c in per)]
    lowest = (
        select(*groups, func.min(priced.c.per_gpu).label("per_gpu"))
        .group_by(*groups)
        .subquery("lowest")
    )
    rank = (
        func.row_number()
        .over(partition_by=groups, order_by=[priced.c[c] for c in RANK_KEYS])
        .label("rank")
    )
    at_lowest = and_(*(lowest.c[c.name] == c for c in groups), lowest.c.per_gpu == priced.c.per_gpu)
    fields = list(CheapestStep._fields)
    ranked = (
        select(*(priced.c[f] for f in fields), rank)
        .select_from(priced.join(lowest, at_lowest))
        .subquery("ranked")
    )
    stmt: Select[Any] = (
        select(*(ranked.c[f] for f in fields))
        .where(ranked.c.rank == 1)
        .order_by(ranked.c.k, *(ranked.c[c] for c in per))
    )
    with database_errors("cannot read the price history"), reading(engine) as conn:
        return [CheapestStep._make(row) for row in conn.execute(stmt).all()]


EXPORT_COLUMNS = (
    "provider",
    "instance_type",
    "region",
    "zone",
    "pricing",
    "payment_option",
    "offering_class",
    "os",
    "gpu_model",
    "gpu_count",
    "gpu_memory_gib",
    "vcpus",
    "memory_gib",
    "interconnect",
    "price_per_hour",
    "currency",
    "price_per_hour_usd",
    "first_seen",
    "last_seen",
    "ended_at",
)
"""One exported row: an interval joined with its offer, in this order."""


def export_batches(
    engine: Engine,
    where: SeriesFilter,
    since: datetime,
    until: datetime,
    *,
    batch_rows: int = 50_000,
    fx_rates: Mapping[str, Decimal] | None = None,
) -> Iterator[list[tuple[Any, ...]]]:
    """Intervals in force at some time in ``[since, until]`` joined with their offers,
    in :data:`EXPORT_COLUMNS` order, as batches from a server-side cursor (memory stays
    at one batch whatever the size of the history).

    Raises :class:`~tracker.store.engine.DatabaseError`.
    """
    s = Series.__table__
    p = PricePoint.__table__
    labels = {
        "price_per_hour": p.c.price,
        "price_per_hour_usd": usd_price(p, p.c.first_seen, fx_rates),
    }
    for column in ("currency", "first_seen", "ended_at"):
        labels[column] = p.c[column]
    labels["last_seen"] = effective_last_seen(p)
    columns = [(labels[c] if c in labels else s.c[c]).label(c) for c in EXPORT_COLUMNS]
    stmt = join_confirmations(select(*columns).select_from(s.join(p, p.c.series_id == s.c.id)), s)
    stmt = stmt.where(
        *where.where(),
        p.c.first_seen <= until,
        or_(p.c.ended_at.is_(None), p.c.ended_at > since),
    ).order_by(s.c.id, p.c.first_seen)
    with database_errors("cannot export the price history"), engine.connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=batch_rows).execute(stmt)
        usd_at = EXPORT_COLUMNS.index("price_per_hour_usd")
        for batch in result.partitions():
            yield [_usd_scaled(tuple(row), usd_at) for row in batch]


def _usd_scaled(row: tuple[Any, ...], at: int) -> tuple[Any, ...]:
    """The converted USD figure at the store's money scale (SQLite computes it in REAL)."""
    value = row[at]
    if value is None:
        return row
    return (*row[:at], quantize_money(Decimal(str(value))), *row[at + 1 :])
