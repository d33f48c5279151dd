"""The ASGI app: dashboard pages, /api/v1, the health probes and /metrics in one.

Read-only by construction: every route is a GET, HEAD is answered as the GET without
its body (:mod:`tracker.web.methods`), and any other method is a 405 with ``Allow``.
What the app needs arrives in :class:`WebContext` (settings, the engine, the probes
and the health view of whoever runs it), so ``serve`` and ``web`` build the same app
around different health sources.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles
from pydantic import SecretStr
from starlette.requests import Request
from starlette.responses import Response as HttpResponse
from starlette.routing import Route as StarletteRoute

from tracker.service.web import Route
from tracker.web import (
    alerts_page,
    api,
    api_docs,
    gpu_page,
    history_api,
    history_routes,
    index,
    pages,
    plan,
    sync_api,
)
from tracker.web.admission import Admission
from tracker.web.context import HERE, WebContext, context_of
from tracker.web.errors import install_error_handlers
from tracker.web.hosts import HostCheck
from tracker.web.methods import HeadAsGet
from tracker.web.openapi import install_openapi
from tracker.web.params import DropEmptyFilters
from tracker.web.public_health import HEALTH_PATHS, for_request
from tracker.web.query_guard import check_query
from tracker.web.security import SecurityMiddleware

__all__ = ["PUBLIC_PATHS", "WebContext", "context_of", "create_app"]

PUBLIC_PATHS = frozenset({"/livez", "/readyz", "/healthz", "/health"})
"""Answered without the token: orchestrators probe them without credentials, and they
carry no price data (errors in them are masked like every log line, and shown as
their class alone without the token, :mod:`tracker.web.public_health`)."""


def _probe_endpoint(
    route: Route, path: str, token: SecretStr | None
) -> Callable[[Request], HttpResponse]:
    secret = token.get_secret_value().encode() if token is not None else None

    def endpoint(request: Request) -> HttpResponse:
        status, content_type, body = route()
        if path in HEALTH_PATHS:  # error texts only with the token
            status, content_type, body = for_request(request, (status, content_type, body), secret)
        return HttpResponse(
            body, status_code=status, media_type=content_type, headers={"Cache-Control": "no-store"}
        )

    return endpoint


def _add_probes(app: FastAPI, probes: Mapping[str, Route], token: SecretStr | None) -> None:
    for path, route in probes.items():
        endpoint = _probe_endpoint(route, path, token)
        app.router.routes.append(
            StarletteRoute(path, endpoint, methods=["GET"], include_in_schema=False)
        )


def create_app(context: WebContext) -> FastAPI:
    """The dashboard and API over ``context.engine`` (see the module docstring)."""
    app = FastAPI(
        title="gpu-tracker",
        summary="GPU cloud prices over time: the dashboard's JSON API (read-only).",
        version="1",
        docs_url=None,  # /api/docs is our own page: Swagger UI would need a CDN
        redoc_url=None,
        openapi_url="/api/openapi.json",
        dependencies=[Depends(check_query)],  # a NUL or a repeated single value: 400
    )
    app.state.context = context
    web = context.settings.web
    token = web.resolved_token()  # ConfigError for a blank or short token
    app.add_middleware(HeadAsGet)
    app.add_middleware(DropEmptyFilters)
    app.add_middleware(
        Admission, limit=web.max_concurrent, queued=web.max_queued, wait=web.queue_seconds
    )
    app.add_middleware(HostCheck, allowed=web.hosts(context.host))
    app.add_middleware(SecurityMiddleware, token=token, public=PUBLIC_PATHS)
    install_error_handlers(app, html=pages.error_page)
    install_openapi(app, context)
    _add_probes(app, context.probes, token)
    app.include_router(index.api_router)
    app.include_router(api.router)
    app.include_router(plan.api_router)
    app.include_router(history_api.router)
    app.include_router(history_routes.router)
    app.include_router(alerts_page.api_router)
    app.include_router(sync_api.router)
    app.include_router(pages.router)
    app.include_router(gpu_page.router)
    app.include_router(plan.page_router)
    app.include_router(alerts_page.router)
    app.include_router(history_api.page_router)
    app.include_router(index.page_router)
    app.include_router(api_docs.router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    return app
