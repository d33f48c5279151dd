"""availability intervals per offer

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 11:00:00.000000

Where a provider says whether it has capacity (Lambda's regions with capacity,
RunPod's stock status), the offer's availability is its own interval series beside
the prices, so a stock flicker never splits a price interval. Only known states are
stored; an offer with no open availability interval reads as ``unknown``, which is
what every offer stored before this revision is.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tracker.store.types

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "availability_points",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("series_id", _ID, nullable=False),
        sa.Column("availability", sa.String(length=16), nullable=False),
        sa.Column("first_seen", tracker.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_seen", tracker.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("ended_at", tracker.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["series_id"],
            ["series.id"],
            name=op.f("fk_availability_points_series_id_series"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_availability_points")),
    )
    if op.get_bind().dialect.name == "postgresql":
        # As price_points: a re-seen state only moves last_seen, so leave room on each
        # page for HOT updates.
        op.execute("ALTER TABLE availability_points SET (fillfactor = 70)")
    op.create_index(
        "ix_availability_points_series_first_seen",
        "availability_points",
        ["series_id", "first_seen"],
        unique=False,
    )
    op.create_index(
        "uq_availability_points_open",
        "availability_points",
        ["series_id"],
        unique=True,
        postgresql_where=sa.text("ended_at IS NULL"),
        sqlite_where=sa.text("ended_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_index(
        "uq_availability_points_open",
        table_name="availability_points",
        postgresql_where=sa.text("ended_at IS NULL"),
        sqlite_where=sa.text("ended_at IS NULL"),
    )
    op.drop_index("ix_availability_points_series_first_seen", table_name="availability_points")
    op.drop_table("availability_points")
