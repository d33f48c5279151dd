"""Health for ``gpu-tracker web``, which runs no scheduler: what the run log says.

``serve`` hands the app its live :class:`~tracker.service.health.HealthState`; the
dashboard alone rebuilds the same report from ``collection_runs`` on each request,
with the same staleness rule (the configured cadences), so the Collectors page and
/healthz read alike whichever process serves them. A job that never succeeded is
measured from the web process's start, as the service measures it from its own.
"""

from __future__ import annotations

import json
from typing import Any

from tracker import registry
from tracker.errors import one_line
from tracker.hooks import Hooks
from tracker.service.health import HealthState
from tracker.service.jobs import plan_jobs
from tracker.service.metrics import Metrics
from tracker.service.report import Reporter, utcnow
from tracker.service.web import Response, Route, json_response
from tracker.settings import Settings
from tracker.store import DatabaseError, Engine, runs

__all__ = ["RunLogHealth"]


class RunLogHealth:
    def __init__(self, settings: Settings, engine: Engine) -> None:
        collectors = registry.available(settings)
        why = {name: registry.unusable(settings, name, c) for name, c in collectors.items()}
        self.jobs = [
            spec
            for spec in plan_jobs(collectors, settings.scheduler, settings.scheduler.collectors)
            if why[spec.collector][0] is None
        ]
        self.state = HealthState(
            started_at=utcnow(), stale_after_cadences=settings.scheduler.stale_after_cadences
        )
        for spec in self.jobs:
            self.state.add(spec)
            missing = why[spec.collector][1]
            if missing is not None:  # as serve has it: not configured, never stale
                self.state.set_configured(spec.id, missing, self.state.started_at)
        self.state.disabled = {name: off for name, (off, _) in why.items() if off is not None}
        self._probe = runs.probe_engine(engine, settings.scheduler.health_db_timeout_seconds)
        self.reporter = Reporter(settings, engine, self.state, Metrics(), Hooks())
        self.engine = engine

    def report(self) -> tuple[bool, dict[str, Any]]:
        """/healthz's (healthy, body), read from the run log now."""
        if self.reporter.ping(self._probe):
            try:
                self.reporter.seed(self.jobs, runs.latest_runs(self.engine))
            except DatabaseError as exc:
                self.reporter.database(False, one_line(exc))
        return self.state.report(utcnow())

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        """/readyz: the dashboard serves while its database answers; a stale collector
        is /healthz's to name, as under ``serve`` (issue 41)."""
        ok = self.reporter.ping(self._probe)
        body = {
            "status": "ok" if ok else "unavailable",
            "time": utcnow().isoformat(),
            "started": True,
            "database": {"reachable": ok, "error": self.state.database_error},
        }
        return ok, body

    def routes(self) -> dict[str, Route]:
        def livez() -> Response:
            body = {"status": "ok", "started_at": self.state.started_at.isoformat(), "jobs": 0}
            return 200, "application/json", json.dumps(body, indent=2).encode()

        return {
            "/livez": livez,
            "/readyz": json_response(self.readiness),
            "/healthz": json_response(self.report),
            "/health": json_response(self.report),
        }
