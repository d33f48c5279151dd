"""A provider outage is not an outage of the service (issue 41).

A failing or stale job is one source's fault: /healthz names it, /metrics counts it,
the log has one ERROR line per failed run (no traceback); /readyz stays 200, since
the dashboard, the API and the alerts still serve what is stored. Retries stay
within half the job's cadence, so a run never overlaps the next.
"""

from __future__ import annotations

import json
import logging

import pytest

from tests.service.conftest import make_settings
from tests.service.fake_provider import Good
from tests.service.fake_server import FakeProviders
from tests.service.test_health import new_service
from tests.service.test_service import get, spec, wait_for
from tracker.hooks import Hooks
from tracker.service import Service


def sample(service: Service, name: str, **labels: str) -> float:
    return service.metrics.registry.get_sample_value(name, labels) or 0.0


def test_a_failing_stale_job_is_named_by_healthz_while_readyz_stays_200(
    sqlite_service_url: str,
    fake: FakeProviders,
    services: list[Service],
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake.modes["fakebad"] = "fail"
    caplog.set_level(logging.INFO)
    service = new_service(
        services,
        sqlite_service_url,
        ["fakebad", "fakegood"],
        cadences={"fakebad": 0.2 / 60, "fakegood": 0.2 / 60},
        stale_after_cadences=2,
        http="127.0.0.1:0",
    )
    service.start()
    base = service.health_url
    bad = {"collector": "fakebad", "scope": "standard"}
    # Stale: no success for 2 cadences (0.4 s); failing: its latest run failed.
    wait_for(lambda: service.check_staleness() == ["fakebad:standard"], what="fakebad stale")
    wait_for(lambda: sample(service, "gpu_tracker_runs_total", **bad, status="failed") >= 3)

    status, body = get(f"{base}/readyz")
    assert status == 200, body
    assert json.loads(body)["status"] == "ok"
    status, body = get(f"{base}/healthz")
    report = json.loads(body)
    assert status == 503 and report["database"]["reachable"] is True
    assert report["stale"] == ["fakebad:standard"] and report["failing"] == ["fakebad:standard"]
    assert "HTTP 503" in report["collectors"]["fakebad:standard"]["last_error"]
    assert report["collectors"]["fakegood:standard"]["stale"] is False
    assert sample(service, "gpu_tracker_collector_stale", **bad) == 1.0
    assert sample(service, "gpu_tracker_consecutive_failures", **bad) >= 2
    assert (
        sample(service, "gpu_tracker_consecutive_failures", collector="fakegood", scope="standard")
        == 0
    )

    service.stop(timeout=10)
    failed_runs = sample(service, "gpu_tracker_runs_total", **bad, status="failed")
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    # One ERROR line per failed run, naming the streak; no traceback anywhere.
    assert len(errors) == failed_runs and {r.name for r in errors} == {"tracker.service.report"}
    assert all(r.getMessage().count("fakebad:standard failed") == 1 for r in errors)
    assert "(2nd in a row)" in errors[1].getMessage()
    assert not [r for r in caplog.records if r.exc_info]
    # The retries were INFO, the failure told once by the run's ERROR line.
    retries = [r for r in caplog.records if r.name == "collectors.http"]
    assert retries and {r.levelname for r in retries} == {"INFO"}
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name.startswith(("tracker", "collectors"))
    ]  # (APScheduler warns when a 0.2 s cadence fires while one SQLite worker is busy)
    assert warnings == [
        "fakebad:standard is stale: no successful run for 2 cadences (last "
        "success: never (since start))"
    ]  # a state, told once


@pytest.mark.parametrize(("cadence_s", "attempts"), [(1.0, 1), (60.0, 3)])
def test_retries_of_a_hanging_provider_stay_within_half_its_cadence(
    sqlite_service_url: str,
    fake: FakeProviders,
    services: list[Service],
    cadence_s: float,
    attempts: int,
) -> None:
    """The client times out after 0.5 s and retries twice (tests/service/conftest.py).
    A 1 s cadence leaves 0.5 s: the first attempt spends it, so no retry is made (three
    attempts, 1.5 s, would overlap the next run); a 60 s cadence leaves room for all."""
    fake.modes["fakegood"] = "hang"
    settings = make_settings(
        sqlite_service_url, ["fakegood"], cadences={"fakegood": cadence_s / 60}
    )
    service = Service(settings, collectors={"fakegood": Good}, hooks=Hooks())
    services.append(service)
    outcome = service.run_job(spec(service, "fakegood:standard"))
    assert outcome.status == "failed" and "ReadTimeout" in (outcome.error or "")
    assert fake.requests["fakegood"] == attempts


def test_the_dashboard_alone_is_ready_while_its_database_answers(
    sqlite_service_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``gpu-tracker web`` (no scheduler) reads health from the run log: a collector
    with no success for a month is stale there too, and still no reason to be unready."""
    from datetime import UTC, datetime, timedelta

    from tracker.settings import Settings
    from tracker.store import make_engine
    from tracker.web.health import RunLogHealth

    settings = Settings(database_url=sqlite_service_url)
    engine = make_engine(sqlite_service_url)
    health = RunLogHealth(settings, engine)
    health.state.started_at = datetime.now(UTC) - timedelta(days=30)
    healthy, report = health.report()
    assert not healthy and report["stale"]  # every enabled collector: none ever ran
    ready, body = health.readiness()
    assert ready and body["status"] == "ok" and body["database"]["reachable"] is True
    engine.dispose()


def test_the_dashboard_alone_lists_keyless_collectors_as_not_configured(
    sqlite_service_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``gpu-tracker web`` rebuilds /healthz from the run log: a collector without its
    key (DigitalOcean here) is "not configured" there as under ``serve``, never stale,
    however long it has not run; a keyless one that never ran is stale."""
    from datetime import UTC, datetime, timedelta

    from tracker.settings import Settings
    from tracker.store import make_engine
    from tracker.web.health import RunLogHealth

    monkeypatch.delenv("GPU_TRACKER_DIGITALOCEAN__API_TOKEN", raising=False)
    monkeypatch.delenv("DIGITALOCEAN_TOKEN", raising=False)
    settings = Settings(database_url=sqlite_service_url)
    engine = make_engine(sqlite_service_url)
    health = RunLogHealth(settings, engine)
    health.state.started_at = datetime.now(UTC) - timedelta(days=30)
    _, report = health.report()
    engine.dispose()
    assert "digitalocean" in report["not_configured"]
    assert not any(job.startswith("digitalocean:") for job in report["stale"])
    assert any(job.startswith("vultr:") for job in report["stale"])
