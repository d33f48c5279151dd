"""Where to start: ``/api/v1/`` lists the API's routes, ``/docs`` leads to their docs.

The list is read from the OpenAPI document the app serves, so it names exactly the
routes that exist, each with its one-line summary and the parameters it takes.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse

from tracker.web.params import check_known

__all__ = ["api_router", "page_router"]

api_router = APIRouter(tags=["api"])
page_router = APIRouter(include_in_schema=False)

DOCS = "/api/docs"
OPENAPI = "/api/openapi.json"


def route_list(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Each documented GET route: path, summary and parameter names, by path."""
    found = []
    for path, operations in sorted(schema.get("paths", {}).items()):
        op = operations.get("get")
        if op is None:
            continue
        found.append(
            {
                "path": path,
                "methods": ["GET", "HEAD"],
                "summary": op.get("summary", ""),
                "parameters": [p["name"] for p in op.get("parameters", [])],
            }
        )
    return found


@api_router.get(
    "/api/v1/",
    summary="The API's routes (this list)",
    response_description="Every route of /api/v1, and where its documentation is.",
)
def api_index(request: Request) -> JSONResponse:
    """The routes of /api/v1 with their summaries and parameters, the OpenAPI document
    and the human-readable docs page."""
    check_known(request, ())
    return JSONResponse(
        {"routes": route_list(request.app.openapi()), "openapi": OPENAPI, "docs": DOCS}
    )


@page_router.get("/docs")
def docs(request: Request) -> RedirectResponse:
    """``/docs`` is where FastAPI apps usually keep their docs: send readers to ours."""
    return RedirectResponse(DOCS, status_code=308)
