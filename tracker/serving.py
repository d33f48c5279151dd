"""``serve`` composed: the scheduler service and the dashboard on one HTTP server.

The service package runs the collections and answers the probes; the web package is
the dashboard and /api/v1. Neither imports the other: this module (used by the
``serve`` command) hands the service the app to serve.
"""

from __future__ import annotations

from typing import Any

from tracker.service.scheduler import Service
from tracker.service.web import probe_app

__all__ = ["service_app"]


def service_app(service: Service) -> Any:
    """The dashboard with the probes and /metrics ([web] enabled), or the probes alone."""
    routes = service.probe_routes()
    if not service.settings.web.enabled:
        return probe_app(routes)
    from tracker.web import WebContext, create_app  # FastAPI loads only when serving

    return create_app(WebContext(service.settings, service.engine, routes, service.health_report))
