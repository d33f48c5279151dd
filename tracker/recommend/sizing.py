"""The ranker's side of cluster sizing: what the offer table and the profile say about
each candidate's cluster (its shape for :mod:`tracker.recommend.cluster`, the fewest nodes
its state needs, spot re-work over a matrix of sizes, the line for a missed deadline)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from tracker.recommend import pricing
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.cluster import ClusterShape, Sizes
from tracker.recommend.kinds import Precision, Task
from tracker.recommend.profiles import Profile
from tracker.recommend.result import Candidate
from tracker.recommend.scaling_fit import fitted_scaling
from tracker.recommend.table import OfferTable
from tracker.recommend.vram import lora_adapter_params, weight_bytes

__all__ = [
    "cluster_notes",
    "cluster_shape",
    "communicated_bytes",
    "fastest_note",
    "min_nodes",
    "wall_hours",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def min_nodes(
    p: Profile,
    table: OfferTable,
    spans: BoolArray,
    shard_gib: FloatArray,
    fixed_gib: FloatArray,
    cluster: bool,
) -> tuple[IntArray, BoolArray]:
    """Fewest instances whose GPUs hold the job's sharded state, and where that is a
    size the profile allows (offers that shard and may span nodes, up to the largest)."""
    n = len(table)
    one = np.ones(n, np.int64)
    if not cluster:
        return one, np.zeros(n, np.bool_)
    lo, hi = p.node_counts
    spare = table.vram_per_gpu - fixed_gib
    with np.errstate(invalid="ignore", divide="ignore"):
        need = np.ceil(shard_gib / (table.whole_gpus * spare))
        grows = spans & (spare > 0) & (need <= hi)
    return np.where(grows, np.maximum(need, lo), one * lo).astype(np.int64), grows


def cluster_shape(
    p: Profile,
    flops: float,
    a: Assumptions,
    table: OfferTable,
    rows: IntArray,
    rate: FloatArray,
    gbps: FloatArray,
    min_nodes: IntArray,
    compute_hours: FloatArray,
) -> ClusterShape:
    """The sized rows as the cluster model sees them: a step is ``batch`` sequences per
    GPU (or the profile's global batch), its tokens at the one-node rate."""
    assert p.tokens is not None
    per_token = flops / p.tokens
    # rows of one hardware shape (GPU, link, count, fabric, bandwidth) share the one-node
    # rate and the bandwidth: the table knows its shapes once for every profile
    code, first = table.shapes
    return ClusterShape(
        rows=rows,
        group=code[rows],
        group_gpus=table.whole_gpus[first].astype(np.float64),
        group_tokens_per_gpu_s=rate[first] / per_token,
        group_gbps=gbps[first],
        min_nodes=min_nodes[rows],
        one_node_hours=compute_hours[rows],
        hourly=table.hourly[rows],
        local_tokens=float(p.batch * p.seq_len),
        param_bytes=communicated_bytes(p, a),
        global_batch=None if p.global_batch is None else float(p.global_batch),
        sequence_length=float(p.seq_len),
    )


def communicated_bytes(p: Profile, a: Assumptions) -> float:
    """Bytes a training step sends between nodes per its parallel layout: the whole
    model's weights for sharded data parallel (FSDP's all-gathers and reduce-scatter); for
    LoRA only the adapters' gradients (bf16), as the frozen weights stay inside a node
    (tensor/context parallel over NVLink, as MLPerf's Llama 2 70B LoRA runs lay them out)."""
    if p.task in (Task.LORA, Task.QLORA):
        return lora_adapter_params(p.params, a) * weight_bytes(Precision.BF16, a)
    return p.params * weight_bytes(p.precision, a)


def wall_hours(
    a: Assumptions, p: Profile, pct: FloatArray, spot: BoolArray, rows: IntArray
) -> Callable[[FloatArray, IntArray], FloatArray]:
    """Expected wall hours for ``rows``' compute hours on N instances each: spot rows get
    Daly's re-work at N × their interruption rate (any instance reclaimed stops every
    node until the job restarts from its checkpoint), worked out for them only."""
    where = np.flatnonzero(spot[rows] & p.interruptible)
    if not len(where):
        return lambda compute, nodes: compute
    per_hour = pricing.interruption_rate_per_hour(pct[rows[where]])

    def wall(compute: FloatArray, nodes: IntArray) -> FloatArray:
        out = compute.copy()
        with np.errstate(invalid="ignore", over="ignore"):
            out[where] = pricing.expected_wall_hours(
                compute[where],
                per_hour * nodes[where],
                p.checkpoint_interval_hours,
                a.restart_hours,
                a.checkpoint_write_hours,
            )
        return out

    return wall


def fastest_note(p: Profile, table: OfferTable, rows: IntArray, sizes: Sizes) -> str | None:
    """The one line for a deadline no size meets: the fastest size and its time."""
    if not len(rows) or not np.isfinite(sizes.fastest_hours).any():
        return None
    best = int(np.argmin(sizes.fastest_hours))
    o = table.offers[int(rows[best])]
    return (
        f"no size up to {p.node_counts[1]} node(s) finishes {p.name} within "
        f"{p.deadline_hours:g} h; fastest: {o.provider} {o.instance_type} x "
        f"{int(sizes.fastest_nodes[best])} node(s) in {float(sizes.fastest_hours[best]):,.1f} h"
    )


def cluster_notes(candidates: Sequence[Candidate], shown: int = 3) -> tuple[str, ...]:
    """``--explain``: the model's fitted constants, and each of the first clusters' step
    split into compute and communication."""
    fit = fitted_scaling()
    notes = [
        f"clusters: sharded data parallel (FSDP) over every GPU, tensor parallel inside a "
        f"node; a step = compute + communication not hidden behind it (overlap "
        f"{fit.overlap:.2f} of compute, {fit.latency_s * 1000:.1f} ms x log2(nodes) of "
        f"synchronisation; past one sequence per GPU of a global batch, a sequence split over "
        f"w GPUs of a node adds {fit.split:.3f} x (w - 1) of compute; fitted on "
        "tracker/recommend/multinode.toml)"
    ]
    for c in [c for c in candidates if c.nodes > 1][:shown]:
        share = c.compute_share if c.compute_share is not None else 1.0
        notes.append(
            f"#{c.rank} {c.offer.provider} {c.offer.instance_type} x {c.nodes} nodes over "
            f"{c.offer.fabric.value} at {c.cluster_gbps:g} Gbit/s: a step is {share:.0%} "
            f"compute, {1 - share:.0%} communication; per-GPU throughput "
            f"{c.scaling_efficiency:.0%} of one node's"
        )
    return tuple(notes)
