"""What the service asks ``collection_runs`` about its jobs, and the runs it records itself.

A *job* is a collector with a pricing scope (``tracker.service.jobs``); its runs
are the rows its collector wrote under its own source (an ``import`` of a sheet is
``import:NAME``) whose ``scope`` is the job's label, or ``all`` (a
manual ``gpu-tracker collect`` refreshes every scope). The runner records the
runs it performs (``tracker.collect``); the service records only the runs it
could not start (credentials missing), so the run log shows every cadence.

Every function raises :class:`DatabaseError` (one line, no password), never a
SQLAlchemy exception, so callers outside the store need not know the driver.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, func, insert, select, type_coerce, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

from tracker.errors import one_line
from tracker.models import RunStatus
from tracker.store.engine import DatabaseError, make_engine
from tracker.store.schema import CollectionRun
from tracker.store.types import UTCDateTime

__all__ = [
    "LatestRuns",
    "RunTimes",
    "RunningRun",
    "SuccessfulRun",
    "abandon_running",
    "last_success",
    "latest_runs",
    "probe_engine",
    "record_failed_attempt",
    "record_skipped_run",
    "running_runs",
]

RunTimes = tuple[datetime | None, datetime | None]
"""(started, finished) of the latest run of a kind."""
LatestRuns = dict[tuple[str, str, str], RunTimes]
"""(provider, scope, status) → the latest such run's (started, finished)."""


@dataclass(frozen=True)
class SuccessfulRun:
    id: int
    started_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class RunningRun:
    id: int
    provider: str
    source: str
    scope: str
    started_at: datetime


def _fail(what: str, exc: SQLAlchemyError) -> DatabaseError:
    return DatabaseError(f"{what}: {one_line(exc)}")


def latest_runs(engine: Engine) -> LatestRuns:
    """The latest succeeded and failed run of every (provider, scope), in one query."""
    # type_coerce keeps the column type on the aggregate: SQLite returns text for it.
    started = type_coerce(func.max(CollectionRun.started_at), UTCDateTime)
    finished = type_coerce(func.max(CollectionRun.finished_at), UTCDateTime)
    stmt = (
        # By source: a collector's own runs (an import of the sheet is ``import:NAME``).
        select(CollectionRun.source, CollectionRun.scope, CollectionRun.status, started, finished)
        .where(CollectionRun.status.in_((RunStatus.SUCCEEDED, RunStatus.FAILED)))
        .group_by(CollectionRun.source, CollectionRun.scope, CollectionRun.status)
    )
    try:
        with engine.connect() as conn:
            rows = conn.execute(stmt).all()
    except SQLAlchemyError as exc:
        raise _fail("cannot read the run log", exc) from exc
    return {(r[0], r[1], r[2]): (r[3], r[4]) for r in rows}


def last_success(engine: Engine, provider: str, scopes: Iterable[str]) -> SuccessfulRun | None:
    """The latest succeeded run of ``provider`` in any of ``scopes`` (by start time)."""
    stmt = (
        select(CollectionRun.id, CollectionRun.started_at, CollectionRun.finished_at)
        .where(
            CollectionRun.source == provider,  # not an import of this collector
            CollectionRun.scope.in_(list(scopes)),
            CollectionRun.status == RunStatus.SUCCEEDED,
        )
        .order_by(CollectionRun.started_at.desc(), CollectionRun.id.desc())
        .limit(1)
    )
    try:
        with engine.connect() as conn:
            row = conn.execute(stmt).first()
    except SQLAlchemyError as exc:
        raise _fail(f"cannot read the last run of {provider}", exc) from exc
    return None if row is None else SuccessfulRun(int(row[0]), row[1], row[2])


def mark_succeeded(
    conn: Connection,
    run_id: int,
    *,
    finished: datetime,
    counts: dict[str, int],
    skipped: int,
    skip_reasons: dict[str, int],
) -> None:
    """Mark a run succeeded inside the transaction that stored what it read (offers,
    rates, service prices), so the row and the data commit together; ``counts`` are the
    run log's counters (``offers_seen``, ``new_series``, ``price_changes``, …)."""
    conn.execute(
        update(CollectionRun)
        .where(CollectionRun.id == run_id)
        .values(
            status=RunStatus.SUCCEEDED,
            finished_at=finished,
            **counts,
            skipped=skipped,
            skip_reasons=skip_reasons or None,
        )
    )


def record_skipped_run(engine: Engine, provider: str, scope: str, reason: str, at: datetime) -> int:
    """A ``skipped`` run row saying why this cadence collected nothing; returns its id."""
    return _insert_run(
        engine, provider, scope, RunStatus.SKIPPED, at, at, reason, "record a skipped run of"
    )


def record_failed_attempt(
    engine: Engine, provider: str, scope: str, started: datetime, finished: datetime, error: str
) -> int:
    """A ``failed`` row for an attempt that never reached the run log (the database was
    unreachable when it was made), written once the database is back; returns its id."""
    return _insert_run(
        engine, provider, scope, RunStatus.FAILED, started, finished, error,
        "record a failed attempt of",
    )  # fmt: skip


def _insert_run(
    engine: Engine,
    provider: str,
    scope: str,
    status: RunStatus,
    started: datetime,
    finished: datetime,
    error: str,
    doing: str,
) -> int:
    """One finished run row written apart from any run's transaction; returns its id."""
    values: dict[str, Any] = {
        "provider": provider,
        "source": provider,
        "scope": scope,
        "status": status,
        "started_at": started,
        "finished_at": finished,
        "error": error[:2000],
    }
    try:
        with engine.begin() as conn:
            run_id = conn.execute(
                insert(CollectionRun).values(**values).returning(CollectionRun.id)
            ).scalar_one()
    except SQLAlchemyError as exc:
        raise _fail(f"cannot {doing} {provider}", exc) from exc
    return int(run_id)


def running_runs(engine: Engine) -> list[RunningRun]:
    """Every run the log says is ``running`` (live ones, and ones whose process died)."""
    stmt = (
        select(
            CollectionRun.id,
            CollectionRun.provider,
            CollectionRun.source,
            CollectionRun.scope,
            CollectionRun.started_at,
        )
        .where(CollectionRun.status == RunStatus.RUNNING)
        .order_by(CollectionRun.id)
    )
    try:
        with engine.connect() as conn:
            rows = conn.execute(stmt).all()
    except SQLAlchemyError as exc:
        raise _fail("cannot read the running runs", exc) from exc
    return [RunningRun(int(r[0]), r[1], r[2], r[3], r[4]) for r in rows]


def abandon_running(
    engine: Engine,
    error: str,
    *,
    run_id: int | None = None,
    provider: str | None = None,
    scope: str | None = None,
    finished: datetime | None = None,
) -> int:
    """Mark ``running`` rows ``abandoned`` with ``error`` (and ``finished``, when the end
    is known): the row ``run_id``, or ``provider``'s rows of ``scope``; returns how many.

    On Postgres a row another transaction is writing right now (a run committing) is
    left alone (``SKIP LOCKED``) rather than waited for: its run is not abandoned.
    """
    match = [CollectionRun.status == RunStatus.RUNNING]
    if run_id is not None:
        match.append(CollectionRun.id == run_id)
    if provider is not None:
        match += [CollectionRun.provider == provider, CollectionRun.source == provider]
    if scope is not None:
        match.append(CollectionRun.scope == scope)
    ids = select(CollectionRun.id).where(*match)
    if engine.dialect.name == "postgresql":
        ids = ids.with_for_update(skip_locked=True)
    stmt = (
        update(CollectionRun)
        .where(CollectionRun.id.in_(ids.scalar_subquery()))
        .values(status=RunStatus.ABANDONED, error=error[:2000], finished_at=finished)
    )
    try:
        with engine.begin() as conn:
            return int(conn.execute(stmt).rowcount)
    except SQLAlchemyError as exc:
        raise _fail("cannot mark runs abandoned", exc) from exc


def probe_engine(engine: Engine, timeout_seconds: float) -> Engine:
    """An engine on ``engine``'s database for health checks: no pool, a short connect timeout.

    So /readyz answers in bounded time while a database server is unreachable,
    instead of waiting out the pool's connect timeout. SQLite opens a local file:
    ``engine`` itself is returned.
    """
    if engine.dialect.name != "postgresql":
        return engine
    return make_engine(
        engine.url.render_as_string(hide_password=False),
        poolclass=NullPool,
        connect_args={
            "connect_timeout": max(1, round(timeout_seconds)),
            "application_name": "gpu-tracker-health",
        },
    )
