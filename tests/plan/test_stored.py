"""Plans over a real store (both engines): what the narrow plan read takes from an offer."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from tests.conftest import make_offer
from tests.listed_collector import collect
from tracker.catalog import select_gpus
from tracker.plan.stored import stored_plans
from tracker.recommend.demand import Demand
from tracker.settings import Settings
from tracker.store.engine import Engine

D = Decimal
AT = datetime(2026, 11, 2, tzinfo=UTC)


def test_attributes_and_currencies_the_plan_reads(engine: Engine) -> None:
    offers = [
        make_offer(pricing="on_demand", price_per_hour=D("32.7726")),
        # 3y all upfront: the stored hourly figure is rounded; the attributes are exact:
        # 300,000 / 26,280 h, so the term costs exactly 300,000 an instance.
        make_offer(
            pricing="reserved_3y",
            payment_option="all_upfront",
            price_per_hour=D("11.4155"),
            attributes={"upfront_usd": D(300000), "recurring_hourly_usd": D(0)},
        ),
        # Spot with AWS's published bucket bound: 100 % a month, checkpoints hourly.
        make_offer(
            pricing="spot",
            zone="us-east-1a",
            price_per_hour=D("8"),
            attributes={"interruption_max_pct": 100},
        ),
        make_offer(instance_type="gpu.8xa100.win", os="windows", price_per_hour=D("1")),
        make_offer(instance_type="gpu.8xa100.eu", region="eu-1", currency="XYZ"),
    ]
    collect(engine, offers, AT)
    demand = Demand(steady_gpus=D(8), burst_gpu_hours=D(100), interruptible=D(1))
    result = stored_plans(engine, Settings(), demand, gpu=select_gpus(["A100"]))
    [plan] = result.rows  # Windows is no fleet OS; XYZ has no rate (counted)
    assert result.conversion.missing == {"XYZ": 1}
    assert plan.steady_usd == D("300000.00")
    # Burst 100 × 36 = 3,600 GPU-h on spot at 8 / 8 = 1 USD/GPU-h × (1 + re-work), with
    # λ = 100 % / 730 h = 1.36986e-3, τ = 1 h, R = 0.25 h (the assumptions' restart):
    # e^{λR}(e^{λτ} − 1)/(λτ) − 1 = 1.00034252 × 1.00068517 − 1 = 0.001028 → 3,603.70
    assert plan.burst_usd == D("3603.70")
