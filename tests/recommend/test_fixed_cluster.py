"""One node of a fixed-size cluster (Verda's Instant Clusters) is paid for every node."""

from __future__ import annotations

from decimal import Decimal

from tests.conftest import make_offer
from tracker.models import Offer
from tracker.recommend import Reason, make_profile
from tracker.recommend import rank as calibrated_rank


def _cluster_node() -> Offer:
    """One node of a 2-node 16H200 cluster as collectors.verda_clusters stores it: the
    cluster's 45.50 USD/h over its 2 nodes, 22.75 a node-hour."""
    return make_offer(
        provider="verda",
        instance_type="16H200",
        gpu_model="H200",
        gpu_count=Decimal(8),
        gpu_memory_gib=Decimal("137.5"),
        offering_class="cluster",
        price_per_hour=Decimal("22.75"),
        attributes={"cluster_nodes": 2, "cluster_price_per_hour": Decimal("45.50")},
    )


def _instance() -> Offer:
    """An ordinary 8x H200 instance, dearer per node-hour than the cluster's node."""
    return make_offer(
        instance_type="8H200",
        gpu_model="H200",
        gpu_count=Decimal(8),
        gpu_memory_gib=Decimal("137.5"),
        price_per_hour=Decimal("30.00"),
    )


def test_a_one_node_job_pays_the_whole_cluster_so_the_instance_wins() -> None:
    """Same GPUs, so the same hours W on both: the cluster's node costs 22.75 × 2 nodes
    × W = 45.50 W, the instance 30.00 W. Charged by its node alone (22.75 W) the
    cluster would rank first."""
    cluster, instance = _cluster_node(), _instance()
    profile = make_profile("job", dict(params=7e9, task="lora", precision="bf16", tokens=240e6))
    ranking = calibrated_rank(profile, [cluster, instance], measurements=(), explain=True)
    assert [c.offer for c in ranking.candidates] == [instance, cluster]
    first, second = ranking.candidates
    assert first.job_hours is not None and second.job_hours == first.job_hours
    hours = Decimal(f"{second.job_hours:.6f}")
    assert second.job_cost_usd is not None and first.job_cost_usd is not None
    assert abs(second.job_cost_usd - Decimal("45.50") * hours) <= Decimal("0.01")
    assert abs(first.job_cost_usd - Decimal("30.00") * hours) <= Decimal("0.01")


def test_a_job_sized_past_the_clusters_nodes_excludes_it_with_its_reason() -> None:
    cluster, instance = _cluster_node(), _instance()
    job = dict(params=7e9, task="lora", precision="bf16", tokens=240e6, nodes=4, fabric="any")
    profile = make_profile("job", job)
    ranking = calibrated_rank(profile, [cluster, instance], measurements=(), explain=True)
    assert [c.offer for c in ranking.candidates] == [instance]
    [excluded] = ranking.exclusions
    assert (excluded.offer, excluded.reason) == (cluster, Reason.CLUSTER_SIZE)
    assert "2 nodes" in excluded.detail


def test_a_job_of_the_clusters_size_ranks_it_at_every_node() -> None:
    """The rule charges the cluster once, not its nodes twice. Two nodes each: the cluster 22.75 × 2 × W2 = 45.50 W2 beats two instances at
    30.00 × 2 × W2 = 60.00 W2 (W2, the 2-node hours, the same on both)."""
    cluster, instance = _cluster_node(), _instance()
    job = dict(params=7e9, task="lora", precision="bf16", tokens=240e6, nodes=2, fabric="any")
    ranking = calibrated_rank(make_profile("job", job), [cluster, instance], measurements=())
    assert [c.offer for c in ranking.candidates] == [cluster, instance]
    first, second = ranking.candidates
    assert first.nodes == second.nodes == 2 and first.job_hours == second.job_hours
    assert first.job_hours is not None
    hours = Decimal(f"{first.job_hours:.6f}")
    assert first.job_cost_usd is not None and second.job_cost_usd is not None
    assert abs(first.job_cost_usd - Decimal("45.50") * hours) <= Decimal("0.01")
    assert abs(second.job_cost_usd - Decimal("60.00") * hours) <= Decimal("0.01")
