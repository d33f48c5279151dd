"""The run log tells what happened to every attempt, and the service's log says it once.

A row for every attempt, with why it failed; a run nobody will finish marked abandoned
with the reason (at the next start-up of any instance, or by the stopping service with
its shutdown timeout as configured); the after-collection hooks bounded by that timeout
too; one ERROR line per failed run; one line for the collectors left out on purpose.
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, insert, select

from tests.service.conftest import make_settings
from tests.service.fake_server import FakeProviders
from tests.service.test_service import new_service, spec
from tracker.collect import RunSummary
from tracker.hooks import Hooks
from tracker.models import PricingModel, RunStatus
from tracker.service import Service
from tracker.service import pending as pending_module
from tracker.service.jobs import JobSpec, run_scopes
from tracker.service.pending import PendingRuns
from tracker.store import runs as run_store
from tracker.store.engine import DatabaseError
from tracker.store.schema import CollectionRun

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def run_rows(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        return list(conn.execute(select(CollectionRun).order_by(CollectionRun.id)))


def running_row(engine: Engine, provider: str, scope: str) -> int:
    """A row as a process killed mid-run leaves it."""
    with engine.begin() as conn:
        return int(
            conn.execute(
                insert(CollectionRun)
                .values(
                    provider=provider,
                    source=provider,
                    scope=scope,
                    status=RunStatus.RUNNING,
                    started_at=T0,
                )
                .returning(CollectionRun.id)
            ).scalar_one()
        )


@pytest.mark.postgres
def test_a_crashed_run_is_abandoned_at_the_next_start_unless_someone_runs_it(
    pg_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    settings = make_settings(pg_service_url, ["fakegood"], default_minutes=60)
    service = new_service(services, settings)
    crashed = running_row(service.engine, "fakegood", "standard")
    manual = running_row(service.engine, "fakespot", "all")  # a manual collect, alive
    other = new_service(services, settings)  # another instance, holding fakespot's jobs
    with other.locks.hold("fakespot:spot"), other.locks.hold("fakespot:standard"):
        assert service.abandon_orphans() == 1
    rows = {r.id: r for r in run_rows(service.engine)}
    assert rows[crashed].status == "abandoned"
    assert rows[crashed].error.startswith(run_store.ORPHAN_ERROR)
    assert "found at start-up" in rows[crashed].error
    assert rows[crashed].finished_at is None  # when it ended is not known
    assert rows[manual].status == "running" and rows[manual].error is None


@pytest.mark.postgres
def test_a_run_cut_by_the_shutdown_timeout_is_abandoned_with_the_timeout_as_configured(
    pg_service_url: str,
    fake: FakeProviders,
    services: list[Service],
    caplog: pytest.LogCaptureFixture,
) -> None:
    service = new_service(services, make_settings(pg_service_url, ["fakegood"]))
    fake.hold()  # the run stops before page 2, its transaction open
    service.start()
    assert fake.page2_waiting.wait(20)
    with caplog.at_level(logging.INFO, logger="tracker.service"):
        assert service.stop(timeout=0.1) is False
    fake.release()
    [row] = run_rows(service.engine)
    assert row.status == "abandoned" and row.scope == "standard"
    assert "shutdown_timeout_seconds = 0.1 s" in row.error
    assert row.finished_at is not None and row.finished_at >= row.started_at
    [line] = [r.getMessage() for r in caplog.records if getattr(r, "event", "") == "abandoned"]
    assert line == (
        "still running after shutdown_timeout_seconds = 0.1 s: "
        "fakegood:standard: run rolled back; exiting anyway"
    )
    assert not [r for r in caplog.records if r.getMessage() == "stopped"]


class SlowHook:
    """An after-collection hook that takes longer than the shutdown timeout."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def after_collection(self, runs: list[RunSummary]) -> None:
        self.entered.set()
        self.release.wait(20)


def test_hooks_run_inside_the_shutdown_timeout_and_are_skipped_in_one_line(
    sqlite_service_url: str,
    fake: FakeProviders,
    services: list[Service],
    caplog: pytest.LogCaptureFixture,
) -> None:
    hook = SlowHook()
    service = new_service(
        services,
        make_settings(sqlite_service_url, ["fakegood"]),
        hooks=Hooks.of({"slow": hook}),
    )
    service.start()
    assert hook.entered.wait(20)
    with caplog.at_level(logging.INFO, logger="tracker.service"):
        assert service.stop(timeout=0.1) is False  # it waited for the hook, then gave up
    hook.release.set()
    assert service.abandoned == ["fakegood:standard"]
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert lines == [
        "still running after shutdown_timeout_seconds = 0.1 s: "
        "fakegood:standard: after-collection hooks skipped; exiting anyway"
    ]
    assert [r.status for r in run_rows(service.engine)] == ["succeeded"]  # committed


def test_a_failure_the_database_missed_is_written_when_it_is_back(engine: Engine) -> None:
    run_id = run_store.start_run(
        engine, provider="fakegood", source="fakegood", scope="standard", started=T0
    )
    service_spec: Any = type("Spec", (), {"collector": "fakegood", "scope": "standard"})()
    pending = PendingRuns(engine)
    summary = RunSummary(
        "fakegood",
        RunStatus.FAILED,
        run_id=run_id,
        scope="standard",
        error="DatabaseError: connection lost",
        started_at=T0,
        finished_at=T0 + timedelta(seconds=3),
        recorded=False,
    )
    pending.unrecorded(service_spec, summary)
    pending.missed(service_spec, T0 + timedelta(minutes=1), T0 + timedelta(minutes=1), "down")
    assert pending.flush() == 2 and not pending
    first, second = run_rows(engine)
    assert (first.id, first.status, first.error) == (run_id, "failed", summary.error)
    assert first.finished_at == T0 + timedelta(seconds=3)  # when it ended, not when written
    assert (second.status, second.scope, second.error) == ("failed", "standard", "down")
    assert second.started_at == T0 + timedelta(minutes=1)


def test_a_failed_run_is_one_error_line_with_its_id_and_why(
    sqlite_service_url: str,
    fake: FakeProviders,
    services: list[Service],
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake.modes["fakebad"] = "fail"
    service = new_service(services, make_settings(sqlite_service_url, ["fakebad"]))
    with caplog.at_level(logging.DEBUG):
        outcome = service.run_job(spec(service, "fakebad:standard"))
    assert outcome.status == "failed"
    [row] = run_rows(service.engine)
    [error] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    message = error.getMessage()
    assert message.startswith(f"run {row.id} fakebad:standard failed in ")
    assert message.endswith(f"s: collector: {row.error}") and "HTTP 503" in row.error
    assert "0 offers" not in message
    assert (vars(error)["run_id"], vars(error)["collector"], vars(error)["scope"]) == (
        row.id,
        "fakebad",
        "standard",
    )


def test_collectors_left_out_on_purpose_are_one_info_line(
    sqlite_service_url: str, services: list[Service], caplog: pytest.LogCaptureFixture
) -> None:
    # No FAKE_PROVIDER_URL: the fake collectors are not configured, as a provider without
    # its settings is.
    settings = make_settings(sqlite_service_url, ["fakebad", "fakegood", "fakeslow"])
    with caplog.at_level(logging.DEBUG, logger="tracker.service"):
        service = new_service(services, settings)
    assert service.jobs == []
    planned = [r for r in caplog.records if r.name.startswith("tracker.service")]
    assert [(r.levelname, r.getMessage()) for r in planned] == [
        ("INFO", "scheduled: nothing; disabled: fakebad, fakegood, fakeslow")
    ]
    assert set(vars(planned[0])["disabled"]) == {"fakebad", "fakegood", "fakeslow"}


# -- replicas: the other instance's successes count here --------------------------------


def succeeded_row(engine: Engine, at: datetime, scope: str = "standard") -> None:
    with engine.begin() as conn:
        conn.execute(
            insert(CollectionRun).values(
                provider="fakegood",
                source="fakegood",
                scope=scope,
                status=RunStatus.SUCCEEDED,
                started_at=at,
                finished_at=at + timedelta(seconds=2),
            )
        )


@pytest.mark.postgres
def test_a_replica_that_finds_the_job_locked_counts_the_holders_success(
    pg_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    settings = make_settings(pg_service_url, ["fakegood"], default_minutes=1)
    replica, holder = new_service(services, settings), new_service(services, settings)
    job = spec(replica, "fakegood:standard")
    now = datetime.now(UTC)
    replica.health.started_at = now - timedelta(minutes=10)  # up long ago, never ran it
    assert replica.health.report(now)[1]["stale"] == ["fakegood:standard"]  # 10 min > 3 cadences
    succeeded_row(replica.engine, now - timedelta(seconds=50))  # the holder's last run
    with holder.locks.hold(job.id):  # the holder is running it again right now
        assert replica.run_job(job).status == "locked"
    health = replica.health.jobs[job.id]
    assert health.last_success == now - timedelta(seconds=48)
    assert replica.health_report()[0] is True  # /healthz: fresh


@pytest.mark.postgres
@pytest.mark.parametrize("asked_by", ["the staleness check", "a probe"])
def test_a_replica_asks_the_run_log_before_calling_a_job_stale(
    pg_service_url: str, fake: FakeProviders, services: list[Service], asked_by: str
) -> None:
    replica = new_service(services, make_settings(pg_service_url, ["fakegood"]))
    now = datetime.now(UTC)
    replica.health.started_at = now - timedelta(days=30)  # > 3 cadences of any default
    assert replica.due_jobs(now) == [spec(replica, "fakegood:standard")]  # seeded: none
    assert replica.health.report(now)[1]["stale"] == ["fakegood:standard"]  # as memory knows
    succeeded_row(replica.engine, now - timedelta(minutes=1), scope="all")  # a manual run
    if asked_by == "a probe":
        assert replica.health_report()[0] is True  # /healthz asks the run log first
    assert replica.check_staleness() == []
    assert replica.health_report()[0] is True


def test_a_restarted_instance_spreads_its_first_run_over_half_a_cadence(
    sqlite_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    service = new_service(
        services, make_settings(sqlite_service_url, ["fakegood"], default_minutes=10)
    )
    job = spec(service, "fakegood:standard")
    now = datetime.now(UTC)
    last = now - timedelta(minutes=4)  # due again at now + 6 min
    service.health.jobs[job.id].last_success_started = last
    firsts = [service._first_run(job, now) for _ in range(50)]
    due = last + timedelta(minutes=10)
    assert all(due <= f <= due + timedelta(minutes=5) for f in firsts)
    assert len(set(firsts)) > 1  # not pinned to the other instance's start
    service.health.jobs[job.id].last_success_started = now - timedelta(minutes=11)
    assert service._first_run(job, now) == now  # overdue: at once


def test_a_collector_bug_is_still_one_error_line_its_traceback_a_warning(
    sqlite_service_url: str,
    fake: FakeProviders,
    services: list[Service],
    caplog: pytest.LogCaptureFixture,
) -> None:
    service = new_service(services, make_settings(sqlite_service_url, ["fakecrash"]))
    with caplog.at_level(logging.DEBUG):
        assert service.run_job(spec(service, "fakecrash:standard")).status == "failed"
    [error] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert "fakecrash:standard failed" in error.getMessage()
    assert "RuntimeError: bug in the collector" in error.getMessage()
    [trace] = [r for r in caplog.records if r.exc_info]
    assert trace.levelno == logging.WARNING and trace.name == "tracker.collect"


def test_an_outage_longer_than_the_memory_says_how_many_attempts_it_dropped(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pending_module, "MAX_PENDING", 2)
    job: Any = type("Spec", (), {"collector": "fakegood", "scope": "spot"})()
    pending = PendingRuns(engine)
    for minute in range(5):  # five attempts, two kept: the last two
        at = T0 + timedelta(minutes=minute)
        pending.missed(job, at, at, f"down at minute {minute}")
    assert pending.flush() == 2
    assert [(r.error, r.started_at) for r in run_rows(engine)] == [
        (
            "down at minute 3 (3 earlier attempts during the outage are not recorded)",
            T0 + timedelta(minutes=3),
        ),
        ("down at minute 4", T0 + timedelta(minutes=4)),
    ]


def test_a_jobs_runs_are_found_under_its_own_scope_the_old_label_and_all() -> None:
    spot = JobSpec("aws", "spot", frozenset({PricingModel.SPOT}), 600)
    listed = frozenset({PricingModel.ON_DEMAND, PricingModel.RESERVED_1Y})
    standard = JobSpec("aws", "standard", listed, 86400)
    whole = JobSpec("pricesheet", "standard", frozenset(PricingModel), 86400)
    assert run_scopes(spot) == ("spot", "all")
    assert run_scopes(standard) == ("standard", "on_demand,reserved_1y", "all")
    assert run_scopes(whole) == ("standard", "all")


def test_a_run_whose_failure_could_not_be_written_gets_it_at_the_next_attempt(
    sqlite_service_url: str,
    fake: FakeProviders,
    services: list[Service],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.modes["fakebad"] = "fail"
    service = new_service(services, make_settings(sqlite_service_url, ["fakebad"]))
    job = spec(service, "fakebad:standard")
    record_failure = run_store.record_failure

    def database_gone(*args: Any, **kwargs: Any) -> None:
        raise DatabaseError("cannot record the failure of run 1: the connection is lost")

    monkeypatch.setattr(run_store, "record_failure", database_gone)  # as the run ends
    first = service.run_job(job)
    assert first.summary is not None and first.summary.recorded is False
    assert [r.status for r in run_rows(service.engine)] == ["running"]
    monkeypatch.setattr(run_store, "record_failure", record_failure)  # the database is back
    service.run_job(job)
    first_row, second_row = run_rows(service.engine)
    assert (first_row.status, first_row.error) == ("failed", first.summary.error)
    assert first_row.finished_at == first.summary.finished_at  # when it ended
    assert second_row.status == "failed" and "HTTP 503" in second_row.error


def test_a_run_that_fails_on_the_store_is_a_database_failure_even_if_it_answers_again(
    sqlite_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    service = new_service(services, make_settings(sqlite_service_url, ["fakegood"]))
    with service.engine.begin() as conn:  # every write of the run's prices now fails
        conn.exec_driver_sql("ALTER TABLE price_points RENAME TO price_points_gone")
    outcome = service.run_job(spec(service, "fakegood:standard"))
    assert (outcome.status, outcome.reason) == ("failed", "database")
    assert "DatabaseError" in (outcome.error or "")


@pytest.mark.postgres
def test_a_cron_start_abandons_a_crashed_run_too(
    pg_service_url: str, fake: FakeProviders, services: list[Service]
) -> None:
    service = new_service(services, make_settings(pg_service_url, ["fakegood"]))
    # Another collector's: no run of this cron start would sweep it on its way.
    crashed = running_row(service.engine, "fakebad", "standard")
    assert service.run_once() == 0
    rows = {r.id: r for r in run_rows(service.engine)}
    assert rows[crashed].status == "abandoned"
    assert [r.status for r in rows.values() if r.id != crashed] == ["succeeded"]
