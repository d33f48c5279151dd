"""Known series travel compact (tracker.store.ingest); the answers stay those of full rows.

A re-collection stages the offers of series its source lists as (identity hash,
hardware number, price) rows; these tests pin which offers go which way and the cases
the compact rows must still get right: hardware that changed, an identity reported
twice, a series that went missing while a new one appeared. Both engines, each with
the usual chunks and with a chunk per compact row (every chunk's join sent while the
next row is staged), and a run failing while a chunk's join is in flight.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, text

from collectors.base import RunContext
from tests.conftest import make_offer
from tests.listed_collector import ListCollector
from tests.store.conftest import one_row_chunks
from tests.store.test_last_seen import ODA, ODB, answers, od, run_scoped
from tracker.collect import run_collector
from tracker.models import Availability, Offer
from tracker.settings import Settings
from tracker.store import reads
from tracker.store.ingest import Ingest
from tracker.store.ingest import _known as known  # patched where it is looked up

pytestmark = pytest.mark.usefixtures("chunking")

T0 = datetime(2026, 4, 1, tzinfo=UTC)
H = timedelta(hours=1)


def staged(conn: Connection, ingest: Ingest) -> tuple[int, int]:
    """(full rows, compact rows) ``ingest`` staged so far, its buffers written first."""
    ingest._flush()
    ingest._known.flush()
    ingest._known.settle()
    full = conn.execute(text("SELECT COUNT(*) FROM gt_incoming")).scalar()
    compact = conn.execute(text("SELECT COUNT(*) FROM gt_known")).scalar()
    return int(full or 0), int(compact or 0)


def test_known_series_are_staged_compact_the_rest_in_full(engine: Engine) -> None:
    run_scoped(engine, [od("a"), od("b"), od("d"), od("gone")], T0)
    with engine.begin() as conn:
        conn.execute(
            text("UPDATE series SET delisted_at = first_seen WHERE instance_type = 'gone'")
        )
    with engine.begin() as conn:
        ingest = Ingest(conn, source="testcloud", run_time=T0 + H)
        for offer in (
            od("a"),  # listed, same price: compact
            od("b", "2.50"),  # listed, new price: compact
            od("c"),  # new: full
            od("gone"),  # delisted: full (it is relisted)
            od("d", availability=Availability.AVAILABLE),  # listed, but says availability: full
        ):
            ingest.add(offer)
        assert staged(conn, ingest) == (3, 2)
        stats = ingest.finish(None)
    # New: c. Moved: b. Unchanged: a, d, and "gone" (its interval stayed open at 2.00).
    assert (stats.new_series, stats.price_changes, stats.unchanged) == (1, 1, 3)
    assert stats.relisted == 1


def test_another_sources_series_is_staged_in_full(engine: Engine) -> None:
    run_scoped(engine, [od("a")], T0)
    with engine.begin() as conn:
        ingest = Ingest(conn, source="othersource", run_time=T0 + H)
        ingest.add(od("a"))
        assert staged(conn, ingest) == (1, 0)
        ingest.finish(None)
    [series] = reads.find_series(engine)
    assert series.source == "othersource"


def test_hardware_that_changed_is_written_per_series(engine: Engine) -> None:
    # One instance type in three regions with the same facts; then one region's differ
    # in a number only, another's in an attribute's type (1 and True are other facts).
    run_scoped(
        engine, [od("a", region=r, vcpus=Decimal(8), attributes={"k": 1}) for r in "xyz"], T0
    )
    again = [
        od("a", region="x", vcpus=Decimal("8.0"), attributes={"k": 1}),  # the same value
        od("a", region="y", vcpus=Decimal(16), attributes={"k": 1}),
        od("a", region="z", vcpus=Decimal(8), attributes={"k": True}),
    ]
    summary = run_scoped(engine, again, T0 + H)
    assert summary.stats.price_changes == 0 and summary.stats.unchanged == 3
    stored = {s.region: (s.vcpus, s.attributes) for s in reads.find_series(engine)}
    assert stored == {
        "x": (Decimal(8), {"k": 1}),
        "y": (Decimal(16), {"k": 1}),
        "z": (Decimal(8), {"k": True}),
    }


def test_an_identity_reported_twice_takes_its_compact_row_along(engine: Engine) -> None:
    run_scoped(engine, [od("a", "2.00")], T0)
    # At T0+2h the run reports "a" at 2.00 (compact: listed), then the same offer dated
    # T0+1h at 3.00: two observations of one series, applied in time order.
    dated = make_offer(instance_type="a", price_per_hour=Decimal("3.00"), observed_at=T0 + H)
    run_scoped(engine, [od("a", "2.00"), dated], T0 + 2 * H)
    two, three = Decimal("2.00"), Decimal("3.00")
    # 2.00 from T0, last confirmed by the T0 run, ends at T0+1h; 3.00 seen at T0+1h
    # only, ends at T0+2h; 2.00 again from T0+2h, the run's own time. Without the
    # compact row the run would end at 3.00.
    assert answers(engine)[("a", "us-east-1", "", "on_demand")] == [
        (two, T0, T0, T0 + H),
        (three, T0 + H, T0 + H, T0 + 2 * H),
        (two, T0 + 2 * H, T0 + 2 * H, None),
    ]


def test_a_series_missing_while_a_new_one_appears_is_delisted(engine: Engine) -> None:
    # As many offers as before, one of them new: counting alone would call it complete.
    run_scoped(engine, [od("a"), od("b")], T0)
    summary = run_scoped(engine, [od("a"), od("c")], T0 + H)
    assert (summary.stats.new_series, summary.stats.delisted) == (1, 1)
    listed = {s.instance_type: s.delisted_at for s in reads.find_series(engine)}
    assert listed == {"a": None, "b": T0 + H, "c": None}


def test_a_complete_recollection_delists_nothing_it_saw(engine: Engine) -> None:
    run_scoped(engine, [od("a"), od("b"), od("c", region="eu-west-1")], T0)
    summary = run_scoped(engine, [od("a"), od("b", "2.10"), od("c", region="eu-west-1")], T0 + H)
    assert (summary.stats.delisted, summary.stats.price_changes) == (0, 1)
    assert all(s.delisted_at is None for s in reads.find_series(engine))


def test_a_compact_row_older_than_its_stored_sighting_is_stale(engine: Engine) -> None:
    run_scoped(engine, [od("a")], T0)
    run_scoped(engine, [od("a")], T0 + 5 * H, delist=False)  # additive: writes T0+5h
    # A complete run stamped T0+3h (a late, out-of-order run) re-sees "a": it knew
    # that already, so it counts as stale and moves nothing back.
    summary = run_scoped(engine, [od("a")], T0 + 3 * H)
    assert (summary.stats.stale, summary.stats.unchanged) == (1, 0)
    assert answers(engine)[("a", "us-east-1", "", "on_demand")] == [
        (Decimal("2.00"), T0, T0 + 5 * H, None)
    ]


def test_a_run_failing_while_a_chunk_is_joined_stores_nothing_and_frees_the_connection(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    one_row_chunks(monkeypatch)
    run_scoped(engine, [od("a"), od("b")], T0)
    in_flight: list[bool] = []
    drivers: list[Any] = []
    abandon = known.KnownSeries.abandon

    def spy(self: known.KnownSeries) -> None:
        in_flight.append(self._pipeline is not None)
        drivers.append(self.conn.connection.driver_connection)
        abandon(self)

    monkeypatch.setattr(known.KnownSeries, "abandon", spy)

    class Failing(ListCollector):
        def collect(self, ctx: RunContext) -> Iterator[Offer]:
            yield od("a", "9.99")  # compact: its chunk's join is sent, then the provider fails
            raise RuntimeError("provider went away")

    summary = run_collector(engine, Failing([]), Settings(), now=T0 + H)
    assert summary.status == "failed" and summary.error == "RuntimeError: provider went away"
    # Postgres had the join in flight (a pipeline); SQLite ran it at once. The run's
    # connection went back to the pool out of pipeline mode (where no COPY can run).
    postgres = engine.dialect.name == "postgresql"
    assert in_flight == [postgres]
    if postgres:
        assert drivers[0].pgconn.pipeline_status == 0  # libpq's PQ_PIPELINE_OFF
    two = Decimal("2.00")
    assert answers(engine)[ODA] == [(two, T0, T0, None)]  # 9.99 was never stored
    # The pooled connection works again: this run COPYs (no COPY runs in a pipeline).
    summary = run_scoped(engine, [od("a", "3.00"), od("b")], T0 + 2 * H)
    assert (summary.stats.price_changes, summary.stats.unchanged) == (1, 1)
    # a: 2.00 from T0 (confirmed then), closed at T0+2h; 3.00 seen at T0+2h, open.
    # b: unchanged, confirmed by the T0+2h run.
    assert answers(engine)[ODA] == [
        (two, T0, T0, T0 + 2 * H),
        (Decimal("3.00"), T0 + 2 * H, T0 + 2 * H, None),
    ]
    assert answers(engine)[ODB] == [(two, T0, T0 + 2 * H, None)]


def test_a_chunk_join_that_fails_fails_the_run_with_the_database_error(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_scoped(engine, [od("a")], T0)
    # A condition the database refuses when it runs the chunk's join.
    monkeypatch.setattr(known, "_CHANGES", ("EXISTS (SELECT 1 FROM no_such_table)",))
    summary = run_collector(engine, ListCollector([od("a", "9.99")]), Settings(), now=T0 + H)
    assert summary.status == "failed"
    assert summary.error is not None and "no_such_table" in summary.error
    assert answers(engine)[ODA] == [(Decimal("2.00"), T0, T0, None)]
    monkeypatch.undo()
    summary = run_scoped(engine, [od("a", "9.99")], T0 + 2 * H)
    assert summary.stats.price_changes == 1


def test_a_repeat_after_a_chunk_applied_a_change_takes_it_back(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    one_row_chunks(monkeypatch)
    run_scoped(engine, [od("a", "2.00")], T0)
    # At T0+2h "a" at 2.50 is a plain change, applied with its chunk; then "a" again,
    # dated T0+1h at 3.00: the run needs both observations in time order.
    dated = make_offer(instance_type="a", price_per_hour=Decimal("3.00"), observed_at=T0 + H)
    summary = run_scoped(engine, [od("a", "2.50"), dated], T0 + 2 * H)
    # 2.00 from T0 (confirmed then) ends at T0+1h; 3.00 seen at T0+1h only, ends at
    # T0+2h; 2.50 from T0+2h. Applied alone, 2.50 would have closed 2.00 at T0+2h.
    assert answers(engine)[ODA] == [
        (Decimal("2.00"), T0, T0, T0 + H),
        (Decimal("3.00"), T0 + H, T0 + H, T0 + 2 * H),
        (Decimal("2.50"), T0 + 2 * H, T0 + 2 * H, None),
    ]
    assert (summary.stats.price_changes, summary.stats.rounds) == (2, 2)


def test_a_change_applied_by_chunk_is_not_counted_stale(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    one_row_chunks(monkeypatch)
    run_scoped(engine, [od("a"), od("b")], T0)  # confirms us-east-1 on-demand at T0
    # At T0+2h: a at 2.50 (plain, applied with its chunk); b dated T0-1h, older than
    # the T0 confirmation, so every observation is checked for staleness at the end.
    old_b = od("b", "9.99", observed_at=T0 - H)
    summary = run_scoped(engine, [od("a", "2.50"), old_b], T0 + 2 * H)
    # a moved; b's observation is stale (its interval was last seen at T0).
    assert (summary.stats.price_changes, summary.stats.stale) == (1, 1)
    assert answers(engine)[ODA] == [
        (Decimal("2.00"), T0, T0, T0 + 2 * H),
        (Decimal("2.50"), T0 + 2 * H, T0 + 2 * H, None),
    ]
