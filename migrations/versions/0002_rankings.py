"""ranking history

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 17:10:00.000000

Snapshots of every profile's ranking after each collection, with the top N entries,
so the change since the previous snapshot (new leader, new hardware, cost delta) can
be computed and alerted on.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tracker.store.types

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ranking_snapshots",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("profile", sa.String(length=64), nullable=False),
        sa.Column("fingerprint", sa.String(length=32), nullable=False),
        sa.Column("computed_at", tracker.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("offers_considered", sa.Integer(), nullable=False),
        sa.Column("feasible", sa.Integer(), nullable=False),
        sa.Column("excluded", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ranking_snapshots")),
    )
    op.create_index(
        "ix_ranking_snapshots_profile_computed",
        "ranking_snapshots",
        ["profile", "computed_at"],
        unique=False,
    )
    op.create_table(
        "ranking_entries",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "snapshot_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("instance_type", sa.String(length=128), nullable=False),
        sa.Column("region", sa.String(length=64), nullable=False),
        sa.Column("zone", sa.String(length=64), nullable=False),
        sa.Column("pricing", sa.String(length=16), nullable=False),
        sa.Column("payment_option", sa.String(length=32), nullable=False),
        sa.Column("offering_class", sa.String(length=32), nullable=False),
        sa.Column("os", sa.String(length=32), nullable=False),
        sa.Column("gpu_model", sa.String(length=128), nullable=False),
        sa.Column("gpu_count", tracker.store.types.Money(precision=20, scale=10), nullable=False),
        sa.Column(
            "price_per_hour_usd", tracker.store.types.Money(precision=20, scale=10), nullable=False
        ),
        sa.Column("job_hours", tracker.store.types.Money(precision=20, scale=10), nullable=False),
        sa.Column(
            "job_cost_usd", tracker.store.types.Money(precision=20, scale=10), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["ranking_snapshots.id"],
            name=op.f("fk_ranking_entries_snapshot_id_ranking_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ranking_entries")),
        sa.UniqueConstraint("snapshot_id", "rank", name="uq_ranking_entries_rank"),
    )


def downgrade() -> None:
    op.drop_table("ranking_entries")
    op.drop_index("ix_ranking_snapshots_profile_computed", table_name="ranking_snapshots")
    op.drop_table("ranking_snapshots")
