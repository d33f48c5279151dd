"""availability intervals indexed by when they ended (obtainability windows)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04 03:00:00.000000

Obtainability (the share of the last 7 and 30 days an offer was reported rentable)
reads the availability intervals that overlap the window: the open ones (found
through ``uq_availability_points_open``) and those that ended inside it. Without an
index on ``ended_at`` the second half is a scan of the whole year of history
(bench/obtainability.py). ``ended_at`` already takes part in the open-interval index's
predicate, so the index costs the write path no HOT update it had: re-seeing a state
moves only ``last_seen``, which stays unindexed.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_availability_points_ended_at", "availability_points", ["ended_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_availability_points_ended_at", table_name="availability_points")
