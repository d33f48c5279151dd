"""A collector's storage and egress prices as a job of the service: ``<name>:services``."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine, select

from tests.disks_collector import SSD, Disks
from tests.service.conftest import make_settings
from tests.service.fake_provider import Good
from tracker.alerts.render import health_job
from tracker.hooks import Hooks
from tracker.service import Service
from tracker.service.jobs import SERVICES_SCOPE, plan_jobs, run_scopes
from tracker.settings import SchedulerSettings
from tracker.store.schema import CollectionRun
from tracker.store.series import service_prices


@pytest.fixture
def disks(monkeypatch: pytest.MonkeyPatch) -> type[Disks]:
    monkeypatch.setattr(Disks, "failing", False)
    return Disks


def test_a_collector_with_service_prices_gets_a_daily_services_job() -> None:
    jobs = plan_jobs({"fakedisks": Disks, "fakegood": Good}, SchedulerSettings())
    assert [(j.id, j.interval_seconds) for j in jobs] == [
        ("fakedisks:services", 1440 * 60),  # services_minutes = 1440: daily
        ("fakedisks:standard", 360 * 60),
        ("fakegood:standard", 360 * 60),  # no collect_service_prices: no services job
    ]
    # Only a services run serves a services job: a manual `collect` ("all") prices no disk.
    assert run_scopes(jobs[0]) == (SERVICES_SCOPE,)


def test_the_services_cadence_is_configurable_per_collector() -> None:
    settings = SchedulerSettings(services_minutes=600, cadences={"fakedisks.services": 60})
    jobs = plan_jobs({"fakedisks": Disks, "x": type("X", (Disks,), {"name": "x"})}, settings)
    assert {j.id: j.interval_seconds for j in jobs if j.scope == SERVICES_SCOPE} == {
        "fakedisks:services": 3600,
        "x:services": 36000,
    }


def _service(url: str, services: list[Service]) -> Service:
    settings = make_settings(url, ["fakedisks"])
    service = Service(settings, collectors={"fakedisks": Disks}, hooks=Hooks())
    services.append(service)
    return service


def _runs(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        return list(conn.execute(select(CollectionRun).order_by(CollectionRun.id)))


def test_the_services_job_stores_the_prices_and_is_not_due_again(
    service_url: str, services: list[Service], disks: type[Disks]
) -> None:
    service = _service(service_url, services)
    job = next(s for s in service.jobs if s.id == "fakedisks:services")
    outcome = service.run_job(job)
    assert outcome.status == "succeeded", outcome.error
    assert [(r.scope, r.status, r.offers_seen) for r in _runs(service.engine)] == [
        ("services", "succeeded", 1)
    ]
    assert [s.price for s in service_prices(service.engine)] == [SSD]
    assert [s.id for s in service.due_jobs()] == ["fakedisks:standard"]


def test_a_failing_services_job_is_recorded_and_alerts_name_its_job(
    sqlite_service_url: str, services: list[Service], disks: type[Disks]
) -> None:
    disks.failing = True
    service = _service(sqlite_service_url, services)
    job = next(s for s in service.jobs if s.id == "fakedisks:services")
    outcome = service.run_job(job)
    assert (outcome.status, outcome.reason) == ("failed", "collector")
    [row] = _runs(service.engine)
    assert (row.scope, row.status, row.error) == (
        "services",
        "failed",
        "CollectorError: fakedisks: the price list answered 503",
    )
    # Collector-health alerts name the job the run belongs to, not the standard one.
    assert health_job(row.provider, row.scope) == "fakedisks:services"
    assert health_job("aws", "all") == "aws:standard"


@pytest.mark.postgres
def test_an_orphaned_services_run_is_abandoned_unless_its_job_lock_is_held(
    pg_service_url: str, services: list[Service]
) -> None:
    from tests.service.test_run_log import running_row

    service = _service(pg_service_url, services)
    crashed = running_row(service.engine, "fakedisks", "services")
    alive = running_row(service.engine, "other", "services")
    other = _service(pg_service_url, services)  # another instance, running other's job
    with other.locks.hold("other:services"):
        assert service.abandon_orphans() == 1
    statuses = {r.id: r.status for r in _runs(service.engine)}
    assert (statuses[crashed], statuses[alive]) == ("abandoned", "running")
