"""Read side of the store: current offers, price history, unknown GPUs, run log."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import and_, false, func, null, or_, select

from tracker.catalog import GpuSelection
from tracker.filters import ANY_OFFER, OfferFilter
from tracker.models import OFFER_COLUMNS, ColumnGroup, Offer, offer_from_values
from tracker.store import series as availability
from tracker.store.last_seen import effective_last_seen, join_confirmations
from tracker.store.schema import CollectionRun, PricePoint, Series
from tracker.store.sql import Bind, execute, orm_rows
from tracker.unreadable import offer_key_text, skip_unreadable

__all__ = [
    "HistoryPoint",
    "StoredOffer",
    "UnknownGpu",
    "current_offers",
    "current_offers_select",
    "gpu_filter",
    "identity_clauses",
    "price_at",
    "price_history",
    "readable_offers",
    "recent_runs",
    "unknown_gpus",
]


@dataclass(frozen=True, slots=True)
class StoredOffer:
    offer: Offer
    series_id: int
    first_seen: datetime
    """When this offer identity was first seen."""
    price_since: datetime
    """When its current price was first seen."""
    last_seen: datetime
    source: str
    """Who last reported it: a collector's name, or ``import:<name>`` for an ad-hoc
    import (what a complete run of that source may delist)."""


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """One price interval, in the price's own currency (convert with tracker.fx)."""

    price: Decimal
    currency: str
    first_seen: datetime
    last_seen: datetime
    ended_at: datetime | None


@dataclass(frozen=True, slots=True)
class UnknownGpu:
    raw_name: str
    provider: str
    series: int
    example_instance_type: str


def stored_offer(row: Any) -> StoredOffer:
    m = row._mapping
    offer = offer_from_values(m)
    return StoredOffer(
        offer, m["series_id"], m["first_seen"], m["price_since"], m["last_seen"], m["source"]
    )


def readable_offers(rows: Iterable[Any]) -> list[StoredOffer]:
    """:func:`stored_offer` of each row, leaving out (counted, logged once: see
    :mod:`tracker.unreadable`) a row that fails the domain model, so one bad stored row
    never fails the whole listing."""
    result = []
    for row in rows:
        try:
            result.append(stored_offer(row))
        except ValueError as exc:  # InvalidOffer, or attributes that are not JSON
            skip_unreadable("offer", offer_key_text(row._mapping.get), exc)
    return result


def _offer_columns() -> list[Any]:
    """Every offer column labelled with its Offer field name, then the times and source.

    Derived columns (the USD figure) are NULL here: readers convert at the rate in
    force (tracker.fx), since the store keeps each price in its own currency only."""
    s, p = Series.__table__.c, PricePoint.__table__.c
    table = {ColumnGroup.PRICE: p, ColumnGroup.IDENTITY: s, ColumnGroup.HARDWARE: s}
    columns: list[Any] = [
        availability.current_column().label(c.name)
        if c.group is ColumnGroup.AVAILABILITY
        else table[c.group][c.column].label(c.name)
        if c.group in table
        else null().label(c.name)
        for c in OFFER_COLUMNS
    ]
    columns += [
        s.id.label("series_id"),
        s.first_seen,
        p.first_seen.label("price_since"),
        effective_last_seen().label("last_seen"),
        s.source,
    ]
    return columns


def current_offers_select(where: OfferFilter = ANY_OFFER) -> Any:
    """The select of :func:`current_offers` (its columns and ``where``'s filters but the
    hardware minimums, unordered), for readers that add their own order, limit, hardware
    clauses or aggregate (the dashboard's pages)."""
    stmt = select(*_offer_columns()).join_from(
        Series, PricePoint, and_(PricePoint.series_id == Series.id, PricePoint.ended_at.is_(None))
    )
    stmt = join_confirmations(availability.join_current(stmt)).where(Series.delisted_at.is_(None))
    if where.available:
        stmt = stmt.where(availability.rentable())
    return stmt.where(*identity_clauses(where))


def identity_clauses(where: OfferFilter) -> list[Any]:
    """``where``'s GPU, provider, region and pricing as clauses on ``series``."""
    clauses = []
    gpu = where.gpus()
    if gpu is not None:
        clauses.append(gpu_filter(gpu))
    if where.provider:
        clauses.append(Series.provider.in_(list(where.provider)))
    if where.region:
        clauses.append(Series.region.in_(list(where.region)))
    if where.pricing:
        clauses.append(Series.pricing.in_([p.value for p in where.pricing]))
    return clauses


def gpu_filter(gpu: GpuSelection) -> Any:
    """What typed GPU names select, as a condition on ``series``: canonical models
    exactly, names the catalog does not know against the stored model or raw name,
    case-insensitively (nothing when the selection is empty)."""
    matches: list[Any] = []
    if gpu.models:
        matches.append(Series.gpu_model.in_(gpu.models))
    if gpu.names:
        names = list(gpu.names)
        matches.append(func.lower(Series.gpu_model).in_(names))
        matches.append(func.lower(Series.gpu_raw_name).in_(names))
    return or_(*matches) if matches else false()


def current_offers(bind: Bind, where: OfferFilter = ANY_OFFER) -> list[StoredOffer]:
    """Listed offers with their current (open) price, filtered in SQL.

    ``where.gpu`` is what typed GPU names select (:func:`tracker.catalog.select_gpus`):
    canonical models exactly, names the catalog does not know against the stored model
    or raw name, case-insensitively. ``where.min_vram`` is usable VRAM per GPU in GiB (a
    fractional GPU has its share of the card); ``where.available`` keeps only offers whose
    current availability is known to be rentable (available or low stock).
    Raises :class:`~tracker.store.DatabaseError`.
    """
    # Plain columns, not ORM entities: listing 100k offers must not build 200k
    # mapped objects on the way to the Offer records.
    stmt = current_offers_select(where).order_by(Series.id)
    rows = execute(bind, stmt, "cannot read the current offers")
    min_vram, min_gpus = where.min_vram, where.min_gpus
    kept = []
    for row in rows:
        # Decimal columns are text on SQLite, so numeric filters are applied here.
        vram, count = row.gpu_memory_gib, row.gpu_count
        # A slice of a GPU (count < 1) offers only its share of the card's VRAM.
        if min_vram is not None and (vram is None or vram * min(count, 1) < min_vram):
            continue
        if min_gpus is not None and count < min_gpus:
            continue
        kept.append(row)
    return readable_offers(kept)


def _series_filter(key: Mapping[str, str]) -> list[Any]:
    return [getattr(Series, column) == value for column, value in key.items()]


def _intervals(
    bind: Bind, *where: Any, newest_first: bool = False, limit: int | None = None
) -> list[HistoryPoint]:
    p = PricePoint
    order = p.first_seen.desc() if newest_first else p.first_seen
    stmt = join_confirmations(
        select(p.price, p.currency, p.first_seen, effective_last_seen(), p.ended_at).join_from(
            p, Series, Series.id == p.series_id
        )
    )
    stmt = stmt.where(*where).order_by(order).limit(limit)
    return [HistoryPoint(*row) for row in orm_rows(bind, stmt)]


def price_history(bind: Bind, series_id: int) -> list[HistoryPoint]:
    return _intervals(bind, PricePoint.series_id == series_id)


def price_at(bind: Bind, series_id: int, at: datetime) -> HistoryPoint | None:
    """The price in force at ``at``: the interval that started at or before it and had
    not ended (by a change or a delisting) by then."""
    points = _intervals(
        bind,
        PricePoint.series_id == series_id,
        PricePoint.first_seen <= at,
        or_(PricePoint.ended_at.is_(None), PricePoint.ended_at > at),
        newest_first=True,
        limit=1,
    )
    return points[0] if points else None


def find_series(bind: Bind, **key: str) -> list[Series]:
    """Series matching identity columns given as keywords (e.g. provider, instance_type)."""
    stmt = select(Series).where(*_series_filter(key)).order_by(Series.id)
    return [row[0] for row in orm_rows(bind, stmt)]


def unknown_gpus(bind: Bind) -> list[UnknownGpu]:
    stmt = (
        select(
            Series.gpu_raw_name,
            Series.provider,
            func.count(Series.id),
            func.min(Series.instance_type),
        )
        .where(Series.gpu_known.is_(False))
        .group_by(Series.gpu_raw_name, Series.provider)
        .order_by(Series.gpu_raw_name, Series.provider)
    )
    return [UnknownGpu(r[0], r[1], int(r[2]), r[3]) for r in orm_rows(bind, stmt)]


def recent_runs(
    bind: Bind,
    provider: str | None = None,
    limit: int = 20,
    *,
    source: str | None = None,
    statuses: Sequence[str] = (),
) -> list[CollectionRun]:
    """The latest ``limit`` runs, newest first; only those of ``statuses`` when given."""
    stmt = select(CollectionRun).order_by(CollectionRun.id.desc()).limit(limit)
    if statuses:
        stmt = stmt.where(CollectionRun.status.in_(list(statuses)))
    if provider:
        stmt = stmt.where(CollectionRun.provider == provider)
    if source:
        stmt = stmt.where(CollectionRun.source == source)
    return [row[0] for row in orm_rows(bind, stmt)]
