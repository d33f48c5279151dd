"""index price intervals by when they ended, and open prices by price, for the dashboard

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30 15:00:00.000000

The Overview's 30-day trend (tracker.store.reads) pairs with its days only the
intervals that moved during the window: closed after its first day, or opened after
it and still open. ``(ended_at, first_seen)`` finds both as index ranges instead of a
scan of every interval ever stored (2.4 M in the benchmark, ~280 ms). The Offers
page, over offers in one currency, reads its first rows in price order from a partial
index of the open prices instead of sorting 100,000 of them (~130 ms → ~1 ms). Costs
index entries per interval written and per interval closed.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_price_points_ended_first_seen", "price_points", ["ended_at", "first_seen"])
    op.create_index(
        "ix_price_points_open_price",
        "price_points",
        ["price"],
        postgresql_where=sa.text("ended_at IS NULL"),
        sqlite_where=sa.text("ended_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_price_points_open_price", table_name="price_points")
    op.drop_index("ix_price_points_ended_first_seen", table_name="price_points")
