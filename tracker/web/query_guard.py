"""Query strings no route should have to think about: a NUL, a repeated single value.

Both are checked once for every route, before its own parameters are read:

* A NUL (``%00``) in any parameter is a 400 on both engines. SQLite would store or
  compare it; Postgres refuses it in a text value and the request became a 500
  with a traceback in the log.
* A parameter given twice to an /api route is a 400 unless the route takes a list of
  it (``gpu``, ``provider``…: what the OpenAPI document types as an array). FastAPI keeps the
  last of ``?limit=1&limit=10000`` silently, so a caller never learns which
  one counted, and a proxy that checks the first sees another value than the app.
  An /api route the document leaves out (the legacy ``/api/v1/history``) is typed from
  its own parameters instead.
"""

from __future__ import annotations

import types
from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Any, Union, get_args, get_origin

from starlette.requests import Request

from tracker.web.errors import BadRequest

__all__ = ["check_query", "repeatable", "route_lists"]


def _is_array(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if schema.get("type") == "array":
        return True
    return any(_is_array(s) for key in ("anyOf", "oneOf", "allOf") for s in schema.get(key, []))


def repeatable(openapi: dict[str, Any], path: str) -> frozenset[str] | None:
    """The query parameters of ``path``'s GET that take several values (None: a path
    the document leaves out, a dashboard page, whose form fields it does not type)."""
    operation = openapi.get("paths", {}).get(path, {}).get("get")
    if operation is None:
        return None
    return frozenset(
        p["name"]
        for p in operation.get("parameters", [])
        if p.get("in") == "query" and _is_array(p.get("schema"))
    )


def _takes_many(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin in (list, tuple, set, frozenset, Sequence):
        return True
    if origin in (Union, types.UnionType, Annotated):
        return any(_takes_many(a) for a in get_args(annotation))
    return False


def route_lists(route: Any) -> frozenset[str] | None:
    """The query parameters a route reads as lists, from its own signature and those of
    its dependencies (None: not a FastAPI route)."""
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return None
    found: set[str] = set()
    pending = [dependant]
    while pending:  # the route's own parameters and those of its Depends()
        d = pending.pop()
        found.update(f.alias for f in d.query_params if _takes_many(f.field_info.annotation))
        pending.extend(d.dependencies)
    return frozenset(found)


def check_query(request: Request) -> None:
    """BadRequest for a NUL in any parameter, or a single-valued one given twice
    (an app-wide FastAPI dependency: it runs before each route's parameters)."""
    items = request.query_params.multi_items()
    for name, value in items:
        if "\x00" in name or "\x00" in value:
            shown = name.replace("\x00", "%00")
            raise BadRequest(f"{shown}: a NUL character (%00) is not allowed in a parameter")
    twice = sorted(name for name, n in Counter(name for name, _ in items).items() if n > 1)
    if not twice:
        return
    route = request.scope.get("route")
    path = getattr(route, "path", request.url.path)
    state = request.app.state
    known: dict[str, frozenset[str] | None] | None = getattr(state, "query_lists", None)
    if known is None:
        known = state.query_lists = {}
    if path not in known:  # which parameters are lists never changes while the app runs
        lists = repeatable(request.app.openapi(), path)
        if lists is None and path.startswith("/api/"):
            lists = route_lists(route)
        known[path] = lists
    lists = known[path]
    single = [name for name in twice if lists is not None and name not in lists]
    if single:
        raise BadRequest(
            f"{', '.join(single)}: given more than once; this parameter takes one value"
        )
