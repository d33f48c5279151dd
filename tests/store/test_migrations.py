"""The same Alembic migrations serve SQLite and Postgres, and match the ORM models."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from tracker.store import (
    migrate,
)
from tracker.store.engine import Engine, make_engine
from tracker.store.schema import Base


def test_upgrade_from_empty_downgrade_and_no_autogenerate_diff(db_url: str) -> None:
    engine = make_engine(db_url)
    assert migrate.current_revision(engine) is None
    migrate.upgrade(engine)
    assert migrate.is_up_to_date(engine)
    tables = set(inspect(engine).get_table_names())
    assert {"series", "price_points", "collection_runs"} <= tables

    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "compare_server_default": True}
        )
        assert compare_metadata(context, Base.metadata) == []

    migrate.downgrade(engine, "base")
    assert migrate.current_revision(engine) is None
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    migrate.upgrade(engine)  # and back up again, cleanly
    assert migrate.is_up_to_date(engine)
    engine.dispose()


def test_every_revision_steps_down_and_up(db_url: str) -> None:
    from alembic.script import ScriptDirectory

    engine = make_engine(db_url)
    migrate.upgrade(engine)
    script = ScriptDirectory.from_config(migrate._config())
    revisions = [r.revision for r in script.walk_revisions()][::-1]  # base first
    for rev in revisions:
        down = script.get_revision(rev).down_revision
        migrate.downgrade(engine, str(down) if down else "base")
        migrate.upgrade(engine, rev)
    assert migrate.is_up_to_date(engine)
    engine.dispose()


def test_the_outbox_keys_compare_bytewise_on_postgres(pg_engine: Engine) -> None:
    """Migration 0011: identifiers compared for equality only, so their indexes make
    no locale call (the database's own collation stays on every other column)."""
    with pg_engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT column_name, collation_name FROM information_schema.columns "
            "WHERE table_name = 'alert_outbox' AND data_type = 'character varying'"
        ).all()
    assert dict(rows) == {"dedupe_key": "C", "rule": "C", "subject": "C", "kind": None}
