"""Error texts on the dashboard's faces hold no secret; /healthz shows classes without
the token (issue 44.4).

The reproduction: a delivery error holding the webhook's path (``slack: HTTP 404
Cannot POST /services/T0…/B0…/<token>``) was shown as stored by /api/v1/alerts and
/alerts, and ``serve``'s public /healthz showed every error text to anyone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import SecretStr

from tests.web.conftest import TOKEN, Site
from tracker.redact import MASK
from tracker.service.health import HealthState
from tracker.service.jobs import JobSpec
from tracker.service.web import WebServer, json_response
from tracker.settings import AlertsSettings, Settings, WebSettings
from tracker.store import Engine
from tracker.store.outbox import NewAlert, due_deliveries, mark_failed, queue_alerts
from tracker.web import WebContext, create_app
from tracker.web.public_health import error_class, public_report

PATH = "/services/T0ABCDEF12/B0GHIJKL34/abcdefghijklmnopqrstuvwx"
URL = "https://hooks.slack.com" + PATH
AT = datetime(2026, 3, 1, tzinfo=UTC)
PROVIDER_ERROR = "ProviderError: 401 Unauthorized for key abcdefghijklmnopqrstuvwx"


def _health(settings: Settings) -> HealthState:
    state = HealthState(started_at=AT, stale_after_cadences=1e9)
    spec = JobSpec("alpha", "standard", frozenset(), 3600)
    state.add(spec)
    state.set_database(True)
    state.finished(spec.id, "failed", AT, PROVIDER_ERROR)
    state.finished(spec.id, "failed", AT, PROVIDER_ERROR)
    state.sections["alerts"] = lambda: {
        "channels": {"slack": {"last_error": f"slack: HTTP 404 Cannot POST {PATH}"}}
    }
    return state


def _site(site: Site, web: WebSettings) -> tuple[Site, WebServer]:
    settings = Settings(
        database_url=site.database_url,
        web=web,
        alerts=AlertsSettings(slack_webhook_url=SecretStr(URL)),
    )
    state = _health(settings)
    probes = {
        "/healthz": json_response(lambda: state.report(AT)),
        "/readyz": json_response(lambda: (False, {"database": {"error": "DatabaseError: gone"}})),
    }
    app = create_app(WebContext(settings, site.engine, probes))
    server = WebServer("127.0.0.1:0", app)
    server.start()
    return Site(server.url, site.engine, settings, site.database_url), server


@pytest.fixture(scope="module")
def stored(site: Site) -> Engine:
    """One alert whose slack delivery failed with the echoed path, stored unmasked
    (as a release before the fix stored it)."""
    alert = NewAlert("k-echo", "r", "price_change", "s", "echo", {}, ("slack",))
    queue_alerts(site.engine, [alert], AT)
    (due,) = [d for d in due_deliveries(site.engine, AT) if d.channel == "slack"]
    mark_failed(site.engine, [(due.delivery_id, due.attempts)], f"slack: HTTP 404 {PATH}", None)
    return site.engine


@pytest.fixture
def locked(site: Site, stored: Engine) -> Iterator[Site]:
    shown, server = _site(site, WebSettings(token=SecretStr(TOKEN)))
    yield shown
    server.stop()


@pytest.fixture
def open_site(site: Site, stored: Engine) -> Iterator[Site]:
    shown, server = _site(site, WebSettings())
    yield shown
    server.stop()


def test_api_alerts_and_the_page_mask_a_stored_secret(open_site: Site) -> None:
    rows = open_site.get("/api/v1/alerts").json()
    (echo,) = [r for r in rows if r["title"] == "echo"]
    assert echo["last_error"] == f"slack: HTTP 404 /services{MASK}"
    page = open_site.get("/alerts").text
    for part in ("T0ABCDEF12", "B0GHIJKL34", "abcdefghijklmnopqrstuvwx"):
        assert part not in page and part not in str(rows)


def test_healthz_without_the_token_shows_classes_and_counts(locked: Site) -> None:
    public = locked.get("/healthz").json()
    job = public["collectors"]["alpha:standard"]
    assert job["last_error"] == "ProviderError"
    assert job["consecutive_failures"] == 2
    assert public["alerts"]["channels"]["slack"]["last_error"] == "slack: HTTP 404"
    assert "abcdefghijklmnopqrstuvwx" not in str(public) and "401" not in str(public)
    full = locked.get("/healthz", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert full["collectors"]["alpha:standard"]["last_error"] == PROVIDER_ERROR
    assert locked.get("/readyz").json() == {"database": {"error": "DatabaseError"}}
    wrong = locked.get("/healthz", headers={"Authorization": "Bearer wrong-token-12345"})
    assert wrong.json()["collectors"]["alpha:standard"]["last_error"] == "ProviderError"


def test_healthz_without_any_token_set_is_whole(open_site: Site) -> None:
    """No token set: every route is open (local use), /healthz hides nothing more."""
    body = open_site.get("/healthz").json()
    assert body["collectors"]["alpha:standard"]["last_error"] == PROVIDER_ERROR


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("ProviderError: 401 for key xyz", "ProviderError"),
        ("slack: HTTP 500 rollup_error: Slack could not take it now", "slack: HTTP 500"),
        ("slack: no answer within 10s", "slack"),
        ("TimeoutError", "TimeoutError"),
        ("a1b2c3d4e5f6a1b2c3d4e5f6", "error"),  # a bare word may be a secret itself
        ("secret sk-live-123 leaked here", "error"),
    ],
)
def test_the_class_of_an_error_text(text: str, kind: str) -> None:
    assert error_class(text) == kind


def test_public_report_keeps_everything_but_the_texts() -> None:
    body = {"database": {"reachable": False, "error": "DatabaseError: gone"}, "stale": ["a"]}
    assert public_report(body) == {
        "database": {"reachable": False, "error": "DatabaseError"},
        "stale": ["a"],
    }


def test_the_probes_alone_show_classes_when_a_token_is_set() -> None:
    """``serve`` with the dashboard off answers the probes from a bare app that checks no
    token: with one configured its /healthz shows error classes, never the text (before,
    it showed the whole text to anyone)."""
    from types import SimpleNamespace

    from starlette.testclient import TestClient

    from tracker.serving import service_app

    report = {"collectors": {"alpha:standard": {"last_error": PROVIDER_ERROR}}}

    def routes() -> dict[str, Any]:
        body = json.dumps(report).encode()
        return {"/healthz": lambda: (200, "application/json", body)}

    def client(token: str | None) -> TestClient:
        web = WebSettings(enabled=False, token=token)
        return TestClient(
            service_app(SimpleNamespace(settings=Settings(web=web), probe_routes=routes))
        )  # type: ignore[arg-type]

    shown = client(TOKEN).get("/healthz").json()
    assert shown["collectors"]["alpha:standard"]["last_error"] == "ProviderError"
    whole = client(None).get("/healthz").json()  # no token set: local use, shown whole
    assert whole["collectors"]["alpha:standard"]["last_error"] == PROVIDER_ERROR
