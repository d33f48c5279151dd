"""/livez, /readyz and /healthz; collectors whose credentials come and go; metric labels."""

from __future__ import annotations

import json
import logging
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


def test_missing_credentials_make_a_job_not_configured_never_stale_then_it_recovers(
    sqlite_service_url: str,
    fake: FakeProviders,
    services: list[Service],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 41: seven collectors need a key most teams do not hold. Without one a job
    is *not configured*: told once at INFO, listed by /healthz and /metrics, never
    stale, never a warning, and /readyz stays 200; credentials turning up are used."""
    monkeypatch.delenv(fake_provider.KEY_ENV, raising=False)
    caplog.set_level(logging.DEBUG)
    service = new_service(
        services,
        sqlite_service_url,
        ["fakekeyed"],
        cadences={"fakekeyed": 0.2 / 60},
        stale_after_cadences=2,
        http="127.0.0.1:0",
    )
    assert [s.id for s in service.jobs] == ["fakekeyed:standard"]
    assert service.health.disabled == {}
    reason = "fakekeyed: no credentials (FAKE_PROVIDER_KEY is not set)"
    assert service.health.not_configured == {"fakekeyed": reason}
    service.start()
    base = service.health_url

    # 2 cadences (0.4 s) is the stale limit: 1.5 s is over three times that.
    def skipped() -> float:
        labels = {"collector": "fakekeyed", "scope": "standard", "reason": "not_configured"}
        value = service.metrics.registry.get_sample_value("gpu_tracker_runs_skipped_total", labels)
        return value or 0.0

    wait_for(lambda: skipped() >= 4, what="four cadences skipped")
    time.sleep(0.5)
    assert service.check_staleness() == []
    assert get(f"{base}/readyz")[0] == 200
    status, body = get(f"{base}/healthz")
    report = json.loads(body)
    assert status == 200 and report["stale"] == [] and report["failing"] == []
    assert report["not_configured"] == {"fakekeyed": reason}
    job = report["collectors"]["fakekeyed:standard"]
    assert job["configured"] is False and job["stale"] is False
    metrics = get(f"{base}/metrics")[1].decode()
    assert 'gpu_tracker_collector_configured{collector="fakekeyed"} 0.0' in metrics
    assert 'gpu_tracker_collector_stale{collector="fakekeyed",scope="standard"} 0.0' in metrics
    # Told once, at start, at INFO; no warning, no run row per cadence.
    mine = [r for r in caplog.records if r.name.startswith("tracker.service")]
    assert not [r for r in mine if r.levelno >= logging.WARNING]
    told = [r.getMessage() for r in mine if r.levelno == logging.INFO and reason in r.getMessage()]
    assert told == [
        "not configured (credentials missing; checked again each cadence, never stale): "
        f"fakekeyed: {reason}"
    ]
    assert run_rows(service, "fakekeyed") == []

    monkeypatch.setenv(fake_provider.KEY_ENV, "now-there")  # credentials turn up
    wait_for(lambda: ("succeeded", None) in run_rows(service, "fakekeyed"), what="a success")
    assert service.health.not_configured == {}
    assert "fakekeyed:standard: configured now (its credentials turned up): collecting" in [
        r.getMessage() for r in caplog.records
    ]

    # Credentials that go missing again: one skipped row and one INFO line, then quiet.
    monkeypatch.delenv(fake_provider.KEY_ENV)
    wait_for(lambda: ("skipped", reason) in run_rows(service, "fakekeyed"), what="the skip")
    time.sleep(0.6)  # three more cadences
    assert [r for r in run_rows(service, "fakekeyed") if r[0] == "skipped"] == [("skipped", reason)]
    assert get(f"{base}/readyz")[0] == 200
    assert service.check_staleness() == []


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
    assert status == 503 and ready["status"] == "unavailable"
    assert ready["started"] is True and ready["database"]["reachable"] is False
    assert "does not exist" in ready["database"]["error"]
    assert set(ready) == {"status", "time", "started", "database"}
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
