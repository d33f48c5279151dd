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
WallHours = Callable[[FloatArray], FloatArray]
"""Expected wall hours for the sized rows' (rows × sizes) compute hours: spot re-work added."""


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
    """Choose a node count in ``counts`` per row of ``shape`` (see the module doc).

    Efficiency never rises with N (communication and synchronisation only grow), so of
    the sizes that meet the deadline the smallest is the cheapest, and of the sizes past
    a group's fastest none is ever worth it. The smallest size that meets the deadline
    is found by bisection over the group's speed (N × efficiency, made non-decreasing up
    to its peak): one sorted search over every row instead of one pass per node count,
    and a bisection only for the spot rows whose re-work pushes them past it."""
    s = shape
    _, first, group_ix = np.unique(s.group, return_index=True, return_inverse=True)
    speed, eff, share = _group_curves(s, first, fit, counts)
    peak = np.argmax(speed, axis=1)
    rising = np.maximum.accumulate(speed, axis=1)
    g = group_ix.ravel()
    lo = np.clip(s.min_nodes - counts[0], 0, len(counts) - 1)
    hi = np.maximum(peak[g], lo)

    def wall_at(ix: IntArray, curve: FloatArray) -> FloatArray:
        compute = s.one_node_hours / curve[g, ix]
        return wall_hours(compute[:, None])[:, 0]

    pick = lo.copy()
    met = np.isfinite(speed[g, lo])
    if deadline_hours is not None:
        pick = np.maximum(_first_fast_enough(rising, g, s.one_node_hours / deadline_hours), lo)
        met &= pick <= hi
        pick = np.minimum(pick, hi)
        # spot re-work lengthens the wall clock: bisect further for the rows it pushes past
        low, high = pick.copy(), hi.copy()
        late = met & (wall_at(pick, rising) > deadline_hours)
        met &= ~late | (wall_at(hi, rising) <= deadline_hours)
        while (searching := late & met & (low < high)).any():
            mid = (low + high) // 2
            ok = wall_at(mid, rising) <= deadline_hours
            high = np.where(searching & ok, mid, high)
            low = np.where(searching & ~ok, mid + 1, low)
        pick = np.where(late, low, pick)
    wall = wall_at(pick, speed)
    if deadline_hours is not None:
        met &= wall <= deadline_hours  # the curve's own value, not its rising hull
    fastest = wall_at(hi, speed)
    return Sizes(
        nodes=np.where(met, counts[pick], 0),
        efficiency=eff[g, pick],
        compute_hours=s.one_node_hours / speed[g, pick],
        wall_hours=wall,
        cost=s.hourly * counts[pick] * wall,
        compute_share=share[g, pick],
        fastest_nodes=np.where(np.isfinite(fastest), counts[hi], 0),
        fastest_hours=fastest,
    )


_SPAN = 4096.0
"""Above any speed (N × efficiency <= N <= 1024): offsets each group's curve in one array."""


def _first_fast_enough(rising: FloatArray, g: IntArray, needed: FloatArray) -> IntArray:
    """Per row, the first size index whose (non-decreasing) speed reaches ``needed`` (len
    of the curve where none does): one sorted search over every group's curve at once,
    each offset by its group's number so the concatenation stays sorted."""
    groups, width = rising.shape
    offset = np.arange(groups, dtype=np.float64)[:, None] * _SPAN
    flat = (offset + np.clip(rising, -1.0, _SPAN - 2.0)).ravel()
    found = np.searchsorted(flat, g * _SPAN + np.minimum(needed, _SPAN - 2.0), side="left")
    return (found - g * width).astype(np.int64)


def _group_curves(
    s: ClusterShape, first: IntArray, fit: Scaling, counts: IntArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per group and node count: speed (N × efficiency; -inf where the fabric may not
    carry N > 1), efficiency and the compute share of a step."""
    nodes = counts.astype(np.float64)[None, :]
    gbps = s.node_gbps[first][:, None]
    times = step_times(
        fit.overlap,
        fit.latency_s,
        nodes=nodes,
        gpus_per_node=s.gpus_per_node[first][:, None],
        local_tokens=np.array(s.local_tokens),
        tokens_per_gpu_s=s.tokens_per_gpu_s[first][:, None],
        param_bytes=np.array(s.param_bytes),
        node_gbps=np.nan_to_num(gbps, nan=1.0),
        global_batch=s.global_batch,
        sequence_length=s.sequence_length,
    )
    eff = times.efficiency
    spans = (nodes == 1) | ~np.isnan(gbps)
    speed = np.where(spans, nodes * eff, -np.inf)
    return speed, eff, times.compute / times.step
