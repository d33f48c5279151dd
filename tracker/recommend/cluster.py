"""How many instances of each offer a training job should span: every node count from
the profile's smallest to its largest at once, as an (offers × node counts) matrix.

Per offer and node count N the job takes ``one-node hours ÷ (N × efficiency(N))``
(efficiency from :mod:`tracker.recommend.scaling`, spot re-work added as for one node)
and costs N × the offer's hourly price × those hours. The chosen size is the cheapest
that is allowed (the state fits, the fabric may carry it) and meets the deadline; with
no deadline that is the cheapest allowed size, which is one node whenever the job fits
one (more nodes never make per-GPU work cheaper). Ties go to fewer nodes.

Efficiency depends on an offer only through its GPU model, GPUs per instance and
network bandwidth, so it is computed once per distinct triple and gathered per offer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tracker.recommend.scaling import Scaling, step_times

__all__ = ["ClusterShape", "Sizes", "size_clusters"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
WallHours = Callable[[FloatArray, IntArray], FloatArray]
"""Expected wall hours for (compute hours matrix, offer rows): spot re-work included."""


@dataclass(frozen=True, slots=True)
class ClusterShape:
    """What the job and the offers look like to the sizing (one entry per offer row)."""

    rows: IntArray
    """Offer rows being sized (the ranker's candidates)."""
    group: IntArray
    """Per row, its (GPU model, GPUs per instance, bandwidth) group: rows of one group
    scale alike."""
    gpus_per_node: FloatArray
    tokens_per_gpu_s: FloatArray
    node_gbps: FloatArray
    """NaN where the job may not span instances (fabric not allowed)."""
    min_nodes: IntArray
    """Fewest instances whose GPUs hold the sharded state."""
    one_node_hours: FloatArray
    hourly: FloatArray
    local_tokens: float
    param_bytes: float
    global_batch: float | None
    sequence_length: float


@dataclass(frozen=True, slots=True)
class Sizes:
    """Per sized row: the chosen node count and what it does."""

    nodes: IntArray
    """0 where no allowed size meets the deadline."""
    efficiency: FloatArray
    compute_hours: FloatArray
    wall_hours: FloatArray
    cost: FloatArray
    compute_share: FloatArray
    """Share of a step spent computing (the rest: exposed communication)."""
    fastest_nodes: IntArray
    """The fastest allowed size (for the "none can" line)."""
    fastest_hours: FloatArray


def size_clusters(
    shape: ClusterShape,
    fit: Scaling,
    counts: IntArray,
    deadline_hours: float | None,
    wall_hours: WallHours,
) -> Sizes:
    """Choose a node count in ``counts`` per row of ``shape`` (see the module doc)."""
    s = shape
    first = np.unique(s.group, return_index=True)[1]
    nodes = counts.astype(np.float64)[None, :]
    times = step_times(
        fit.overlap,
        fit.latency_s,
        nodes=nodes,
        gpus_per_node=s.gpus_per_node[first][:, None],
        local_tokens=np.array(s.local_tokens),
        tokens_per_gpu_s=s.tokens_per_gpu_s[first][:, None],
        param_bytes=np.array(s.param_bytes),
        node_gbps=np.nan_to_num(s.node_gbps[first], nan=1.0)[:, None],
        global_batch=s.global_batch,
        sequence_length=s.sequence_length,
    )
    _, group_ix = np.unique(s.group, return_inverse=True)
    eff = times.efficiency[group_ix]
    share = (times.compute / times.step)[group_ix]
    compute = s.one_node_hours[:, None] / (nodes * eff)
    wall = wall_hours(compute, s.rows)
    cost = s.hourly[:, None] * nodes * wall
    allowed = (counts[None, :] >= s.min_nodes[:, None]) & (
        (counts[None, :] == 1) | ~np.isnan(s.node_gbps)[:, None]
    )
    allowed &= np.isfinite(wall)
    fast_wall = np.where(allowed, wall, np.inf)
    fastest = np.argmin(fast_wall, axis=1)
    ok = allowed if deadline_hours is None else allowed & (wall <= deadline_hours)
    pick = np.argmin(np.where(ok, cost, np.inf), axis=1)  # first minimum: fewest nodes
    at = np.arange(len(s.rows))
    met = ok[at, pick]
    return Sizes(
        nodes=np.where(met, counts[pick], 0),
        efficiency=eff[at, pick],
        compute_hours=compute[at, pick],
        wall_hours=wall[at, pick],
        cost=cost[at, pick],
        compute_share=share[at, pick],
        fastest_nodes=np.where(np.isfinite(fast_wall[at, fastest]), counts[fastest], 0),
        fastest_hours=fast_wall[at, fastest],
    )
