"""Savings plans in the ranking: a 1- or 3-year commitment costed like a reservation
(eligible only when the horizon covers the term and a utilization is given; each busy
hour costs the rate ÷ utilization), worked out by hand."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tracker.models import Offer
from tracker.recommend import Reason

from .test_rank import LORA_7B, job, names, offer, rank


def _offers() -> list[Offer]:
    return [
        offer("H100-SXM", 1, "4.00", instance_type="od"),
        offer("H100-SXM", 1, "1.80", instance_type="r3", pricing="reserved_3y",
              payment_option="no_upfront"),
        offer("H100-SXM", 1, "1.60", instance_type="sp3", pricing="savings_plan_3y",
              payment_option="no_upfront", offering_class="ec2_instance"),
        offer("H100-SXM", 1, "2.30", instance_type="sp1", pricing="savings_plan_1y",
              payment_option="all_upfront", offering_class="compute"),
    ]  # fmt: skip


def test_a_savings_plan_cheaper_than_the_reservation_ranks_first() -> None:
    # 7B LoRA on one H100-SXM: 2.096083 h (tests/recommend/test_rank.py)
    # on demand:    4.00 × 2.096083       = 8.384332 → 8.38
    # 3y reserved:  1.80 × 2.096083 ÷ 0.6 = 6.288249 → 6.29
    # 3y plan:      1.60 × 2.096083 ÷ 0.6 = 5.589555 → 5.59
    # 1y plan:      2.30 × 2.096083 ÷ 0.6 = 8.034985 → 8.03
    p = job(**LORA_7B, horizon_months=36, utilization=0.6)
    ranking = rank(p, _offers(), explain=True)
    assert names([c.offer for c in ranking.candidates]) == ["sp3", "r3", "sp1", "od"]
    cost = {c.offer.instance_type: c.job_cost_usd for c in ranking.candidates}
    assert cost == {
        "sp3": Decimal("5.59"),
        "r3": Decimal("6.29"),
        "sp1": Decimal("8.03"),
        "od": Decimal("8.38"),
    }
    assert any("savings plan" in note and "÷ utilization 0.6" in note for note in ranking.notes)


@pytest.mark.parametrize(
    ("horizon", "utilization", "expected"),
    [
        (12, 0.6, ["sp1", "od"]),  # 12 months cover the 1-year plan only
        (36, None, ["od"]),  # no utilization: no commitment is costed
    ],
)
def test_a_savings_plan_needs_the_horizon_and_a_utilization(
    horizon: int, utilization: float | None, expected: list[str]
) -> None:
    p = job(**LORA_7B, horizon_months=horizon, utilization=utilization)
    ranking = rank(p, _offers(), explain=True)
    assert names([c.offer for c in ranking.candidates]) == expected
    assert {e.reason for e in ranking.exclusions} == {Reason.RESERVED_TERM}
    details = {e.offer.instance_type: e.detail for e in ranking.exclusions}
    if utilization is not None:
        assert details["sp3"].startswith("savings_plan_3y needs a 36-month commitment")
