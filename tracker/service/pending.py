"""Attempts the run log has not seen yet, kept until the database is back.

An attempt made while the database is unreachable cannot write its row, and a run
that lost the database mid-way cannot write its failure. Both are held here, in
memory, and written at the job's next attempt that reaches the database, so the run
log shows every attempt /metrics counted, each with its own time and error, instead
of a gap (or a row stuck at ``running``, later marked abandoned with no reason).

Bounded: after :data:`MAX_PENDING` attempts the oldest are dropped and counted, and
the first row written says how many were dropped.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime

from tracker.collect import RunSummary
from tracker.service.jobs import JobSpec
from tracker.store import Engine, runs

__all__ = ["MAX_PENDING", "PendingRuns"]

log = logging.getLogger(__name__)

MAX_PENDING = 200
"""Attempts held at most: at a 60 s database retry, over three hours of an outage."""


@dataclass(frozen=True, eq=False)  # compared by identity
class _Attempt:
    spec: JobSpec
    started_at: datetime
    finished_at: datetime
    error: str
    summary: RunSummary | None = None
    """A run that has a row (still ``running``) whose failure is to be written."""


@dataclass
class PendingRuns:
    engine: Engine
    _attempts: list[_Attempt] = field(default_factory=list)
    _dropped: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _flushing: threading.Lock = field(default_factory=threading.Lock)
    """Held by the one job thread writing (jobs run in parallel): no row written twice."""

    def missed(self, spec: JobSpec, started: datetime, finished: datetime, error: str) -> None:
        """An attempt that could not reach the database at all."""
        self._add(_Attempt(spec, started, finished, error))

    def unrecorded(self, spec: JobSpec, summary: RunSummary) -> None:
        """A failed run whose failure could not be written (its row says ``running``)."""
        assert summary.started_at is not None and summary.finished_at is not None
        attempt = _Attempt(
            spec, summary.started_at, summary.finished_at, summary.error or "", summary
        )
        self._add(attempt)

    def _add(self, attempt: _Attempt) -> None:
        with self._lock:
            self._attempts.append(attempt)
            if len(self._attempts) > MAX_PENDING:
                del self._attempts[0]
                self._dropped += 1

    def __len__(self) -> int:
        return len(self._attempts)

    def flush(self) -> int:
        """Write what is held, oldest first; returns how many rows were written.

        Raises :class:`DatabaseError` if the database is still unreachable: what was not
        written stays held. Another thread writing them already: returns 0 at once.
        """
        if not self._flushing.acquire(blocking=False):
            return 0
        try:
            ids = self._flush()
        finally:
            self._flushing.release()
        if ids:
            log.info(
                "recorded %d attempts the database missed (runs %s)",
                len(ids),
                ", ".join(map(str, ids)),
                extra={"event": "runs_recorded_late", "run_ids": ids},
            )
        return len(ids)

    def _flush(self) -> list[int]:
        ids: list[int] = []
        while True:
            with self._lock:
                if not self._attempts:
                    break
                attempt, dropped = self._attempts[0], self._dropped
            error = attempt.error
            if dropped:
                error += f" ({dropped} earlier attempts during the outage are not recorded)"
            ids.append(self._write(attempt, error))
            with self._lock:
                if attempt in self._attempts:
                    self._attempts.remove(attempt)
                else:  # dropped by _add while it was being written: written all the same
                    self._dropped -= 1
                self._dropped -= dropped
        return ids

    def _write(self, attempt: _Attempt, error: str) -> int:
        """Write one attempt; returns its run id."""
        summary = attempt.summary
        if summary is None:
            return runs.record_failed_attempt(
                self.engine,
                attempt.spec.collector,
                attempt.spec.scope,
                attempt.started_at,
                attempt.finished_at,
                error,
            )
        assert summary.run_id is not None
        runs.record_failure(
            self.engine,
            summary.run_id,
            finished=attempt.finished_at,
            error=error,
            skipped=summary.skipped,
            skip_reasons=summary.skip_reasons,
        )
        return summary.run_id
