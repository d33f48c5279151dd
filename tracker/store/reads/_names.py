"""The names stored offers carry, for checking what people type against them."""

from __future__ import annotations

from sqlalchemy import select

from tracker.store.engine import Engine
from tracker.store.errors import database_errors
from tracker.store.schema import Series

__all__ = ["stored_providers"]


def stored_providers(engine: Engine) -> set[str]:
    """Every provider some stored series belongs to (a collector's, or a price sheet's
    row's own provider).

    Raises :class:`~tracker.store.engine.DatabaseError`.
    """
    stmt = select(Series.__table__.c.provider).distinct()
    with database_errors("cannot read the stored providers"), engine.connect() as conn:
        return set(conn.execute(stmt).scalars())
