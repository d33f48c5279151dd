"""Whole plans worked out by hand: steady fleet, burst, storage, egress, migration."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tracker.plan.build import Tiers, build_plans, candidates, service_lookup, spot_overhead
from tracker.recommend.demand import Demand, PlanInputError
from tracker.service_prices import ServiceKind, tiered_cost
from tracker.store.reads import PlanPrice

D = Decimal


def _offer(
    provider: str,
    itype: str,
    region: str,
    pricing: str,
    usd: str,
    *,
    zone: str = "",
    payment_option: str = "",
    upfront: str | None = None,
    recurring: str | None = None,
) -> PlanPrice:
    return PlanPrice(
        provider, region, itype, pricing, payment_option, zone, "H100-SXM", D(8), D(usd), "USD",
        None, upfront, recurring,
    )  # fmt: skip


def usd(amount: D, currency: str) -> D:
    assert currency == "USD"
    return amount


OFFERS = [
    _offer("aws", "p5.48xlarge", "us-east-1", "on_demand", "55.04"),
    _offer("aws", "p5.48xlarge", "us-east-1", "spot", "16.512", zone="us-east-1a"),
    _offer("aws", "p5.48xlarge", "us-east-1", "spot", "20.00", zone="us-east-1b"),
    _offer("aws", "p5.48xlarge", "us-east-1", "reserved_1y", "35.00", payment_option="no_upfront"),
    # 3y all upfront: 500,000 USD spread over 26,280 h (the stored figure is rounded; the
    # upfront and recurring attributes give the exact rate).
    _offer(
        "aws",
        "p5.48xlarge",
        "us-east-1",
        "reserved_3y",
        "19.0259",
        payment_option="all_upfront",
        upfront="500000",
        recurring="0",
    ),
    _offer("gcp", "a3-highgpu-8g", "us-central1", "on_demand", "88.49"),
    _offer("lambda", "gpu_8x_h100_sxm5", "us-east-1", "on_demand", "23.92"),
]
TIERS: dict[tuple[str, str, ServiceKind], Tiers] = {
    ("aws", "us-east-1", ServiceKind.BLOCK_STORAGE_SSD): [(D(0), None, D("0.08"))],
    ("aws", "us-east-1", ServiceKind.EGRESS_INTERNET): [
        (D(0), D(10240), D("0.09")),
        (D(10240), D(51200), D("0.085")),
        (D(51200), None, D("0.07")),
    ],
    ("gcp", "us-central1", ServiceKind.BLOCK_STORAGE_SSD): [(D(0), None, D("0.17"))],
    ("gcp", "us-central1", ServiceKind.EGRESS_INTERNET): [(D(0), None, D("0.12"))],
}
DEMAND = Demand(
    steady_gpus=D(16),
    burst_gpu_hours=D(1000),
    interruptible=D("0.5"),
    months=36,
    spot_overhead=D("0.10"),
    storage_tb=D(10),
    egress_tb=D(15),
    migration_usd=D(5000),
    current_provider="lambda",
)


def _plans(demand: Demand = DEMAND) -> list:  # type: ignore[type-arg]
    return build_plans(candidates(OFFERS, usd), demand, service_lookup(TIERS), lambda o: D(0))


def test_the_whole_plan_by_hand() -> None:
    aws = _plans()[0]
    assert (aws.rank, aws.provider, aws.instance_type) == (1, "aws", "p5.48xlarge")
    # 16 GPUs / 8 a p5 = 2 instances. Per instance over 36 months: on-demand
    # 55.04 × 730 × 36 = 1,446,451.20; 3 × 1y = 3 × 35 × 8,760 = 919,800; 3y = 500,000.
    assert aws.instances == 2
    assert aws.commitments == [
        {
            "pricing": "reserved_3y",
            "from_month": 1,
            "months": 36,
            "term_months": 36,
            "payment_option": "all_upfront",
        }
    ]
    assert aws.steady_usd == D("1000000.00")  # 2 × 500,000
    # Burst 1,000 × 36 = 36,000 GPU-h, half interruptible. Spot: the cheaper zone,
    # 16.512 / 8 = 2.064 × 1.10 = 2.2704 → 18,000 × 2.2704 = 40,867.20; on-demand
    # 55.04 / 8 = 6.88 → 18,000 × 6.88 = 123,840.00.
    assert aws.burst_usd == D("164707.20")
    # 10 TB = 10,240 GB × 0.08 = 819.20 a month × 36 = 29,491.20.
    assert aws.storage_usd == D("29491.20")
    # 15 TB = 15,360 GB a month: 10,240 × 0.09 = 921.60 + 5,120 × 0.085 = 435.20
    # = 1,356.80 × 36 = 48,844.80.
    assert aws.egress_usd == D("48844.80")
    assert aws.migration_usd == D("5000.00")  # aws is not the current provider
    # 1,000,000 + 164,707.20 + 29,491.20 + 48,844.80 + 5,000 = 1,248,043.20
    assert aws.total_usd == D("1248043.20")
    assert aws.monthly_usd == D("34667.87")  # 1,248,043.20 / 36 = 34,667.8667
    # All on-demand: 2 × 1,446,451.20 + 36,000 × 6.88 (247,680) + 29,491.20 + 48,844.80
    # + 5,000 = 3,223,918.40; saved (3,223,918.40 - 1,248,043.20) / 3,223,918.40 = 61.288 %.
    assert aws.all_on_demand_usd == D("3223918.40")
    assert aws.savings_pct == D("61.29")
    # 500,000 / 1,446,451.20 = 0.34567: the 3y term wins if busy over 34.57 % of the time.
    assert aws.break_even_utilization == D("0.3457")
    assert aws.incomplete == []


def test_ranking_complete_plans_first_and_a_missing_part_is_none() -> None:
    plans = _plans()
    assert [(p.rank, p.provider) for p in plans] == [(1, "aws"), (2, "gcp"), (3, "lambda")]
    gcp, lam = plans[1], plans[2]
    # gcp: on-demand only, 88.49 × 730 × 36 × 2 = 4,651,034.40; burst 36,000 × 88.49/8
    # = 36,000 × 11.06125 = 398,205.00 (no spot: the interruptible half runs on-demand).
    assert gcp.steady_usd == D("4651034.40")
    assert gcp.burst_usd == D("398205.00")
    assert gcp.commitments == [{"pricing": "on_demand", "from_month": 1, "months": 36}]
    assert gcp.break_even_utilization is None  # nothing committed
    # lambda sells no storage or egress here: those parts are None, never 0, and the plan
    # ranks after every complete one although its known parts are cheaper.
    assert lam.storage_usd is None and lam.egress_usd is None
    assert lam.incomplete == ["storage", "egress"]
    assert lam.migration_usd == D(0)  # the current provider
    assert lam.savings_pct is None
    assert lam.steady_usd == D("1257235.20")  # 23.92 × 730 × 36 × 2


def test_spot_dearer_than_on_demand_is_not_used() -> None:
    # With 300 % re-work, spot costs 2.064 × 4 = 8.256 > 6.88 on-demand per GPU-hour:
    # the interruptible half runs on-demand too, 36,000 × 6.88 = 247,680.00.
    demand = Demand(
        steady_gpus=D(0), burst_gpu_hours=D(1000), interruptible=D(1), spot_overhead=D(3)
    )
    aws = next(p for p in _plans(demand) if p.provider == "aws")
    assert aws.burst_usd == D("247680.00")
    assert aws.instances == 0 and aws.steady_usd == D(0) and aws.commitments == []


def test_spot_overhead_from_the_interruption_rate() -> None:
    # λ = 10 % a month / 730 h = 1.3699e-4 per hour; τ = 1 h, R = 0.25 h, δ = 0:
    # e^{λR}(e^{λτ} - 1)/(λτ) - 1 ≈ λ(R + τ/2) = 1.3699e-4 × 0.75 = 1.03e-4.
    assert spot_overhead(10.0, 1.0, 0.25, 0.0) == D("0.000103")
    # No interruptions: only the checkpoint writes cost (δ/τ = 0.1/1).
    assert spot_overhead(0.0, 1.0, 0.25, 0.1) == D("0.1")


def test_egress_tiers() -> None:
    tiers = TIERS[("aws", "us-east-1", ServiceKind.EGRESS_INTERNET)]
    # 60,000 GB: 10,240 × 0.09 + 40,960 × 0.085 + 8,800 × 0.07 = 921.6 + 3,481.6 + 616
    assert tiered_cost(D(60000), tiers) == D("5019.200")
    assert tiered_cost(D(0), tiers) == D(0)
    with pytest.raises(ValueError, match="no tier prices 0-100"):
        tiered_cost(D(500), [(D(100), None, D(1))])
    with pytest.raises(ValueError, match="above 100"):
        tiered_cost(D(500), [(D(0), D(100), D(1))])


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"steady_gpus": D(-1)}, "--steady-gpus: must not be negative"),
        ({"steady_gpus": D(0), "burst_gpu_hours": D(0)}, "no demand"),
        ({"interruptible": D("1.5")}, "--interruptible: 1.5 is not a share 0-1"),
        ({"months": 0}, "--months: 0 is not 1-120"),
        ({"months": 121}, "--months: 121 is not 1-120"),
        ({"migration_usd": D(10)}, "--migration-usd needs --current-provider"),
    ],
)
def test_bad_demand_is_one_line(kw: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"steady_gpus": D(8)} | kw
    with pytest.raises(PlanInputError) as caught:
        Demand(**args)  # type: ignore[arg-type]
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_the_best_few_are_those_of_pricing_every_candidate() -> None:
    # Random fleets: the top-k search (lower bounds first) returns exactly the first k
    # rows, in order, of pricing every candidate. Ties included: prices repeat often.
    import random

    rng = random.Random(29)
    for _ in range(40):
        prices = []
        for i in range(rng.randint(1, 60)):
            provider, region = rng.choice(("aws", "gcp", "lambda")), rng.choice(("r1", "r2"))
            gpus = D(rng.choice((1, 2, 8)))
            for pricing in ("on_demand", "spot", "reserved_1y", "reserved_3y"):
                if rng.random() < 0.7:
                    price = D(rng.randint(50, 400)) / 100 * gpus
                    row = (provider, region, f"t{i}", pricing, "", "", "H100-SXM", gpus, price)
                    prices.append(PlanPrice(*row, "USD", None, None, None))
        demand = Demand(
            steady_gpus=D(rng.randint(0, 20)),
            burst_gpu_hours=D(rng.randint(1, 500)),
            interruptible=D(rng.randint(0, 10)) / 10,
            months=rng.randint(1, 60),
            storage_tb=D(rng.choice((0, 5))),
        )
        offers = candidates(prices, usd)
        lookup = service_lookup(
            {("aws", "r1", ServiceKind.BLOCK_STORAGE_SSD): [(D(0), None, D("0.1"))]}
        )
        every = build_plans(offers, demand, lookup, lambda p: D("0.05"))
        k = rng.randint(1, 5)
        best = build_plans(offers, demand, lookup, lambda p: D("0.05"), top=k)
        assert [(r.rank, r.instance_type, r.total_usd) for r in best] == [
            (r.rank, r.instance_type, r.total_usd) for r in every[:k]
        ]
