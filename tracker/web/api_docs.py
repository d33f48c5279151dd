"""``/api/docs``: the OpenAPI document as a readable page (no CDN, no script).

FastAPI's own docs UI loads Swagger UI from a CDN, which an air-gapped install cannot
reach and the CSP forbids; this page renders the same document on the server. Each
parameter's JSON schema is written the way a person reads a signature:
``integer ≥ 1, ≤ 1000``, ``list of on_demand | spot | …``, ``text, up to 128``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from tracker.web.pages import page
from tracker.web.params import (
    DECIMAL,
    NAME_PATTERN,
    ONE_NAME_PATTERN,
    POSITIVE,
    STEP_PATTERN,
    TIME_PATTERN,
    check_known,
)

__all__ = ["router", "type_label"]

router = APIRouter(include_in_schema=False)

_PATTERNS = {
    DECIMAL: "a decimal from 0 to 1,000,000,000",
    POSITIVE: "a decimal above zero, up to 1,000,000,000",
    NAME_PATTERN: "printable ASCII",
    ONE_NAME_PATTERN: "printable ASCII, not blank",
    TIME_PATTERN: "a time: now, today, yesterday, an age (7d, 12h) or an ISO date 2000-2999",
    STEP_PATTERN: "a step: 1-9999 hours, days or weeks (1h, 1d, 1w)",
}
"""Patterns too long to read, in words (the document itself carries the pattern)."""
_NAMES = {"string": "text", "integer": "integer", "number": "number", "boolean": "true | false"}


def _resolve(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
        found = components.get(ref.rsplit("/", 1)[1], {})
        return found if isinstance(found, dict) else {}
    return schema


def type_label(schema: dict[str, Any], components: dict[str, Any]) -> str:
    """A parameter's schema in words (``null`` alternatives dropped: absent = default)."""
    schema = _resolve(schema, components)
    if schema.get("type") == "object" and "properties" in schema:  # a form-exploded object
        fields = [f"{k} ({type_label(v, components)})" for k, v in schema["properties"].items()]
        return "query parameters " + ", ".join(fields)
    options = [o for o in schema.get("anyOf", []) if o.get("type") != "null"]
    if options:
        return " or ".join(type_label(o, components) for o in options)
    if "enum" in schema:
        return "one of " + " | ".join(str(v) if v != "" else '""' for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return "list of " + type_label(schema.get("items", {}), components)
    words = [_NAMES.get(str(kind), str(kind or "any"))]
    if schema.get("format") in ("date-time", "date"):
        words = [f"ISO-8601 {'time' if schema['format'] == 'date-time' else 'date'}"]
    bounds = [
        (key, sign)
        for key, sign in (
            ("minimum", "≥"),
            ("exclusiveMinimum", ">"),
            ("maximum", "≤"),
            ("exclusiveMaximum", "<"),
        )
        if key in schema
    ]
    words += [f"{sign} {schema[key]:g}" for key, sign in bounds]
    if "minLength" in schema and schema["minLength"] > 1:
        words.append(f"at least {schema['minLength']} characters")
    if "maxLength" in schema:
        words.append(f"up to {schema['maxLength']} characters")
    if schema.get("pattern") in _PATTERNS:
        words.append(_PATTERNS[schema["pattern"]])
    elif "pattern" in schema:
        words.append(f"matching {schema['pattern']}")
    return ", ".join(words)


def literal_code(text: str) -> Markup:
    """A docstring's ````code```` as ``<code>``, the rest escaped."""
    parts = str(escape(" ".join(text.split()))).split("``")
    return Markup("".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts)))


def parameters(op: dict[str, Any], components: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for p in op.get("parameters", []):
        schema = p.get("schema", {})
        default = schema.get("default")
        rows.append(
            {
                "name": p["name"],
                "required": p.get("required", False),
                "type": type_label(schema, components),
                "default": ""
                if default is None
                else str(default).lower()
                if isinstance(default, bool)
                else str(default),
                "description": p.get("description") or schema.get("description") or "",
            }
        )
    return rows


@router.get("/api/docs", response_class=HTMLResponse)
def api_docs(request: Request) -> HTMLResponse:
    """The OpenAPI document FastAPI generates, as a plain page."""
    check_known(request, ())
    schema = request.app.openapi()
    components = schema.get("components", {}).get("schemas", {})
    operations = [
        {
            "method": method.upper(),
            "path": path,
            "summary": op.get("summary", ""),
            "description": literal_code(op.get("description", "")),
            "parameters": parameters(op, components),
            "responses": sorted(op.get("responses", {}).items()),
        }
        for path, ops in schema.get("paths", {}).items()
        for method, op in ops.items()
    ]
    return page(request, "api.html", "API", schema=schema, operations=operations)
