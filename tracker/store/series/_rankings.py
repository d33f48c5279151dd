"""The recommender's side of the store: ranking-history tables and a fast offer read.

Ranking snapshots (one per profile per recompute, with its top N) live beside the
price tables on the same ``Base.metadata`` so Alembic sees them. Entries store the
offer's identity columns rather than a foreign key to ``series``: a snapshot must
keep saying what led the ranking even after that series is gone.

:func:`current_offer_rows` reads the current offers as plain tuples without ORM
objects, Decimal/JSON result processing or Offer validation: ranking 100,000 offers
needs three numbers and a few names per offer, and building full records for all of
them costs ten times the ranking itself. The ranker builds real
:class:`~tracker.models.Offer` records only for the rows it shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    Connection,
    Engine,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
    and_,
    func,
    insert,
    null,
    select,
    type_coerce,
)
from sqlalchemy.orm import Mapped, mapped_column

from tracker.models import OFFER_COLUMNS, ColumnGroup, ColumnKind
from tracker.store.errors import database_errors
from tracker.store.schema import Base, BigId, PricePoint, Series
from tracker.store.series._availability import current_column, join_current
from tracker.store.types import Money, UTCDateTime

__all__ = [
    "NewSnapshot",
    "RankingEntry",
    "RankingSnapshot",
    "StoredSnapshot",
    "current_offer_rows",
    "insert_entries",
    "insert_snapshot",
    "latest_snapshots",
    "save_snapshots",
    "snapshot_history",
]


class RankingSnapshot(Base):
    __tablename__ = "ranking_snapshots"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    profile: Mapped[str] = mapped_column(String(64))
    fingerprint: Mapped[str] = mapped_column(String(32))
    """Hash of the profile and assumptions: a changed profile starts a new history."""
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    offers_considered: Mapped[int] = mapped_column(Integer)
    feasible: Mapped[int] = mapped_column(Integer)
    excluded: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    """Excluded-offer counts by reason."""

    __table_args__ = (Index("ix_ranking_snapshots_profile_computed", "profile", "computed_at"),)


class RankingEntry(Base):
    __tablename__ = "ranking_entries"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("ranking_snapshots.id", ondelete="CASCADE"))
    rank: Mapped[int] = mapped_column(Integer)
    provider: Mapped[str] = mapped_column(String(64))
    instance_type: Mapped[str] = mapped_column(String(128))
    region: Mapped[str] = mapped_column(String(64))
    zone: Mapped[str] = mapped_column(String(64))
    pricing: Mapped[str] = mapped_column(String(16))
    payment_option: Mapped[str] = mapped_column(String(32))
    offering_class: Mapped[str] = mapped_column(String(32))
    os: Mapped[str] = mapped_column(String(32))
    gpu_model: Mapped[str] = mapped_column(String(128))
    gpu_count: Mapped[Decimal] = mapped_column(Money)
    price_per_hour_usd: Mapped[Decimal] = mapped_column(Money)
    job_hours: Mapped[Decimal] = mapped_column(Money)
    job_cost_usd: Mapped[Decimal] = mapped_column(Money)
    """The score: estimated cost of the whole job (lower ranks first)."""

    __table_args__ = (UniqueConstraint("snapshot_id", "rank", name="uq_ranking_entries_rank"),)


_UNPROCESSED = frozenset({ColumnKind.NUMBER, ColumnKind.MAPPING})


def _offer_row_columns() -> list[Any]:
    columns = []
    for c in OFFER_COLUMNS:
        if c.group is ColumnGroup.DERIVED:  # the USD figure: converted by the reader
            columns.append(null().label(c.name))
            continue
        if c.group is ColumnGroup.AVAILABILITY:
            columns.append(current_column().label(c.name))
            continue
        table = PricePoint if c.group is ColumnGroup.PRICE else Series
        column: Any = table.__table__.c[c.column]
        if c.kind in _UNPROCESSED:
            column = type_coerce(column, String)
        columns.append(column.label(c.name))
    return columns


def current_offer_rows(bind: Engine | Connection) -> list[tuple[Any, ...]]:
    """Listed offers at their open price, one tuple per offer laid out like
    :data:`tracker.models.OFFER_COLUMNS` (the derived USD figure None: see
    :func:`tracker.recommend.stored.load_offer_rows`).

    Numbers come back as the driver returns them (decimal strings on SQLite, Decimal on
    Postgres) and ``attributes`` as JSON text or an already-decoded dict, so callers
    convert only what they use. Raises :class:`~tracker.store.engine.DatabaseError`.
    """
    stmt = select(*_offer_row_columns()).join_from(
        Series,
        PricePoint,
        and_(PricePoint.series_id == Series.id, PricePoint.ended_at.is_(None)),
    )
    stmt = join_current(stmt).where(Series.delisted_at.is_(None)).order_by(Series.id)
    with database_errors("cannot read the current offers"):
        if isinstance(bind, Engine):
            with bind.connect() as conn:
                return [tuple(row) for row in conn.execute(stmt)]
        return [tuple(row) for row in bind.execute(stmt)]


@dataclass(frozen=True, slots=True)
class NewSnapshot:
    """One profile's ranking to store: snapshot columns and its entries' columns."""

    values: Mapping[str, Any]
    entries: Sequence[Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class StoredSnapshot:
    """A profile's latest stored snapshot, entries as tuples of the asked-for columns."""

    id: int
    profile: str
    fingerprint: str
    computed_at: datetime
    entries: list[tuple[Any, ...]]


def save_snapshots(
    engine: Engine, snapshots: Sequence[NewSnapshot], entry_columns: Sequence[str]
) -> tuple[dict[str, StoredSnapshot], list[int]]:
    """Store ``snapshots`` in one transaction, after reading each profile's latest one.

    Returns the previous snapshots by profile (what the new ones are compared with)
    and the new snapshots' ids, in order. A failure stores nothing and raises
    :class:`~tracker.store.engine.DatabaseError`.
    """
    profiles = [str(s.values["profile"]) for s in snapshots]
    with database_errors("cannot store ranking snapshots"), engine.begin() as conn:
        previous = {
            snap.profile: StoredSnapshot(
                snap.id, snap.profile, snap.fingerprint, snap.computed_at, entries
            )
            for snap, entries in latest_snapshots(conn, profiles, entry_columns)
        }
        ids = [insert_snapshot(conn, s.values) for s in snapshots]
        insert_entries(
            conn,
            [
                {"snapshot_id": snapshot_id, **entry}
                for snapshot_id, s in zip(ids, snapshots, strict=True)
                for entry in s.entries
            ],
        )
    return previous, ids


def latest_snapshots(
    conn: Connection, profiles: Sequence[str], entry_columns: Sequence[str]
) -> list[tuple[Any, list[tuple[Any, ...]]]]:
    """Each profile's latest snapshot row with its entries (``entry_columns``, by rank)."""
    if not profiles:
        return []
    latest = (
        select(RankingSnapshot.profile, func.max(RankingSnapshot.id).label("id"))
        .where(RankingSnapshot.profile.in_(profiles))
        .group_by(RankingSnapshot.profile)
        .subquery()
    )
    snaps = conn.execute(
        select(
            RankingSnapshot.id,
            RankingSnapshot.profile,
            RankingSnapshot.fingerprint,
            RankingSnapshot.computed_at,
        ).join(latest, latest.c.id == RankingSnapshot.id)
    ).all()
    if not snaps:
        return []
    by_id: dict[int, list[tuple[Any, ...]]] = {s.id: [] for s in snaps}
    cols = [RankingEntry.__table__.c[name] for name in entry_columns]
    rows = conn.execute(
        select(RankingEntry.snapshot_id, *cols)
        .where(RankingEntry.snapshot_id.in_(list(by_id)))
        .order_by(RankingEntry.snapshot_id, RankingEntry.rank)
    ).all()
    for row in rows:
        by_id[row[0]].append(tuple(row[1:]))
    return [(s, by_id[s.id]) for s in snaps]


def insert_snapshot(conn: Connection, values: Mapping[str, Any]) -> int:
    new_id = conn.execute(
        insert(RankingSnapshot).values(**values).returning(RankingSnapshot.id)
    ).scalar_one()
    return int(new_id)


def insert_entries(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    if rows:
        conn.execute(insert(RankingEntry), list(rows))


def snapshot_history(
    bind: Engine | Connection, profile: str, entry_columns: Sequence[str], *, limit: int = 50
) -> list[StoredSnapshot]:
    """``profile``'s latest ``limit`` snapshots, oldest first, each with its entries
    (``entry_columns``, by rank): what the dashboard's ranking history shows.
    Two statements whatever the count. Raises :class:`~tracker.store.engine.DatabaseError`."""
    snaps_stmt = (
        select(
            RankingSnapshot.id,
            RankingSnapshot.fingerprint,
            RankingSnapshot.computed_at,
        )
        .where(RankingSnapshot.profile == profile)
        .order_by(RankingSnapshot.id.desc())
        .limit(limit)
    )
    cols = [RankingEntry.__table__.c[name] for name in entry_columns]
    with database_errors("cannot read the ranking history"):
        conn_cm = bind.connect() if isinstance(bind, Engine) else None
        conn = conn_cm if conn_cm is not None else bind
        assert isinstance(conn, Connection)
        try:
            snaps = list(reversed(conn.execute(snaps_stmt).all()))
            by_id: dict[int, list[tuple[Any, ...]]] = {s.id: [] for s in snaps}
            if by_id:
                rows = conn.execute(
                    select(RankingEntry.snapshot_id, *cols)
                    .where(RankingEntry.snapshot_id.in_(list(by_id)))
                    .order_by(RankingEntry.snapshot_id, RankingEntry.rank)
                ).all()
                for row in rows:
                    by_id[row[0]].append(tuple(row[1:]))
        finally:
            if conn_cm is not None:
                conn_cm.close()
    return [StoredSnapshot(s.id, profile, s.fingerprint, s.computed_at, by_id[s.id]) for s in snaps]
