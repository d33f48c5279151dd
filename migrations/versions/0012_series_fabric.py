"""an offer's inter-node fabric and bandwidth (issue 37)

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 03:00:00.000000

``interconnect`` says how the GPUs inside one instance talk; a job on several nodes also
crosses the network between instances. ``series.fabric`` names it (``infiniband``,
``efa``, ``roce``, ``gpudirect_tcpx``, ``ici``, ``ethernet``, ``unknown``) and
``series.network_gbps`` holds one instance's inter-node bandwidth, both as the provider
states them. Existing series were collected without either: they read ``unknown`` and
no bandwidth until their collector reports them again (hardware is updated as reported).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tracker.store.types

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    money = tracker.store.types.Money(precision=20, scale=10)
    with op.batch_alter_table("series") as batch:
        batch.add_column(
            sa.Column("fabric", sa.String(length=16), server_default="unknown", nullable=False)
        )
        batch.add_column(sa.Column("network_gbps", money, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("series") as batch:
        batch.drop_column("network_gbps")
        batch.drop_column("fabric")
