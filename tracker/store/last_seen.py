"""``last_seen`` as every reader answers it: stored, or derived from a confirming run.

A re-collection does not rewrite ``last_seen`` of the intervals whose price it saw
unchanged: the run records that it read the scope (source, region, pricing) in full
(``confirmed_scopes``), and since a complete run delists what it did not see, every
interval of the scope still open was confirmed at that run's time. So ``last_seen`` of
an open interval is the later of its stored value and its scope's confirmation, when
the interval existed at that run (``max_point_id``); a closed interval keeps its
stored value (the ingest writes the derived value when it closes one). The answer is
the one the store gave when it rewrote ``last_seen`` on every run.

The rule is written once (:data:`_RULE`, :data:`_ON`) and served in two shapes:

- readers (offers, history, the export, the dashboard, where an incremental fetch
  resumes) outer-join the scope's confirmation once (:func:`join_confirmations`) and
  select :func:`effective_last_seen`: the planner hashes the few hundred scopes and
  reads each interval's answer off the join, where a correlated sub-select ran one
  probe of ``confirmed_scopes`` per offer (``offers`` at ``bench/growth.py``'s full
  size: 549 ms in ``EXPLAIN ANALYZE`` with the probes, 87 ms with the join);
- the ingest's own statements, which touch a few rows at a time, take it as a
  self-contained scalar sub-select (:func:`effective_last_seen_sql`).
"""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import Select, literal_column, text, type_coerce
from sqlalchemy.sql.elements import ColumnElement

from tracker.store.schema import ConfirmedScope
from tracker.store.types import UTCDateTime

__all__ = [
    "confirmation_join_sql",
    "effective_last_seen",
    "effective_last_seen_sql",
    "join_confirmations",
    "joined_last_seen_sql",
]

CONFIRMATION = "gt_conf"
"""The alias readers join ``confirmed_scopes`` under (:func:`join_confirmations`)."""

_ON = "{c}.source = {s}.source AND {c}.region = {s}.region AND {c}.pricing = {s}.pricing"
"""The confirmation of a series' scope: ``confirmed_scopes``' primary key."""

_RULE = "{p}.ended_at IS NULL AND {c}.max_point_id >= {p}.id AND {c}.confirmed_at > {p}.last_seen"
"""When the confirmation answers an interval's ``last_seen``: it is open, it existed when
the run confirmed its scope, and the run is later than the stored time. The same text on
both engines (times compare as values on Postgres and as same-format text on SQLite);
with no confirmation (an outer join's NULLs) it is not true."""

Stmt = TypeVar("Stmt", bound=Select[Any])


def effective_last_seen_sql(points: str = "p", series: str = "s") -> str:
    """``last_seen`` of an interval of ``points`` (price_points or its alias) whose series
    is the row of ``series`` (series or its alias) in the same statement, as SQL text
    probing ``confirmed_scopes`` itself (for statements over a few intervals)."""
    where = f"{_RULE} AND {_ON}".format(p=points, s=series, c="conf")
    return (
        f"COALESCE((SELECT conf.confirmed_at FROM confirmed_scopes conf WHERE {where}), "
        f"{points}.last_seen)"
    )


def confirmation_join_sql(series: str) -> str:
    """SQL text: the outer join of the confirmation of ``series``' scope (``series`` an
    alias carrying source, region and pricing), for :func:`joined_last_seen_sql`. For a
    statement over many intervals: one hash join, not a probe per interval."""
    return f"LEFT JOIN confirmed_scopes {CONFIRMATION} ON " + _ON.format(c=CONFIRMATION, s=series)


def joined_last_seen_sql(points: str) -> str:
    """SQL text: ``last_seen`` of an interval of ``points`` in a statement that joined
    :func:`confirmation_join_sql` (SQL text or :func:`join_confirmations`)."""
    rule = _RULE.format(p=points, c=CONFIRMATION)
    return f"CASE WHEN {rule} THEN {CONFIRMATION}.confirmed_at ELSE {points}.last_seen END"


def join_confirmations(stmt: Stmt, series: Any = None) -> Stmt:
    """``stmt`` (a select whose FROM has ``series``, the series table or an alias) with
    its scope's confirmation outer-joined, as :func:`effective_last_seen` reads it.

    At most one row joins per series (the join is on the table's primary key), so the
    rows, counts and aggregates of ``stmt`` do not change."""
    s = "series" if series is None else series.name
    target = ConfirmedScope.__table__.alias(CONFIRMATION)
    on = text(_ON.format(c=CONFIRMATION, s=s))
    return stmt.outerjoin(target, on)


def effective_last_seen(points: Any = None) -> ColumnElement[Any]:
    """``last_seen`` of an interval of ``points`` (the price_points table or an alias) as
    a column, for a select passed through :func:`join_confirmations`, whose join matched
    the interval's scope (without the join the statement fails: no silent cross join)."""
    p = "price_points" if points is None else points.name
    return type_coerce(literal_column(joined_last_seen_sql(p)), UTCDateTime())
