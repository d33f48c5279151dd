"""confirmed scopes and the series identity hash (issue 17)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30 14:45:00.000000

``confirmed_scopes`` records, per (source, region, pricing), the latest complete run
that read the scope in full: readers derive ``last_seen`` of open intervals from it,
so a re-collection no longer rewrites every unchanged interval. Intervals stored
before this revision carry their ``last_seen`` as written, which is what they read.

``series.identity_hash`` is the 64-bit key a run's offers are joined on
(tracker.store.identity); existing series are back-filled here, in batches, on both
engines, before the column becomes NOT NULL and unique.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tracker.store.types
from tracker.store.identity import identity_hash

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_IDENTITY = (
    "provider",
    "instance_type",
    "region",
    "zone",
    "pricing",
    "payment_option",
    "offering_class",
    "os",
)  # frozen here: the identity as of this revision (Offer.key() order)
_BATCH = 10_000


def upgrade() -> None:
    op.create_table(
        "confirmed_scopes",
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.Column("region", sa.String(length=64), nullable=False),
        sa.Column("pricing", sa.String(length=16), nullable=False),
        sa.Column("run_id", _ID, nullable=False),
        sa.Column("confirmed_at", tracker.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("max_point_id", _ID, nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["collection_runs.id"],
            name=op.f("fk_confirmed_scopes_run_id_collection_runs"),
        ),
        sa.PrimaryKeyConstraint("source", "region", "pricing", name=op.f("pk_confirmed_scopes")),
    )
    with op.batch_alter_table("series") as batch:
        batch.add_column(sa.Column("identity_hash", sa.BigInteger(), nullable=True))
    _backfill()
    with op.batch_alter_table("series") as batch:
        batch.alter_column("identity_hash", existing_type=sa.BigInteger(), nullable=False)
        batch.create_index("uq_series_identity_hash", ["identity_hash"], unique=True)


def _backfill() -> None:
    conn = op.get_bind()
    series = sa.table("series", sa.column("id"), *(sa.column(c) for c in _IDENTITY))
    rows = conn.execute(sa.select(series.c.id, *(series.c[c] for c in _IDENTITY))).all()
    update = sa.text("UPDATE series SET identity_hash = :h WHERE id = :id")
    for start in range(0, len(rows), _BATCH):
        batch = rows[start : start + _BATCH]
        conn.execute(update, [{"id": r[0], "h": identity_hash(tuple(r[1:]))} for r in batch])


def downgrade() -> None:
    with op.batch_alter_table("series") as batch:
        batch.drop_index("uq_series_identity_hash")
        batch.drop_column("identity_hash")
    op.drop_table("confirmed_scopes")
