"""Runs nobody will finish: marked ``abandoned`` in the run log, with why.

Two cases. A process killed mid-run (OOM, SIGKILL, a lost node) leaves its row
``running``; the next start of any instance marks it (:func:`orphans`), on Postgres
once no instance holds the job's lock (a live run holds it for its whole length).
SQLite has no lock that spans processes, so there the next run of the same source
marks it (``tracker.store.runs.start_run``). A service that stops while a run is still
going marks that run itself, with its shutdown timeout and the time (:func:`unfinished`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from contextlib import ExitStack
from datetime import UTC, datetime

from tracker.errors import one_line
from tracker.format import iso_z
from tracker.service.jobs import SERVICES_SCOPE, SPOT_SCOPE, STANDARD_SCOPE, JobSpec
from tracker.store import DatabaseError, Engine, JobLocks, runs
from tracker.store.runs import ORPHAN_ERROR

__all__ = ["WRITE_SECONDS", "orphans", "unfinished"]

log = logging.getLogger(__name__)

WRITE_SECONDS = 2.0
"""How long a stopping service may spend marking its unfinished runs abandoned."""
COLLECTION = "collection"
"""The phase of a job whose run (not its hooks) was cut (``tracker.service.runner``)."""


def orphans(engine: Engine, locks: JobLocks) -> int:
    """Mark ``abandoned`` the ``running`` rows whose job no one holds (Postgres only);
    returns how many. Raises :class:`DatabaseError` if the run log cannot be read."""
    if engine.dialect.name != "postgresql":
        return 0
    found = 0
    for run in runs.running_runs(engine):
        # A service run holds its job's lock; a manual run (scope "all") holds both.
        own = (SPOT_SCOPE, STANDARD_SCOPE, SERVICES_SCOPE)
        scopes = [run.scope] if run.scope in own else None
        jobs = [f"{run.provider}:{s}" for s in scopes or (SPOT_SCOPE, STANDARD_SCOPE)]
        with ExitStack() as held:
            if not all(held.enter_context(locks.hold(job)) for job in jobs):
                continue  # someone is running it right now
            error = f"{ORPHAN_ERROR} (found at start-up, {iso_z(datetime.now(UTC))})"
            if not runs.abandon_running(engine, error, run_id=run.id):
                continue
        found += 1
        log.warning(
            "run %d of %s (%s, started %s) was left running by a process that stopped; "
            "marked abandoned",
            run.id,
            run.source,
            run.scope,
            iso_z(run.started_at),
            extra={"event": "run_abandoned", "run_id": run.id, "collector": run.provider},
        )
    return found


def unfinished(
    engine: Engine, jobs: Sequence[JobSpec], running: dict[str, str], limit: str
) -> dict[str, str]:
    """Mark the runs of the jobs still ``running`` at shutdown abandoned, within
    :data:`WRITE_SECONDS`; returns what became of each job, by id, for the one line.

    ``running``: job id → phase (``collection`` or the hooks); ``limit``: the timeout as
    configured, for the error text."""
    what = {
        job: "run rolled back" if phase == COLLECTION else f"{phase} skipped"
        for job, phase in running.items()
    }
    specs = [s for s in jobs if running.get(s.id) == COLLECTION]
    error = f"abandoned: still running when the service stopped ({limit}); "
    error += "its transaction rolled back"
    at = datetime.now(UTC)

    def mark() -> None:
        for spec in specs:
            try:
                runs.abandon_running(
                    engine, error, provider=spec.collector, scope=spec.scope, finished=at
                )
            except DatabaseError as exc:
                what[spec.id] += f" (not marked abandoned: {one_line(exc)})"

    # Bounded too: a database that is down (a connect timeout) or a SQLite file the run
    # still locks must not hold the exit; the next start marks what is left.
    marking = threading.Thread(target=mark, name="abandon-runs", daemon=True)
    marking.start()
    marking.join(WRITE_SECONDS)
    if marking.is_alive():
        for spec in specs:
            what[spec.id] += " (not marked abandoned in time: the next start does)"
    return what
