"""Engines for the two supported databases, configured the same way everywhere.

``postgresql://`` URLs are pointed at psycopg 3 (SQLAlchemy would otherwise pick
psycopg2, which we do not ship). SQLite gets WAL and enforced foreign keys, and
its file's folder is created on first use so the zero-setup default just works.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from tracker.store.errors import DatabaseError, database_errors

__all__ = [
    "DatabaseError",
    "Engine",
    "make_engine",
    "normalize_url",
    "ping",
    "redact_url",
    "url_password",
]

# ``Engine`` is re-exported so code outside the store can name the store handle
# in its signatures without importing SQLAlchemy (tests/test_layering.py checks it).


def normalize_url(url: str) -> URL:
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise DatabaseError(f"invalid database URL: {url.split('@')[-1]!r}") from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in ("postgresql", "sqlite"):
        raise DatabaseError(
            f"unsupported database {parsed.get_backend_name()!r} "
            "(use postgresql://... or sqlite:///path)"
        )
    return parsed


def url_password(url: str) -> str | None:
    """The password a database URL carries, so logs can mask it wherever it turns up
    (None when there is none or the URL cannot be parsed: then nothing can be masked)."""
    try:
        password = make_url(url).password
    except ArgumentError:
        return None
    return str(password) if password else None


def redact_url(url: str) -> str:
    """The URL with any password replaced, for logs and error messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparseable database URL>"


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # Let SQLAlchemy, not the sqlite3 module, decide where transactions begin, so
    # DDL (temporary tables of a run) is inside the run's transaction too.
    dbapi_conn.isolation_level = None
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _sqlite_begin(conn: Any) -> None:
    conn.exec_driver_sql("BEGIN")


def make_engine(url: str, **kwargs: Any) -> Engine:
    parsed = normalize_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        connect_args = {"timeout": 30}
        engine = create_engine(parsed, connect_args=connect_args, **kwargs)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    connect_args = kwargs.pop("connect_args", {})
    connect_args.setdefault("connect_timeout", 10)
    connect_args.setdefault("application_name", "gpu-tracker")
    return create_engine(parsed, connect_args=connect_args, **kwargs)


def ping(engine: Engine) -> None:
    """Raise :class:`DatabaseError` unless the database answers (a CLI command's first
    contact, the service's health check)."""
    with database_errors("database unreachable"), engine.connect() as conn:
        conn.execute(text("SELECT 1"))
