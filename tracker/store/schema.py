"""Tables of the price history.

``series`` holds one row per offer identity (with its latest hardware facts);
``price_points`` holds price *intervals*: a re-seen unchanged price only moves
``last_seen``, so history grows with price changes, not with collection runs.
At most one interval per series is open (``ended_at IS NULL``), enforced by a
partial unique index, and that open interval is the current price.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from tracker.models import OFFER_COLUMNS, OFFER_KEY_FIELDS, ColumnGroup
from tracker.store.types import Money, UTCDateTime

__all__ = [
    "HARDWARE_COLUMNS",
    "IDENTITY_COLUMNS",
    "MAX_SOURCE_CHARS",
    "ROLLUP_DIRTY",
    "ROLLUP_KEY",
    "AvailabilityPoint",
    "Base",
    "CollectionRun",
    "ConfirmedScope",
    "FxRate",
    "PricePoint",
    "PriceRollup",
    "RollupGroup",
    "Series",
]

# Deterministic constraint names, so Alembic batch mode on SQLite can find them.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

BigId = BigInteger().with_variant(Integer(), "sqlite")
ROLLUP_KEY = ("gpu_model", "pricing", "provider", "region")
"""A cheapest-price rollup group: its upkeep recomputes a key's every currency together,
and a read can answer from the rollup when it selects by these columns only."""

MAX_SOURCE_CHARS = 64
"""The longest source name ``series.source`` and ``collection_runs.source`` hold."""

IDENTITY_COLUMNS = OFFER_KEY_FIELDS
HARDWARE_COLUMNS = tuple(c.column for c in OFFER_COLUMNS if c.group is ColumnGroup.HARDWARE)
"""What a series records about the machine, updated as reported (see tracker.models)."""


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Series(Base):
    __tablename__ = "series"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    provider: Mapped[str] = mapped_column(String(64))
    instance_type: Mapped[str] = mapped_column(String(128))
    region: Mapped[str] = mapped_column(String(64))
    zone: Mapped[str] = mapped_column(String(64))
    pricing: Mapped[str] = mapped_column(String(16))
    payment_option: Mapped[str] = mapped_column(String(32))
    offering_class: Mapped[str] = mapped_column(String(32))
    os: Mapped[str] = mapped_column(String(32), server_default="linux")
    gpu_model: Mapped[str] = mapped_column(String(128))
    gpu_raw_name: Mapped[str] = mapped_column(String(128))
    gpu_known: Mapped[bool] = mapped_column(Boolean)
    gpu_count: Mapped[Decimal] = mapped_column(Money)
    gpu_memory_gib: Mapped[Decimal | None] = mapped_column(Money)
    vcpus: Mapped[Decimal | None] = mapped_column(Money)
    memory_gib: Mapped[Decimal | None] = mapped_column(Money)
    interconnect: Mapped[str] = mapped_column(String(16))
    fabric: Mapped[str] = mapped_column(String(16), server_default="unknown")
    network_gbps: Mapped[Decimal | None] = mapped_column(Money)
    attributes: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    identity_hash: Mapped[int] = mapped_column(BigInteger)
    """The 64-bit hash of the identity columns (:mod:`tracker.store.identity`): what a
    run's offers are joined on. Unique, like the identity itself."""
    source: Mapped[str] = mapped_column(String(MAX_SOURCE_CHARS))
    """Who last reported this series: a collector's name, or ``import:<name>`` for an
    ad-hoc import. A complete run delists only its own source's series."""
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    delisted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (
        UniqueConstraint(*IDENTITY_COLUMNS, name="uq_series_identity"),
        # Provider lookups use the identity index (provider leads it); GPU filters are
        # case-insensitive, so a plain gpu_model index would not serve them. Every
        # extra index costs each first collection of 200k offers about 0.3 s.
        Index("ix_series_source", "source"),
        Index("uq_series_identity_hash", "identity_hash", unique=True),
        # A run's rollup upkeep reprices a key from all its offers when its cheapest got
        # dearer (tracker.store.rollup); the identity index would scan every
        # series of the provider for each such key (migration 0009).
        Index("ix_series_rollup_key", *ROLLUP_KEY),
    )


class PricePoint(Base):
    __tablename__ = "price_points"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    series_id: Mapped[int] = mapped_column(ForeignKey("series.id", ondelete="CASCADE"))
    price: Mapped[Decimal] = mapped_column(Money)
    currency: Mapped[str] = mapped_column(String(3))
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (
        Index("ix_price_points_series_first_seen", "series_id", "first_seen"),
        # The Overview's trend finds the intervals that moved in its window; the Offers
        # page reads its first rows in price order (both 0008).
        Index("ix_price_points_ended_first_seen", "ended_at", "first_seen"),
        Index(
            "ix_price_points_open_price",
            "price",
            postgresql_where=text("ended_at IS NULL"),
            sqlite_where=text("ended_at IS NULL"),
        ),
        Index(
            "uq_price_points_open",
            "series_id",
            unique=True,
            postgresql_where=text("ended_at IS NULL"),
            sqlite_where=text("ended_at IS NULL"),
        ),
    )


class RollupGroup(Base):
    """One (GPU model, pricing, provider, region, currency) the cheapest-price rollup
    keeps a step function for (:mod:`tracker.store.rollup`): an integer id, so the
    rollup's intervals are probed on a narrow ``(group_id, first_seen)`` index."""

    __tablename__ = "rollup_groups"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    gpu_model: Mapped[str] = mapped_column(String(128))
    pricing: Mapped[str] = mapped_column(String(16))
    provider: Mapped[str] = mapped_column(String(64))
    region: Mapped[str] = mapped_column(String(64))
    currency: Mapped[str] = mapped_column(String(3))

    __table_args__ = (
        UniqueConstraint(
            "gpu_model", "pricing", "provider", "region", "currency", name="uq_rollup_groups_key"
        ),
    )


class PriceRollup(Base):
    """The cheapest price per GPU-hour of a :class:`RollupGroup` as intervals, the same
    compact rule as ``price_points``: the offer (``series_id``) and its price per hour
    hold from ``first_seen`` until ``ended_at`` (NULL: still in force); a change of
    either closes the interval and opens the next; no row where nothing was in force.
    Derived data: maintained by each run, rebuilt by ``gpu-tracker db rebuild-rollups``."""

    __tablename__ = "price_rollups"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    group_id: Mapped[int] = mapped_column(ForeignKey("rollup_groups.id", ondelete="CASCADE"))
    series_id: Mapped[int] = mapped_column(ForeignKey("series.id", ondelete="CASCADE"))
    price: Mapped[Decimal] = mapped_column(Money)
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (
        Index("ix_price_rollups_group_first_seen", "group_id", "first_seen"),
        # The Overview's trend reads the intervals that moved in its window.
        Index("ix_price_rollups_ended_first_seen", "ended_at", "first_seen"),
    )


ROLLUP_DIRTY = Table(
    "rollup_dirty",
    Base.metadata,
    Column("gpu_model", String(128), nullable=False),
    Column("pricing", String(16), nullable=False),
    Column("provider", String(64), nullable=False),
    Column("region", String(64), nullable=False),
)
"""Rollup keys a change of a series' GPU model or count moved (written by a trigger on
``series``, migration 0009), recomputed whole and emptied by the run that changed it."""


class AvailabilityPoint(Base):
    """Availability intervals, the same mechanism as ``price_points`` but a series of its
    own: re-seen unchanged availability moves ``last_seen``; a change closes the open
    interval (``ended_at``) and opens the next. ``unknown`` is never stored: an offer seen
    without availability closes the open interval, so a gap reads as unknown.
    Written and read by :mod:`tracker.store.series`."""

    __tablename__ = "availability_points"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    series_id: Mapped[int] = mapped_column(ForeignKey("series.id", ondelete="CASCADE"))
    availability: Mapped[str] = mapped_column(String(16))
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The series' seconds reported, and reported rentable, before ``first_seen``
    # (migration 0014): a window's share from the intervals at its two ends.
    known_before: Mapped[float] = mapped_column(Float(precision=53), server_default="0")
    rentable_before: Mapped[float] = mapped_column(Float(precision=53), server_default="0")
    # When the series' previous interval ended (None for its first).
    previous_end: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The series' last interval, closed (by a state-less sighting or a delisting):
    # with the open ones, every series' last interval (migration 0014).
    last_closed: Mapped[bool] = mapped_column(Boolean, server_default=false())

    __table_args__ = (
        Index("ix_availability_points_series_first_seen", "series_id", "first_seen"),
        # Obtainability's windows: the intervals that ended inside one (migration 0012).
        Index("ix_availability_points_ended_at", "ended_at"),
        Index(
            "ix_availability_points_closed_last",
            "series_id",
            postgresql_where=text("last_closed"),
            sqlite_where=text("last_closed"),
        ),
        Index(
            "uq_availability_points_open",
            "series_id",
            unique=True,
            postgresql_where=text("ended_at IS NULL"),
            sqlite_where=text("ended_at IS NULL"),
        ),
    )


class CollectionRun(Base):
    __tablename__ = "collection_runs"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    provider: Mapped[str] = mapped_column(String(64))
    """The collector that ran."""
    source: Mapped[str] = mapped_column(String(MAX_SOURCE_CHARS))
    """The source it wrote for (``series.source``): the collector's name, or
    ``import:<name>`` for an ad-hoc import."""
    scope: Mapped[str] = mapped_column(String(128), server_default="all")
    status: Mapped[str] = mapped_column(String(16))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    offers_seen: Mapped[int] = mapped_column(Integer, server_default="0")
    new_series: Mapped[int] = mapped_column(Integer, server_default="0")
    price_changes: Mapped[int] = mapped_column(Integer, server_default="0")
    unchanged: Mapped[int] = mapped_column(Integer, server_default="0")
    delisted: Mapped[int] = mapped_column(Integer, server_default="0")
    relisted: Mapped[int] = mapped_column(Integer, server_default="0")
    skipped: Mapped[int] = mapped_column(Integer, server_default="0")
    skip_reasons: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        Index("ix_collection_runs_provider_started", "provider", "started_at"),
        Index("ix_collection_runs_source_started", "source", "started_at"),
    )


class ConfirmedScope(Base):
    """The latest complete, successful run of each (source, region, pricing) scope.

    A complete run of a source delists every listed series of a scope it read in full
    that it did not see, so an interval still open after it was seen by it: its price
    was confirmed at the run's time. The ingest records that here instead of rewriting
    ``last_seen`` of every unchanged interval, and readers take ``last_seen`` of an
    open interval as the later of the stored value and this time
    (:mod:`tracker.store.last_seen`). Only scopes read completely count: not a partial
    region, not a scope holding dated observations (spot history at the provider's own
    times), not an additive run or import; those write ``last_seen`` as before.
    """

    __tablename__ = "confirmed_scopes"

    source: Mapped[str] = mapped_column(String(MAX_SOURCE_CHARS), primary_key=True)
    region: Mapped[str] = mapped_column(String(64), primary_key=True)
    pricing: Mapped[str] = mapped_column(String(16), primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("collection_runs.id"))
    """The run that confirmed it (``collection_runs``)."""
    confirmed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    """That run's time: the ``last_seen`` of the scope's open intervals."""
    max_point_id: Mapped[int] = mapped_column(BigId)
    """The newest ``price_points.id`` when it ran: an interval opened later (a dated
    observation older than the run, a relisting) was not confirmed by it."""


class FxRate(Base):
    """Exchange rates as their own compact series: one row per currency per change.

    ``per_eur`` units of ``currency`` buy one euro (the ECB's quotation) from
    ``valid_from`` until the currency's next row, so weekends and holidays carry the
    last rate and a republished unchanged rate adds no row. Prices never store a
    converted figure: readers convert with the rate in force (tracker.fx).
    """

    __tablename__ = "fx_rates"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    currency: Mapped[str] = mapped_column(String(3))
    valid_from: Mapped[datetime] = mapped_column(UTCDateTime)
    per_eur: Mapped[Decimal] = mapped_column(Money)
    source: Mapped[str] = mapped_column(String(MAX_SOURCE_CHARS))
    """Who published it (``fx``: the ECB collector)."""

    __table_args__ = (UniqueConstraint("currency", "valid_from", name="uq_fx_rates_step"),)
