"""Freshly migrated databases without running every migration for every test.

Migrating from empty took 0.2-0.4 s a test on each engine, hundreds of times a run.
The result is the same every time, so:

* SQLite: one file is migrated per session and copied (a byte-for-byte copy of a
  closed SQLite database is that database).
* Postgres: the session's database is migrated from an empty schema once and its
  catalog fingerprinted. Before each test, if the schema still has exactly that
  fingerprint (tables, columns, defaults, constraints, indexes, triggers, functions,
  types, sequences) and the head revision, its rows are deleted (referencing tables
  first) and its sequences restarted, which leaves it as a fresh migration would; anything else (a test that
  downgraded, dropped or altered something) gets the old drop-and-migrate.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError

from tracker.store import migrate
from tracker.store.engine import make_engine

__all__ = ["PgFreshSchema", "copy_sqlite", "migrated_sqlite_file", "reset_pg"]


def migrated_sqlite_file(path: Path) -> Path:
    """Migrate a new SQLite database at ``path`` to head and close it (no -wal left)."""
    engine = make_engine(f"sqlite:///{path}")
    migrate.upgrade(engine)
    engine.dispose()
    leftover = [p for p in (path.with_name(path.name + "-wal"),) if p.exists()]
    assert not leftover, f"SQLite template not checkpointed: {leftover}"
    return path


def copy_sqlite(template: Path, to: Path) -> None:
    shutil.copyfile(template, to)


def reset_pg(engine: Engine) -> None:
    """An empty ``public`` schema: no tables, no revision."""
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))


_FINGERPRINT = """
SELECT md5(string_agg(x, E'\\n' ORDER BY x)) FROM (
  SELECT 'c ' || c.relname || ' ' || c.relkind::text || ' '
      || coalesce(array_to_string(c.reloptions, ','), '') || ' '
      || CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) ELSE '' END AS x
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'
  UNION ALL
  SELECT 'a ' || c.relname || ' ' || a.attnum::text || ' ' || a.attname || ' '
      || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull::text || ' '
      || a.attisdropped::text || ' ' || a.attidentity::text || ' '
      || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE n.nspname = 'public' AND a.attnum > 0
  UNION ALL
  SELECT 'k ' || k.conrelid::regclass::text || ' ' || k.conname || ' '
      || pg_get_constraintdef(k.oid)
    FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace
    WHERE n.nspname = 'public'
  UNION ALL
  SELECT 'i ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
  UNION ALL
  SELECT 't ' || pg_get_triggerdef(t.oid) || ' ' || t.tgenabled::text
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND NOT t.tgisinternal
  UNION ALL
  SELECT 'f ' || p.oid::regprocedure::text || ' ' || md5(p.prosrc)
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
  UNION ALL
  SELECT 'y ' || t.typname || ' ' || t.typtype::text || ' '
      || coalesce(e.enumsortorder::text, '') || ' ' || coalesce(e.enumlabel, '')
    FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
    LEFT JOIN pg_enum e ON e.enumtypid = t.oid WHERE n.nspname = 'public'
  UNION ALL
  SELECT 's ' || sequencename || ' ' || start_value::text || ' ' || increment_by::text || ' '
      || min_value::text || ' ' || max_value::text || ' ' || cycle::text
    FROM pg_sequences WHERE schemaname = 'public'
  UNION ALL
  SELECT 'r ' || tablename || ' ' || rulename FROM pg_rules WHERE schemaname = 'public'
  UNION ALL
  SELECT 'p ' || tablename || ' ' || policyname FROM pg_policies WHERE schemaname = 'public'
) AS parts
"""

_TABLES = (
    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> 'alembic_version'"
)
_FOREIGN_KEYS = (
    "SELECT child.relname, parent.relname FROM pg_constraint k "
    "JOIN pg_class child ON child.oid = k.conrelid "
    "JOIN pg_class parent ON parent.oid = k.confrelid "
    "JOIN pg_namespace n ON n.oid = k.connamespace WHERE n.nspname = 'public' AND k.contype = 'f'"
)
_SEQUENCES = "SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'"


def _fingerprint(conn: Connection) -> str | None:
    return conn.execute(text(_FINGERPRINT)).scalar_one_or_none()


def _revisions(conn: Connection) -> list[str] | None:
    if conn.execute(text("SELECT to_regclass('public.alembic_version')")).scalar() is None:
        return None
    return [str(r) for r in conn.execute(text("SELECT version_num FROM alembic_version")).scalars()]


class PgFreshSchema:
    """Puts a Postgres ``public`` schema into its just-migrated state, cheaply when it can."""

    def __init__(self) -> None:
        self.fingerprint: str | None = None
        self.head = migrate.head_revision()

    def migrated(self, engine: Engine) -> None:
        if self.fingerprint is not None and self._emptied(engine):
            return
        reset_pg(engine)
        migrate.upgrade(engine)
        with engine.connect() as conn:
            self.fingerprint = _fingerprint(conn)

    def _emptied(self, engine: Engine) -> bool:
        """Delete every row and restart every sequence if the schema is still the
        migrated one; False (nothing changed) if it is not."""
        try:
            with engine.begin() as conn:
                if _revisions(conn) != [self.head] or _fingerprint(conn) != self.fingerprint:
                    return False
                order = _children_first(
                    conn.execute(text(_TABLES)).scalars().all(),
                    [(str(a), str(b)) for a, b in conn.execute(text(_FOREIGN_KEYS))],
                )
                if order is None:
                    return False
                for table in order:  # as the tables' owner: CI's role is no superuser
                    conn.execute(text(f'DELETE FROM public."{table}"'))
                for sequence in conn.execute(text(_SEQUENCES)).scalars().all():
                    conn.execute(text(f'ALTER SEQUENCE public."{sequence}" RESTART'))
        except DBAPIError:
            return False
        return True


def _children_first(tables: Sequence[str], keys: Sequence[tuple[str, str]]) -> list[str] | None:
    """``tables`` ordered so each comes before every table it references (so deleting
    in this order never breaks a foreign key); None for a cycle."""
    order: list[str] = []
    left = set(tables)
    while left:
        free = sorted(t for t in left if not any(p == t and c in left and c != t for c, p in keys))
        if not free:
            return None
        order.extend(free)
        left.difference_update(free)
    return order
