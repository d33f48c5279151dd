"""What alert evaluation reads: changes since a rule's cursor, in the store's terms.

Rules remember the highest id they have looked at (``price_points``, ``series``,
``ranking_snapshots``; ids only grow), so an evaluation sees each new interval,
series or snapshot once whichever run, command or replica wrote it; the outbox's
dedupe key makes a second look harmless anyway. Prices are read in the currency
they were stored in: a percent change needs no exchange rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    DateTime,
    Engine,
    Numeric,
    Select,
    and_,
    func,
    literal,
    or_,
    select,
    true,
    type_coerce,
)
from sqlalchemy.orm import aliased

from tracker.store.errors import database_errors
from tracker.store.reads import SeriesFilter
from tracker.store.schema import CollectionRun, PricePoint, Series
from tracker.store.series import RankingEntry, RankingSnapshot
from tracker.store.types import utc_reader

__all__ = [
    "ChangeThreshold",
    "FailingCollector",
    "NewSeries",
    "PriceChange",
    "SnapshotPair",
    "change_moments",
    "failing_collectors",
    "latest_ids",
    "new_series_since",
    "oldest_running_start",
    "price_changes_select",
    "price_changes_since",
    "snapshots_since",
]


@dataclass(frozen=True, slots=True)
class PriceChange:
    interval_id: int
    provider: str
    instance_type: str
    region: str
    zone: str
    pricing: str
    gpu_model: str
    gpu_count: Decimal
    old_price: Decimal
    old_currency: str
    new_price: Decimal
    currency: str
    at: datetime


@dataclass(frozen=True, slots=True)
class NewSeries:
    series_id: int
    provider: str
    instance_type: str
    region: str
    pricing: str
    gpu_model: str
    gpu_raw_name: str
    gpu_count: Decimal
    new_gpu_model: bool
    new_instance_type: bool
    new_region: bool


@dataclass(frozen=True, slots=True)
class SnapshotPair:
    """A snapshot newer than the cursor and the same profile's snapshot before it."""

    profile: str
    snapshot_id: int
    fingerprint: str
    computed_at: datetime
    entries: list[tuple[Any, ...]]
    previous_id: int | None
    previous_fingerprint: str | None
    previous_computed_at: datetime | None
    previous_entries: list[tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class FailingCollector:
    provider: str
    scope: str
    consecutive_failures: int
    last_error: str | None
    last_run_at: datetime


def latest_ids(engine: Engine) -> dict[str, int]:
    """The highest id of each table a rule keeps a cursor over (0: empty)."""
    columns: dict[str, Any] = {
        "price_points": PricePoint.id,
        "series": Series.id,
        "ranking_snapshots": RankingSnapshot.id,
    }
    with database_errors("cannot read the latest ids"), engine.connect() as conn:
        return {
            name: int(conn.execute(select(func.max(column))).scalar() or 0)
            for name, column in columns.items()
        }


@dataclass(frozen=True, slots=True)
class ChangeThreshold:
    """What a price change must reach to be worth reading: at least ``percent`` of the
    old price, in ``direction`` ("either", "down", "up")."""

    percent: Decimal
    direction: str = "either"


def price_changes_since(
    engine: Engine,
    after_id: int,
    where: SeriesFilter | None = None,
    threshold: ChangeThreshold | None = None,
) -> list[PriceChange]:
    """Price intervals with id > ``after_id`` that follow an earlier interval of their
    offer, of the series ``where`` selects.

    ``threshold`` (Postgres: NUMERIC is exact) leaves out in SQL the changes between
    prices in one currency that move less than it (or the wrong way), so that only
    changes that can fire are read; SQLite stores money as text, so it reads them all
    and the caller's exact test decides, as it does on both engines.
    """
    if engine.dialect.name == "postgresql":
        stmt = price_changes_select(after_id, where, threshold)
    else:
        stmt = _sqlite_changes_select(after_id, where)
    utc = utc_reader()
    with database_errors("cannot read price changes"), engine.connect() as conn:
        rows = conn.execute(stmt).all()  # one fetch, not one driver call per row
    return [PriceChange(*row[:12], utc(row[12])) for row in rows]  # type: ignore[arg-type, call-arg]


def price_changes_select(
    after_id: int, where: SeriesFilter | None = None, threshold: ChangeThreshold | None = None
) -> Select[Any]:
    """Postgres: :func:`price_changes_since`'s statement, its columns labelled with
    :class:`PriceChange`'s field names (the alerts rendered in SQL read it as a subquery,
    :mod:`tracker.store.outbox`), ordered by interval id.

    One probe of ``(series_id, first_seen)`` per change, for the changes the filters keep.
    """
    prev = aliased(PricePoint)
    old: Any = (
        select(prev.price, prev.currency)
        .where(prev.series_id == PricePoint.series_id, prev.first_seen < PricePoint.first_seen)
        .order_by(prev.first_seen.desc(), prev.id.desc())
        .limit(1)
        .lateral("old")
    )
    stmt = (
        select(*_change_columns(old.c.price, old.c.currency, exact=NUMERIC))
        .join(Series, Series.id == PricePoint.series_id)
        .join(old, true())
        .where(PricePoint.id > after_id, *(where.where() if where is not None else ()))
    )
    if threshold is not None:
        stmt = stmt.where(_moved(old.c.price, old.c.currency, threshold))
    return stmt.order_by(PricePoint.id)


def change_moments(engine: Engine, after_id: int) -> tuple[set[tuple[str, datetime]], int]:
    """The (currency, time) of every price interval with id > ``after_id`` (the rates a
    rule's changes since that cursor are converted at: a run's share one time), and the
    highest such id (a read that needs those rates stops there)."""
    stmt = (
        select(PricePoint.currency, PricePoint.first_seen, func.max(PricePoint.id))
        .where(PricePoint.id > after_id)
        .group_by(PricePoint.currency, PricePoint.first_seen)
    )
    with database_errors("cannot read price changes"), engine.connect() as conn:
        rows = conn.execute(stmt).all()
    return {(currency, at) for currency, at, _ in rows}, max((r[2] for r in rows), default=after_id)


def _sqlite_changes_select(after_id: int, where: SeriesFilter | None) -> Select[Any]:
    """SQLite has no LATERAL: the previous interval's id, then the interval."""
    prev = aliased(PricePoint)
    previous_id = (
        select(prev.id)
        .where(prev.series_id == PricePoint.series_id, prev.first_seen < PricePoint.first_seen)
        .order_by(prev.first_seen.desc(), prev.id.desc())
        .limit(1)
        .correlate(PricePoint)
        .scalar_subquery()
    )
    inner = (
        select(PricePoint.id.label("id"), previous_id.label("previous_id"))
        .join(Series, Series.id == PricePoint.series_id)
        .where(PricePoint.id > after_id, *(where.where() if where is not None else ()))
        .subquery()
    )
    old = aliased(PricePoint)
    return (
        select(*_change_columns(old.price, old.currency))
        .select_from(inner)
        .join(PricePoint, PricePoint.id == inner.c.id)
        .join(old, old.id == inner.c.previous_id)
        .join(Series, Series.id == PricePoint.series_id)
        .order_by(PricePoint.id)
    )


NUMERIC = Numeric(20, 10, asdecimal=True)
"""Postgres money as the driver reads it (a Decimal already): a big read's hundreds of
thousands of figures skip :class:`~tracker.store.types.Money`'s per-value check."""


def _change_columns(old_price: Any, old_currency: Any, exact: Any = None) -> tuple[Any, ...]:
    """A :class:`PriceChange`'s columns, labelled with its field names (its time read
    raw: converted once per value; its figures read as ``exact`` when given)."""

    def money(column: Any) -> Any:
        return column if exact is None else type_coerce(column, exact)

    return (
        PricePoint.id.label("interval_id"),
        Series.provider,
        Series.instance_type,
        Series.region,
        Series.zone,
        Series.pricing,
        Series.gpu_model,
        money(Series.gpu_count).label("gpu_count"),
        money(old_price).label("old_price"),
        old_currency.label("old_currency"),
        money(PricePoint.price).label("new_price"),
        PricePoint.currency,
        type_coerce(PricePoint.first_seen, DateTime(timezone=True)).label("at"),
    )


def _moved(old_price: Any, old_currency: Any, threshold: ChangeThreshold) -> Any:
    """The change from ``old_price`` to the interval's price reaches ``threshold``,
    exactly on NUMERIC (no division); kept: two currencies (compared at a rate) and a
    zero old price (the caller logs that it cannot compare)."""
    new = PricePoint.price
    hundred = literal(Decimal(100), Numeric(40, 24))
    limit = old_price * literal(threshold.percent, Numeric())
    moved = {
        "down": (old_price - new) * hundred >= limit,
        "up": (new - old_price) * hundred >= limit,
    }.get(threshold.direction, func.abs(new - old_price) * hundred >= limit)
    return or_(old_currency != PricePoint.currency, old_price == Decimal(0), moved)


def new_series_since(engine: Engine, after_id: int) -> list[NewSeries]:
    """Series with id > ``after_id``, each flagged with what no earlier series had.

    The earlier models, instance types and regions are read as three DISTINCT lists
    (one pass each) rather than an EXISTS per new series: a new provider's first run
    can bring 100,000 series, and ``gpu_model`` has no index.
    """

    def distinct(*columns: Any) -> Any:
        return select(*columns).where(Series.id <= after_id).distinct()

    with database_errors("cannot read new series"), engine.connect() as conn:
        rows = conn.execute(
            select(
                Series.id,
                Series.provider,
                Series.instance_type,
                Series.region,
                Series.pricing,
                Series.gpu_model,
                Series.gpu_raw_name,
                Series.gpu_count,
            )
            .where(Series.id > after_id)
            .order_by(Series.id)
        ).all()
        if not rows:
            return []
        models = set(conn.execute(distinct(Series.gpu_model)).scalars())
        types = {tuple(r) for r in conn.execute(distinct(Series.provider, Series.instance_type))}
        regions = {tuple(r) for r in conn.execute(distinct(Series.provider, Series.region))}
    return [
        NewSeries(
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            r[7],
            new_gpu_model=r[5] not in models,
            new_instance_type=(r[1], r[2]) not in types,
            new_region=(r[1], r[3]) not in regions,
        )
        for r in rows
    ]


def snapshots_since(
    engine: Engine, after_id: int, entry_columns: tuple[str, ...]
) -> list[SnapshotPair]:
    """Ranking snapshots with id > ``after_id``, each with its profile's previous one."""
    prev = aliased(RankingSnapshot)
    previous_id = (
        select(func.max(prev.id))
        .where(prev.profile == RankingSnapshot.profile, prev.id < RankingSnapshot.id)
        .correlate(RankingSnapshot)
        .scalar_subquery()
    )
    cols = [RankingEntry.__table__.c[name] for name in entry_columns]
    with database_errors("cannot read ranking snapshots"), engine.connect() as conn:
        snaps = conn.execute(
            select(
                RankingSnapshot.id,
                RankingSnapshot.profile,
                RankingSnapshot.fingerprint,
                RankingSnapshot.computed_at,
                previous_id,
            )
            .where(RankingSnapshot.id > after_id)
            .order_by(RankingSnapshot.id)
        ).all()
        wanted = {s[0] for s in snaps} | {s[4] for s in snaps if s[4] is not None}
        meta = {
            row[0]: (row[1], row[2])
            for row in conn.execute(
                select(
                    RankingSnapshot.id, RankingSnapshot.fingerprint, RankingSnapshot.computed_at
                ).where(RankingSnapshot.id.in_(list(wanted)))
            )
        }
        entries: dict[int, list[tuple[Any, ...]]] = {i: [] for i in wanted}
        for row in conn.execute(
            select(RankingEntry.snapshot_id, *cols)
            .where(RankingEntry.snapshot_id.in_(list(wanted)))
            .order_by(RankingEntry.snapshot_id, RankingEntry.rank)
        ):
            entries[row[0]].append(tuple(row[1:]))
    pairs = []
    for sid, profile, fp, at, pid in snaps:
        pmeta = meta.get(pid) if pid is not None else None
        pairs.append(
            SnapshotPair(
                profile,
                sid,
                fp,
                at,
                entries[sid],
                pid,
                pmeta[0] if pmeta else None,
                pmeta[1] if pmeta else None,
                entries.get(pid, []) if pid is not None else [],
            )
        )
    return pairs


def failing_collectors(engine: Engine) -> list[FailingCollector]:
    """Every (collector, scope) whose latest runs failed, with how many in a row."""
    last_ok = (
        select(
            CollectionRun.provider.label("provider"),
            CollectionRun.scope.label("scope"),
            func.max(CollectionRun.id).label("ok_id"),
        )
        .where(CollectionRun.status == "succeeded")
        .group_by(CollectionRun.provider, CollectionRun.scope)
        .subquery()
    )
    failed = (
        select(
            CollectionRun.provider,
            CollectionRun.scope,
            func.count(),
            func.max(CollectionRun.id),
        )
        .outerjoin(
            last_ok,
            and_(
                last_ok.c.provider == CollectionRun.provider, last_ok.c.scope == CollectionRun.scope
            ),
        )
        .where(
            CollectionRun.status == "failed",
            (last_ok.c.ok_id.is_(None)) | (CollectionRun.id > last_ok.c.ok_id),
        )
        .group_by(CollectionRun.provider, CollectionRun.scope)
    )
    with database_errors("cannot read the run log"), engine.connect() as conn:
        rows = conn.execute(failed).all()
        if not rows:
            return []
        latest = {
            r.id: r
            for r in conn.execute(
                select(CollectionRun.id, CollectionRun.error, CollectionRun.started_at).where(
                    CollectionRun.id.in_([r[3] for r in rows])
                )
            )
        }
    return [
        FailingCollector(p, s, int(n), latest[i].error, latest[i].started_at) for p, s, n, i in rows
    ]


def oldest_running_start(engine: Engine, newer_than: datetime) -> datetime | None:
    """When the oldest run still ``running`` (started after ``newer_than``) began.

    Its transaction may hold ids below ones already committed: a cursor must not
    pass them until it ends. Older ``running`` rows are processes that died.
    """
    with database_errors("cannot read the run log"), engine.connect() as conn:
        value = conn.execute(
            select(func.min(CollectionRun.started_at)).where(
                CollectionRun.status == "running", CollectionRun.started_at > newer_than
            )
        ).scalar()
    return value if isinstance(value, datetime) or value is None else None
