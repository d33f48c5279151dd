"""Savings plans as plan terms: another 1- or 3-year commitment at its effective hourly
rate, chosen when it makes the cheapest cover (worked out by hand)."""

from __future__ import annotations

from decimal import Decimal

from tracker.cli.plan import _commitments
from tracker.plan.build import build_plans, candidates, service_lookup
from tracker.plan.cover import Term, cheapest_cover
from tracker.plan.explain import explain
from tracker.recommend.demand import Demand

from .test_build import OFFERS, TIERS, _offer, usd

D = Decimal

# On-demand 10 USD/h: a month is 10 × 730 = 7,300.
OD = D(10)
Y1 = Term("reserved_1y", 12, D(6), "no_upfront")  # 6 × 8,760 = 52,560
Y3 = Term("reserved_3y", 36, D(4), "all_upfront")  # 4 × 26,280 = 105,120
SP1 = Term("savings_plan_1y", 12, D("5.5"), "no_upfront", "ec2_instance")  # 48,180


def test_eighteen_months_pick_the_one_year_savings_plan_over_the_reservation() -> None:
    # The months-by-term search over {1y reserved, 1y plan, 3y reserved}:
    #   1y plan + 6 OD    = 5.5 × 8,760 + 6 × 7,300 = 48,180 + 43,800 = 91,980  ← cheapest
    #   1y reserved + 6 OD = 52,560 + 43,800 = 96,360
    #   3y reserved        = 105,120 (paid in full past month 18)
    #   two 1y plans       = 96,360; 18 OD = 131,400
    cover = cheapest_cover(18, OD, [Y1, Y3, SP1])
    assert cover is not None
    assert cover.cost == D(91980)
    assert [s.as_dict() for s in cover.segments] == [
        {
            "pricing": "savings_plan_1y",
            "from_month": 1,
            "months": 12,
            "term_months": 12,
            "payment_option": "no_upfront",
            "plan_type": "ec2_instance",
        },
        {"pricing": "on_demand", "from_month": 13, "months": 6},
    ]


def test_a_dearer_savings_plan_leaves_the_reservation_in_place() -> None:
    # a 1y plan at 6.5/h = 56,940 > the 1y reservation's 52,560: 1y reserved + 6 OD = 96,360
    dear = Term("savings_plan_1y", 12, D("6.5"), "no_upfront", "compute")
    cover = cheapest_cover(18, OD, [Y1, Y3, dear])
    assert cover is not None and cover.cost == D(96360)
    assert [s.pricing for s in cover.segments] == ["reserved_1y", "on_demand"]


def test_a_plan_over_stored_prices_commits_to_the_three_year_savings_plan() -> None:
    # tests/plan/test_build.py's AWS p5.48xlarge prices plus a 3-year EC2 Instance plan at
    # 17.50 USD/h (all upfront), below the 3y reservation's 500,000 / 26,280 = 19.0259 /h.
    # 16 steady GPUs = 2 instances; 36 months:
    #   3y plan:         17.50 × 26,280 = 459,900 an instance → × 2 = 919,800.00
    #   3y reservation:  500,000 an instance → 1,000,000
    plan = _offer(
        "aws", "p5.48xlarge", "us-east-1", "savings_plan_3y", "17.50",
        payment_option="all_upfront",
    )._replace(offering_class="ec2_instance")  # fmt: skip
    demand = Demand(steady_gpus=D(16), burst_gpu_hours=D(0), interruptible=D(0), months=36)
    offers = [c for c in candidates([*OFFERS, plan], usd) if c.provider == "aws"]
    (row,) = build_plans(offers, demand, service_lookup(TIERS), lambda s: D(0))
    assert row.instances == 2
    assert row.steady_usd == D("919800.00")
    assert row.commitments == [
        {
            "pricing": "savings_plan_3y",
            "from_month": 1,
            "months": 36,
            "term_months": 36,
            "payment_option": "all_upfront",
            "plan_type": "ec2_instance",
        }
    ]
    # the table's short form of the sequence, and --explain's line for it
    assert _commitments({"commitments": row.commitments}) == "SP3y 36m"
    assert (
        "  months 1-36: savings plan 3y, all upfront, ec2 instance plan 17.50 USD/h × 26,280 h"
        " = 459,900.00 USD"
    ) in explain(row, demand)
