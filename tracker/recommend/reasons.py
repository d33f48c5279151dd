"""Why an offer is not a candidate: the reasons, in the order the ranker checks them, and
the one-line detail ``--explain`` prints for each (kept apart from the arithmetic in
:mod:`tracker.recommend.rank`)."""

from __future__ import annotations

from decimal import Decimal
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from tracker.capacity_blocks import capacity_block_terms
from tracker.fixed_clusters import cluster_nodes
from tracker.models import Offer
from tracker.recommend import pricing
from tracker.recommend.assumptions import HOURS_PER_MONTH
from tracker.recommend.fabric import INTERCONNECTS
from tracker.recommend.profiles import Profile
from tracker.recommend.table import OfferTable

__all__ = ["Reason", "exclusion_detail"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
CENT = Decimal("0.01")


class Reason(IntEnum):
    """Why an offer is not a candidate, in the order the checks apply (``UNAVAILABLE``
    and ``OBTAINABILITY``, added last, are checked right after the provider and region
    scope: an offer without capacity, or seldom with it, is not rentable, whatever else
    would rule it out)."""

    PROVIDER = 1
    REGION = 2
    SPOT_NOT_ALLOWED = 3
    RESERVED_TERM = 4
    GPU_NOT_ALLOWED = 5
    GPU_UNKNOWN = 6
    GPU_COUNT = 7
    INTERCONNECT = 8
    NO_THROUGHPUT = 9
    NO_BANDWIDTH = 10
    VRAM_UNKNOWN = 11
    VRAM = 12
    MAX_PRICE = 13
    BUDGET = 14
    UNAVAILABLE = 15
    OBTAINABILITY = 16
    CAPACITY_BLOCK = 17
    """A capacity block (paid whole for its instances and hours) the job does not fit:
    more nodes or hours than it holds, no recorded terms, or no job length
    (:mod:`tracker.recommend.blocks`)."""
    FABRIC = 18
    DEADLINE = 19
    CLUSTER_SIZE = 20
    """One node of a fixed-size cluster (paid whole, :mod:`tracker.fixed_clusters`) for
    a job sized to more nodes than the cluster has."""

    @property
    def label(self) -> str:
        return self.name.lower()


def _money(value: Decimal) -> str:
    return f"${value.quantize(CENT)}"


def _fmt(value: float) -> str:
    return f"{value:g}"


_PURCHASES = frozenset({Reason.RESERVED_TERM, Reason.CAPACITY_BLOCK, Reason.CLUSTER_SIZE})
"""Reasons an offer's way of being bought (a term, a block, a whole cluster) excludes it."""


def _purchase_detail(reason: Reason, o: Offer, p: Profile) -> str:
    """Why a commitment, a capacity block or a fixed cluster does not fit the job."""
    if reason is Reason.RESERVED_TERM:
        months = (o.pricing.term_hours or 0) / HOURS_PER_MONTH
        used = "no utilization set" if p.utilization is None else f"utilization {p.utilization:g}"
        return (
            f"{o.pricing.value} needs a {months:.0f}-month commitment and an expected "
            f"utilization; horizon is {_fmt(p.horizon_months)} months, {used}"
        )
    if reason is Reason.CAPACITY_BLOCK:
        terms = capacity_block_terms(o)
        held = (
            f"{terms.instances} instance(s) for {terms.hours:g} h"
            if terms is not None
            else "terms not recorded"
        )
        return (
            f"a capacity block ({o.offering_class}: {held}) is paid whole; it is ranked only "
            "for a job whose nodes and hours fit it"
        )
    size = cluster_nodes(o.offering_class, o.attributes)
    return f"a fixed cluster of {size} nodes is rented whole; the job needs more nodes than it has"


def _vram_detail(need: float, have: float, gpus: int, sharded: bool, link: int) -> str:
    """Why the model's memory does not fit: per GPU, sharded, or unshardable."""
    if gpus <= 1:
        return f"needs {need:.1f} GiB per GPU, has {have:.1f} GiB per GPU"
    if sharded:
        return f"needs {need:.1f} GiB per GPU sharded over {gpus} GPUs, has {have:.1f} GiB per GPU"
    return (
        f"needs {need:.1f} GiB on one GPU; cannot shard: interconnect "
        f"{INTERCONNECTS[link]}; has {have:.1f} GiB per GPU"
    )


def exclusion_detail(
    reason: Reason,
    ix: int,
    p: Profile,
    table: OfferTable,
    need_per_gpu: FloatArray,
    cost: FloatArray,
    sharded: BoolArray,
    ic: IntArray,
) -> str:
    o = table.offers[ix]
    if reason is Reason.UNAVAILABLE:
        return "the provider last reported no capacity (--include-unavailable keeps it)"
    if reason is Reason.OBTAINABILITY:
        return (
            f"reported rentable {table.obtainability_30d[ix]:.0%} of the last 30 days; "
            f"profile needs at least {p.min_obtainability or 0:.0%}"
        )
    if reason is Reason.PROVIDER:
        return f"provider {o.provider} not in {', '.join(p.providers)}"
    if reason is Reason.REGION:
        return f"region {o.region} not in {', '.join(p.regions)}"
    if reason is Reason.SPOT_NOT_ALLOWED:
        return "spot capacity and the profile is not interruptible"
    if reason in _PURCHASES:
        return _purchase_detail(reason, o, p)
    if reason is Reason.GPU_NOT_ALLOWED:
        return f"GPU {o.gpu_model} not in {', '.join(p.gpus)}"
    if reason is Reason.GPU_UNKNOWN:
        return f"GPU {o.gpu_raw_name!r} is not in the catalog (no throughput figures)"
    if reason is Reason.GPU_COUNT:
        have = f"{o.gpu_count.normalize():f} GPUs"
        if p.min_gpus is not None and table.count[ix] < p.min_gpus:
            return f"{have}, profile needs at least {_fmt(p.min_gpus)}"
        return f"{have}, profile allows at most {_fmt(p.max_gpus or 0)}"
    if reason is Reason.INTERCONNECT:
        return (
            f"{table.whole_gpus[ix]} GPUs over {INTERCONNECTS[ic[ix]]}; "
            "profile requires NVLink or a GPU fabric"
        )
    if reason is Reason.NO_THROUGHPUT:
        return f"catalog has no dense {p.compute.value} figure for {o.gpu_model}"
    if reason is Reason.NO_BANDWIDTH:
        return f"catalog has no memory bandwidth for {o.gpu_model}"
    if reason is Reason.VRAM_UNKNOWN:
        return "VRAM per GPU unknown"
    if reason is Reason.VRAM:
        gpus = int(table.whole_gpus[ix])
        return _vram_detail(need_per_gpu[ix], table.vram_per_gpu[ix], gpus, sharded[ix], ic[ix])
    if reason is Reason.FABRIC:
        if p.fabric_need.value == "required":
            return f"fabric {o.fabric.value}; profile requires an RDMA fabric between nodes"
        return f"fabric {o.fabric.value}: cannot span {p.node_counts[0]} nodes (fabric = any allows it)"
    if reason is Reason.DEADLINE:
        return f"no size up to {p.node_counts[1]} node(s) finishes within {_fmt(p.deadline_hours or 0)} h"
    if reason is Reason.MAX_PRICE:
        return (
            f"{_money(pricing.effective_hourly_usd(o))}/h over max "
            f"{_money(p.max_price_per_hour or Decimal(0))}/h"
        )
    return f"est. job cost ${cost[ix]:,.2f} over budget {_money(p.budget_usd or Decimal(0))}"
