"""``plan --fabric required``: a steady fleet only on cluster nodes (worked by hand)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tracker.plan.build import build_plans, candidates, service_lookup
from tracker.plan.nodes import cluster_node
from tracker.recommend.demand import Demand, PlanInputError
from tracker.store.reads import PlanPrice

D = Decimal


def _price(itype: str, gpus: int, usd: str, fabric: str) -> PlanPrice:
    return PlanPrice(
        "aws", "us-east-1", itype, "on_demand", "", "", "H100-SXM", D(gpus), D(usd), "USD",
        None, None, None, "", fabric,
    )  # fmt: skip


PRICES = [
    # One H100 per box at 2.00/h: 16 GPUs = 16 boxes × 2.00 = 32.00/h, the cheapest fleet.
    _price("h100-pcie-1x", 1, "2.00", "ethernet"),
    # A single-GPU box with EFA is still not a node: its one GPU talks only over the network.
    _price("p5.4xlarge", 1, "2.10", "efa"),
    # 8 GPUs, but the provider states no fabric: not stated is not fast.
    _price("box-8x-unknown", 8, "17.00", "unknown"),
    # 8 GPUs with EFA at 20.00/h: 16 GPUs = 2 nodes × 20.00 = 40.00/h.
    _price("p5.48xlarge", 8, "20.00", "efa"),
    # 8 GPUs on InfiniBand at 24.00/h: 2 nodes × 24.00 = 48.00/h.
    _price("nd-8x-ib", 8, "24.00", "infiniband"),
]


def _usd(amount: D, currency: str) -> D:
    return amount


def _plans(fabric: str) -> list[tuple[str, int, D | None]]:
    demand = Demand(steady_gpus=D(16), months=1, fabric=fabric)
    rows = build_plans(candidates(PRICES, _usd), demand, service_lookup({}), lambda _: D(0), top=10)
    return [(r.instance_type, r.instances, r.steady_usd) for r in rows]


def test_any_fabric_ranks_sixteen_single_gpu_boxes_first() -> None:
    # One month of 730 h: 16 × 2.00 × 730 = 23,360.00; 16 × 2.10 × 730 = 24,528.00;
    # 2 × 17.00 × 730 = 24,820.00; 2 × 20.00 × 730 = 29,200.00; 2 × 24.00 × 730 = 35,040.00.
    assert _plans("any") == [
        ("h100-pcie-1x", 16, D("23360.00")),
        ("p5.4xlarge", 16, D("24528.00")),
        ("box-8x-unknown", 2, D("24820.00")),
        ("p5.48xlarge", 2, D("29200.00")),
        ("nd-8x-ib", 2, D("35040.00")),
    ]


def test_required_fabric_covers_the_fleet_with_rdma_nodes_only() -> None:
    rows = _plans("required")
    # Only the stated-RDMA 8-GPU nodes remain: 2 × 20.00 × 730, then 2 × 24.00 × 730.
    assert rows == [("p5.48xlarge", 2, D("29200.00")), ("nd-8x-ib", 2, D("35040.00"))]


def test_the_row_says_which_fabric_it_is() -> None:
    demand = Demand(steady_gpus=D(16), months=1, fabric="required")
    rows = build_plans(candidates(PRICES, _usd), demand, service_lookup({}), lambda _: D(0))
    assert [r.fabric for r in rows] == ["efa", "infiniband"]


@pytest.mark.parametrize(
    ("fabric", "gpus", "node"),
    [
        ("efa", D(8), True),
        ("infiniband", D(4), True),
        ("roce", D(2), True),
        ("gpudirect_tcpx", D(8), True),
        ("ici", D(4), True),
        ("efa", D(1), False),  # one GPU
        ("infiniband", D("0.5"), False),
        ("ethernet", D(8), False),
        ("unknown", D(8), False),
        ("nvlink", D(8), False),  # not a fabric at all
    ],
)
def test_cluster_node_rule(fabric: str, gpus: D, node: bool) -> None:
    assert cluster_node(fabric, gpus) is node


def test_a_bad_fabric_names_the_option() -> None:
    with pytest.raises(PlanInputError, match=r"--fabric: 'fast' is not any or required"):
        Demand(steady_gpus=D(16), fabric="fast")
