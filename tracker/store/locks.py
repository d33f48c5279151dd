"""One runner per job across every process sharing the database.

On Postgres a session-level advisory lock, taken with ``pg_try_advisory_lock`` on a
connection held for the whole run, makes replicas race safely: the loser skips at
once instead of queueing (the winner's run serves both). If that connection dies
the server releases the lock with it; the run's own transaction died too in every
realistic failure (same server), so nothing half-written can be committed twice.

SQLite has no cross-process lock that survives this pattern, so a SQLite
deployment is one process; within it a plain ``threading.Lock`` per job keeps a
scheduled run and a database-retry run of the same job apart.

The lock keeps runs from overlapping, not from repeating: a replica that gets the
lock after another replica's run still asks ``job_runs.last_success`` whether the
job is due (see ``tracker.service.runner``).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError

from tracker.errors import one_line
from tracker.store.engine import DatabaseError

__all__ = ["JobLocks", "LocalLocks", "PostgresLocks", "lock_key", "locks_for"]

log = logging.getLogger(__name__)
NAMESPACE = "gpu-tracker:"


def lock_key(job_id: str) -> int:
    """A stable signed 64-bit key (Postgres' bigint) for a job id.

    ``hashtext`` would do too, but it is undocumented and 32-bit; blake2b is the
    same in every Python and every release.
    """
    digest = hashlib.blake2b((NAMESPACE + job_id).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class JobLocks(Protocol):
    def hold(self, job_id: str) -> AbstractContextManager[bool]:
        """Context manager yielding True if this process now holds ``job_id``.

        Raises :class:`DatabaseError` when the lock cannot even be asked for.
        """
        ...


class LocalLocks:
    """Per-job locks within one process (SQLite deployments)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    @contextmanager
    def hold(self, job_id: str) -> Iterator[bool]:
        with self._guard:
            lock = self._locks.setdefault(job_id, threading.Lock())
        if not lock.acquire(blocking=False):
            yield False
            return
        try:
            yield True
        finally:
            lock.release()


class PostgresLocks:
    """Advisory locks on a dedicated connection per held job."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._local = LocalLocks()

    @contextmanager
    def hold(self, job_id: str) -> Iterator[bool]:
        key = lock_key(job_id)
        # Sessions conflict with each other even within one process; the local
        # lock only spares a connection when this process already runs the job.
        with self._local.hold(job_id) as local:
            if not local:
                yield False
                return
            try:
                conn = self.engine.connect()
                got = bool(
                    conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar()
                )
                conn.commit()
            except SQLAlchemyError as exc:
                raise DatabaseError(f"cannot lock job {job_id}: {one_line(exc)}") from exc
            try:
                if not got:
                    yield False
                    return
                try:
                    yield True
                finally:
                    try:
                        conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
                        conn.commit()
                    except SQLAlchemyError as exc:
                        # The session is gone, and its lock with it.
                        log.warning(
                            "lock for %s released with its lost connection: %s",
                            job_id,
                            one_line(exc),
                        )
                        conn.invalidate()
            finally:
                conn.close()


def locks_for(engine: Engine) -> LocalLocks | PostgresLocks:
    return PostgresLocks(engine) if engine.dialect.name == "postgresql" else LocalLocks()
