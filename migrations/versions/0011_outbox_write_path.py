"""the alert outbox's write path: deliveries checked per statement, keys compared bytewise

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02 09:00:00.000000

A big run queues tens of thousands of alerts in one evaluation, each an outbox row and a
delivery per channel; after the rendering, these writes are what an evaluation waits on
(bench/alerts.py: 85,742 alerts). Two of their costs were in the schema.

**Deliveries.** ``alert_deliveries.alert_id`` referenced ``alert_outbox.id`` through a
foreign key. A foreign key is checked row by row, and each check locks the alert it
finds (a WAL record and a dirtied page per delivery): a fifth of the evaluation (0.85 s
of 3.9 s). Deliveries are only ever inserted with their alert, in its transaction, so
no other transaction can delete the alert meanwhile and the lock guards nothing. The
rule is kept by triggers instead:

- a delivery's alert must exist: on Postgres checked once per statement over the rows
  it inserted (one anti-join over the statement's transition table, whatever the
  number of rows), on SQLite per row; a change of a delivery's ``alert_id`` is checked
  too;
- deleting an alert deletes its deliveries (the key's ``ON DELETE CASCADE``), per
  statement on Postgres;
- an alert's id cannot change while deliveries name it (the key's ``NO ACTION``).

The errors keep the foreign key's SQLSTATE (23503) and constraint name on Postgres.

**Keys.** ``dedupe_key``, ``rule`` and ``subject`` are identifiers, only ever compared
for equality, but their unique and cooldown indexes compared them in the database's
collation (``C.UTF-8`` here: a locale call per comparison, ~0.3 s of the evaluation's
inserts). On Postgres they are ``COLLATE "C"`` now, compared byte by byte, as SQLite
compares them already.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_FK = "fk_alert_deliveries_alert_id_alert_outbox"
_NO_ALERT = "insert or update on table alert_deliveries: its alert_id is not in alert_outbox"
_REFERENCED = "alert_outbox.id cannot change while alert_deliveries name it"


def _pg_check(function: str, violated: str, message: str) -> str:
    """A trigger function raising the foreign key's error when ``violated`` holds."""
    return f"""
CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF {violated} THEN
        RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', CONSTRAINT = '{_FK}',
            MESSAGE = '{message}';
    END IF;
    RETURN NULL;
END $$
"""


_PG = [
    _pg_check(
        "alert_deliveries_alert_exists",
        "EXISTS (SELECT 1 FROM alert_deliveries_new d "
        "WHERE NOT EXISTS (SELECT 1 FROM alert_outbox a WHERE a.id = d.alert_id))",
        _NO_ALERT,
    ),
    """
CREATE TRIGGER alert_deliveries_alert_exists AFTER INSERT ON alert_deliveries
REFERENCING NEW TABLE AS alert_deliveries_new
FOR EACH STATEMENT EXECUTE FUNCTION alert_deliveries_alert_exists()
""",
    _pg_check(
        "alert_deliveries_alert_moved",
        "NOT EXISTS (SELECT 1 FROM alert_outbox a WHERE a.id = NEW.alert_id)",
        _NO_ALERT,
    ),
    # a row trigger with a WHEN: the sender's status updates never run it
    """
CREATE TRIGGER alert_deliveries_alert_moved AFTER UPDATE OF alert_id ON alert_deliveries
FOR EACH ROW WHEN (OLD.alert_id IS DISTINCT FROM NEW.alert_id)
EXECUTE FUNCTION alert_deliveries_alert_moved()
""",
    """
CREATE FUNCTION alert_outbox_delete_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM alert_deliveries d USING alert_outbox_old a WHERE d.alert_id = a.id;
    RETURN NULL;
END $$
""",
    """
CREATE TRIGGER alert_outbox_delete_deliveries AFTER DELETE ON alert_outbox
REFERENCING OLD TABLE AS alert_outbox_old
FOR EACH STATEMENT EXECUTE FUNCTION alert_outbox_delete_deliveries()
""",
    _pg_check(
        "alert_outbox_id_referenced",
        "EXISTS (SELECT 1 FROM alert_deliveries d WHERE d.alert_id = OLD.id)",
        _REFERENCED,
    ),
    """
CREATE TRIGGER alert_outbox_id_referenced AFTER UPDATE OF id ON alert_outbox
FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id)
EXECUTE FUNCTION alert_outbox_id_referenced()
""",
]
_PG_DROP = [
    "DROP TRIGGER IF EXISTS alert_outbox_id_referenced ON alert_outbox",
    "DROP TRIGGER IF EXISTS alert_outbox_delete_deliveries ON alert_outbox",
    "DROP TRIGGER IF EXISTS alert_deliveries_alert_moved ON alert_deliveries",
    "DROP TRIGGER IF EXISTS alert_deliveries_alert_exists ON alert_deliveries",
    "DROP FUNCTION IF EXISTS alert_outbox_id_referenced()",
    "DROP FUNCTION IF EXISTS alert_outbox_delete_deliveries()",
    "DROP FUNCTION IF EXISTS alert_deliveries_alert_moved()",
    "DROP FUNCTION IF EXISTS alert_deliveries_alert_exists()",
]
_SQLITE = [
    f"""
CREATE TRIGGER alert_deliveries_alert_exists BEFORE INSERT ON alert_deliveries
FOR EACH ROW WHEN NOT EXISTS (SELECT 1 FROM alert_outbox WHERE id = NEW.alert_id)
BEGIN SELECT RAISE(ABORT, '{_NO_ALERT}'); END
""",
    f"""
CREATE TRIGGER alert_deliveries_alert_moved BEFORE UPDATE OF alert_id ON alert_deliveries
FOR EACH ROW WHEN NOT EXISTS (SELECT 1 FROM alert_outbox WHERE id = NEW.alert_id)
BEGIN SELECT RAISE(ABORT, '{_NO_ALERT}'); END
""",
    """
CREATE TRIGGER alert_outbox_delete_deliveries AFTER DELETE ON alert_outbox
FOR EACH ROW BEGIN DELETE FROM alert_deliveries WHERE alert_id = OLD.id; END
""",
    f"""
CREATE TRIGGER alert_outbox_id_referenced BEFORE UPDATE OF id ON alert_outbox
FOR EACH ROW WHEN OLD.id IS NOT NEW.id
    AND EXISTS (SELECT 1 FROM alert_deliveries WHERE alert_id = OLD.id)
BEGIN SELECT RAISE(ABORT, '{_REFERENCED}'); END
""",
]
_SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS alert_outbox_id_referenced",
    "DROP TRIGGER IF EXISTS alert_outbox_delete_deliveries",
    "DROP TRIGGER IF EXISTS alert_deliveries_alert_moved",
    "DROP TRIGGER IF EXISTS alert_deliveries_alert_exists",
]


_KEYS = {"dedupe_key": 255, "rule": 64, "subject": 255}


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    with op.batch_alter_table("alert_deliveries") as table:
        table.drop_constraint(_FK, type_="foreignkey")
    for statement in _PG if postgres else _SQLITE:
        op.execute(statement)
    if postgres:
        for column, length in _KEYS.items():
            op.alter_column(
                "alert_outbox",
                column,
                type_=sa.String(length, collation="C"),
                existing_type=sa.String(length),
                existing_nullable=False,
            )


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    if postgres:
        for column, length in _KEYS.items():
            op.alter_column(
                "alert_outbox",
                column,
                type_=sa.String(length, collation="default"),
                existing_type=sa.String(length, collation="C"),
                existing_nullable=False,
            )
    for statement in _PG_DROP if postgres else _SQLITE_DROP:
        op.execute(statement)
    with op.batch_alter_table("alert_deliveries") as table:
        table.create_foreign_key(_FK, "alert_outbox", ["alert_id"], ["id"], ondelete="CASCADE")
