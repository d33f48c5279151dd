"""Alembic environment: runs on the connection handed over by tracker.store.migrate,
or on the configured database URL when invoked through the ``alembic`` command."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

# Importing each table module registers its tables on the shared Base.metadata.
from tracker.store import (
    schema,  # noqa: F401
)
from tracker.store.schema import Base

target_metadata = Base.metadata


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        compare_server_default=True,
    )


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    from tracker.settings import load_settings
    from tracker.store.engine import make_engine

    engine = make_engine(load_settings().database_url)
    with engine.connect() as conn:
        _configure(conn)
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported; run against a database")
run_migrations_online()
