"""Read side of the store: current offers, price history, unknown GPUs, run log."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Engine, and_, func, or_, select
from sqlalchemy.orm import Session

from tracker.models import Interconnect, Offer, PricingModel
from tracker.store.schema import CollectionRun, PricePoint, Series

__all__ = [
    "HistoryPoint",
    "StoredOffer",
    "UnknownGpu",
    "current_offers",
    "price_at",
    "price_history",
    "recent_runs",
    "unknown_gpus",
]

Bind = Engine | Connection


@dataclass(frozen=True, slots=True)
class StoredOffer:
    offer: Offer
    series_id: int
    first_seen: datetime
    """When this offer identity was first seen."""
    price_since: datetime
    """When its current price was first seen."""
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    price: Decimal
    currency: str
    price_usd: Decimal
    first_seen: datetime
    last_seen: datetime
    ended_at: datetime | None


@dataclass(frozen=True, slots=True)
class UnknownGpu:
    raw_name: str
    provider: str
    series: int
    example_instance_type: str


def _rows(bind: Bind, stmt: Any) -> Sequence[Any]:
    """Run an ORM select; objects are detached plain snapshots (no lazy loading)."""
    with Session(bind, expire_on_commit=False) as session:
        return session.execute(stmt).all()


def _offer(s: Series, p: PricePoint) -> Offer:
    return Offer(
        provider=s.provider,
        instance_type=s.instance_type,
        region=s.region,
        zone=s.zone,
        pricing=PricingModel(s.pricing),
        payment_option=s.payment_option,
        offering_class=s.offering_class,
        os=s.os,
        price_per_hour=p.price,
        currency=p.currency,
        price_per_hour_usd=p.price_usd,
        gpu_model=s.gpu_model,
        gpu_raw_name=s.gpu_raw_name,
        gpu_known=s.gpu_known,
        gpu_count=s.gpu_count,
        gpu_memory_gib=s.gpu_memory_gib,
        vcpus=s.vcpus,
        memory_gib=s.memory_gib,
        interconnect=Interconnect(s.interconnect),
        attributes=s.attributes or {},
    )


def current_offers(
    bind: Bind,
    *,
    gpu: str | Sequence[str] | None = None,
    provider: str | Sequence[str] | None = None,
    region: str | Sequence[str] | None = None,
    pricing: PricingModel | Sequence[PricingModel] | None = None,
    min_vram: Decimal | None = None,
    min_gpus: Decimal | None = None,
) -> list[StoredOffer]:
    """Listed offers with their current (open) price, filtered in SQL.

    ``gpu`` matches the canonical model or the raw name, case-insensitively.
    ``min_vram`` is VRAM per GPU in GiB.
    """
    stmt = select(Series, PricePoint).join(
        PricePoint, and_(PricePoint.series_id == Series.id, PricePoint.ended_at.is_(None))
    )
    stmt = stmt.where(Series.delisted_at.is_(None))
    if gpu:
        names = [g.lower() for g in _many(gpu)]
        stmt = stmt.where(
            or_(func.lower(Series.gpu_model).in_(names), func.lower(Series.gpu_raw_name).in_(names))
        )
    if provider:
        stmt = stmt.where(Series.provider.in_(_many(provider)))
    if region:
        stmt = stmt.where(Series.region.in_(_many(region)))
    if pricing:
        stmt = stmt.where(Series.pricing.in_([PricingModel(p).value for p in _many(pricing)]))
    rows = _rows(bind, stmt.order_by(Series.id))
    result = []
    for s, p in rows:
        # Decimal columns are text on SQLite, so numeric filters are applied here.
        if min_vram is not None and (s.gpu_memory_gib is None or s.gpu_memory_gib < min_vram):
            continue
        if min_gpus is not None and s.gpu_count < min_gpus:
            continue
        result.append(StoredOffer(_offer(s, p), s.id, s.first_seen, p.first_seen, p.last_seen))
    return result


def _many(value: Any) -> list[Any]:
    if isinstance(value, str | PricingModel):
        return [value]
    return list(value)


def _series_filter(key: Mapping[str, str]) -> list[Any]:
    return [getattr(Series, column) == value for column, value in key.items()]


def price_history(bind: Bind, series_id: int) -> list[HistoryPoint]:
    stmt = (
        select(PricePoint).where(PricePoint.series_id == series_id).order_by(PricePoint.first_seen)
    )
    return [
        HistoryPoint(p.price, p.currency, p.price_usd, p.first_seen, p.last_seen, p.ended_at)
        for (p,) in _rows(bind, stmt)
    ]


def price_at(bind: Bind, series_id: int, at: datetime) -> HistoryPoint | None:
    """The price in force at ``at``: the interval that started at or before it and had
    not ended (by a change or a delisting) by then."""
    stmt = (
        select(PricePoint)
        .where(
            PricePoint.series_id == series_id,
            PricePoint.first_seen <= at,
            or_(PricePoint.ended_at.is_(None), PricePoint.ended_at > at),
        )
        .order_by(PricePoint.first_seen.desc())
        .limit(1)
    )
    rows = _rows(bind, stmt)
    if not rows:
        return None
    p = rows[0][0]
    return HistoryPoint(p.price, p.currency, p.price_usd, p.first_seen, p.last_seen, p.ended_at)


def find_series(bind: Bind, **key: str) -> list[Series]:
    """Series matching identity columns given as keywords (e.g. provider, instance_type)."""
    stmt = select(Series).where(*_series_filter(key)).order_by(Series.id)
    return [row[0] for row in _rows(bind, stmt)]


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
    return [UnknownGpu(r[0], r[1], int(r[2]), r[3]) for r in _rows(bind, stmt)]


def recent_runs(bind: Bind, provider: str | None = None, limit: int = 20) -> list[CollectionRun]:
    stmt = select(CollectionRun).order_by(CollectionRun.id.desc()).limit(limit)
    if provider:
        stmt = stmt.where(CollectionRun.provider == provider)
    return [row[0] for row in _rows(bind, stmt)]
