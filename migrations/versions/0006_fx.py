"""exchange rates as data; prices stored in their own currency only

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 11:00:00.000000

``fx_rates`` holds the ECB's euro reference rates as one compact series per currency
(a row per change). ``price_points.price_usd`` goes: a USD figure is computed when
read, from the rate in force, so a rate change never opened -- and no longer stores --
anything in the price history. Batch mode rebuilds ``price_points`` on SQLite.

Downgrading re-creates ``price_usd`` from the stored rates (the rate in force when
each interval began; USD prices as they are) and refuses, naming the currency, when a
non-USD interval has no rate to fill it with: it never writes a guessed figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import Decimal

import sqlalchemy as sa
from alembic import op

import tracker.store.types

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "fx_rates",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("valid_from", tracker.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("per_eur", tracker.store.types.Money(precision=20, scale=10), nullable=False),
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fx_rates")),
        sa.UniqueConstraint("currency", "valid_from", name="uq_fx_rates_step"),
    )
    with op.batch_alter_table("price_points") as batch:
        batch.drop_column("price_usd")


def _as_time(value: object) -> datetime:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    assert isinstance(value, datetime)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def downgrade() -> None:
    from tracker.fx import RatePoint, Rates

    conn = op.get_bind()
    rates = Rates(
        RatePoint(r.currency, _as_time(r.valid_from), Decimal(str(r.per_eur)))
        for r in conn.execute(sa.text("SELECT currency, valid_from, per_eur FROM fx_rates"))
    )
    fills: list[dict[str, object]] = []
    for row in conn.execute(
        sa.text("SELECT id, price, currency, first_seen FROM price_points WHERE currency <> 'USD'")
    ):
        usd = rates.to_usd(Decimal(str(row.price)), row.currency, _as_time(row.first_seen))
        if usd is None:
            raise RuntimeError(
                f"cannot downgrade below 0006: price point {row.id} is in {row.currency} and no "
                "stored exchange rate gives the price_usd revision 0003 requires"
            )
        fills.append({"id": row.id, "usd": format(usd, "f")})
    with op.batch_alter_table("price_points") as batch:
        batch.add_column(
            sa.Column("price_usd", tracker.store.types.Money(precision=20, scale=10), nullable=True)
        )
    op.execute("UPDATE price_points SET price_usd = price WHERE currency = 'USD'")
    if fills:
        conn.execute(
            sa.text("UPDATE price_points SET price_usd = CAST(:usd AS NUMERIC) WHERE id = :id")
            if conn.dialect.name != "sqlite"
            else sa.text("UPDATE price_points SET price_usd = :usd WHERE id = :id"),
            fills,
        )
    with op.batch_alter_table("price_points") as batch:
        batch.alter_column(
            "price_usd",
            existing_type=tracker.store.types.Money(precision=20, scale=10),
            nullable=False,
        )
    op.drop_table("fx_rates")
