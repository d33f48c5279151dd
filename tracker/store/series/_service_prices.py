"""Storage and transfer prices as compact series (``service_prices``).

One row is one interval of one tier's price, as ``price_points`` are for offers: a
re-seen unchanged price moves ``last_seen``; a changed price (or currency, or tier end)
ends the open interval and opens the next; a tier a complete run no longer lists is
ended. At most one interval per series is open (a partial unique index). They are few
(a provider lists tens per region), so each run is compared with the open rows in
Python in one read, and written in two statements.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from sqlalchemy import Connection, Engine, Index, String, and_, insert, or_, select, text, update
from sqlalchemy.orm import Mapped, mapped_column

from tracker.service_prices import ServiceKind, ServicePrice, ServiceUnit
from tracker.store.errors import database_errors
from tracker.store.runs import mark_succeeded
from tracker.store.schema import MAX_SOURCE_CHARS, Base, BigId
from tracker.store.types import Money, UTCDateTime, quantize_money

__all__ = [
    "ServicePricePoint",
    "ServiceStats",
    "StoredServicePrice",
    "record_service_prices",
    "record_service_run",
    "service_prices",
]


class ServicePricePoint(Base):
    __tablename__ = "service_prices"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    provider: Mapped[str] = mapped_column(String(64))
    region: Mapped[str] = mapped_column(String(64))
    service: Mapped[str] = mapped_column(String(32))
    unit: Mapped[str] = mapped_column(String(16))
    tier_start_gb: Mapped[Decimal] = mapped_column(Money)
    tier_end_gb: Mapped[Decimal | None] = mapped_column(Money)
    price: Mapped[Decimal] = mapped_column(Money)
    currency: Mapped[str] = mapped_column(String(3))
    source: Mapped[str] = mapped_column(String(MAX_SOURCE_CHARS))
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (
        Index(
            "uq_service_prices_open",
            "provider",
            "region",
            "service",
            "tier_start_gb",
            unique=True,
            postgresql_where=text("ended_at IS NULL"),
            sqlite_where=text("ended_at IS NULL"),
        ),
        Index("ix_service_prices_series_first_seen", "provider", "region", "service", "first_seen"),
    )


@dataclass
class ServiceStats:
    seen: int = 0
    new_series: int = 0
    changed: int = 0
    unchanged: int = 0
    ended: int = 0
    """Tiers a complete run no longer listed."""


@dataclass(frozen=True, slots=True)
class StoredServicePrice:
    price: ServicePrice
    source: str
    since: datetime
    last_seen: datetime


_Key = tuple[str, str, str, Decimal]


def _key(provider: str, region: str, service: str, start: Decimal) -> _Key:
    return (provider, region, service, quantize_money(start))


def record_service_prices(
    conn: Connection,
    prices: Iterable[ServicePrice],
    *,
    source: str,
    now: datetime,
    complete: bool,
    partial_regions: Collection[str] = (),
) -> ServiceStats:
    """Apply one run's prices (raises ValueError when the run lists a tier twice).

    ``complete`` ends the open tiers of the run's providers that ``source`` reported
    and the run did not list, as a complete offer run delists; an additive run (an
    import without ``--full``) ends nothing. ``partial_regions`` (the regions a
    collector could not read this run) keep their open tiers, as a partial region
    keeps its offers.
    """
    t = ServicePricePoint.__table__.c
    incoming: dict[_Key, ServicePrice] = {}
    for p in prices:
        k = _key(p.provider, p.region, p.service.value, p.tier_start_gb)
        if k in incoming:
            raise ValueError(f"{p.provider} {p.region} {p.service.value} tier {k[3]} listed twice")
        incoming[k] = p
    stats = ServiceStats(seen=len(incoming))
    providers = sorted({k[0] for k in incoming})
    open_rows = conn.execute(
        select(t.id, t.provider, t.region, t.service, t.tier_start_gb, t.tier_end_gb)
        .add_columns(t.price, t.currency, t.source)
        .where(t.ended_at.is_(None), t.provider.in_(providers))
    ).all()
    seen_ids: list[int] = []
    end_ids: list[int] = []
    new_rows: list[dict[str, object]] = []
    for row in open_rows:
        k = _key(row.provider, row.region, row.service, row.tier_start_gb)
        if k not in incoming:
            if complete and row.source == source and row.region not in partial_regions:
                end_ids.append(row.id)
            continue
        p = incoming.pop(k)
        same_end = (row.tier_end_gb is None) == (p.tier_end_gb is None) and (
            p.tier_end_gb is None or quantize_money(p.tier_end_gb) == row.tier_end_gb
        )
        if quantize_money(p.price) == row.price and p.currency == row.currency and same_end:
            seen_ids.append(row.id)
            stats.unchanged += 1
        else:
            end_ids.append(row.id)
            new_rows.append(_values(p, source, now))
            stats.changed += 1
    stats.ended = len(end_ids) - stats.changed
    stats.new_series = len(incoming)
    new_rows.extend(_values(p, source, now) for p in incoming.values())
    if seen_ids:
        conn.execute(
            update(ServicePricePoint).where(t.id.in_(seen_ids)).values(last_seen=now, source=source)
        )
    if end_ids:
        conn.execute(update(ServicePricePoint).where(t.id.in_(end_ids)).values(ended_at=now))
    if new_rows:
        conn.execute(insert(ServicePricePoint), new_rows)
    return stats


def _values(p: ServicePrice, source: str, now: datetime) -> dict[str, object]:
    return {
        "provider": p.provider,
        "region": p.region,
        "service": p.service.value,
        "unit": p.unit.value,
        "tier_start_gb": p.tier_start_gb,
        "tier_end_gb": p.tier_end_gb,
        "price": p.price,
        "currency": p.currency,
        "source": source,
        "first_seen": now,
        "last_seen": now,
        "ended_at": None,
    }


def service_prices(
    bind: Engine | Connection,
    *,
    provider: str | Sequence[str] | None = None,
    region: str | Sequence[str] | None = None,
    service: ServiceKind | Sequence[ServiceKind] | None = None,
    at: datetime | None = None,
) -> list[StoredServicePrice]:
    """The prices in force now (the open intervals), or at ``at``; raises DatabaseError."""
    t = ServicePricePoint.__table__.c
    stmt = select(ServicePricePoint.__table__)
    if at is None:
        stmt = stmt.where(t.ended_at.is_(None))
    else:
        stmt = stmt.where(t.first_seen <= at, or_(t.ended_at.is_(None), t.ended_at > at))
    for column, wanted in ((t.provider, provider), (t.region, region), (t.service, service)):
        if wanted:
            values = [wanted] if isinstance(wanted, str) else list(wanted)
            stmt = stmt.where(and_(column.in_([str(v) for v in values])))
    with database_errors("cannot read the service prices"):
        if isinstance(bind, Engine):
            with bind.connect() as conn:
                rows = list(conn.execute(stmt).all())
        else:
            rows = list(bind.execute(stmt).all())
    # Sorted here: SQLite keeps money as text, where "153600" sorts before "51200".
    rows.sort(key=lambda r: (r.provider, r.region, r.service, r.tier_start_gb))
    return [
        StoredServicePrice(
            ServicePrice(
                provider=r.provider,
                region=r.region,
                service=ServiceKind(r.service),
                unit=ServiceUnit(r.unit),
                price=r.price,
                currency=r.currency,
                tier_start_gb=r.tier_start_gb,
                tier_end_gb=r.tier_end_gb,
            ),
            source=r.source,
            since=r.first_seen,
            last_seen=r.last_seen,
        )
        for r in rows
    ]


def record_service_run(
    engine: Engine,
    run_id: int,
    prices: Iterable[ServicePrice],
    *,
    source: str,
    finished: datetime,
    complete: bool,
    skipped: int,
    skip_reasons: dict[str, int],
    partial_regions: Collection[str] = (),
) -> ServiceStats:
    """Store a run's service prices and mark it succeeded in one transaction (all or
    nothing). The run log's counters read: ``offers_seen`` prices read, ``new_series``
    new tiers, ``price_changes`` changed prices, ``unchanged``, ``delisted`` tiers ended."""
    with database_errors(f"run {run_id} of {source}"), engine.begin() as conn:
        stats = record_service_prices(
            conn,
            prices,
            source=source,
            now=finished,
            complete=complete,
            partial_regions=partial_regions,
        )
        counts = {
            "offers_seen": stats.seen,
            "new_series": stats.new_series,
            "price_changes": stats.changed,
            "unchanged": stats.unchanged,
            "delisted": stats.ended,
        }
        mark_succeeded(
            conn,
            run_id,
            finished=finished,
            counts=counts,
            skipped=skipped,
            skip_reasons=skip_reasons,
        )
    return stats
