"""storage and transfer prices as compact series (issue 27)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 15:00:00.000000

``service_prices`` holds block storage, object storage and internet egress prices per
provider, region and tier, one row per interval with the rule of ``price_points``: an
unchanged price re-seen moves ``last_seen``, a change ends the interval and opens the
next. At most one interval per (provider, region, service, tier start) is open.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tracker.store.types

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    money = tracker.store.types.Money(precision=20, scale=10)
    when = tracker.store.types.UTCDateTime(timezone=True)
    op.create_table(
        "service_prices",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("region", sa.String(length=64), nullable=False),
        sa.Column("service", sa.String(length=32), nullable=False),
        sa.Column("unit", sa.String(length=16), nullable=False),
        sa.Column("tier_start_gb", money, nullable=False),
        sa.Column("tier_end_gb", money, nullable=True),
        sa.Column("price", money, nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.Column("first_seen", when, nullable=False),
        sa.Column("last_seen", when, nullable=False),
        sa.Column("ended_at", when, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_service_prices")),
    )
    op.create_index(
        "uq_service_prices_open",
        "service_prices",
        ["provider", "region", "service", "tier_start_gb"],
        unique=True,
        postgresql_where=sa.text("ended_at IS NULL"),
        sqlite_where=sa.text("ended_at IS NULL"),
    )
    op.create_index(
        "ix_service_prices_series_first_seen",
        "service_prices",
        ["provider", "region", "service", "first_seen"],
    )


def downgrade() -> None:
    op.drop_index("ix_service_prices_series_first_seen", table_name="service_prices")
    op.drop_index("uq_service_prices_open", table_name="service_prices")
    op.drop_table("service_prices")
