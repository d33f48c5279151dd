"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-29 16:03:59.341022

Series of offer identities, their price intervals, and the collection-run log.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tracker.store.types

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "collection_runs",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("scope", sa.String(length=128), server_default="all", nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("started_at", tracker.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("finished_at", tracker.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("offers_seen", sa.Integer(), server_default="0", nullable=False),
        sa.Column("new_series", sa.Integer(), server_default="0", nullable=False),
        sa.Column("price_changes", sa.Integer(), server_default="0", nullable=False),
        sa.Column("unchanged", sa.Integer(), server_default="0", nullable=False),
        sa.Column("delisted", sa.Integer(), server_default="0", nullable=False),
        sa.Column("relisted", sa.Integer(), server_default="0", nullable=False),
        sa.Column("skipped", sa.Integer(), server_default="0", nullable=False),
        sa.Column("skip_reasons", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_collection_runs")),
    )
    op.create_index(
        "ix_collection_runs_provider_started",
        "collection_runs",
        ["provider", "started_at"],
        unique=False,
    )
    op.create_table(
        "series",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("instance_type", sa.String(length=128), nullable=False),
        sa.Column("region", sa.String(length=64), nullable=False),
        sa.Column("zone", sa.String(length=64), nullable=False),
        sa.Column("pricing", sa.String(length=16), nullable=False),
        sa.Column("payment_option", sa.String(length=32), nullable=False),
        sa.Column("offering_class", sa.String(length=32), nullable=False),
        sa.Column("os", sa.String(length=32), server_default="linux", nullable=False),
        sa.Column("gpu_model", sa.String(length=128), nullable=False),
        sa.Column("gpu_raw_name", sa.String(length=128), nullable=False),
        sa.Column("gpu_known", sa.Boolean(), nullable=False),
        sa.Column("gpu_count", tracker.store.types.Money(precision=20, scale=10), nullable=False),
        sa.Column(
            "gpu_memory_gib", tracker.store.types.Money(precision=20, scale=10), nullable=True
        ),
        sa.Column("vcpus", tracker.store.types.Money(precision=20, scale=10), nullable=True),
        sa.Column("memory_gib", tracker.store.types.Money(precision=20, scale=10), nullable=True),
        sa.Column("interconnect", sa.String(length=16), nullable=False),
        sa.Column("attributes", sa.JSON(), nullable=True),
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.Column("first_seen", tracker.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("delisted_at", tracker.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_series")),
        sa.UniqueConstraint(
            "provider",
            "instance_type",
            "region",
            "zone",
            "pricing",
            "payment_option",
            "offering_class",
            "os",
            name="uq_series_identity",
        ),
    )
    op.create_index("ix_series_source", "series", ["source"], unique=False)
    op.create_table(
        "price_points",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "series_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("price", tracker.store.types.Money(precision=20, scale=10), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("price_usd", tracker.store.types.Money(precision=20, scale=10), nullable=False),
        sa.Column("first_seen", tracker.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_seen", tracker.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("ended_at", tracker.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["series_id"],
            ["series.id"],
            name=op.f("fk_price_points_series_id_series"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_price_points")),
    )
    if op.get_bind().dialect.name == "postgresql":
        # Room on each page for HOT updates: a re-seen price only moves last_seen
        # (no indexed column), so most updates then skip index maintenance.
        op.execute("ALTER TABLE price_points SET (fillfactor = 70)")
    op.create_index(
        "ix_price_points_series_first_seen",
        "price_points",
        ["series_id", "first_seen"],
        unique=False,
    )
    op.create_index(
        "uq_price_points_open",
        "price_points",
        ["series_id"],
        unique=True,
        postgresql_where=sa.text("ended_at IS NULL"),
        sqlite_where=sa.text("ended_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_index(
        "uq_price_points_open",
        table_name="price_points",
        postgresql_where=sa.text("ended_at IS NULL"),
        sqlite_where=sa.text("ended_at IS NULL"),
    )
    op.drop_index("ix_price_points_series_first_seen", table_name="price_points")
    op.drop_table("price_points")
    op.drop_index("ix_series_source", table_name="series")
    op.drop_table("series")
    op.drop_index("ix_collection_runs_provider_started", table_name="collection_runs")
    op.drop_table("collection_runs")
