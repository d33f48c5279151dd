"""Since when the store has data for a selection: what a history says above its rows."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select

from tracker.store.engine import Engine
from tracker.store.errors import database_errors
from tracker.store.reads._history import SeriesFilter
from tracker.store.schema import PricePoint, Series
from tracker.store.types import UTCDateTime

__all__ = ["first_observed"]


def first_observed(engine: Engine, where: SeriesFilter) -> datetime | None:
    """The earliest price observation of the selected series, None when there is none
    (one index-backed aggregate; raises DatabaseError)."""
    s = Series.__table__
    stmt = (
        select(func.min(PricePoint.first_seen, type_=UTCDateTime()))
        .select_from(PricePoint)
        .join(s, s.c.id == PricePoint.series_id)
        .where(*where.where(s))
    )
    with database_errors("cannot read when the history starts"), engine.connect() as conn:
        found = conn.execute(stmt).scalar()
    return found if isinstance(found, datetime) else None
