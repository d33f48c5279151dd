"""availability intervals carry their series' running totals (obtainability in O(series))

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04 21:00:00.000000

Obtainability over a window is (rentable seconds) ÷ (known seconds) inside it. Summing
every interval that overlaps a 30-day window reads about 14 intervals a series (1.4 M
for 100,000 series, bench/obtainability.py: ~0.9 s of aggregate). Each interval now
holds the seconds its series had been reported (``known_before``) and reported
rentable (``rentable_before``) before the interval started, and when the series'
previous interval ended (``previous_end``), so the seconds up to any time are one
interval's totals plus its clipped length, that interval being the one with
``previous_end <= t < end``; a window's share needs only the intervals at its two
ends (tracker/store/series/_window_totals.py).

``last_closed`` marks a series' last interval once it is closed (by a state-less
sighting or a delisting; a state change opens the next at once) until a later one
opens: with the open intervals, that is every series' last interval. The partial
index ``ix_availability_points_closed_last`` holds one row per series whose history
stopped: obtainability finds those that stopped inside a window without reading the
window's intervals, and the write path a reopened series' previous interval. One column, not "is last"
and "is closed" apart: the planner would multiply their frequencies and miss the
partial index.

Intervals are append-only per series (the write path drops observations no newer than
what is stored), so a new interval's totals are the previous interval's totals plus
its length, set when it is inserted (tracker/store/series/_availability.py). Existing
rows are back-filled here with running sums over each series in ``first_seen`` order;
``available`` and ``low`` are the rentable states (tracker.models.Availability).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tracker.store.types

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SECONDS = {
    "postgresql": "date_part('epoch', COALESCE(ended_at, last_seen) - first_seen)",
    "sqlite": "((julianday(COALESCE(ended_at, last_seen)) - julianday(first_seen)) * 86400.0)",
}


def upgrade() -> None:
    with op.batch_alter_table("availability_points") as batch:
        for name in ("known_before", "rentable_before"):
            batch.add_column(
                sa.Column(name, sa.Float(precision=53), server_default="0", nullable=False)
            )
        batch.add_column(
            sa.Column("previous_end", tracker.store.types.UTCDateTime(), nullable=True)
        )
        batch.add_column(
            sa.Column("last_closed", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    seconds = _SECONDS[op.get_bind().dialect.name]
    order = "PARTITION BY series_id ORDER BY first_seen, id"
    before = f"OVER ({order} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)"
    op.execute(
        "UPDATE availability_points AS p SET known_before = t.k, rentable_before = t.r, "
        "previous_end = t.prev, last_closed = t.last "
        f"FROM (SELECT id, COALESCE(SUM(secs) {before}, 0.0) AS k, "
        f"COALESCE(SUM(CASE WHEN availability IN ('available', 'low') THEN secs "
        f"ELSE 0.0 END) {before}, 0.0) AS r, "
        f"LAG(COALESCE(ended_at, last_seen)) OVER ({order}) AS prev, "
        "ended_at IS NOT NULL AND ROW_NUMBER() OVER (PARTITION BY series_id "
        "ORDER BY first_seen DESC, id DESC) = 1 AS last "
        "FROM (SELECT id, series_id, first_seen, last_seen, ended_at, availability, "
        f"{seconds} AS secs FROM availability_points) a) t "
        "WHERE t.id = p.id AND (t.prev IS NOT NULL OR t.last)"
    )
    op.create_index(
        "ix_availability_points_closed_last",
        "availability_points",
        ["series_id"],
        unique=False,
        postgresql_where=sa.text("last_closed"),
        sqlite_where=sa.text("last_closed"),
    )


def downgrade() -> None:
    op.drop_index("ix_availability_points_closed_last", table_name="availability_points")
    with op.batch_alter_table("availability_points") as batch:
        batch.drop_column("last_closed")
        batch.drop_column("previous_end")
        batch.drop_column("rentable_before")
        batch.drop_column("known_before")
