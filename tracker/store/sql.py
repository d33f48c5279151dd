"""SQL helpers the store's reads share: what a read is bound to, the time grid, and the
price interval in force at each of its times.

Every history read is one statement over a *grid* of times (:func:`grid`): for each
(time, series) pair an index probe on ``(series_id, first_seen)`` finds the latest
interval started by then, and a join keeps it only while it was still in force
(:func:`in_force`). Kept in one module so each read states only what it selects.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import (
    Connection,
    Engine,
    Integer,
    Interval,
    and_,
    bindparam,
    literal_column,
    or_,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import BindParameter, ColumnElement

from tracker.store.errors import database_errors
from tracker.store.schema import PricePoint, Series
from tracker.store.types import UTCDateTime

__all__ = [
    "INTERVAL_COLUMNS",
    "SQLITE_TIME",
    "Bind",
    "InForce",
    "SeriesWhere",
    "Steps",
    "Times",
    "connection",
    "execute",
    "grid",
    "in_force",
    "orm_rows",
    "reading",
]

Bind = Engine | Connection
"""What a read runs on: an engine (it opens its own connection) or a caller's connection."""

SQLITE_TIME = "%Y-%m-%d %H:%M:%S.%f"
"""How SQLAlchemy stores a time on SQLite (naive UTC); grid times are compared as text."""

INTERVAL_COLUMNS = ("id", "price", "currency", "first_seen", "ended_at")
"""What a probe reads of the interval in force (all :func:`tracker.store.reads.usd_price` may use)."""


@dataclass(frozen=True, slots=True)
class Steps:
    """Equally spaced times ``start + k·step`` for ``k < count`` (Postgres generates
    them itself instead of receiving thousands of bound times)."""

    start: datetime
    step: timedelta
    count: int
    end: datetime | None = None
    """One more time after the regular steps (a window's end: now), numbered ``count``."""

    def times(self) -> list[datetime]:
        regular = [self.start + k * self.step for k in range(self.count)]
        return regular if self.end is None else [*regular, self.end]


Times = Steps | Sequence[datetime]


def grid(engine: Engine, times: Times) -> Any:
    """A ``grid(k, t)`` subquery of the given times, numbered from 0, typed as times."""
    if engine.dialect.name == "postgresql":
        if isinstance(times, Steps):
            sql = (
                "SELECT CAST(g.k AS integer) - 1 AS k, g.t AS t FROM generate_series("
                ":start, :start + :step * (:count - 1), :step) WITH ORDINALITY AS g(t, k)"
            )
            params: list[BindParameter[Any]] = [
                bindparam("start", times.start, UTCDateTime()),
                bindparam("step", times.step, Interval()),
                bindparam("count", times.count, Integer()),
            ]
            if times.end is not None:
                sql += " UNION ALL SELECT :count, :end"
                params.append(bindparam("end", times.end, UTCDateTime()))
            stmt = text(sql).bindparams(*params)
        else:
            stmt = text(
                "SELECT CAST(g.k AS integer) - 1 AS k, g.t AS t "
                "FROM unnest(:times) WITH ORDINALITY AS g(t, k)"
            ).bindparams(bindparam("times", [t.astimezone(UTC) for t in times], ARRAY(UTCDateTime)))
    else:
        listed = times.times() if isinstance(times, Steps) else times
        stamps = [t.astimezone(UTC).replace(tzinfo=None).strftime(SQLITE_TIME) for t in listed]
        stmt = text("SELECT CAST(key AS INTEGER) AS k, value AS t FROM json_each(:times)")
        stmt = stmt.bindparams(times=json.dumps(stamps))
    return stmt.columns(k=Integer(), t=UTCDateTime()).subquery("grid")


@dataclass(frozen=True, slots=True)
class InForce:
    """A FROM clause pairing every grid time × selected series with the interval in
    force then: ``k``/``t`` the grid columns, ``s`` the series, ``p`` the interval."""

    k: Any
    t: Any
    s: Any
    p: Any
    source: Any


def in_force(engine: Engine, times: Times, where: SeriesWhere, *, outer: bool = False) -> InForce:
    """For every grid time × selected series, the latest interval started by then, kept
    while it had not ended: one backward probe of the (series_id, first_seen) index each.

    Postgres runs the probe as a LATERAL subquery; SQLite (no LATERAL) as a correlated
    scalar subquery finding the interval's id, then a rowid join. Both are nested loops
    over grid × series, never a scan of the whole interval table. ``outer`` keeps the
    pairs with nothing in force (interval columns NULL).
    """
    grid_ = grid(engine, times)
    s = Series.__table__.alias("s")
    points = PricePoint.__table__
    clauses = where.where(s)
    on = and_(*clauses) if clauses else literal_column("1") == 1
    started = [points.c.series_id == s.c.id, points.c.first_seen <= grid_.c.t]
    newest = points.c.first_seen.desc()
    if engine.dialect.name == "postgresql":
        wanted = [points.c[c] for c in INTERVAL_COLUMNS]
        p = select(*wanted).where(*started).order_by(newest).limit(1).lateral("p")
        current = or_(p.c.ended_at.is_(None), p.c.ended_at > grid_.c.t)
        source = grid_.join(s, on).join(p, current, isouter=outer)
        return InForce(grid_.c.k, grid_.c.t, s, p, source)
    latest = select(points.c.id).where(*started).order_by(newest).limit(1).scalar_subquery()
    probe = (
        select(grid_.c.k, grid_.c.t, s.c.id.label("series_id"), latest.label("point_id"))
        .select_from(grid_)
        .join(s, on)
        .subquery("probe")
    )
    s2 = Series.__table__.alias("s2")
    found = PricePoint.__table__.alias("p")
    source = probe.join(
        found,
        and_(
            found.c.id == probe.c.point_id,
            or_(found.c.ended_at.is_(None), found.c.ended_at > probe.c.t),
        ),
        isouter=outer,
    ).join(s2, s2.c.id == probe.c.series_id)
    return InForce(probe.c.k, probe.c.t, s2, found, source)


@contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    """A connection for a probe read. On Postgres, without JIT compilation: the planner's
    row estimates for a generated grid make it compile the probe loop, which costs about
    a second and saves nothing on a read made of short index probes. And room to rank in
    memory: a year of daily steps × 84 groups is 30,000 rows to sort per step, which the
    default 4 MB spills to disk (an external merge, a third of the read)."""
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql(  # both for this transaction, in one round trip
                "SELECT set_config('jit', 'off', true), set_config('work_mem', '32MB', true)"
            )
        yield conn


class SeriesWhere(Protocol):
    """A series selection (:class:`tracker.store.reads.SeriesFilter`) as clauses."""

    def where(self, series: Any = None) -> list[ColumnElement[bool]]: ...


@contextmanager
def connection(bind: Bind) -> Iterator[Connection]:
    """``bind`` as a connection; one of our own reads (JIT off on Postgres, see
    :func:`reading`) when it is an engine."""
    if isinstance(bind, Connection):
        yield bind
        return
    with reading(bind) as conn:
        yield conn


def execute(bind: Bind, stmt: Any, what: str = "cannot read the store") -> Sequence[Any]:
    """Every row of a Core statement, on ``bind``'s connection or a fresh read; a
    database failure is a :class:`tracker.store.DatabaseError` saying ``what``."""
    with database_errors(what), connection(bind) as conn:
        return conn.execute(stmt).all()


def orm_rows(bind: Bind, stmt: Any) -> Sequence[Any]:
    """Run an ORM select; objects are detached plain snapshots (no lazy loading)."""
    with Session(bind, expire_on_commit=False) as session:
        return session.execute(stmt).all()
