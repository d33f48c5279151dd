"""Run bookkeeping through tracker.store.runs, and the store's one DatabaseError, on both engines."""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, select, text

from collectors.base import RunContext
from tests.conftest import make_offer
from tests.store.test_history import ListCollector
from tracker.collect import run_collector
from tracker.models import Offer, PricingModel, RunStatus
from tracker.settings import Settings
from tracker.store import runs
from tracker.store.engine import DatabaseError, make_engine, ping
from tracker.store.ingest import IngestStats, run_transaction
from tracker.store.schema import CollectionRun
from tracker.store.types import aggregate_datetime

T0 = datetime(2026, 1, 1, tzinfo=UTC)
UNREACHABLE = "postgresql://postgres@127.0.0.1:1/nowhere"


def statuses(engine: Engine) -> list[tuple[str, str, str]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(CollectionRun.source, CollectionRun.scope, CollectionRun.status).order_by(
                CollectionRun.id
            )
        )
        return [(r[0], r[1], r[2]) for r in rows]


def succeed(engine: Engine, source: str, scope: str, at: datetime) -> int:
    run_id = runs.start_run(engine, provider="pricesheet", source=source, scope=scope, started=at)
    with run_transaction(engine, run_id, source=source, run_time=at) as writer:
        writer.succeeded(
            IngestStats(), finished=at + timedelta(minutes=1), skipped=0, skip_reasons={}
        )
    return run_id


def test_a_run_left_running_is_abandoned_by_the_next_run_of_its_source_only(
    engine: Engine,
) -> None:
    runs.start_run(engine, provider="pricesheet", source="pricesheet", scope="all", started=T0)
    # An import of the same collector writes for another source: it must not declare
    # the configured sheet's run dead.
    runs.start_run(
        engine, provider="pricesheet", source="import:deals.csv", scope="all", started=T0
    )
    assert statuses(engine) == [
        ("pricesheet", "all", "running"),
        ("import:deals.csv", "all", "running"),
    ]
    runs.start_run(
        engine, provider="pricesheet", source="pricesheet", scope="spot", started=T0
    )  # another job of the source: its own scope
    runs.start_run(engine, provider="pricesheet", source="pricesheet", scope="all", started=T0)
    assert statuses(engine) == [
        ("pricesheet", "all", "abandoned"),
        ("import:deals.csv", "all", "running"),
        ("pricesheet", "spot", "running"),
        ("pricesheet", "all", "running"),
    ]


def test_last_success_is_the_sources_latest_succeeded_run_in_the_scopes(engine: Engine) -> None:
    full = succeed(engine, "pricesheet", "all", T0)
    spot = succeed(engine, "pricesheet", "spot", T0 + timedelta(hours=1))
    failed = runs.start_run(
        engine,
        provider="pricesheet",
        source="pricesheet",
        scope="all",
        started=T0 + timedelta(hours=2),
    )
    runs.record_failure(
        engine, failed, finished=T0 + timedelta(hours=2), error="x", skipped=0, skip_reasons={}
    )
    succeed(engine, "import:deals.csv", "all", T0 + timedelta(hours=3))

    # The import's later success is not a run of the sheet's jobs: it wrote for its own source.
    standard = runs.last_success(engine, "pricesheet", ["on_demand,reserved_1y", "all"])
    assert standard == runs.SuccessfulRun(full, T0, T0 + timedelta(minutes=1))
    latest_spot = runs.last_success(engine, "pricesheet", ["spot", "all"])
    assert latest_spot is not None and latest_spot.id == spot
    assert latest_spot.started_at == T0 + timedelta(hours=1)
    assert runs.last_success(engine, "othercloud", ["all"]) is None
    latest = runs.latest_runs(engine)
    assert latest[("pricesheet", "all", "succeeded")][0] == T0
    assert latest[("import:deals.csv", "all", "succeeded")][0] == T0 + timedelta(hours=3)


def test_last_observed_is_an_aware_time_per_source_pricing_and_region(engine: Engine) -> None:
    run_collector(engine, ListCollector([make_offer()]), Settings(), now=T0)
    seen = runs.last_observed(engine, "testcloud", PricingModel.ON_DEMAND, "us-east-1")
    assert seen == T0 and seen.tzinfo is not None
    assert runs.last_observed(engine, "testcloud", PricingModel.SPOT, "us-east-1") is None
    assert runs.last_observed(engine, "import:x", PricingModel.ON_DEMAND, "us-east-1") is None


def test_aggregate_datetime_restores_a_raw_aggregates_time(engine: Engine) -> None:
    run_collector(engine, ListCollector([make_offer()]), Settings(), now=T0)
    with engine.connect() as conn:
        raw = conn.execute(text("SELECT MAX(last_seen) FROM price_points")).scalar()
    # SQLite hands back the stored text '2026-01-01 00:00:00.000000', Postgres an aware time.
    assert aggregate_datetime(raw) == T0
    assert aggregate_datetime(raw).tzinfo is not None  # type: ignore[union-attr]
    assert aggregate_datetime(None) is None
    with pytest.raises(TypeError, match="expected a time"):
        aggregate_datetime(42)


def test_a_database_failure_inside_a_run_is_a_database_error_without_traceback(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE price_points RENAME TO price_points_gone"))
    with caplog.at_level(logging.INFO, logger="tracker.collect"):
        summary = run_collector(engine, ListCollector([make_offer()]), Settings(), now=T0)
    assert summary.status is RunStatus.FAILED
    assert (summary.error or "").startswith(f"DatabaseError: run {summary.run_id} of testcloud: ")
    assert "SELECT" not in (summary.error or "")  # the driver's first line, not the statement
    [record] = [r for r in caplog.records if "run failed" in r.getMessage()]
    assert not record.exc_info  # the database failing is not a bug: no traceback
    assert statuses(engine) == [("testcloud", "all", "failed")]


def test_a_collectors_own_failure_passes_through_the_run_transaction(engine: Engine) -> None:
    run_id = runs.start_run(engine, provider="x", source="x", scope="all", started=T0)
    with (
        pytest.raises(RuntimeError, match="provider went away"),
        run_transaction(engine, run_id, source="x", run_time=T0),
    ):
        raise RuntimeError("provider went away")


def test_an_unreachable_database_is_a_database_error(pg_url: str) -> None:
    engine = make_engine(UNREACHABLE)
    with pytest.raises(DatabaseError) as caught:
        ping(engine)
    assert str(caught.value).startswith("database unreachable: connection failed")
    assert caught.value.reason.startswith("connection failed")
    with pytest.raises(DatabaseError, match=r"^cannot record a run for x: connection failed"):
        runs.start_run(engine, provider="x", source="x", scope="all", started=T0)
    ping(make_engine(pg_url))  # a reachable one answers


def test_a_secret_a_provider_echoes_in_its_error_is_masked_in_the_run_log(
    engine: Engine,
) -> None:
    """An endpoint that quotes the API key back (GCP's 400 body does) must not put it
    in the summary the CLI prints, the stored run row or /healthz's last_error."""
    key = "AIzaSyTEST-echoed-key-0123456789"
    settings = Settings.model_validate({"gcp": {"api_key": key}})

    def echo(ctx: object) -> None:
        raise RuntimeError(f"API key not valid. Please pass a valid API key: key={key}")

    summary = run_collector(engine, ListCollector([], before=echo), settings, now=T0)
    assert summary.status is RunStatus.FAILED
    assert summary.error is not None and key not in summary.error
    assert "key=***" in summary.error
    with engine.connect() as conn:
        stored = conn.execute(select(CollectionRun.error)).scalar_one()
    assert key not in stored and "key=***" in stored


def test_a_run_freezes_the_heap_only_while_it_runs(engine: Engine) -> None:
    # run_transaction freezes the objects that exist before a run (gc.freeze) so the
    # collector's full collections skip them; afterwards they must be collectable
    # again, or cyclic garbage made before a run would live as long as the process.
    frozen_during: list[int] = []

    class Watching(ListCollector):
        def collect(self, ctx: RunContext) -> Iterator[Offer]:
            frozen_during.append(gc.get_freeze_count())
            yield make_offer()

    assert gc.get_freeze_count() == 0
    summary = run_collector(engine, Watching([]), Settings(), now=T0)
    assert summary.status == RunStatus.SUCCEEDED
    assert frozen_during[0] > 0 and gc.get_freeze_count() == 0

    class Failing(ListCollector):
        def collect(self, ctx: RunContext) -> Iterator[Offer]:
            yield make_offer()
            raise RuntimeError("provider went away")

    summary = run_collector(engine, Failing([]), Settings(), now=T0 + timedelta(hours=1))
    assert summary.status == RunStatus.FAILED
    assert gc.get_freeze_count() == 0
