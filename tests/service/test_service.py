"""The service in-process: runs, faults, staleness, hooks, health, shutdown, --once."""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, func, select, text

from tests.service.conftest import COLLECTORS, create_database, make_settings
from tests.service.fake_server import FakeProviders
from tracker.collect import RunSummary
from tracker.hooks import Hooks, JobHealthChange, Origin, load_hooks
from tracker.models import RunStatus
from tracker.service import Service
from tracker.settings import Settings
from tracker.store.schema import CollectionRun, PricePoint, Series


def wait_for(predicate: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def new_service(
    services: list[Service],
    settings: Settings,
    names: list[str] | None = None,
    hooks: Hooks | None = None,
) -> Service:
    """A service without hooks unless given (rankings have their own end-to-end test)."""
    collectors = {n: COLLECTORS[n] for n in (names or settings.scheduler.collectors)}
    service = Service(settings, collectors=collectors, hooks=hooks or Hooks())
    services.append(service)
    return service


def runs(engine: Engine, provider: str) -> list[Any]:
    with engine.connect() as conn:
        return list(
            conn.execute(
                select(CollectionRun)
                .where(CollectionRun.provider == provider)
                .order_by(CollectionRun.id)
            )
        )


def spec(service: Service, job_id: str) -> Any:
    return next(s for s in service.jobs if s.id == job_id)


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


# -- runs and provider faults ------------------------------------------------------------


def test_healthy_and_failing_collectors_are_isolated(
    service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    fake.modes["fakebad"] = "fail"
    service = new_service(services, make_settings(service_url, ["fakebad", "fakegood"]))

    good = service.run_job(spec(service, "fakegood:standard"))
    bad = service.run_job(spec(service, "fakebad:standard"))

    assert good.status == "succeeded" and good.summary is not None
    assert good.summary.stats.offers_seen == 4
    assert bad.status == "failed" and bad.reason == "collector"
    assert "HTTP 503" in (bad.error or "")
    assert fake.requests["fakebad"] == 3  # max_retries=2: the real retry loop ran
    assert [r.status for r in runs(service.engine, "fakegood")] == ["succeeded"]
    assert [r.status for r in runs(service.engine, "fakebad")] == ["failed"]
    with service.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Series)).scalar() == 4


def test_throttling_is_retried_until_success(
    sqlite_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    fake.modes["fakegood"] = "throttle"
    fake.throttle_left["fakegood"] = 2
    service = new_service(services, make_settings(sqlite_service_url, ["fakegood"]))

    outcome = service.run_job(spec(service, "fakegood:standard"))

    assert outcome.status == "succeeded"
    assert fake.requests["fakegood"] == 4  # two 429s, then two pages


def test_timeouts_fail_the_run_and_the_next_cadence_tries_again(
    sqlite_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    fake.modes["fakegood"] = "hang"
    service = new_service(services, make_settings(sqlite_service_url, ["fakegood"]))
    job = spec(service, "fakegood:standard")

    first = service.run_job(job)
    fake.modes["fakegood"] = "ok"
    second = service.run_job(job)

    assert first.status == "failed" and "Timeout" in (first.error or "")
    assert second.status == "succeeded"
    assert [r.status for r in runs(service.engine, "fakegood")] == ["failed", "succeeded"]


def test_unexpected_collector_exception_is_recorded_and_others_run(
    service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    service = new_service(services, make_settings(service_url, ["fakecrash", "fakegood"]))

    crash = service.run_job(spec(service, "fakecrash:standard"))
    good = service.run_job(spec(service, "fakegood:standard"))

    assert crash.status == "failed" and "RuntimeError: bug in the collector" in (crash.error or "")
    assert good.status == "succeeded"
    [row] = runs(service.engine, "fakecrash")
    assert row.status == "failed" and "bug in the collector" in row.error
    with service.engine.connect() as conn:  # the one offer yielded before the bug is not kept
        assert (
            conn.execute(
                select(func.count()).select_from(Series).where(Series.provider == "fakecrash")
            ).scalar()
            == 0
        )
    assert service.health.jobs["fakecrash:standard"].consecutive_failures == 1


# -- scheduling ---------------------------------------------------------------------------


def test_scheduler_runs_jobs_on_their_cadence(
    sqlite_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    settings = make_settings(
        sqlite_service_url, ["fakegood"], cadences={"fakegood": 0.3 / 60}, stale_after_cadences=50
    )
    service = new_service(services, settings)
    service.start()

    wait_for(lambda: len(runs(service.engine, "fakegood")) >= 3, what="three scheduled runs")
    assert service.stop()
    statuses = {r.status for r in runs(service.engine, "fakegood")}
    assert statuses == {"succeeded"}


def test_spot_and_standard_scopes_are_separate_jobs(
    sqlite_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    settings = make_settings(
        sqlite_service_url, ["fakespot"], spot_minutes=1, cadences={"fakespot": 60}
    )
    service = new_service(services, settings)

    assert [(s.id, s.interval_seconds) for s in service.jobs] == [
        ("fakespot:spot", 60),
        ("fakespot:standard", 3600),
    ]
    service.run_job(spec(service, "fakespot:spot"))
    assert [r.scope for r in runs(service.engine, "fakespot")] == ["spot"]


def test_restart_does_not_rerun_a_job_that_just_succeeded(
    sqlite_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    settings = make_settings(sqlite_service_url, ["fakegood"], default_minutes=60)
    first = new_service(services, settings)
    first.run_job(spec(first, "fakegood:standard"))

    second = new_service(services, settings)
    second.start()
    [job] = [j for j in second._scheduler.get_jobs() if j.id == "fakegood:standard"]  # type: ignore[union-attr]

    assert job.next_run_time > datetime.now(UTC) + timedelta(minutes=55)
    assert second.health.jobs["fakegood:standard"].last_success is not None


# -- database faults ------------------------------------------------------------------------


@pytest.mark.postgres
def test_database_unreachable_at_start_then_recovers_without_restart(
    pg_database: tuple[str, Any], fake: FakeProviders, services: list[Service]
) -> None:
    url, admin = pg_database  # the database does not exist yet
    settings = make_settings(url, ["fakegood"], default_minutes=60, http="127.0.0.1:0")
    service = new_service(services, settings)
    service.start()
    health_url = f"{service.health_url}/healthz"

    wait_for(lambda: service.health.jobs["fakegood:standard"].last_failure, what="a failed run")
    status, body = get(health_url)
    assert status == 503
    assert json.loads(body)["database"]["reachable"] is False

    create_database(url, admin)
    # The cadence is an hour: only the database retry can bring this run.
    wait_for(lambda: service.health.jobs["fakegood:standard"].last_success, what="recovery")
    status, body = get(health_url)
    assert status == 200, body
    assert json.loads(body)["database"]["reachable"] is True
    # Every attempt is a row: the ones the outage stopped are written once it is over,
    # each with its time and why, as many as /metrics counted.
    *failed, last = runs(service.engine, "fakegood")
    assert last.status == "succeeded" and failed
    assert {r.status for r in failed} == {"failed"}
    assert all("DatabaseError" in r.error and r.finished_at >= r.started_at for r in failed)
    assert {r.scope for r in failed} == {"standard"}
    counted = service.metrics.registry.get_sample_value(
        "gpu_tracker_run_failures_total",
        {"collector": "fakegood", "scope": "standard", "reason": "database"},
    )
    assert counted == len(failed)


def _terminate_backends(admin: Any, url: str) -> int:
    name = url.rsplit("/", 1)[1]
    with admin.connect() as conn:
        killed = conn.execute(
            text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = :db AND pid <> pg_backend_pid()"
            ),
            {"db": name},
        ).scalar()
    return int(killed or 0)


@pytest.mark.postgres
def test_connection_killed_mid_run_leaves_no_partial_run_and_recovers(
    pg_database: tuple[str, Any], fake: FakeProviders, services: list[Service]
) -> None:
    url, admin = pg_database
    create_database(url, admin)
    settings = make_settings(url, ["fakegood"], cadences={"fakegood": 0.5 / 60})
    service = new_service(services, settings)
    service.run_job(spec(service, "fakegood:standard"))  # a first complete snapshot

    fake.hold()  # the next run stops before page 2, its transaction open
    service.start()
    assert fake.page2_waiting.wait(20)
    assert _terminate_backends(admin, url) >= 1
    fake.release()

    wait_for(
        lambda: [r.status for r in runs(service.engine, "fakegood")].count("succeeded") >= 2,
        what="a successful run after the kill",
    )
    service.stop()
    statuses = [r.status for r in runs(service.engine, "fakegood")]
    assert statuses[0] == "succeeded" and statuses[1] in ("failed", "abandoned")
    with service.engine.connect() as conn:
        per_series = conn.execute(
            select(Series.instance_type, func.count(PricePoint.id))
            .join(PricePoint, PricePoint.series_id == Series.id)
            .group_by(Series.instance_type)
        ).all()
        succeeded = conn.execute(
            select(func.count())
            .select_from(CollectionRun)
            .where(CollectionRun.status == "succeeded")
        ).scalar()
    # Every committed run moved all four prices; a partial run would leave page 1's
    # two series with one interval more than page 2's.
    assert len(per_series) == 4
    assert {count for _, count in per_series} == {succeeded}


# -- staleness, hooks, health ---------------------------------------------------------------


def test_stale_collector_is_reported_and_raises_an_event(
    sqlite_service_url: str,
    fake: FakeProviders,
    services: list[Service],
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake.modes["fakebad"] = "fail"
    settings = make_settings(
        sqlite_service_url,
        ["fakebad", "fakegood"],
        default_minutes=0.5 / 60,  # a cadence of 0.5 s: a loaded machine runs a job in 0.6 s
        stale_after_cadences=2,
    )
    seen: list[tuple[str, datetime | None]] = []

    class Notifier:
        @staticmethod
        def job_health_changed(change: JobHealthChange) -> None:
            if change.stale:
                seen.append((change.job_id, change.last_success))

    service = new_service(services, settings, hooks=Hooks.of({"notifier": Notifier}))
    service.run_job(spec(service, "fakebad:standard"))
    service.run_job(spec(service, "fakegood:standard"))

    time.sleep(1.1)  # two cadences of 0.5 s pass with no success for fakebad
    service.run_job(spec(service, "fakegood:standard"))
    with caplog.at_level(logging.WARNING):
        stale = service.check_staleness()
        service.check_staleness()  # no second event for the same episode

    assert stale == ["fakebad:standard"]
    assert seen == [("fakebad:standard", None)]
    events = [r for r in caplog.records if getattr(r, "event", None) == "stale"]
    assert len(events) == 1 and events[0].collector == "fakebad"  # type: ignore[attr-defined]
    healthy, body = service.health_report()
    assert not healthy and body["stale"] == ["fakebad:standard"]
    assert body["collectors"]["fakegood:standard"]["stale"] is False
    assert b'gpu_tracker_collector_stale{collector="fakebad",scope="standard"} 1.0' in (
        service.metrics.render()
    )

    fake.modes["fakebad"] = "ok"
    service.run_job(spec(service, "fakebad:standard"))
    service.run_job(spec(service, "fakegood:standard"))  # not stale itself by now
    assert service.check_staleness() == []


def test_post_run_hooks_run_after_success_only_and_failures_are_contained(
    sqlite_service_url: str,
    fake: FakeProviders,
    services: list[Service],
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake.modes["fakebad"] = "fail"
    called: list[str] = []

    class Broken:
        @staticmethod
        def after_collection(engine: Engine, settings: Settings, runs: list[RunSummary]) -> None:
            raise ValueError("rankings exploded")

    class Record:
        @staticmethod
        def after_collection(runs: list[RunSummary]) -> None:
            called.extend(summary.provider for summary in runs)

    hooks = Hooks.of({"broken": Broken, "record": Record})
    settings = make_settings(sqlite_service_url, ["fakebad", "fakegood"])
    service = new_service(services, settings, hooks=hooks)
    with caplog.at_level(logging.ERROR):
        service.run_job(spec(service, "fakebad:standard"))
        outcome = service.run_job(spec(service, "fakegood:standard"))

    assert outcome.status == "succeeded"
    assert called == ["fakegood"]
    [failure] = [r for r in caplog.records if getattr(r, "event", None) == "hook_failed"]
    assert "broken" in failure.getMessage() and "fakegood:standard" in failure.getMessage()


def test_rankings_recompute_is_the_builtin_plugin_of_the_hooks_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(
        "tracker.recommend.recompute_rankings",
        lambda engine, settings: calls.append((engine, settings)),
    )
    hooks = load_hooks()
    assert hooks.names[0] == "rankings"  # built-in, registered like any plugin, runs first
    summary = RunSummary("fakegood", RunStatus.SUCCEEDED)
    settings = Settings()  # no alert rules: the built-in alerts hook has nothing to do
    failed = hooks.after_collection(
        "engine",  # type: ignore[arg-type]
        settings,
        [summary],
        Origin.SERVE,
        context="a test",
    )
    assert failed == []
    assert calls == [("engine", settings)]


def test_health_and_metrics_endpoints(
    sqlite_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    fake.modes["fakebad"] = "fail"
    settings = make_settings(
        sqlite_service_url, ["fakebad", "fakegood"], http="127.0.0.1:0", default_minutes=60
    )
    service = new_service(services, settings)
    service.start()
    wait_for(
        lambda: all(j.last_status for j in service.health.jobs.values()), what="both first runs"
    )

    status, body = get(f"{service.health_url}/healthz")
    report = json.loads(body)
    assert status == 200  # failing, but not yet stale: the database is fine
    assert report["database"]["reachable"] is True
    assert report["collectors"]["fakegood:standard"]["last_success"] is not None
    assert report["collectors"]["fakebad:standard"]["last_failure"] is not None
    assert "HTTP 503" in report["collectors"]["fakebad:standard"]["last_error"]

    status, metrics = get(f"{service.health_url}/metrics")
    text_ = metrics.decode()
    assert status == 200
    assert (
        'gpu_tracker_runs_total{collector="fakegood",scope="standard",status="succeeded"} 1.0'
        in text_
    )
    assert (
        'gpu_tracker_runs_total{collector="fakebad",scope="standard",status="failed"} 1.0' in text_
    )
    assert 'gpu_tracker_offers_seen_total{collector="fakegood",scope="standard"} 4.0' in text_
    assert 'gpu_tracker_price_changes_total{collector="fakegood",scope="standard"}' in text_
    assert (
        'gpu_tracker_run_duration_seconds_count{collector="fakegood",scope="standard"} 1.0' in text_
    )
    assert "gpu_tracker_database_up 1.0" in text_
    assert get(f"{service.health_url}/nope")[0] == 404


# -- shutdown and --once ---------------------------------------------------------------------


def test_stop_waits_for_the_running_job_to_commit(
    sqlite_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    service = new_service(services, make_settings(sqlite_service_url, ["fakegood"]))
    fake.hold()
    service.start()
    assert fake.page2_waiting.wait(20)
    threading.Timer(0.3, fake.release).start()

    assert service.stop(timeout=20) is True
    assert [r.status for r in runs(service.engine, "fakegood")] == ["succeeded"]
    assert service.run_job(spec(service, "fakegood:standard")).status == "skipped"


def test_stop_is_bounded_when_a_run_hangs(
    sqlite_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    service = new_service(services, make_settings(sqlite_service_url, ["fakegood"]))
    fake.hold()
    service.start()
    assert fake.page2_waiting.wait(20)

    assert service.stop(timeout=0.2) is False
    assert service.abandoned == ["fakegood:standard"]
    fake.release()


def test_once_runs_only_due_jobs(
    sqlite_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    fake.modes["fakebad"] = "fail"
    settings = make_settings(sqlite_service_url, ["fakebad", "fakegood"], default_minutes=60)

    assert new_service(services, settings).run_once() == 1  # fakebad failed
    assert [r.status for r in runs(services[0].engine, "fakegood")] == ["succeeded"]

    fake.modes["fakebad"] = "ok"
    second = new_service(services, settings)
    assert [s.id for s in second.due_jobs()] == ["fakebad:standard"]
    assert second.run_once() == 0
    assert len(runs(second.engine, "fakegood")) == 1
    assert new_service(services, settings).due_jobs() == []
