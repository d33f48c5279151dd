"""the cheapest-price rollup per (GPU model, pricing, provider, region, currency)

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 15:30:00.000000

``rollup_groups`` and ``price_rollups`` hold, per group, the step function of the
cheapest price per GPU-hour as compact intervals (tracker.store.rollup): per-GPU
history reads them instead of probing every offer at every step. ``rollup_dirty``
collects the keys a change of a series' GPU model or GPU count moves (a trigger on
``series``, so every write path is covered); the run that made the change recomputes
them and empties it. Back-filled here from the stored intervals, on both engines.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tracker.store.types
from tracker.store import rollup

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_KEY = ("gpu_model", "pricing", "provider", "region")
_SIZES = {"gpu_model": 128, "pricing": 16, "provider": 64, "region": 64}

_PG_FUNCTION = """
CREATE FUNCTION rollup_note_hardware() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rollup_dirty (gpu_model, pricing, provider, region)
    VALUES (OLD.gpu_model, OLD.pricing, OLD.provider, OLD.region),
           (NEW.gpu_model, NEW.pricing, NEW.provider, NEW.region);
    RETURN NEW;
END $$
"""
_PG_TRIGGER = """
CREATE TRIGGER series_rollup_hardware AFTER UPDATE OF gpu_model, gpu_count ON series
FOR EACH ROW WHEN (OLD.gpu_model IS DISTINCT FROM NEW.gpu_model
                   OR OLD.gpu_count IS DISTINCT FROM NEW.gpu_count)
EXECUTE FUNCTION rollup_note_hardware()
"""
_SQLITE_TRIGGER = """
CREATE TRIGGER series_rollup_hardware AFTER UPDATE OF gpu_model, gpu_count ON series
FOR EACH ROW WHEN OLD.gpu_model IS NOT NEW.gpu_model OR OLD.gpu_count IS NOT NEW.gpu_count
BEGIN
    INSERT INTO rollup_dirty (gpu_model, pricing, provider, region)
    VALUES (OLD.gpu_model, OLD.pricing, OLD.provider, OLD.region);
    INSERT INTO rollup_dirty (gpu_model, pricing, provider, region)
    VALUES (NEW.gpu_model, NEW.pricing, NEW.provider, NEW.region);
END
"""


def upgrade() -> None:
    op.create_table(
        "rollup_groups",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        *(sa.Column(c, sa.String(_SIZES[c]), nullable=False) for c in _KEY),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_rollup_groups"),
        sa.UniqueConstraint(*_KEY, "currency", name="uq_rollup_groups_key"),
    )
    op.create_table(
        "price_rollups",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("group_id", _ID, nullable=False),
        sa.Column("series_id", _ID, nullable=False),
        sa.Column("price", tracker.store.types.Money(), nullable=False),
        sa.Column("first_seen", tracker.store.types.UTCDateTime(), nullable=False),
        sa.Column("ended_at", tracker.store.types.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_price_rollups"),
        sa.ForeignKeyConstraint(
            ["group_id"],
            ["rollup_groups.id"],
            name="fk_price_rollups_group_id_rollup_groups",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["series_id"],
            ["series.id"],
            name="fk_price_rollups_series_id_series",
            ondelete="CASCADE",
        ),
    )
    op.create_index(
        "ix_price_rollups_group_first_seen", "price_rollups", ["group_id", "first_seen"]
    )
    op.create_index(
        "ix_price_rollups_ended_first_seen", "price_rollups", ["ended_at", "first_seen"]
    )
    op.create_index("ix_series_rollup_key", "series", list(_KEY))
    op.create_table(
        "rollup_dirty",
        *(sa.Column(c, sa.String(_SIZES[c]), nullable=False) for c in _KEY),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_PG_FUNCTION)
        op.execute(_PG_TRIGGER)
    else:
        op.execute(_SQLITE_TRIGGER)
    rollup.rebuild(op.get_bind())


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS series_rollup_hardware ON series")
        op.execute("DROP FUNCTION IF EXISTS rollup_note_hardware()")
    else:
        op.execute("DROP TRIGGER IF EXISTS series_rollup_hardware")
    op.drop_table("rollup_dirty")
    op.drop_index("ix_series_rollup_key", table_name="series")
    op.drop_index("ix_price_rollups_ended_first_seen", table_name="price_rollups")
    op.drop_index("ix_price_rollups_group_first_seen", table_name="price_rollups")
    op.drop_table("price_rollups")
    op.drop_table("rollup_groups")
