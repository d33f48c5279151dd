"""Tables of ranking history: one snapshot per profile per recompute, with its top N.

Kept beside the price tables on the same ``Base.metadata`` (so Alembic sees them)
but in their own module, because only :mod:`tracker.recommend.history` writes them.
Entries store the offer's identity columns rather than a foreign key to ``series``:
a snapshot must keep saying what led the ranking even after that series is gone.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from tracker.store.schema import Base, BigId
from tracker.store.types import Money, UTCDateTime

__all__ = ["RankingEntry", "RankingSnapshot"]


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
