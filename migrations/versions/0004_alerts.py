"""alert outbox

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 11:00:00.000000

The alerts' transactional outbox: one row per event (unique dedupe key, so an
evaluation that runs twice queues nothing twice), one delivery row per alert and
channel (pending until the channel accepted it, dead after max_attempts), and
what each rule remembers between evaluations (cursors, crossed thresholds).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tracker.store.types

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "alert_outbox",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("dedupe_key", sa.String(length=255), nullable=False),
        sa.Column("rule", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("subject", sa.String(length=255), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("created_at", tracker.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_outbox")),
        sa.UniqueConstraint("dedupe_key", name="uq_alert_outbox_dedupe_key"),
    )
    op.create_index("ix_alert_outbox_rule_subject", "alert_outbox", ["rule", "subject"])
    op.create_table(
        "alert_deliveries",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("alert_id", BigId, nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column(
            "next_attempt_at", tracker.store.types.UTCDateTime(timezone=True), nullable=False
        ),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("sent_at", tracker.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["alert_id"],
            ["alert_outbox.id"],
            name=op.f("fk_alert_deliveries_alert_id_alert_outbox"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_deliveries")),
        sa.UniqueConstraint("alert_id", "channel", name="uq_alert_deliveries_alert_id"),
    )
    op.create_index(
        "ix_alert_deliveries_status_next", "alert_deliveries", ["status", "next_attempt_at"]
    )
    op.create_table(
        "alert_state",
        sa.Column("rule", sa.String(length=64), nullable=False),
        sa.Column("subject", sa.String(length=255), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("updated_at", tracker.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("rule", "subject", name=op.f("pk_alert_state")),
    )


def downgrade() -> None:
    op.drop_table("alert_state")
    op.drop_index("ix_alert_deliveries_status_next", table_name="alert_deliveries")
    op.drop_table("alert_deliveries")
    op.drop_index("ix_alert_outbox_rule_subject", table_name="alert_outbox")
    op.drop_table("alert_outbox")
