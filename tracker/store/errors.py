"""SQLAlchemy's and the drivers' exceptions turned into the store's one :class:`DatabaseError`.

Callers outside the store (the runner, the recommender, the CLI, the service) catch one
exception type with a one-line message, and never import SQLAlchemy to do it. The ingest
path writes through the driver's own connection (COPY, ``executemany``), so the drivers'
exceptions are translated too, not only SQLAlchemy's wrappers of them.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import SQLAlchemyError

from tracker.errors import one_line


class DatabaseError(Exception):
    """The database cannot be used; the message is one line and carries no password.

    ``reason`` is the database's own first line (e.g. ``connection failed``) without
    the context the message adds, for callers that say the context their own way.
    """

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = message if reason is None else reason


__all__ = ["DatabaseError", "database_errors"]


def _database_exceptions() -> tuple[type[BaseException], ...]:
    kinds: list[type[BaseException]] = [SQLAlchemyError, sqlite3.Error]
    psycopg = sys.modules.get("psycopg")  # never imported: none of its errors can occur
    if psycopg is not None:
        kinds.append(psycopg.Error)
    return tuple(kinds)


@contextmanager
def database_errors(doing: str) -> Iterator[None]:
    """Re-raise a database error inside as ``DatabaseError("<doing>: <first line>")``.

    The first line of the driver's message says what failed (connection refused, no such
    table, lock timeout) without the statement and parameters SQLAlchemy appends; it is
    kept alone as ``DatabaseError.reason`` for callers that word the context themselves.
    Anything else (a collector's own failure inside a run's transaction) passes through.
    """
    try:
        yield
    except DatabaseError:
        raise
    except Exception as exc:
        if not isinstance(exc, _database_exceptions()):
            raise
        reason = one_line(getattr(exc, "orig", None) or exc, with_type=False)
        raise DatabaseError(f"{doing}: {reason}", reason=reason) from exc
