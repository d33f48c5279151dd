"""The OpenAPI document as the API behaves: what a client nobody here wrote may rely on.

FastAPI's generated document promised a 422 with its own error list, while every
route answers a bad parameter with a 400 ``{"error": "…"}``, and it described closed
sets as free text (any string for ``profile`` or ``currency``), so schema-valid requests
were rejected. This module rewrites the generated document:

* every /api operation documents its 400 (and 401 behind a token, 503 without a
  database) with the :data:`ERROR` body, and no 422;
* closed sets are enums: ``gpu`` the catalog's models and families, ``profile`` the
  profiles the service knows, ``currency`` the currencies with an exchange rate, and
  ``limit`` is bounded by ``web.max_limit``;
* names (provider, region) are printable ASCII of at most 200 characters, which
  :func:`tracker.web.params.clean` enforces;
* times are :data:`~tracker.web.params.TIME_PATTERN`, which the routes enforce, so a
  text the pattern allows is a time they read;
* an optional query parameter is its type, not "its type or null": a query string
  carries no null, and an absent parameter takes its default.

Profiles and currencies change with the configuration and the stored rates, so they
are filled in on each request for the document (a few milliseconds).
"""

from __future__ import annotations

import copy
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from tracker.catalog.resolve import default_catalog
from tracker.history.args import MAX_POINTS
from tracker.recommend import ProfileError
from tracker.recommend.stored import profiles_for
from tracker.store import series as fx_store
from tracker.web.context import WebContext
from tracker.web.params import NAME_PATTERN

__all__ = ["ERROR", "gpu_names", "install_openapi"]

ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {"type": "string", "description": "What was wrong, in one line."}},
    "additionalProperties": False,
}
_RESPONSES = {
    "400": "A bad parameter: an unknown or malformed one, a value outside its set or range "
    "(the line names the parameter and why).",
    "503": "The database is unavailable.",
}
_NAMES = {"provider", "region"}
_TIME = (
    "now, today, yesterday; an age before now (30d, 12h, 2w, 90m, 1.5d, '7d ago'); or an "
    "ISO-8601 date from 2000 to 2999 with an optional time and offset (2026-01-01, "
    "2026-01-01T10:30:00Z, 2026-01-01T10:30+02:00; no offset: UTC). The pattern is "
    "exact: every matching text is accepted."
)
_WINDOW = (
    " A window whose since is not before its until, or that no step falls in, holds no "
    "rows: []. An until after now reads to now."
)
_HISTORIES = ("/api/v1/history/gpu", "/api/v1/history/offer")
_WORDS = {
    **{(path, "since"): _TIME + " Default: 30 days before until." for path in _HISTORIES},
    **{(path, "until"): _TIME + " Default: now." for path in _HISTORIES},
    ("/api/v1/history/gpu", "resample"): "A step, 1-9999 hours, days or weeks (1h, 6h, "
    "1d, 1w). Default: 1d.",
    ("/api/v1/history/offer", "resample"): "A step, 1-9999 hours, days or weeks (1h, "
    "6h, 1d, 1w): the offer's price at each step. Without it: the offer's intervals.",
    ("/api/v1/history/offer/at", "at"): _TIME + " The interval in force then.",
    ("/api/v1/history/offer", "zone"): "The offer's zone (spot prices are per zone).",
    ("/api/v1/history/offer", "payment_option"): "The offer's payment option (reserved).",
    ("/api/v1/alerts", "since"): "Only alerts since then: " + _TIME,
    ("/api/v1/plan", "at"): "Plan at the prices in force then: " + _TIME,
    ("/api/v1/plan/burst", "at"): "Plan at the prices in force then: " + _TIME,
}
_STEPS = (
    " Steps start at the first stored price (no rows before it); more than "
    f"{MAX_POINTS:,} steps from there to until is the one 400 between valid parameters "
    "(use a coarser resample or a later since)."
)
_DESCRIPTIONS = {
    "/api/v1/history/gpu": _WINDOW + _STEPS,
    "/api/v1/history/offer": _WINDOW + " With resample:" + _STEPS,
}
_NOT_FOUND = ("/api/v1/history/offer", "/api/v1/history/offer/at")
_PLANS = ("/api/v1/plan", "/api/v1/plan/burst")
_ZERO = "^0+(\\.0+)?$"
_MOVE = (
    "Moving: current_provider, the provider you run on now (plans there carry no "
    "migration and the savings are against it), and migration_usd, the one-off cost "
    "of moving, charged to each plan elsewhere. Two query parameters (form, exploded); "
    "migration_usd above zero needs current_provider."
)


def _move(op: dict[str, Any]) -> None:
    """``current_provider`` and ``migration_usd`` as the one object they are: a cost of
    moving means nothing without the provider moved from, and an exploded form object
    (the same two query parameters on the wire) can say so, where two independent
    parameters cannot."""
    params = op.get("parameters", [])
    pair = {p["name"]: p for p in params if p["name"] in ("current_provider", "migration_usd")}
    if len(pair) != 2:
        return
    op["parameters"] = [p for p in params if p["name"] not in pair]
    properties = {name: _parameter_schema(p) for name, p in pair.items()}
    op["parameters"].append(
        {
            "name": "move",
            "in": "query",
            "required": False,
            "style": "form",
            "explode": True,
            "description": _MOVE,
            "schema": {
                "type": "object",
                "properties": properties,
                "additionalProperties": False,
                "anyOf": [
                    {"required": ["current_provider"]},
                    {"properties": {"migration_usd": {"pattern": _ZERO}}},
                ],
            },
        }
    )


def gpu_names() -> list[str]:
    """The GPU names the schema lists: each catalog model and each family's label
    (``H100`` selects every H100). The API also takes any other spelling the catalog
    resolves, in any case, and GPU names stored as offers show them."""
    catalog = default_catalog()
    return sorted({*catalog.specs, *(f.label for f in catalog.families.values())})


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _parameter_schema(param: dict[str, Any]) -> dict[str, Any]:
    """The schema of one value (a list parameter's items)."""
    schema: dict[str, Any] = param["schema"]
    for option in schema.get("anyOf", [schema]):
        if option.get("type") == "array":
            items: dict[str, Any] = option["items"]
            return items
        if option.get("type") != "null":
            found: dict[str, Any] = option
            return found
    return schema


def _drop_null(param: dict[str, Any]) -> None:
    """A query parameter is absent or a string, never JSON ``null``: FastAPI's
    ``X | None`` becomes plain ``X`` (absent means the default, as ``required`` says)."""
    schema = param["schema"]
    options = [o for o in schema.get("anyOf", []) if o.get("type") != "null"]
    if len(options) == 1 and len(schema["anyOf"]) == 2:
        del schema["anyOf"]
        schema.update(options[0])


def _operations(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (path, op)
        for path, ops in doc.get("paths", {}).items()
        for op in ops.values()
        if path.startswith("/api/")
    ]


def fixed_document(doc: dict[str, Any], token: bool) -> dict[str, Any]:
    """The parts that hold for the app's lifetime (see the module docstring)."""
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schemas["Error"] = ERROR
    gpus = gpu_names()
    for path, op in _operations(doc):
        responses = op.setdefault("responses", {})
        responses.pop("422", None)
        for code, text in _RESPONSES.items():
            responses[code] = _error(text)
        if token:
            responses["401"] = _error("The web token is missing or wrong.")
        if path in _DESCRIPTIONS:
            op["description"] = op.get("description", "") + _DESCRIPTIONS[path]
        if path in _NOT_FOUND:
            responses["404"] = _error("The store holds no such offer.")
        if path in _PLANS:
            _move(op)
        for param in op.get("parameters", []):
            _drop_null(param)
            if (path, param["name"]) in _WORDS:
                param["description"] = _WORDS[(path, param["name"])]
            value = _parameter_schema(param)
            if param["name"] == "gpu" and param.get("required"):
                value["enum"] = gpus  # a history of one GPU: a name, never blank
            elif param["name"] == "gpu":
                value["enum"] = ["", *gpus]  # empty: no filter
            elif param["name"] in _NAMES:
                value.setdefault("pattern", NAME_PATTERN)  # one offer's: not blank either
                value["maxLength"] = 200
    return doc


def live_document(doc: dict[str, Any], context: WebContext) -> dict[str, Any]:
    """``doc`` with the sets that follow the configuration and the store (raises
    DatabaseError when the rates cannot be read: the document would be a guess)."""
    try:
        profiles = sorted(profiles_for(context.settings).profiles)
    except ProfileError:
        profiles = []  # a broken profile file: /api/v1/recommend says why on each call
    rates = fx_store.load_rates(context.engine, context.settings.fx_rates)
    for path, op in _operations(doc):
        for param in op.get("parameters", []):
            value = _parameter_schema(param)
            if path == "/api/v1/recommend" and param["name"] == "profile" and profiles:
                value.update(enum=profiles)
                value.pop("minLength", None)
                value.pop("maxLength", None)
            elif param["name"] == "currency":
                value.update(enum=sorted(rates.currencies()))
                value.pop("maxLength", None)
            elif param["name"] == "limit":
                value["maximum"] = context.settings.web.max_limit
    return doc


def install_openapi(app: FastAPI, context: WebContext) -> None:
    """Serve :func:`fixed_document` + :func:`live_document` as the app's document."""
    cached: dict[str, Any] = {}

    def openapi() -> dict[str, Any]:
        if not cached:
            generated = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                description=app.description,
                routes=app.routes,
            )
            token = context.settings.web.resolved_token() is not None
            cached.update(fixed_document(generated, token))
        return live_document(copy.deepcopy(cached), context)

    setattr(app, "openapi", openapi)  # noqa: B010 (FastAPI's documented override)
