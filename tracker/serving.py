"""``serve`` composed: the scheduler service and the dashboard on one HTTP server.

The service package runs the collections and answers the probes; the web package is
the dashboard and /api/v1; the MCP face answers /mcp on the same app. None imports
another: this module (used by the ``serve`` command) hands the service the app to serve.
"""

from __future__ import annotations

from typing import Any

from tracker.health_text import HEALTH_PATHS, public_route
from tracker.service.scheduler import Service
from tracker.service.web import probe_app

__all__ = ["service_app"]


def service_app(service: Service) -> Any:
    """The dashboard with the probes and /metrics ([web] enabled), or the probes alone."""
    routes = service.probe_routes()
    if not service.settings.web.enabled:
        if service.settings.web.token is not None:  # no token check here: classes only
            routes = {
                path: public_route(route) if path in HEALTH_PATHS else route
                for path, route in routes.items()
            }
        return probe_app(routes)
    from tracker.mcp import Reader, mount  # FastAPI and the MCP SDK load only when serving
    from tracker.service.web import parse_address
    from tracker.web import WebContext, create_app

    host = parse_address(service.http_address)[0] if service.http_address else None
    context = WebContext(service.settings, service.engine, routes, service.health_report, host=host)
    app = create_app(context)
    mount(app, Reader(service.settings, service.engine))  # /mcp, behind the app's token
    return app
