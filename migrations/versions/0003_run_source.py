"""collection runs record their source

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 08:00:00.000000

A run writes for one source (``series.source``): a collector's own name, or
``import:<name>`` for an ad-hoc price-sheet import. The run log records it, so
``runs`` tells an import from a run of the configured sheet and a job's last
success is looked up by the source it completes. Runs logged before this revision
were all recorded under their collector's name, which is what they get.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("collection_runs") as batch:
        batch.add_column(sa.Column("source", sa.String(length=64), nullable=True))
    op.execute("UPDATE collection_runs SET source = provider")
    with op.batch_alter_table("collection_runs") as batch:
        batch.alter_column("source", existing_type=sa.String(length=64), nullable=False)
        batch.create_index("ix_collection_runs_source_started", ["source", "started_at"])


def downgrade() -> None:
    with op.batch_alter_table("collection_runs") as batch:
        batch.drop_index("ix_collection_runs_source_started")
        batch.drop_column("source")
