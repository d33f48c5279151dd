"""The ranker's side of cluster sizing: what the offer table and the profile say about
each candidate's cluster (its shape for :mod:`tracker.recommend.cluster`, the fewest nodes
its state needs, spot re-work over a matrix of sizes, the line for a missed deadline)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from tracker.recommend import pricing
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.cluster import ClusterShape, Sizes
from tracker.recommend.profiles import Profile
from tracker.recommend.table import OfferTable
from tracker.recommend.vram import weight_bytes

__all__ = ["cluster_shape", "fastest_note", "min_nodes", "wall_hours"]

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
    # rows scale alike when they share the one-node rate, GPUs per node and bandwidth:
    # one integer key per row (1-D uniques sort far faster than rows of a 2-D key)
    rate_code = np.unique(rate[rows], return_inverse=True)[1].ravel()
    gbps_code = np.unique(np.nan_to_num(gbps[rows], nan=-1.0), return_inverse=True)[1].ravel()
    whole = table.whole_gpus[rows]
    group = (rate_code * (int(whole.max(initial=1)) + 1) + whole) * len(rows) + gbps_code
    return ClusterShape(
        rows=rows,
        group=group.astype(np.int64),
        gpus_per_node=table.whole_gpus[rows].astype(np.float64),
        tokens_per_gpu_s=rate[rows] / per_token,
        node_gbps=gbps[rows],
        min_nodes=min_nodes[rows],
        one_node_hours=compute_hours[rows],
        hourly=table.hourly[rows],
        local_tokens=float(p.batch * p.seq_len),
        param_bytes=p.params * weight_bytes(p.precision, a),
        global_batch=None if p.global_batch is None else float(p.global_batch),
        sequence_length=float(p.seq_len),
    )


def wall_hours(
    a: Assumptions, p: Profile, table: OfferTable, spot: BoolArray, rows: IntArray
) -> Callable[[FloatArray], FloatArray]:
    """Expected wall hours for ``rows``' (rows × node counts) compute hours: spot rows
    get Daly's re-work (worked out for them only; the rest run as computed)."""
    on_spot = spot[rows] & p.interruptible
    where = np.flatnonzero(on_spot)
    if not len(where):
        return lambda compute: compute
    default_pct = np.array([a.interruption_pct(name) for name in table.providers])
    picked = rows[where]
    interrupt = table.interruption_pct[picked]
    pct = np.where(np.isnan(interrupt), default_pct[table.provider_code[picked]], interrupt)
    per_hour = pricing.interruption_rate_per_hour(pct)[:, None]

    def wall(compute: FloatArray) -> FloatArray:
        out = compute.copy()
        with np.errstate(invalid="ignore", over="ignore"):
            out[where] = pricing.expected_wall_hours(
                compute[where],
                per_hour,
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
