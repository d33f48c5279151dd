"""A capacity block is paid whole: the single-node ranking never charges it by the hour."""

from __future__ import annotations

from decimal import Decimal

from tests.conftest import make_offer
from tracker.models import Offer, PricingModel
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


def _block(hours: int, price: str) -> Offer:
    """A p4d block of 1 instance for ``hours`` h as the collector stores it: priced per
    instance-hour (fee ÷ (1 × hours)), its terms in the attributes."""
    return make_offer(
        instance_type="p4d.24xlarge",
        gpu_model="A100-40GB",
        gpu_count=Decimal(8),
        gpu_memory_gib=Decimal(40),
        interconnect="nvlink",
        pricing=PricingModel.CAPACITY_BLOCK,
        offering_class=f"1x{hours}h",
        price_per_hour=Decimal(price),
        attributes={
            "capacity_block_instances": 1,
            "capacity_block_hours": Decimal(hours),
            "capacity_block_start": "2026-12-10T11:30:00+00:00",
        },
    )


def test_a_block_the_job_fits_ranks_at_its_whole_fee_and_one_too_short_does_not() -> None:
    """A job of about 3 hours on one p4d (7B LoRA, 240 M tokens): the 24-hour block at
    2.00 an instance-hour holds it and costs its whole fee, 2.00 × 1 × 24 = 48.00, which
    beats on-demand (32.7726 × ~3 h ≈ 95); the 1-hour block cannot hold it."""
    day, hour = _block(24, "2.00"), _block(1, "2.00")
    on_demand = make_offer(
        instance_type="p4d.24xlarge",
        gpu_model="A100-40GB",
        gpu_count=Decimal(8),
        gpu_memory_gib=Decimal(40),
        interconnect="nvlink",
        price_per_hour=Decimal("32.7726"),
    )
    profile = make_profile("job", dict(params=7e9, task="lora", precision="bf16", tokens=240e6))
    ranking = calibrated_rank(profile, [day, hour, on_demand], measurements=(), explain=True)
    assert [c.offer for c in ranking.candidates] == [day, on_demand]
    first, second = ranking.candidates
    assert first.job_cost_usd == Decimal("48.00")
    assert second.job_hours is not None and 1 < second.job_hours < 24  # what the test needs
    assert second.job_cost_usd is not None and second.job_cost_usd > Decimal("48.00")
    [excluded] = ranking.exclusions
    assert (excluded.offer, excluded.reason) == (hour, Reason.CAPACITY_BLOCK)
    assert "1 instance(s) for 1 h" in excluded.detail
