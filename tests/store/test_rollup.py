"""The cheapest-price rollup against the raw intervals it summarises, on both engines.

Randomised histories are written through the real collection path (complete runs, so
a missing offer is delisted and a returning one relisted; some runs carry dated spot
observations older than the run; one run changes an offer's GPU count and another its
GPU model). After every run, every group's stored intervals must equal the step
function worked out here by brute force from ``price_points``: at each time a price
starts or ends, the cheapest price per GPU-hour in force (each series' interval
started latest by then, if it had not ended, as the readers take it) per (GPU model, pricing,
provider, region, currency), ties to the first instance type, zone, payment option,
equal neighbours merged. Then ``rebuild`` must leave the same rows (twice), and the
per-GPU history read from the rollup must equal the raw probe's answer.
"""

from __future__ import annotations

import random
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import text

from tests.conftest import make_offer
from tests.listed_collector import collect
from tracker.catalog import GpuSelection
from tracker.models import Offer, PricingModel
from tracker.store import reads, rollup
from tracker.store.engine import Engine
from tracker.store.reads import _trend as trend  # patched where it is looked up
from tracker.store.rollup import _maintain as maintain  # patched where it is looked up

START = datetime(2026, 5, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)
GroupRow = tuple[int, Decimal, datetime, datetime | None]


def _offers(rng: random.Random) -> list[Offer]:
    offers = []
    for n in range(14):
        pricing = PricingModel.SPOT if n % 4 == 3 else PricingModel.ON_DEMAND
        offers.append(
            make_offer(
                provider=("aws", "gcp")[n % 2],
                instance_type=f"gpu.{n // 3}",
                region=("r1", "r2")[n // 7],
                zone=f"z{n % 2}" if pricing is PricingModel.SPOT else "",
                pricing=pricing,
                gpu_model=("H100-SXM", "A100-80GB")[n % 3 == 0],
                gpu_count=Decimal((1, 2, 8)[n % 3]),
                currency="EUR" if n in (4, 9) else "USD",
                price_per_hour=Decimal(rng.randrange(100, 400)) / 10,
            )
        )
    return offers


def _priced(o: Offer, price: Decimal, **kw: Any) -> Offer:
    usd = price if o.currency == "USD" else None
    return replace(o, price_per_hour=price, price_per_hour_usd=usd, **kw)


def _raw_expected(engine: Engine) -> dict[tuple[str, ...], list[GroupRow]]:
    """Every group's cheapest step function, by brute force over price_points."""
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT s.gpu_model, s.pricing, s.provider, s.region, p.currency, s.id, "
                "p.price, s.gpu_count, s.instance_type, s.zone, s.payment_option, "
                "p.first_seen, p.ended_at FROM price_points p JOIN series s "
                "ON s.id = p.series_id"
            )
        ).all()
    from tracker.store.types import aggregate_datetime

    by_group: dict[tuple[str, ...], list[Any]] = {}
    for r in rows:
        start, end = aggregate_datetime(r[11]), aggregate_datetime(r[12])
        by_group.setdefault(tuple(r[0:5]), []).append(
            (int(r[5]), Decimal(str(r[6])), Decimal(str(r[7])), tuple(r[8:11]), start, end)
        )
    expected: dict[tuple[str, ...], list[GroupRow]] = {}
    for group, intervals in by_group.items():
        times = sorted({t for iv in intervals for t in iv[4:6] if t is not None})
        steps: list[GroupRow] = []
        for t in times:
            # per series, the interval started latest by t, if not ended (the readers' rule)
            latest: dict[int, Any] = {}
            for iv in intervals:
                if iv[4] <= t and (iv[0] not in latest or iv[4] > latest[iv[0]][4]):
                    latest[iv[0]] = iv
            live = [iv for iv in latest.values() if iv[5] is None or iv[5] > t]
            best = min(live, key=lambda iv: (iv[1] / iv[2], iv[3]), default=None)
            if steps and steps[-1][3] is None:  # the open step ends here if it changes
                sid, price, since, _ = steps[-1]
                if best is not None and (best[0], best[1]) == (sid, price):
                    continue
                steps[-1] = (sid, price, since, t)
            if best is not None:
                steps.append((best[0], best[1], t, None))
        if steps:
            expected[group] = steps
    return expected


def _stored(engine: Engine) -> dict[tuple[str, ...], list[GroupRow]]:
    from tracker.store.types import aggregate_datetime

    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT g.gpu_model, g.pricing, g.provider, g.region, g.currency, r.series_id, "
                "r.price, r.first_seen, r.ended_at FROM price_rollups r "
                "JOIN rollup_groups g ON g.id = r.group_id ORDER BY r.group_id, r.first_seen"
            )
        ).all()
    stored: dict[tuple[str, ...], list[GroupRow]] = {}
    for r in rows:
        stored.setdefault(tuple(r[0:5]), []).append(
            (
                int(r[5]),
                Decimal(str(r[6])),
                aggregate_datetime(r[7]),  # type: ignore[arg-type]
                aggregate_datetime(r[8]),
            )
        )
    return stored


def _history(rng: random.Random, engine: Engine, runs: int) -> None:
    offers = _offers(rng)
    for run in range(runs):
        at = START + timedelta(hours=run * 6)
        for i, o in enumerate(offers):
            if rng.random() < 0.3:
                step = Decimal(rng.randrange(-30, 31)) / 10
                offers[i] = _priced(o, max(Decimal("0.5"), o.price_per_hour + step))
        if run == 5:  # a GPU count changes: its history ranks differently
            offers[1] = replace(offers[1], gpu_count=Decimal(4))
        if run == 8:  # a GPU model is corrected: the series moves to another key
            offers[2] = replace(offers[2], gpu_model="H100-NVL")
        seen = []
        for o in offers:
            if rng.random() < 0.12:
                continue  # missing from this complete run: delisted
            if o.pricing is PricingModel.SPOT and rng.random() < 0.5:
                # dated spot observations, the older one before the previous run
                back = timedelta(hours=rng.choice((1, 3, 7)))
                older = _priced(o, o.price_per_hour + 1, observed_at=at - back)
                seen += [older, replace(o, observed_at=at - timedelta(minutes=30))]
                continue
            seen.append(o)
        collect(engine, seen, at)
        stored, expected = _stored(engine), _raw_expected(engine)
        for g in sorted(set(stored) | set(expected)):
            assert stored.get(g) == expected.get(g), (run, g, stored.get(g), expected.get(g))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rollup_matches_raw_after_every_run_and_rebuild(
    engine: Engine, seed: int, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    if seed == 3:  # a run's new intervals joined to series, as a big run's are
        monkeypatch.setattr(maintain, "PROBE_LIMIT", -1)
    rng = random.Random(seed)
    with caplog.at_level("DEBUG", logger="tracker.store"):
        _history(rng, engine, runs=12)
    # Postgres takes the forward step for runs at one time, SQLite always recomputes.
    if engine.dialect.name == "postgresql":
        assert ": forward, " in caplog.text
        dearer = re.findall(r"rollup forward: (\d+) keys whose cheapest", caplog.text)
        assert any(int(n) for n in dearer)  # some key was repriced from all its offers
    assert ": recomputed, " in caplog.text
    maintained = _stored(engine)
    assert maintained  # the history has groups
    for _ in range(2):  # idempotent
        with engine.begin() as conn:
            rollup.rebuild(conn)
        assert _stored(engine) == maintained


def test_history_read_from_rollup_equals_raw_probe(engine: Engine) -> None:
    rng = random.Random(7)
    _history(rng, engine, runs=10)
    times = reads.Steps(START - timedelta(hours=2), timedelta(minutes=50), 90)
    rates = {"EUR": Decimal("1.0800")}
    cases: list[tuple[reads.SeriesFilter, tuple[str, ...]]] = [
        (reads.SeriesFilter(gpu=GpuSelection(models=("H100-SXM", "H100-NVL"))), ()),
        (reads.SeriesFilter(pricing=[PricingModel.ON_DEMAND]), ("gpu_model",)),
        (reads.SeriesFilter(provider=["gcp"]), ("gpu_model", "provider", "pricing")),
        (reads.SeriesFilter(region=["r2"]), ("gpu_model",)),
    ]
    for where, per in cases:
        assert reads.answerable(where, per) is None
        raw = reads.cheapest_at(engine, times, where, per=per, fx_rates=rates)
        got = reads.cheapest_from_rollup(engine, times, where, per=per, fx_rates=rates)
        assert raw  # something to compare
        assert got == raw, (where, per)


def test_filters_the_rollup_lacks_fall_back_to_raw(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    rng = random.Random(11)
    _history(rng, engine, runs=3)
    times = [START + timedelta(hours=13)]
    where = reads.SeriesFilter(instance_type="gpu.1")
    with caplog.at_level("DEBUG", logger="tracker.store.reads"):
        got = reads.cheapest_from_rollup(engine, times, where)
    assert got == reads.cheapest_at(engine, times, where)
    assert "rollup has no a filter on instance type" in caplog.text


def test_trend_from_rollup_equals_raw_intervals(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracker.fx import Rates
    from tracker.store import reads

    rng = random.Random(5)
    _history(rng, engine, runs=12)
    rates = Rates(manual={"EUR": Decimal("1.0800")})
    # daily-like steps across the history: intervals move inside the window
    times = reads.Steps(START + timedelta(hours=5), timedelta(hours=7), 11)
    for where in (
        reads.SeriesFilter(),
        reads.SeriesFilter(pricing=[PricingModel.ON_DEMAND]),
        reads.SeriesFilter(provider=["aws"], region=["r1"]),
    ):
        got = reads.cheapest_trend(engine, rates, times, where)
        with monkeypatch.context() as m:
            m.setattr(trend, "answerable", lambda _: "a forced raw read")
            raw = reads.cheapest_trend(engine, rates, times, where)
        assert raw and any(v is not None for values in raw.values() for v in values)
        assert got == raw, where


def test_stepped_read_covers_boundaries_and_the_end_time(engine: Engine) -> None:
    # Postgres expands each rollup interval to the steps it covers (rollup_read._expanded)
    # instead of probing each step: every grid shape must give the raw probe's answer.
    rng = random.Random(13)
    _history(rng, engine, runs=10)  # runs every 6 h from START: 00:00 … 54:00
    where = reads.SeriesFilter()
    last = START + timedelta(hours=54)
    grids = [
        # 6-hour steps land exactly on the runs, where intervals start and end
        reads.Steps(START, timedelta(hours=6), 10),
        # from before the first run (nothing in force) to after the last
        reads.Steps(START - timedelta(hours=5), timedelta(hours=3), 25),
        # a window's end after the regular steps, inside and beyond the history
        reads.Steps(START, timedelta(hours=7), 4, end=START + timedelta(hours=22)),
        reads.Steps(START + timedelta(hours=1), timedelta(hours=12), 3, end=last),
        reads.Steps(START + timedelta(hours=40), timedelta(days=1), 1, end=last),
    ]
    for times in grids:
        raw = reads.cheapest_at(engine, times, where, per=("gpu_model",))
        got = reads.cheapest_from_rollup(engine, times, where, per=("gpu_model",))
        assert raw and got == raw, times
    # the end time numbered after the regular steps (k = count), with its own price
    ended = reads.Steps(START, timedelta(hours=7), 4, end=START + timedelta(hours=22))
    assert {s.k for s in reads.cheapest_from_rollup(engine, ended, where)} == {0, 1, 2, 3, 4}


def test_cheaper_newcomer_spares_repricing_the_key(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("the forward step is Postgres's (SQLite recomputes every touched key)")
    # One group, three offers (1 GPU each): a 10.00, b 12.00, c 15.00; a is the cheapest.
    a, b, c = (
        make_offer(instance_type=f"gpu.{n}", gpu_count=Decimal(1), price_per_hour=Decimal(p))
        for n, p in (("a", "10.00"), ("b", "12.00"), ("c", "15.00"))
    )
    collect(engine, [a, b, c], START)
    # Next run: a rises to 11.00 (its cheapest got dearer) but b drops to 9.00, below
    # a's old 10.00, so b beats every offer the run left alone (c at 15.00 ranked after
    # 10.00): the answer is b at 9.00 without repricing the key from all its offers.
    with caplog.at_level("DEBUG", logger="tracker.store"):
        collect(
            engine,
            [_priced(a, Decimal("11.00")), _priced(b, Decimal("9.00")), c],
            START + timedelta(hours=6),
        )
    assert "rollup forward: 0 keys whose cheapest got dearer" in caplog.text
    assert _stored(engine) == _raw_expected(engine)
    (steps,) = _stored(engine).values()
    assert [(price, first) for _, price, first, _ in steps] == [
        (Decimal("10.00"), START),
        (Decimal("9.00"), START + HOUR * 6),
    ]
    # When nothing the run changed beats the old cheapest, the key is repriced from all
    # its offers: a (cheapest at 8.00) rises to 9.50, and b, untouched at 9.00, wins.
    collect(
        engine, [_priced(a, Decimal("8.00")), _priced(b, Decimal("9.00")), c], START + HOUR * 12
    )
    caplog.clear()
    with caplog.at_level("DEBUG", logger="tracker.store"):
        collect(
            engine, [_priced(a, Decimal("9.50")), _priced(b, Decimal("9.00")), c], START + HOUR * 18
        )
    assert "rollup forward: 1 keys whose cheapest got dearer" in caplog.text
    assert _stored(engine) == _raw_expected(engine)
    (steps,) = _stored(engine).values()
    assert (steps[-1][1], steps[-1][2]) == (Decimal("9.00"), START + HOUR * 18)
