"""``last_seen`` as every reader answers it: stored, or derived from a confirming run.

A re-collection does not rewrite ``last_seen`` of the intervals whose price it saw
unchanged: the run records that it read the scope (source, region, pricing) in full
(``confirmed_scopes``), and since a complete run delists what it did not see, every
interval of the scope still open was confirmed at that run's time. So ``last_seen`` of
an open interval is the later of its stored value and its scope's confirmation, when
the interval existed at that run (``max_point_id``); a closed interval keeps its
stored value (the ingest writes the derived value when it closes one). The answer is
the one the store gave when it rewrote ``last_seen`` on every run.

:func:`effective_last_seen` is the one definition: the readers (offers, history, the
export, the dashboard, where an incremental fetch resumes) select it, and the ingest
renders it as SQL text (:func:`effective_last_seen_sql`) for its own statements.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import literal_column, type_coerce
from sqlalchemy.sql.elements import ColumnElement

from tracker.store.types import UTCDateTime

__all__ = ["effective_last_seen", "effective_last_seen_sql"]

_SQL = (
    "COALESCE((SELECT conf.confirmed_at FROM confirmed_scopes conf "
    "WHERE {p}.ended_at IS NULL AND conf.source = {s}.source AND conf.region = {s}.region "
    "AND conf.pricing = {s}.pricing AND conf.max_point_id >= {p}.id "
    "AND conf.confirmed_at > {p}.last_seen), {p}.last_seen)"
)
"""One primary-key probe of ``confirmed_scopes`` per interval; the same text on both
engines (times compare as values on Postgres and as same-format text on SQLite)."""


def effective_last_seen_sql(points: str = "p", series: str = "s") -> str:
    """``last_seen`` of an interval of ``points`` (price_points or its alias) whose series
    is the row of ``series`` (series or its alias) in the same statement, as SQL text."""
    return _SQL.format(p=points, s=series)


def effective_last_seen(points: Any = None, series: Any = None) -> ColumnElement[Any]:
    """:func:`effective_last_seen_sql` as a column for a select that has ``points``
    (the price_points table or an alias) and ``series`` (the series table or an alias)
    in its FROM clause."""
    p = "price_points" if points is None else points.name
    s = "series" if series is None else series.name
    return type_coerce(literal_column(effective_last_seen_sql(p, s)), UTCDateTime())
