"""The cheapest sequence of on-demand months and terms for one instance, by hand."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tracker.plan.cover import Term, cheapest_cover

# On-demand 10 USD/h: a month is 10 × 730 = 7,300.
OD = Decimal(10)
# 1-year term at 6 USD/h: 6 × 8,760 = 52,560 (12 months).
Y1 = Term("reserved_1y", 12, Decimal(6), "no_upfront")
# 3-year term at 4 USD/h: 4 × 26,280 = 105,120 (36 months).
Y3 = Term("reserved_3y", 36, Decimal(4), "all_upfront")


def test_eighteen_months_one_year_term_then_six_on_demand() -> None:
    # 1y + 6 OD months = 52,560 + 6 × 7,300 = 96,360
    # beats 3y = 105,120, two 1y = 105,120 and 18 OD = 131,400.
    cover = cheapest_cover(18, OD, [Y1, Y3])
    assert cover is not None
    assert cover.cost == Decimal(96360)
    # Equal-cost orders (OD first, then the term) are possible; the plan commits first and
    # keeps the end on-demand, free to re-plan.
    assert [s.as_dict() for s in cover.segments] == [
        {
            "pricing": "reserved_1y",
            "from_month": 1,
            "months": 12,
            "term_months": 12,
            "payment_option": "no_upfront",
        },
        {"pricing": "on_demand", "from_month": 13, "months": 6},
    ]
    assert cover.committed


def test_a_term_past_the_horizon_is_paid_in_full() -> None:
    # 30 months. 3y at 3.5 USD/h = 3.5 × 26,280 = 91,980 for all 30 (6 paid, unused);
    # 2 × 1y + 6 OD = 105,120 + 43,800 = 148,920; 30 OD = 219,000.
    y3 = Term("reserved_3y", 36, Decimal("3.5"))
    cover = cheapest_cover(30, OD, [Y1, y3])
    assert cover is not None
    assert cover.cost == Decimal(91980)
    assert [s.as_dict() for s in cover.segments] == [
        {"pricing": "reserved_3y", "from_month": 1, "months": 30, "term_months": 36}
    ]


def test_short_horizon_stays_on_demand() -> None:
    # 5 months: 5 × 7,300 = 36,500 < a 1y term's 52,560.
    cover = cheapest_cover(5, OD, [Y1, Y3])
    assert cover is not None
    assert cover.cost == Decimal(36500)
    assert [s.as_dict() for s in cover.segments] == [
        {"pricing": "on_demand", "from_month": 1, "months": 5}
    ]
    assert not cover.committed


def test_equal_cost_prefers_on_demand() -> None:
    # 12 OD months = 12 × 7,300 = 87,600 = a 1y term at 10 USD/h (10 × 8,760): no commitment.
    cover = cheapest_cover(12, OD, [Term("reserved_1y", 12, Decimal(10))])
    assert cover is not None
    assert cover.cost == Decimal(87600)
    assert not cover.committed


def test_no_on_demand_price_terms_only() -> None:
    # 18 months with only 1y terms: two terms, the second past the horizon: 2 × 52,560.
    cover = cheapest_cover(18, None, [Y1])
    assert cover is not None
    assert cover.cost == Decimal(105120)
    assert [(s.from_month, s.months) for s in cover.segments] == [(1, 12), (13, 6)]


def test_nothing_covers() -> None:
    assert cheapest_cover(3, None, []) is None
    with pytest.raises(ValueError, match="at least 1"):
        cheapest_cover(0, OD, [])


def _shortest_path(months: int, od: Decimal | None, terms: list[Term]) -> Decimal | None:
    """The reference: a shortest path over months 0..M, one on-demand month or one term
    (to ``min(start + term, M)``, paid in full) at a time."""
    best: list[Decimal | None] = [Decimal(0)] + [None] * months
    for start in range(months):
        so_far = best[start]
        if so_far is None:
            continue
        moves = [(1, od * 730)] if od is not None else []
        moves += [(t.months, t.cost) for t in terms]
        for length, cost in moves:
            end = min(start + length, months)
            held = best[end]
            if held is None or so_far + cost < held:
                best[end] = so_far + cost
    return best[months]


def test_the_cheapest_combination_is_the_shortest_path_over_months() -> None:
    import random

    rng = random.Random(27)
    for _ in range(400):
        months = rng.randint(1, 120)
        od = None if rng.random() < 0.1 else Decimal(rng.randint(100, 1000)) / 100
        terms = [
            Term(p, n, Decimal(rng.randint(20, 1100)) / 100)
            for p, n in (("reserved_1y", 12), ("reserved_3y", 36), ("reserved_1y", 12))
            if rng.random() < 0.7
        ]
        cover = cheapest_cover(months, od, terms)
        expected = _shortest_path(months, od, terms)
        assert (cover.cost if cover else None) == expected, (months, od, terms)
        if cover is not None:  # the segments add up to the cost and cover every month
            assert sum(s.cost for s in cover.segments) == cover.cost
            assert sum(s.months for s in cover.segments) == months
