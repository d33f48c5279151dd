"""Obtainability from the availability series (issue 42): the share of a window an offer
was reported rentable, unknown time left out, and the time until it came back.

Every expected value is worked out by hand from the runs below (one run a day)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine

from tests.conftest import make_offer
from tests.store.test_history import run
from tracker.models import Availability
from tracker.store import reads
from tracker.store.series import group_obtainability, obtainability

T0 = datetime(2026, 3, 1, tzinfo=UTC)
DAY = timedelta(days=1)
A, LOW, U, UNKNOWN = (
    Availability.AVAILABLE,
    Availability.LOW,
    Availability.UNAVAILABLE,
    Availability.UNKNOWN,
)


def daily(engine: Engine, states: list[list[tuple[str, Availability]]]) -> None:
    """Day d's run reports ``states[d]``: (instance type, availability) pairs."""
    for d, day in enumerate(states):
        offers = [make_offer(instance_type=t, availability=a) for t, a in day]
        run(engine, offers, T0 + d * DAY)


def sid(engine: Engine, instance_type: str) -> int:
    [s] = reads.find_series(engine, instance_type=instance_type)
    return s.id


def three_sevenths(engine: Engine, **other: Any) -> None:
    # Reported at days 0..7: available on days 0-1, sold out on days 2-5, available
    # on days 6-7. Intervals: A [d0, ended d2), U [d2, ended d6), A [d6, last seen d7].
    states = [A, A, U, U, U, U, A, A]
    daily(engine, [[("gpu.x", s), *other.get("with", [])] for s in states])


def test_available_two_days_sold_out_four_available_one_is_three_sevenths(
    engine: Engine,
) -> None:
    three_sevenths(engine)
    at = T0 + 7 * DAY
    [(key, figures)] = obtainability(engine, at).items()
    assert key == sid(engine, "gpu.x")
    # known: 2 + 4 + 1 = 7 days; rentable: 2 + 1 = 3 days -> 3/7, in both windows
    # (the 30-day window holds the same 7 reported days).
    assert figures.share_7d == pytest.approx(3 / 7)
    assert figures.share_30d == pytest.approx(3 / 7)
    assert figures.known_30d_seconds == pytest.approx(7 * 86400)
    # one spell: sold out from day 2, back on day 6 -> 4 days.
    assert (figures.median_back_seconds, figures.spells) == (pytest.approx(4 * 86400), 1)


def test_the_seven_day_window_clips_what_started_before_it(engine: Engine) -> None:
    three_sevenths(engine)
    # At day 10 nothing newer was reported: the open interval ends at its last sighting
    # (day 7). Window [d3, d10]: U from d3 to d6 (3 days), A from d6 to d7 (1 day);
    # d7..d10 is unknown -> 1 / (3 + 1) = 1/4. The 30-day window still has 3/7.
    [figures] = obtainability(engine, T0 + 10 * DAY).values()
    assert figures.share_7d == pytest.approx(1 / 4)
    assert figures.share_30d == pytest.approx(3 / 7)


def test_unknown_time_is_not_in_the_denominator_and_low_is_rentable(engine: Engine) -> None:
    # Day 0 low, day 1 seen without a state (closes the interval), day 2 not seen at all
    # beside another offer, day 3 unavailable, day 4 unavailable.
    # Known: LOW [d0, d1) = 1 day, U [d3, last seen d4] = 1 day; d1..d3 unknown.
    # Rentable: the low day -> 1 / 2.
    daily(
        engine,
        [
            [("gpu.x", LOW)],
            [("gpu.x", UNKNOWN)],
            [("gpu.x", UNKNOWN)],
            [("gpu.x", U)],
            [("gpu.x", U)],
        ],
    )
    [figures] = obtainability(engine, T0 + 4 * DAY).values()
    assert figures.share_7d == pytest.approx(1 / 2)
    assert figures.known_30d_seconds == pytest.approx(2 * 86400)
    # sold out since day 3 and not back: no spell counted
    assert (figures.median_back_seconds, figures.spells) == (None, 0)


def test_an_offer_never_reported_has_no_figure(engine: Engine) -> None:
    daily(engine, [[("gpu.silent", UNKNOWN)], [("gpu.silent", UNKNOWN)]])
    assert obtainability(engine, T0 + DAY) == {}
    assert group_obtainability(engine, T0 + DAY) == []


def test_only_the_asked_for_series_are_computed(engine: Engine) -> None:
    three_sevenths(engine, **{"with": [("gpu.y", A)]})
    y = sid(engine, "gpu.y")
    assert list(obtainability(engine, T0 + 7 * DAY, [y])) == [y]
    assert obtainability(engine, T0 + 7 * DAY, []) == {}


def test_a_group_pools_its_offers_seconds_and_their_spells(engine: Engine) -> None:
    # gpu.x: 3/7 of 7 days, one 4-day spell. gpu.y (same provider, GPU, region):
    # U on days 0-1, A on days 2-7: known 7 days, rentable 5 (d2..d7); a spell d0->d2
    # of 2 days. Pooled: (3 + 5) / (7 + 7) = 8/14; median of {2, 4} days = 3 days.
    states_y = [U, U, A, A, A, A, A, A]
    three = [A, A, U, U, U, U, A, A]
    daily(engine, [[("gpu.x", x), ("gpu.y", y)] for x, y in zip(three, states_y, strict=True)])
    [group] = group_obtainability(engine, T0 + 7 * DAY)
    assert (group.provider, group.gpu_model, group.region, group.offers) == (
        "testcloud",
        "A100-40GB",
        "us-east-1",
        2,
    )
    assert group.figures.share_7d == pytest.approx(8 / 14)
    assert group.figures.median_back_seconds == pytest.approx(3 * 86400)
    assert group.figures.spells == 2
    assert group_obtainability(engine, T0 + 7 * DAY, ["H100-SXM"]) == []
    assert len(group_obtainability(engine, T0 + 7 * DAY, ["A100-40GB"])) == 1


def test_groups_by_a_subset_of_provider_gpu_and_region(engine: Engine) -> None:
    # gpu.x in us-east-1 (3/7 of 7 days) and gpu.y in eu-west-1, available all 7 days:
    # per (GPU, provider) they pool to (3 + 7) / (7 + 7) = 10/14.
    three = [A, A, U, U, U, U, A, A]
    for d, x in enumerate(three):
        offers = [
            make_offer(instance_type="gpu.x", availability=x),
            make_offer(instance_type="gpu.y", region="eu-west-1", availability=A),
        ]
        run(engine, offers, T0 + d * DAY)
    [group] = group_obtainability(engine, T0 + 7 * DAY, per=("gpu_model", "provider"))
    assert (group.provider, group.gpu_model, group.region, group.offers) == (
        "testcloud",
        "A100-40GB",
        "",
        2,
    )
    assert group.figures.share_7d == pytest.approx(10 / 14)
    assert len(group_obtainability(engine, T0 + 7 * DAY)) == 2  # one per region
    with pytest.raises(ValueError, match="subset"):
        group_obtainability(engine, T0 + 7 * DAY, per=("zone",))
