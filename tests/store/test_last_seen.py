"""What every reader answers for ``last_seen``, over hand-built collection histories.

Issue 17 stops rewriting ``last_seen`` of unchanged open intervals and derives it from
the runs that confirmed them; these scenarios were written (and passed) against the
store that still wrote it on every run, so they pin the answers the change must keep.
Each expected time is worked out from the runs in the test, in a comment. Every
scenario reads ``last_seen`` through each reader that serves it: the current offers
(``offers``, /api/v1), the dashboard's page, ``history`` (intervals, the price in force,
the export), and where an incremental fetch resumes (``runs.last_observed``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Engine

from collectors.base import RunContext
from tests.conftest import make_offer
from tests.store.test_history import ListCollector, run
from tracker.collect import run_collector
from tracker.fx import Rates
from tracker.models import Offer, PricingModel
from tracker.settings import Settings
from tracker.store import reads, runs
from tracker.store.reads import SeriesFilter, export_batches

# Each scenario also with a chunk per compact row (tests/store/conftest.py).
pytestmark = pytest.mark.usefixtures("chunking")

T0 = datetime(2026, 4, 1, tzinfo=UTC)
H = timedelta(hours=1)
M = timedelta(minutes=1)
LATER = T0 + 1000 * H
Label = tuple[str, str, str, str]
"""(instance_type, region, zone, pricing) of a series."""
Interval = tuple[Decimal, datetime, datetime, datetime | None]
"""(price, first_seen, last_seen, ended_at)."""


def od(instance_type: str, price: str = "2.00", region: str = "us-east-1", **kw: Any) -> Offer:
    return make_offer(
        instance_type=instance_type, region=region, price_per_hour=Decimal(price), **kw
    )


def spot(zone: str, at: datetime | None, price: str = "1.00", **kw: Any) -> Offer:
    return make_offer(
        instance_type="spot.x",
        pricing="spot",
        zone=zone,
        price_per_hour=Decimal(price),
        observed_at=at,
        **kw,
    )


def partial(region: str) -> Any:
    def mark(ctx: RunContext) -> None:
        ctx.mark_partial(region, "throttled")

    return mark


def label(s: Any) -> Label:
    return (s.instance_type, s.region, s.zone, s.pricing)


def answers(engine: Engine) -> dict[Label, list[Interval]]:
    """Every series' intervals, after checking that every reader agrees with them."""
    history: dict[Label, list[Interval]] = {}
    ids: dict[Label, int] = {}
    for s in reads.find_series(engine):
        ids[label(s)] = s.id
        history[label(s)] = [
            (p.price, p.first_seen, p.last_seen, p.ended_at)
            for p in reads.price_history(engine, s.id)
        ]
    open_last_seen = {k: v[-1][2] for k, v in history.items() if v and v[-1][3] is None}

    # offers / the JSON listing / /api/v1: the open interval's last_seen.
    current = {label(o.offer): o.last_seen for o in reads.current_offers(engine)}
    assert current == open_last_seen
    # the dashboard's page reads the same select.
    page = reads.offer_listing(engine, Rates(), LATER, limit=1000).items
    assert {label(o.offer): o.last_seen for o in page} == open_last_seen
    # history --at: the interval in force then.
    for key, sid in ids.items():
        point = reads.price_at(engine, sid, LATER)
        in_force = [i for i in history[key] if i[3] is None]
        assert ([] if point is None else [point.last_seen]) == [i[2] for i in in_force]
    # history export: every interval's last_seen.
    exported = sorted(
        ((r[1], r[2], r[3], r[4]), r[17], r[18])
        for batch in export_batches(engine, SeriesFilter(), T0 - 1000 * H, LATER)
        for r in batch
    )
    assert exported == sorted((k, i[1], i[2]) for k, v in history.items() for i in v)
    return history


def resumes_at(engine: Engine, pricing: str = "on_demand", region: str = "us-east-1") -> Any:
    """Where an incremental fetch of testcloud resumes (the latest stored observation)."""
    return runs.last_observed(engine, "testcloud", PricingModel(pricing), region)


def run_scoped(
    engine: Engine, offers: Iterable[Offer], at: datetime, **kw: Any
) -> Any:  # run_collector with a collector that may mark regions partial
    before = kw.pop("before", None)
    summary = run_collector(engine, ListCollector(offers, before=before), Settings(), now=at, **kw)
    assert summary.status == "succeeded", summary.error
    return summary


ODA: Label = ("a", "us-east-1", "", "on_demand")
ODB: Label = ("b", "us-east-1", "", "on_demand")
EUA: Label = ("a", "eu-west-1", "", "on_demand")
EUB: Label = ("b", "eu-west-1", "", "on_demand")
D2 = Decimal("2.00")


def test_complete_runs_confirm_an_unchanged_price(engine: Engine) -> None:
    for n in range(3):
        run_scoped(engine, [od("a"), od("b", "3.00")], T0 + n * H)
    # Seen at T0, T0+1h, T0+2h at one price: one interval each, last seen at T0+2h.
    assert answers(engine) == {
        ODA: [(D2, T0, T0 + 2 * H, None)],
        ODB: [(Decimal("3.00"), T0, T0 + 2 * H, None)],
    }
    assert resumes_at(engine) == T0 + 2 * H


def test_a_price_change_closes_the_interval_at_its_last_sighting(engine: Engine) -> None:
    run_scoped(engine, [od("a")], T0)
    run_scoped(engine, [od("a")], T0 + H)
    run_scoped(engine, [od("a", "2.50")], T0 + 2 * H)
    run_scoped(engine, [od("a", "2.50")], T0 + 3 * H)
    # 2.00 seen at T0 and T0+1h, ended by the change seen at T0+2h;
    # 2.50 from T0+2h, last seen T0+3h, still open.
    assert answers(engine) == {
        ODA: [(D2, T0, T0 + H, T0 + 2 * H), (Decimal("2.50"), T0 + 2 * H, T0 + 3 * H, None)],
    }


def test_a_partial_region_confirms_only_what_it_saw(engine: Engine) -> None:
    everything = [od("a"), od("b"), od("a", region="eu-west-1"), od("b", region="eu-west-1")]
    run_scoped(engine, everything, T0)
    # T0+1h: eu-west-1 failed halfway: only eu "a" came back; us-east-1 complete.
    run_scoped(engine, everything[:3], T0 + H, before=partial("eu-west-1"))
    # eu "b" was not seen (and not delisted): still last seen at T0; the rest at T0+1h.
    assert answers(engine) == {
        ODA: [(D2, T0, T0 + H, None)],
        ODB: [(D2, T0, T0 + H, None)],
        EUA: [(D2, T0, T0 + H, None)],
        EUB: [(D2, T0, T0, None)],
    }
    # T0+2h: eu-west-1 failed entirely (nothing of it came back).
    run_scoped(engine, everything[:2], T0 + 2 * H, before=partial("eu-west-1"))
    assert answers(engine) == {
        ODA: [(D2, T0, T0 + 2 * H, None)],
        ODB: [(D2, T0, T0 + 2 * H, None)],
        EUA: [(D2, T0, T0 + H, None)],
        EUB: [(D2, T0, T0, None)],
    }
    assert resumes_at(engine, region="eu-west-1") == T0 + H
    # T0+3h complete again: everything confirmed at T0+3h.
    run_scoped(engine, everything, T0 + 3 * H)
    assert {k: v[-1][2] for k, v in answers(engine).items()} == dict.fromkeys(
        (ODA, ODB, EUA, EUB), T0 + 3 * H
    )


def test_a_run_scoped_to_one_pricing_model_confirms_only_that_model(engine: Engine) -> None:
    s = spot("us-east-1a", None)
    run_scoped(engine, [od("a"), s], T0)
    run_scoped(engine, [s], T0 + H, pricing_scope=frozenset({PricingModel.SPOT}))
    # The spot-only run saw the spot series at T0+1h; on-demand was not asked: T0.
    assert answers(engine) == {
        ODA: [(D2, T0, T0, None)],
        ("spot.x", "us-east-1", "us-east-1a", "spot"): [(Decimal("1.00"), T0, T0 + H, None)],
    }
    assert resumes_at(engine, "spot") == T0 + H and resumes_at(engine) == T0


def test_dated_spot_observations_keep_the_providers_times(engine: Engine) -> None:
    za: Label = ("spot.x", "us-east-1", "us-east-1a", "spot")
    zb: Label = ("spot.x", "us-east-1", "us-east-1b", "spot")
    # A complete run at T0+1h of prices stamped by the provider at T0+10m .. T0+40m.
    run_scoped(
        engine,
        [
            spot("us-east-1a", T0 + 10 * M),
            spot("us-east-1a", T0 + 40 * M),  # unchanged: last seen at its own stamp
            spot("us-east-1b", T0 + 20 * M, "1.30"),
        ],
        T0 + H,
    )
    assert answers(engine) == {
        za: [(Decimal("1.00"), T0 + 10 * M, T0 + 40 * M, None)],
        zb: [(Decimal("1.30"), T0 + 20 * M, T0 + 20 * M, None)],
    }
    # The next run at T0+2h resends a's boundary point (T0+40m, stale) and a new stamp
    # T0+1h30m at the same price; b's newest stamp is T0+1h50m, unchanged.
    run_scoped(
        engine,
        [
            spot("us-east-1a", T0 + 40 * M),
            spot("us-east-1a", T0 + 90 * M),
            spot("us-east-1b", T0 + 110 * M, "1.30"),
        ],
        T0 + 2 * H,
    )
    assert answers(engine) == {
        za: [(Decimal("1.00"), T0 + 10 * M, T0 + 90 * M, None)],
        zb: [(Decimal("1.30"), T0 + 20 * M, T0 + 110 * M, None)],
    }
    # An incremental fetch resumes after the newest stamp (b's T0+1h50m), not the run.
    assert resumes_at(engine, "spot") == T0 + 110 * M


def test_a_dated_observation_older_than_the_last_sighting_changes_nothing(
    engine: Engine,
) -> None:
    run_scoped(engine, [od("a")], T0)
    run_scoped(engine, [od("a")], T0 + 2 * H)
    # A back-filled 9.99 stamped T0+1h, imported after the T0+2h sighting: stale.
    summary = run_scoped(engine, [od("a", "9.99", observed_at=T0 + H)], T0 + 3 * H, delist=False)
    assert summary.stats.price_changes == 0 and summary.stats.stale == 1
    assert answers(engine) == {ODA: [(D2, T0, T0 + 2 * H, None)]}


def test_delisting_keeps_the_last_sighting_and_relisting_opens_anew(engine: Engine) -> None:
    run_scoped(engine, [od("a"), od("b")], T0)
    run_scoped(engine, [od("a"), od("b")], T0 + H)
    run_scoped(engine, [od("a")], T0 + 2 * H)  # b missing from a complete run: delisted
    run_scoped(engine, [od("a")], T0 + 3 * H)
    # b: seen T0 and T0+1h, ended (delisted) at T0+2h; still delisted at T0+3h.
    assert answers(engine) == {
        ODA: [(D2, T0, T0 + 3 * H, None)],
        ODB: [(D2, T0, T0 + H, T0 + 2 * H)],
    }
    run_scoped(engine, [od("a"), od("b")], T0 + 4 * H)  # b back: a new interval
    run_scoped(engine, [od("a"), od("b")], T0 + 5 * H)
    assert answers(engine) == {
        ODA: [(D2, T0, T0 + 5 * H, None)],
        ODB: [(D2, T0, T0 + H, T0 + 2 * H), (D2, T0 + 4 * H, T0 + 5 * H, None)],
    }


def test_an_empty_or_failed_run_confirms_nothing(engine: Engine) -> None:
    run_scoped(engine, [od("a")], T0)
    run_scoped(engine, [], T0 + H)  # refused to delist: confirms nothing either
    failed = run(engine, [od("a"), od("b")], T0 + 2 * H, fail_after=1)
    assert failed.status == "failed"
    assert answers(engine) == {ODA: [(D2, T0, T0, None)]}


def test_an_earlier_run_stored_later_does_not_move_last_seen_back(engine: Engine) -> None:
    run_scoped(engine, [od("a")], T0)
    run_scoped(engine, [od("a")], T0 + 2 * H)
    run_scoped(engine, [od("a")], T0 + H)  # a run stamped before the last one
    assert answers(engine) == {ODA: [(D2, T0, T0 + 2 * H, None)]}


def test_an_offer_reported_twice_in_one_run_is_seen_at_the_run(engine: Engine) -> None:
    run_scoped(engine, [od("a")], T0)
    run_scoped(engine, [od("a"), od("a")], T0 + H)
    assert answers(engine) == {ODA: [(D2, T0, T0 + H, None)]}


def test_another_sources_runs_do_not_confirm_a_series_it_no_longer_reports(
    engine: Engine,
) -> None:
    run_scoped(engine, [od("a"), od("b")], T0)  # source testcloud
    run_scoped(engine, [od("a")], T0 + H, source="other")  # "a" now reported by other
    run_scoped(engine, [od("b")], T0 + 2 * H)  # testcloud complete, "a" is not its own
    # a: last seen by other at T0+1h; b: by testcloud at T0+2h.
    assert answers(engine) == {ODA: [(D2, T0, T0 + H, None)], ODB: [(D2, T0, T0 + 2 * H, None)]}
    run_scoped(engine, [od("a"), od("b")], T0 + 3 * H)  # testcloud reports "a" again
    run_scoped(engine, [od("b")], T0 + 4 * H, source="other")  # other: "b" taken over
    assert answers(engine) == {
        ODA: [(D2, T0, T0 + 3 * H, None)],
        ODB: [(D2, T0, T0 + 4 * H, None)],
    }


def test_imports_additive_and_complete(engine: Engine) -> None:
    imp = "import:deal.csv"
    run_scoped(engine, [od("a"), od("b")], T0, source=imp, delist=False)
    run_scoped(engine, [od("a")], T0 + H, source=imp, delist=False)  # additive: b stays
    assert answers(engine) == {ODA: [(D2, T0, T0 + H, None)], ODB: [(D2, T0, T0, None)]}
    run_scoped(engine, [od("a")], T0 + 2 * H, source=imp)  # --full: b delisted at T0+2h
    run_scoped(engine, [od("a")], T0 + 3 * H, source=imp)
    assert answers(engine) == {
        ODA: [(D2, T0, T0 + 3 * H, None)],
        ODB: [(D2, T0, T0, T0 + 2 * H)],
    }


def test_a_series_stamped_before_its_scopes_last_complete_run_keeps_its_stamp(
    engine: Engine,
) -> None:
    run_scoped(engine, [od("a")], T0)
    run_scoped(engine, [od("a")], T0 + 2 * H)  # complete: us-east-1 on-demand read at T0+2h
    # A back-filled sheet adds "b" to the same scope, stamped T0+1h (before that run):
    # it was seen at T0+1h only; the T0+2h run never saw it.
    run_scoped(engine, [od("b", observed_at=T0 + H)], T0 + 3 * H, delist=False)
    assert answers(engine) == {
        ODA: [(D2, T0, T0 + 2 * H, None)],
        ODB: [(D2, T0 + H, T0 + H, None)],
    }
    run_scoped(engine, [od("a"), od("b")], T0 + 4 * H)  # the next complete run sees both
    assert {k: v[-1][2] for k, v in answers(engine).items()} == {ODA: T0 + 4 * H, ODB: T0 + 4 * H}
