"""The fixtures' shortcuts to a freshly migrated database leave what a migration would."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, inspect, text

from tests.fresh_db import PgFreshSchema, _children_first, copy_sqlite
from tracker.store import migrate
from tracker.store.engine import make_engine

RUN = (
    "INSERT INTO collection_runs (provider, source, scope, status, started_at) "
    "VALUES ('x', 'x', 'standard', 'succeeded', CURRENT_TIMESTAMP) RETURNING id"
)


def test_children_come_before_the_tables_they_reference() -> None:
    # price_points -> series, price_points -> collection_runs: price_points first.
    keys = [("price_points", "series"), ("price_points", "collection_runs")]
    order = _children_first(["series", "collection_runs", "price_points"], keys)
    assert order == ["price_points", "collection_runs", "series"]
    assert _children_first(["a"], [("a", "a")]) == ["a"]  # a self-reference is one DELETE
    assert _children_first(["a", "b"], [("a", "b"), ("b", "a")]) is None  # a cycle: re-migrate


def test_the_sqlite_copy_is_at_head_and_empty(sqlite_template: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.db"
    copy_sqlite(sqlite_template, copy)
    engine = make_engine(f"sqlite:///{copy}")
    assert migrate.is_up_to_date(engine)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM collection_runs")).scalar() == 0
    engine.dispose()


def test_sqlite_engines_are_separate_copies(sqlite_engine: Engine, sqlite_template: Path) -> None:
    with sqlite_engine.begin() as conn:
        conn.execute(text(RUN))
    template = make_engine(f"sqlite:///{sqlite_template}")
    with template.connect() as conn:  # the template itself never gets a test's rows
        assert conn.execute(text("SELECT count(*) FROM collection_runs")).scalar() == 0
    template.dispose()


def _run_ids(engine: Engine) -> list[int]:
    with engine.begin() as conn:
        conn.execute(text(RUN))
        return [int(i) for i in conn.execute(text("SELECT id FROM collection_runs")).scalars()]


@pytest.mark.postgres
def test_postgres_rows_go_and_sequences_restart(pg_engine: Engine) -> None:
    fresh = PgFreshSchema()
    fresh.migrated(pg_engine)  # from whatever state: a migration, and the fingerprint
    assert _run_ids(pg_engine) == [1]
    assert _run_ids(pg_engine) == [1, 2]
    fresh.migrated(pg_engine)
    assert _run_ids(pg_engine) == [1]  # empty again, and ids start over as after a migration
    assert migrate.is_up_to_date(pg_engine)


@pytest.mark.postgres
def test_a_changed_postgres_schema_is_migrated_again(pg_engine: Engine) -> None:
    fresh = PgFreshSchema()
    fresh.migrated(pg_engine)
    with pg_engine.begin() as conn:
        conn.execute(text("ALTER TABLE series ADD COLUMN leftover integer"))
        conn.execute(text("CREATE TABLE stray (id integer)"))
    assert not fresh._emptied(pg_engine)  # not this schema's fingerprint: left as it is
    fresh.migrated(pg_engine)
    tables = inspect(pg_engine)
    assert "leftover" not in {c["name"] for c in tables.get_columns("series")}
    assert "stray" not in tables.get_table_names()
    migrate.downgrade(pg_engine, "base")  # no revision: migrated again, not emptied
    fresh.migrated(pg_engine)
    assert migrate.is_up_to_date(pg_engine)
