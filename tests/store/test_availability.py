"""Availability is its own compact interval series per offer, beside the prices (issue 13)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, func, select

from tests.conftest import make_offer
from tests.store.test_history import run
from tracker.filters import OfferFilter
from tracker.models import Availability, Offer
from tracker.store import reads
from tracker.store.schema import AvailabilityPoint, PricePoint
from tracker.store.series import availability_history, listed_keys

T0 = datetime(2026, 2, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)
A, LOW, U, UNKNOWN = (
    Availability.AVAILABLE,
    Availability.LOW,
    Availability.UNAVAILABLE,
    Availability.UNKNOWN,
)


def offer(availability: Availability, **kw: Any) -> Offer:
    return make_offer(availability=availability, **kw)


def count(engine: Engine, table: Any) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def series_id(engine: Engine, **key: str) -> int:
    [s] = reads.find_series(engine, **key)
    return s.id


def test_a_flip_and_back_adds_exactly_two_intervals_and_no_price_interval(
    engine: Engine,
) -> None:
    run(engine, [offer(A)], T0)
    assert count(engine, AvailabilityPoint) == 1
    run(engine, [offer(A)], T0 + HOUR)  # unchanged: no row, last_seen moves
    assert count(engine, AvailabilityPoint) == 1
    run(engine, [offer(U)], T0 + 2 * HOUR)
    run(engine, [offer(A)], T0 + 3 * HOUR)
    assert count(engine, AvailabilityPoint) == 1 + 2
    # the stock flicker never split the price: one price interval, seen at every run
    assert count(engine, PricePoint) == 1
    [price] = reads.price_history(engine, series_id(engine, provider="testcloud"))
    assert (price.first_seen, price.last_seen, price.ended_at) == (T0, T0 + 3 * HOUR, None)

    history = availability_history(engine, series_id(engine, provider="testcloud"))
    assert [(h.availability, h.first_seen, h.last_seen, h.ended_at) for h in history] == [
        (A, T0, T0 + HOUR, T0 + 2 * HOUR),
        (U, T0 + 2 * HOUR, T0 + 2 * HOUR, T0 + 3 * HOUR),
        (A, T0 + 3 * HOUR, T0 + 3 * HOUR, None),
    ]
    [stored] = reads.current_offers(engine)
    assert stored.offer.availability is A


def test_unknown_is_a_gap_not_a_row(engine: Engine) -> None:
    run(engine, [offer(UNKNOWN)], T0)  # a provider that never says: nothing stored
    assert count(engine, AvailabilityPoint) == 0
    run(engine, [offer(LOW)], T0 + HOUR)
    run(engine, [offer(UNKNOWN)], T0 + 2 * HOUR)  # stopped saying: the interval closes
    [stored] = reads.current_offers(engine)
    assert stored.offer.availability is UNKNOWN
    history = availability_history(engine, stored.series_id)
    assert [(h.availability, h.ended_at) for h in history] == [(LOW, T0 + 2 * HOUR)]
    run(engine, [offer(LOW)], T0 + 3 * HOUR)  # says again: a new interval after the gap
    assert [h.availability for h in availability_history(engine, stored.series_id)] == [
        LOW,
        LOW,
    ]


def test_delisting_closes_availability_and_relisting_opens_it(engine: Engine) -> None:
    other = offer(A, instance_type="gpu.1xa100", gpu_count=1)
    run(engine, [offer(A), other], T0)
    run(engine, [other], T0 + HOUR)  # the 8x type is gone from the run: delisted
    sid = series_id(engine, instance_type="gpu.8xa100")
    [closed] = availability_history(engine, sid)
    assert closed.ended_at == T0 + HOUR
    run(engine, [offer(A), other], T0 + 2 * HOUR)
    assert [h.ended_at for h in availability_history(engine, sid)] == [T0 + HOUR, None]
    # the 1x offer was seen available at every run: still its first interval
    [kept] = availability_history(engine, series_id(engine, instance_type="gpu.1xa100"))
    assert (kept.first_seen, kept.last_seen, kept.ended_at) == (T0, T0 + 2 * HOUR, None)


def test_available_filter_keeps_rentable_offers_only(engine: Engine) -> None:
    run(
        engine,
        [
            offer(A, region="r-available"),
            offer(LOW, region="r-low"),
            offer(U, region="r-unavailable"),
            offer(UNKNOWN, region="r-unknown"),
        ],
        T0,
    )
    every = {s.offer.region: s.offer.availability for s in reads.current_offers(engine)}
    assert every == {"r-available": A, "r-low": LOW, "r-unavailable": U, "r-unknown": UNKNOWN}
    rentable = {s.offer.region for s in reads.current_offers(engine, OfferFilter(available=True))}
    assert rentable == {"r-available", "r-low"}


def test_dated_observations_apply_in_time_order(engine: Engine) -> None:
    # one run reporting three dated states of one offer (as a back-filled sheet would)
    dated = [
        offer(U, observed_at=T0 + 2 * HOUR),
        offer(A, observed_at=T0),
        offer(A, observed_at=T0 + 3 * HOUR),
    ]
    run(engine, dated, T0 + 4 * HOUR)
    history = availability_history(engine, series_id(engine, provider="testcloud"))
    assert [(h.availability, h.first_seen, h.ended_at) for h in history] == [
        (A, T0, T0 + 2 * HOUR),
        (U, T0 + 2 * HOUR, T0 + 3 * HOUR),
        (A, T0 + 3 * HOUR, None),
    ]
    run(engine, dated, T0 + 5 * HOUR)  # the same sheet again: nothing new
    assert count(engine, AvailabilityPoint) == 3


def test_listed_keys_are_the_sources_listed_series(engine: Engine) -> None:
    run(engine, [offer(A), offer(A, region="eu-west-1")], T0)
    run(engine, [offer(A)], T0 + HOUR)  # eu-west-1 delisted
    assert listed_keys(engine, "testcloud") == [offer(A).key()]
    assert listed_keys(engine, "another") == []
