"""/livez, /readyz and /healthz; collectors whose credentials come and go; metric labels."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import pytest
from sqlalchemy import select

from tests.service import fake_provider
from tests.service.conftest import COLLECTORS, make_settings
from tests.service.fake_server import FakeProviders
from tests.service.test_service import get, wait_for
from tracker.hooks import Hooks
from tracker.service import Service
from tracker.service import runner as runner_module
from tracker.service.web import HealthServer, json_response
from tracker.store.engine import DatabaseError
from tracker.store.schema import CollectionRun


def new_service(services: list[Service], url: str, names: list[str], **options: Any) -> Service:
    settings = make_settings(url, names, **options)
    service = Service(settings, collectors={n: COLLECTORS[n] for n in names}, hooks=Hooks())
    services.append(service)
    return service


def run_rows(service: Service, provider: str) -> list[tuple[str, str | None]]:
    with service.engine.connect() as conn:
        return [
            (r.status, r.error)
            for r in conn.execute(
                select(CollectionRun.status, CollectionRun.error)
                .where(CollectionRun.provider == provider)
                .order_by(CollectionRun.id)
            )
        ]


def test_missing_credentials_keep_the_job_scheduled_skipped_then_stale_then_recovered(
    sqlite_service_url: str,
    fake: FakeProviders,
    services: list[Service],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(fake_provider.KEY_ENV, raising=False)  # a hiccup at start-up
    service = new_service(
        services,
        sqlite_service_url,
        ["fakekeyed"],
        cadences={"fakekeyed": 0.3 / 60},
        stale_after_cadences=3,
        http="127.0.0.1:0",
    )
    assert [s.id for s in service.jobs] == ["fakekeyed:standard"]
    assert service.health.disabled == {}
    service.start()
    base = service.health_url

    # Each cadence leaves a skipped run saying why; after 3 cadences (0.9 s) the job
    # is stale: not ready, yet alive (a restart would not bring credentials back).
    wait_for(lambda: len(run_rows(service, "fakekeyed")) >= 2, what="two skipped runs")
    reason = "fakekeyed: no credentials (FAKE_PROVIDER_KEY is not set)"
    assert set(run_rows(service, "fakekeyed")) == {("skipped", reason)}
    wait_for(lambda: get(f"{base}/readyz")[0] == 503, what="the job to turn stale")
    status, body = get(f"{base}/readyz")
    assert json.loads(body)["stale"] == ["fakekeyed:standard"]
    assert get(f"{base}/livez")[0] == 200
    status, body = get(f"{base}/healthz")
    job = json.loads(body)["collectors"]["fakekeyed:standard"]
    assert status == 503 and job["last_status"] == "skipped" and job["last_error"] == reason

    monkeypatch.setenv(fake_provider.KEY_ENV, "now-there")  # credentials are back
    wait_for(lambda: ("succeeded", None) in run_rows(service, "fakekeyed"), what="a success")
    wait_for(lambda: get(f"{base}/readyz")[0] == 200, what="ready again without a restart")
    assert service.health.jobs["fakekeyed:standard"].stale is False


def test_switched_off_collectors_are_still_not_scheduled(
    sqlite_service_url: str, services: list[Service], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(fake_provider.URL_ENV, raising=False)  # NotConfigured, not credentials
    service = new_service(services, sqlite_service_url, ["fakegood"])
    assert service.jobs == []
    assert service.health.disabled == {"fakegood": "fakegood: set FAKE_PROVIDER_URL"}


@pytest.mark.postgres
def test_livez_stays_up_while_the_database_is_down_and_readyz_says_why(
    pg_database: tuple[str, Any], fake: FakeProviders, services: list[Service]
) -> None:
    url, _admin = pg_database  # never created: the database is unreachable
    service = new_service(services, url, ["fakegood"], default_minutes=60, http="127.0.0.1:0")
    service.start()

    status, body = get(f"{service.health_url}/livez")
    assert status == 200 and json.loads(body)["status"] == "ok"
    status, body = get(f"{service.health_url}/readyz")
    ready = json.loads(body)
    assert status == 503 and ready["status"] == "unhealthy"
    assert ready["database"]["reachable"] is False
    assert "does not exist" in ready["database"]["error"]
    assert set(ready) == {"status", "time", "database", "stale"}
    assert get(f"{service.health_url}/healthz")[0] == 503


def test_livez_is_down_once_the_scheduler_stopped(
    sqlite_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    service = new_service(services, sqlite_service_url, ["fakegood"], default_minutes=60)
    assert service.liveness()[0] is False  # not started
    service.start()
    assert service.liveness()[0] is True
    service._scheduler.shutdown(wait=False)  # type: ignore[union-attr]  # the thread died
    assert service.liveness() == (
        False,
        {"status": "down", "started_at": service.health.started_at.isoformat(), "jobs": 1},
    )


def test_a_client_that_sends_nothing_is_dropped_and_blocks_no_one() -> None:
    server = HealthServer(
        "127.0.0.1:0",
        {"/livez": json_response(lambda: (True, {"status": "ok"}))},
        request_timeout=0.5,
    )
    server.start()
    host, port = server.url.removeprefix("http://").split(":")
    try:
        silent = socket.create_connection((host, int(port)))
        silent.settimeout(5)
        assert get(f"{server.url}/livez") == (200, b'{\n  "status": "ok"\n}')
        began = time.monotonic()
        assert silent.recv(1024) == b""  # the server hung up on it
        assert time.monotonic() - began < 3
        silent.close()
    finally:
        server.stop()


def _failure_series(service: Service) -> dict[str, float]:
    series = {}
    for line in service.metrics.render().decode().splitlines():
        if line.startswith("gpu_tracker_run_failures_total{"):
            labels, value = line.rsplit(" ", 1)
            series[labels.split('reason="')[1].split('"')[0]] = float(value)
    return series


def test_declared_failure_reasons_are_exactly_the_ones_runs_report(
    sqlite_service_url: str,
    fake: FakeProviders,
    services: list[Service],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.modes["fakebad"] = "fail"
    service = new_service(services, sqlite_service_url, ["fakebad"])
    [job] = service.jobs
    declared = _failure_series(service)

    assert service.run_job(job).reason == "collector"  # the provider answers 503

    def unreachable(*args: Any, **kwargs: Any) -> Any:
        raise DatabaseError("cannot record a run for fakebad: OperationalError: gone")

    monkeypatch.setattr(runner_module, "run_collector", unreachable)
    assert service.run_job(job).reason == "database"

    # Every series declared at start was reached by one failure of each kind: none
    # stays at zero forever, and no emitted reason was missing from the declaration.
    assert declared == {"collector": 0.0, "database": 0.0}
    assert _failure_series(service) == {"collector": 1.0, "database": 1.0}


def test_the_bare_probe_server_answers_404_and_405_in_one_line() -> None:
    """Without the dashboard (no web package), the probes still say what went wrong."""
    server = HealthServer("127.0.0.1:0", {"/livez": json_response(lambda: (True, {"ok": 1}))})
    server.start()
    try:
        code, body = get(f"{server.url}/nope")
        assert code == 404 and json.loads(body)["detail"] == "not found: /nope; try /livez"
        import urllib.error
        import urllib.request

        request = urllib.request.Request(f"{server.url}/livez", method="POST", data=b"")
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=10)
        assert caught.value.code == 405 and caught.value.headers["Allow"] == "GET, HEAD"
        assert get(f"{server.url}/livez") == (200, b'{\n  "ok": 1\n}')
    finally:
        server.stop()
