"""Compact price history: intervals, delisting, atomic runs, dated observations."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, ClassVar, Self

import pytest
from sqlalchemy import Engine, func, select, text

from collectors.base import RunContext
from tests.conftest import make_offer
from tracker.collect import run_collector
from tracker.filters import OfferFilter
from tracker.models import Offer, PricingModel
from tracker.settings import Settings
from tracker.store import reads
from tracker.store.ingest import _ingest as ingest_module  # patched where it is looked up
from tracker.store.schema import CollectionRun, PricePoint, Series

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class ListCollector:
    """Yields a fixed list; optionally raises after ``fail_after`` offers."""

    name: ClassVar[str] = "testcloud"
    description: ClassVar[str] = "offers given by the test"

    def __init__(
        self,
        offers: Iterable[Offer],
        fail_after: int | None = None,
        before: Callable[[RunContext], None] | None = None,
    ) -> None:
        self.offers = list(offers)
        self.fail_after = fail_after
        self.before = before

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls([])

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        if self.before:
            self.before(ctx)
        for n, offer in enumerate(self.offers):
            if self.fail_after is not None and n == self.fail_after:
                raise RuntimeError("provider went away mid-run")
            yield offer


def run(engine: Engine, offers: Iterable[Offer], at: datetime, **kw: Any) -> Any:
    return run_collector(engine, ListCollector(offers, **kw), Settings(), now=at)


def count(engine: Engine, table: Any) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def snapshot(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        series = conn.execute(text("SELECT * FROM series ORDER BY id")).all()
        points = conn.execute(text("SELECT * FROM price_points ORDER BY id")).all()
    return [list(map(tuple, series)), list(map(tuple, points))]


def fleet(n: int = 6, price: str = "1.50") -> list[Offer]:
    return [
        make_offer(instance_type=f"gpu.{i}", price_per_hour=Decimal(price) + i) for i in range(n)
    ]


def test_unchanged_recollection_adds_no_rows(engine: Engine) -> None:
    first = run(engine, fleet(), T0)
    assert first.status == "succeeded" and first.stats.new_series == 6
    assert count(engine, PricePoint) == 6
    second = run(engine, fleet(), T0 + timedelta(hours=1))
    assert (second.stats.new_series, second.stats.price_changes, second.stats.unchanged) == (
        0,
        0,
        6,
    )
    assert count(engine, PricePoint) == 6
    assert count(engine, Series) == 6
    [stored] = [s for s in reads.current_offers(engine) if s.offer.instance_type == "gpu.0"]
    assert stored.price_since == T0
    assert stored.last_seen == T0 + timedelta(hours=1)


def test_changed_price_adds_exactly_one_row(engine: Engine) -> None:
    run(engine, fleet(), T0)
    offers = fleet()
    offers[2] = make_offer(instance_type="gpu.2", price_per_hour=Decimal("9.99"))
    summary = run(engine, offers, T0 + timedelta(hours=6))
    assert summary.stats.price_changes == 1 and summary.stats.unchanged == 5
    assert count(engine, PricePoint) == 7
    [series] = reads.find_series(engine, instance_type="gpu.2")
    history = reads.price_history(engine, series.id)
    assert [p.price for p in history] == [Decimal("3.50"), Decimal("9.99")]
    assert history[0].ended_at == T0 + timedelta(hours=6)
    assert history[1].ended_at is None


def test_price_at_time_t(engine: Engine) -> None:
    offer = make_offer(price_per_hour=Decimal("2.00"))
    run(engine, [offer], T0)
    run(engine, [make_offer(price_per_hour=Decimal("2.50"))], T0 + timedelta(days=1))
    run(engine, [make_offer(price_per_hour=Decimal("2.50"))], T0 + timedelta(days=2))
    [series] = reads.find_series(engine, instance_type=offer.instance_type)
    at = reads.price_at
    assert at(engine, series.id, T0 - timedelta(seconds=1)) is None
    assert at(engine, series.id, T0).price == Decimal("2.00")  # type: ignore[union-attr]
    assert at(engine, series.id, T0 + timedelta(hours=23)).price == Decimal("2.00")  # type: ignore[union-attr]
    assert at(engine, series.id, T0 + timedelta(days=1)).price == Decimal("2.50")  # type: ignore[union-attr]
    assert at(engine, series.id, T0 + timedelta(days=30)).price == Decimal("2.50")  # type: ignore[union-attr]


def test_missing_offer_is_delisted_and_relisted(engine: Engine) -> None:
    run(engine, fleet(), T0)
    summary = run(engine, fleet()[:4], T0 + timedelta(hours=1))
    assert summary.stats.delisted == 2
    listed = {s.offer.instance_type for s in reads.current_offers(engine)}
    assert listed == {"gpu.0", "gpu.1", "gpu.2", "gpu.3"}
    [gone] = reads.find_series(engine, instance_type="gpu.5")
    assert gone.delisted_at == T0 + timedelta(hours=1)
    assert reads.price_at(engine, gone.id, T0 + timedelta(hours=2)) is None

    back = run(engine, fleet(), T0 + timedelta(hours=2))
    assert back.stats.relisted == 2 and back.stats.delisted == 0 and back.stats.new_series == 0
    assert len(reads.current_offers(engine)) == 6
    history = reads.price_history(engine, gone.id)
    assert len(history) == 2 and history[1].first_seen == T0 + timedelta(hours=2)
    [relisted] = reads.find_series(engine, instance_type="gpu.5")
    assert relisted.delisted_at is None


def test_delisting_spares_partial_regions_and_other_pricing(engine: Engine) -> None:
    offers = [
        make_offer(instance_type="a", region="us-east-1"),
        make_offer(instance_type="a", region="eu-west-1"),
        make_offer(instance_type="a", region="us-east-1", pricing="spot", zone="us-east-1a"),
    ]
    run(engine, offers, T0)

    def eu_failed(ctx: RunContext) -> None:
        ctx.mark_partial("eu-west-1", "throttled")

    # Only on-demand in scope, eu-west-1 unreachable: nothing may be delisted.
    summary = run_collector(
        engine,
        ListCollector([offers[0]], before=eu_failed),
        Settings(),
        now=T0 + timedelta(hours=1),
        pricing_scope=frozenset({PricingModel.ON_DEMAND}),
    )
    assert summary.stats.delisted == 0
    assert len(reads.current_offers(engine)) == 3


def test_empty_run_refuses_to_delist_everything(engine: Engine) -> None:
    run(engine, fleet(), T0)
    summary = run(engine, [], T0 + timedelta(hours=1))
    assert summary.status == "succeeded" and summary.stats.delisted == 0
    assert summary.skip_reasons == {"not_delisted_empty_run": 6}
    assert len(reads.current_offers(engine)) == 6


@pytest.mark.parametrize("fail_after", [0, 3])
def test_run_failing_midway_leaves_store_unchanged(engine: Engine, fail_after: int) -> None:
    run(engine, fleet(), T0)
    before = snapshot(engine)
    changed = [
        make_offer(instance_type=o.instance_type, price_per_hour=Decimal(99)) for o in fleet()
    ]
    summary = run(engine, changed + fleet(8)[6:], T0 + timedelta(hours=1), fail_after=fail_after)
    assert summary.status == "failed"
    assert "provider went away" in (summary.error or "")
    assert snapshot(engine) == before
    with engine.connect() as conn:
        statuses = conn.execute(select(CollectionRun.status).order_by(CollectionRun.id)).scalars()
        assert list(statuses) == ["succeeded", "failed"]


def test_database_failure_inside_the_write_leaves_store_unchanged(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure after half the set-wise statements (not in the collector) rolls back too."""

    run(engine, fleet(), T0)
    before = snapshot(engine)

    def broken_delist(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("connection lost")

    monkeypatch.setattr(ingest_module, "delist_offers", broken_delist)
    changed = [
        make_offer(instance_type=o.instance_type, price_per_hour=Decimal(7)) for o in fleet(3)
    ]
    summary = run(engine, changed, T0 + timedelta(hours=1))
    assert summary.status == "failed"
    assert snapshot(engine) == before


def test_dated_observations_land_at_their_own_times(engine: Engine) -> None:
    def spot(zone: str, minutes: int, price: str) -> Offer:
        return make_offer(
            pricing="spot",
            zone=zone,
            price_per_hour=Decimal(price),
            observed_at=T0 + timedelta(minutes=minutes),
        )

    observations = [
        spot("us-east-1b", 30, "1.10"),
        spot("us-east-1a", 0, "1.00"),
        spot("us-east-1a", 10, "1.00"),  # unchanged: extends the interval
        spot("us-east-1a", 20, "1.20"),
        spot("us-east-1b", 0, "1.05"),
        spot("us-east-1a", 40, "0.90"),
    ]
    summary = run(engine, observations, T0 + timedelta(hours=1))
    assert summary.status == "succeeded"
    [a] = reads.find_series(engine, zone="us-east-1a")
    [b] = reads.find_series(engine, zone="us-east-1b")
    ha = reads.price_history(engine, a.id)
    assert [(p.price, p.first_seen, p.last_seen) for p in ha] == [
        (Decimal("1.00"), T0, T0 + timedelta(minutes=10)),
        (Decimal("1.20"), T0 + timedelta(minutes=20), T0 + timedelta(minutes=20)),
        (Decimal("0.90"), T0 + timedelta(minutes=40), T0 + timedelta(minutes=40)),
    ]
    assert [p.ended_at for p in ha] == [
        T0 + timedelta(minutes=20),
        T0 + timedelta(minutes=40),
        None,
    ]
    assert [p.price for p in reads.price_history(engine, b.id)] == [
        Decimal("1.05"),
        Decimal("1.10"),
    ]

    # Re-sending the boundary point (incremental overlap) adds nothing.
    again = run(engine, [spot("us-east-1a", 40, "0.90")], T0 + timedelta(hours=2))
    assert again.stats.price_changes == 0 and again.stats.new_series == 0
    assert len(reads.price_history(engine, a.id)) == 3


def test_hardware_facts_follow_the_provider(engine: Engine) -> None:
    run(engine, [make_offer(gpu_model="mystery-gpu", gpu_known=False)], T0)
    assert [u.raw_name for u in reads.unknown_gpus(engine)] == ["mystery-gpu"]
    run(
        engine,
        [make_offer(gpu_model="A100-40GB", gpu_raw_name="mystery-gpu")],
        T0 + timedelta(hours=1),
    )
    assert reads.unknown_gpus(engine) == []
    [stored] = reads.current_offers(engine)
    assert stored.offer.gpu_model == "A100-40GB"
    assert count(engine, PricePoint) == 1


def test_money_survives_exactly(engine: Engine) -> None:
    price = Decimal("0.1234567891")
    eur = make_offer(price_per_hour=price, currency="EUR")
    run(engine, [eur], T0)
    [stored] = reads.current_offers(engine)
    assert stored.offer.price_per_hour == price
    assert stored.offer.currency == "EUR"
    # stored in its own currency only: the USD figure is computed when read (tracker.fx)
    assert stored.offer.price_per_hour_usd is None


def test_second_collector_does_not_delist_the_first(engine: Engine) -> None:
    run(engine, fleet(2), T0)

    class Other(ListCollector):
        name: ClassVar[str] = "othercloud"

    run_collector(engine, Other([make_offer(provider="othercloud")]), Settings(), now=T0)
    assert len(reads.current_offers(engine)) == 3


def test_min_vram_counts_a_slice_by_its_share(engine: Engine) -> None:
    whole = make_offer(instance_type="a10", gpu_model="A10", gpu_count=1, gpu_memory_gib=24)
    slice_ = make_offer(
        instance_type="a10/6", gpu_model="A10", gpu_count=Decimal("0.1666666667"), gpu_memory_gib=24
    )
    run(engine, [whole, slice_], T0)
    names = {
        s.offer.instance_type
        for s in reads.current_offers(engine, OfferFilter(min_vram=Decimal(16)))
    }
    assert names == {"a10"}
    assert len(reads.current_offers(engine, OfferFilter(min_vram=Decimal(3)))) == 2
