"""SQLAlchemy's exceptions turned into the store's one :class:`DatabaseError`.

Callers outside the store (the recommender, the CLI, the service) catch one exception
type with a one-line message, and never import SQLAlchemy to do it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import SQLAlchemyError

from tracker.errors import one_line
from tracker.store.engine import DatabaseError

__all__ = ["database_errors"]


@contextmanager
def database_errors(doing: str) -> Iterator[None]:
    """Re-raise any SQLAlchemy error inside as ``DatabaseError("<doing>: <first line>")``.

    The first line of the driver's message says what failed (connection refused, no such
    table, lock timeout) without the statement and parameters SQLAlchemy appends.
    """
    try:
        yield
    except SQLAlchemyError as exc:
        cause = getattr(exc, "orig", None) or exc
        raise DatabaseError(f"{doing}: {one_line(cause, with_type=False)}") from exc
