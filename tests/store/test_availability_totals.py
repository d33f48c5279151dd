"""Availability intervals carry their series' running totals (migration 0014), and
obtainability read from them equals the sum over the window's intervals.

Expected totals are worked out by hand from the runs (hours after T0); the generated
mix is checked three ways: the totals read, the per-interval aggregate of listed
series and a recomputation in Python from the stored intervals."""

from __future__ import annotations

import json
import random
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select, text

from collectors.pricesheet import PriceSheetCollector
from tests.conftest import make_offer
from tests.store.test_availability import HOUR, LOW, T0, UNKNOWN, A, U
from tests.store.test_history import run
from tracker.collect import run_collector
from tracker.models import Availability, Offer, RunStatus
from tracker.settings import Settings
from tracker.store import migrate, reads
from tracker.store.schema import AvailabilityPoint
from tracker.store.series import WINDOWS, availability_history, obtainability


def x(availability: Availability, **kw: Any) -> Offer:
    return make_offer(instance_type="gpu.x", availability=availability, **kw)


ANCHOR = make_offer(instance_type="gpu.anchor", availability=UNKNOWN)
"""Seen in every run, so a run without gpu.x is a complete run that delists it."""


def stored(engine: Engine, instance_type: str = "gpu.x") -> list[tuple[Any, ...]]:
    """(state, start, known_before, rentable_before, previous_end, last_closed), times
    in hours after T0; the totals compared approximately (SQLite's julianday)."""
    [s] = reads.find_series(engine, instance_type=instance_type)
    p = AvailabilityPoint
    stmt = (
        select(p.availability, p.first_seen, p.known_before, p.rentable_before)
        .add_columns(p.previous_end, p.last_closed)
        .where(p.series_id == s.id)
        .order_by(p.first_seen, p.id)
    )
    with engine.connect() as conn:
        rows = conn.execute(stmt).all()

    def hours(t: datetime | None) -> float | None:
        return None if t is None else (t - T0) / HOUR

    known, rentable = (pytest.approx(r[2] / 3600) for r in rows), (r[3] / 3600 for r in rows)
    return [
        (r[0], hours(r[1]), k, pytest.approx(v), hours(r[4]), bool(r[5]))
        for r, k, v in zip(rows, known, rentable, strict=True)
    ]


def test_each_new_interval_carries_the_seconds_before_it(engine: Engine) -> None:
    run(engine, [x(A), ANCHOR], T0)
    run(engine, [x(A), ANCHOR], T0 + HOUR)  # re-seen: last_seen moves, nothing opens
    run(engine, [x(U), ANCHOR], T0 + 2 * HOUR)  # A [0, 2) closes, U opens at 2
    run(engine, [x(UNKNOWN), ANCHOR], T0 + 3 * HOUR)  # U [2, 3) closes: a gap follows
    assert stored(engine)[-1][-1] is True  # the series' last interval, closed
    run(engine, [x(LOW), ANCHOR], T0 + 5 * HOUR)  # LOW opens at 5 after the gap 3..5
    run(engine, [ANCHOR], T0 + 6 * HOUR)  # gpu.x delisted: LOW [5, 6) closes
    assert stored(engine)[-1][-1] is True
    run(engine, [x(A), ANCHOR], T0 + 8 * HOUR)  # relisted: A opens at 8
    # known before each: 0; A 2 h; + U 1 h = 3; + LOW 1 h = 4.
    # rentable before each: 0; 2; 2 (U is not rentable); + LOW 1 h = 3.
    # each previous_end: the previous interval's end (2, 3 and 6).
    assert stored(engine) == [
        ("available", 0, 0, 0, None, False),
        ("unavailable", 2, 2, 2, 2, False),
        ("low", 5, 3, 2, 3, False),
        ("available", 8, 4, 3, 6, False),
    ]


def test_a_back_filled_sheet_keeps_the_totals_and_older_rows_change_nothing(
    engine: Engine,
) -> None:
    run(engine, [x(A), ANCHOR], T0)
    run(engine, [x(A), ANCHOR], T0 + 2 * HOUR)
    # A sheet dated out of order: 9 h sold out, 1 h (older than what is stored: dropped),
    # 10.5 h available again. A [0, 9) closes at 9 (last seen at 2, so 9 h of it).
    dated = [
        x(A, observed_at=T0 + 10.5 * HOUR),
        x(U, observed_at=T0 + HOUR),
        x(U, observed_at=T0 + 9 * HOUR),
    ]
    run(engine, [*dated, ANCHOR], T0 + 11 * HOUR)
    # U [9, 10.5): known before 9, rentable 9; A at 10.5: known 9 + 1.5, rentable 9.
    assert stored(engine) == [
        ("available", 0, 0, 0, None, False),
        ("unavailable", 9, 9, 9, 9, False),
        ("available", 10.5, 10.5, 9, 10.5, False),
    ]
    run(engine, [*dated, ANCHOR], T0 + 12 * HOUR)  # the same sheet again: nothing new
    assert len(stored(engine)) == 3


def import_sheet(engine: Engine, path: Path, rows: list[tuple[float, str]], at: datetime) -> None:
    """A price sheet of gpu.x with an ``availability`` and ``observed_at`` column
    (hours after T0), imported as ``gpu-tracker import`` does (not a full snapshot)."""
    base = {
        "provider": "acme", "instance_type": "gpu.x", "region": "r1", "pricing": "on_demand",
        "gpu_model": "H100 SXM", "gpu_count": 1, "price_per_hour": "2.00", "currency": "USD",
    }  # fmt: skip
    sheet = [
        {**base, "availability": state, "observed_at": (T0 + h * HOUR).isoformat()}
        for h, state in rows
    ]
    path.write_text(json.dumps(sheet))
    summary = run_collector(
        engine, PriceSheetCollector(path, Settings()), Settings(), now=at, delist=False
    )
    assert summary.status == RunStatus.SUCCEEDED, summary


def test_the_price_sheet_back_fill_route_keeps_the_totals(engine: Engine, tmp_path: Path) -> None:
    # Rows out of order: A at 0, U at 2, A at 5 -> A [0, 2), U [2, 5), A [5, ...).
    import_sheet(
        engine,
        tmp_path / "a.json",
        [(2, "unavailable"), (0, "available"), (5, "available")],
        T0 + 6 * HOUR,
    )
    # A later sheet: 4 h is older than what is stored (dropped); low at 8 closes A [5, 8).
    import_sheet(engine, tmp_path / "b.json", [(4, "unavailable"), (8, "low")], T0 + 9 * HOUR)
    # known before: 0; 2; 2 + 3 = 5; 5 + 3 = 8. Rentable: 0; 2; 2; 2 + 3 = 5.
    assert stored(engine) == [
        ("available", 0, 0, 0, None, False),
        ("unavailable", 2, 2, 2, 2, False),
        ("available", 5, 5, 2, 5, False),
        ("low", 8, 8, 5, 8, False),
    ]


# -- the totals' read against the window's intervals, on a generated mix ---------------

STEPS = [HOUR, 5 * HOUR, 24 * HOUR, 3 * 24 * HOUR, 6 * 24 * HOUR, 9 * 24 * HOUR]
"""Run spacing: intervals and gaps from an hour to well past the read's 4-day reach."""


def generated_history(engine: Engine, seed: int) -> datetime:
    """Runs of 12 offers with random states (a state, unknown, or left out: delisted)
    at random spacing, the last closing two series' histories; returns its time."""
    rng = random.Random(seed)
    at = T0
    for _ in range(45):
        offers = [ANCHOR]
        for i in range(12):
            pick = rng.random()
            if pick < 0.1:
                continue  # not in the run: delisted (relisted when seen again)
            state = UNKNOWN if pick < 0.2 else rng.choice([A, A, LOW, U])
            offers.append(make_offer(instance_type=f"gpu.{i}", availability=state))
        run(engine, offers, at)
        at += rng.choice(STEPS)
    # and last: gpu.0 seen without a state, gpu.1 left out (their last intervals close)
    offers = [make_offer(instance_type=f"gpu.{i}", availability=A) for i in range(2, 12)]
    run(engine, [ANCHOR, make_offer(instance_type="gpu.0", availability=UNKNOWN), *offers], at)
    return at


def recomputed(engine: Engine, at: datetime) -> dict[int, tuple[float, float, float, float]]:
    """Known and rentable seconds of both windows per series, summed in Python over the
    stored intervals: each from first_seen to ended_at (or last_seen), clipped."""
    result = {}
    for s in reads.find_series(engine):
        sums = [0.0, 0.0, 0.0, 0.0]
        for h in availability_history(engine, s.id):
            end = min(h.ended_at or h.last_seen, at)
            for i, window in enumerate(WINDOWS):
                secs = (end - max(h.first_seen, at - window)).total_seconds()
                if secs > 0 and h.first_seen < at:
                    sums[2 * i] += secs
                    sums[2 * i + 1] += secs if h.availability.rentable else 0.0
        if sums[2] > 0:
            result[s.id] = (sums[0], sums[1], sums[2], sums[3])
    return result


@pytest.mark.parametrize("seed", [1, 2])
def test_the_totals_read_equals_the_sum_over_the_windows_intervals(
    engine: Engine, seed: int
) -> None:
    last = generated_history(engine, seed)
    ids = [s.id for s in reads.find_series(engine)]
    lengths = [
        ((h.ended_at or h.last_seen) - h.first_seen) / HOUR
        for sid in ids
        for h in availability_history(engine, sid)
    ]
    assert max(lengths) > 4 * 24, "the mix should hold intervals longer than the reach"
    with engine.connect() as conn:
        closed = text("SELECT count(*) FROM availability_points WHERE last_closed")
        assert conn.execute(closed).scalar_one() > 0, "and series whose last interval closed"
    starts = [h.first_seen for sid in ids for h in availability_history(engine, sid)]
    # now, later (nothing new reported), and inside the history (before some series'
    # last interval started, so their K(at) is looked up)
    for at in [last, last + 10 * 24 * HOUR, sorted(starts)[len(starts) * 2 // 3]]:
        expected = recomputed(engine, at)
        by_totals = obtainability(engine, at, recoveries=False)
        by_intervals = obtainability(engine, at, ids, recoveries=False)
        assert set(by_totals) == set(expected) == set(by_intervals), at
        for sid, (k7, u7, k30, u30) in expected.items():
            for got in (by_totals[sid], by_intervals[sid]):
                assert got.known_30d_seconds == pytest.approx(k30, abs=1e-3)
                assert got.share_30d == pytest.approx(u30 / k30, abs=1e-9)
                if k7 > 0:
                    assert got.share_7d == pytest.approx(u7 / k7, abs=1e-9)
                else:
                    assert got.share_7d is None


def test_the_migration_back_fills_what_the_write_path_keeps(engine: Engine) -> None:
    generated_history(engine, 3)
    p = AvailabilityPoint
    columns = (p.id, p.known_before, p.rentable_before, p.previous_end, p.last_closed)

    def rows() -> list[tuple[Any, ...]]:
        with engine.connect() as conn:
            found = conn.execute(select(*columns).order_by(p.id)).all()
        return [(i, k, r, e, bool(c)) for i, k, r, e, c in found]

    kept = rows()
    assert any(r[4] for r in kept) and any(r[3] is not None for r in kept)
    migrate.downgrade(engine, "0013")  # the columns go ...
    migrate.upgrade(engine)  # ... and come back, back-filled from the intervals
    assert rows() == [
        (i, pytest.approx(k, abs=1e-3), pytest.approx(r, abs=1e-3), e, c) for i, k, r, e, c in kept
    ]
