"""A capacity block is paid whole: the single-node ranking never charges it by the hour."""

from __future__ import annotations

from decimal import Decimal

from tests.conftest import make_offer
from tracker.models import PricingModel
from tracker.recommend import Reason, make_profile
from tracker.recommend import rank as calibrated_rank


def test_a_capacity_block_is_excluded_with_its_reason() -> None:
    block = make_offer(
        instance_type="p5.48xlarge",
        gpu_model="H100-SXM",
        gpu_count=Decimal(8),
        gpu_memory_gib=Decimal(80),
        interconnect="nvlink",
        pricing=PricingModel.CAPACITY_BLOCK,
        offering_class="8x24h",
        # Far below on-demand per hour: a 2-hour job charged 2 × this would win, yet it
        # would pay the whole 8 × 24 h block.
        price_per_hour=Decimal("5.00"),
    )
    on_demand = make_offer(
        instance_type="p5.48xlarge",
        gpu_model="H100-SXM",
        gpu_count=Decimal(8),
        gpu_memory_gib=Decimal(80),
        interconnect="nvlink",
        price_per_hour=Decimal("55.04"),
    )
    profile = make_profile("job", dict(params=7e9, task="lora", precision="bf16", tokens=80e6))
    ranking = calibrated_rank(profile, [block, on_demand], measurements=(), explain=True)
    assert [c.offer for c in ranking.candidates] == [on_demand]
    [excluded] = ranking.exclusions
    assert (excluded.offer, excluded.reason) == (block, Reason.CAPACITY_BLOCK)
    assert "8x24h" in excluded.detail
