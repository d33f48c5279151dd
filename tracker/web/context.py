"""What every route of the app reads: the settings, the engine, the probes and the
health view of whoever runs it (``serve`` or ``web``), stored on the app's state."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.requests import Request

from tracker.service.web import Route
from tracker.settings import Settings
from tracker.store import Engine

__all__ = ["HERE", "HealthView", "WebContext", "context_of"]

HERE = Path(__file__).parent

HealthView = Callable[[], tuple[bool, dict[str, Any]]]


@dataclass
class WebContext:
    settings: Settings
    engine: Engine
    probes: Mapping[str, Route] = field(default_factory=dict)
    """Path → route for /livez, /readyz, /healthz, /metrics (whoever runs the app)."""
    health: HealthView | None = None
    """The /healthz report the Collectors page shows (None: read from the run log)."""
    host: str | None = None
    """The address the server is bound to (``web.allowed_hosts``' default names it)."""


def context_of(request: Request) -> WebContext:
    context = request.app.state.context
    assert isinstance(context, WebContext)
    return context
