"""How many instances of each offer a training job should span: every node count from
the profile's smallest to its largest at once, as an (offers × node counts) matrix.

Per offer and node count N the job takes ``one-node hours ÷ (N × efficiency(N))``
(efficiency from :mod:`tracker.recommend.scaling`, spot re-work added as for one node)
and costs N × the offer's hourly price × those hours. The chosen size is the cheapest
that is allowed (the state fits, the fabric may carry it) and meets the deadline; with
no deadline that is the cheapest allowed size, which is one node whenever the job fits
one (more nodes never make per-GPU work cheaper). Ties go to fewer nodes.

Efficiency depends on an offer only through its one-node rate, GPUs per instance and
network bandwidth, which follow from its hardware columns: it is computed once per
distinct hardware shape of the table (:attr:`OfferTable.shapes`) and gathered per offer.
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
"""Expected wall hours for the sized rows' compute hours on their node counts (spot
re-work added: any of N spot instances interrupted stops the job)."""


@dataclass(frozen=True, slots=True)
class ClusterShape:
    """What the job and the offers look like to the sizing: per sized row, and per group
    of rows that scale alike (same one-node rate, GPUs per instance and bandwidth)."""

    rows: IntArray
    """Offer rows being sized (the ranker's candidates)."""
    group: IntArray
    """Per row, its group (an index into the ``group_*`` arrays)."""
    group_gpus: FloatArray
    group_tokens_per_gpu_s: FloatArray
    group_gbps: FloatArray
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
    comes from one sorted search of the group's speed (N × efficiency, made
    non-decreasing up to its peak) instead of one pass per node count; spot rows whose
    re-work pushes them past it ask again for that much more speed, then bisect. (Spot
    re-work grows with N, as any of N instances may be reclaimed: for spot clusters the
    smallest size meeting the deadline is taken as the cheapest, an approximation.)"""
    s = shape
    # only the groups some row belongs to (renumbered without sorting: a mask and a cumsum)
    used = np.zeros(len(s.group_gpus), np.bool_)
    used[s.group] = True
    g = (np.cumsum(used) - 1)[s.group]
    speed, eff, share = _group_curves(s, np.flatnonzero(used), fit, counts)
    peak = np.argmax(speed, axis=1)
    rising = np.maximum.accumulate(speed, axis=1)
    lo = np.clip(s.min_nodes - counts[0], 0, len(counts) - 1)
    hi = np.maximum(peak[g], lo)

    def wall_at(ix: IntArray, curve: FloatArray) -> FloatArray:
        compute = s.one_node_hours / curve[g, ix]
        return wall_hours(compute, counts[ix])

    pick = lo
    met = np.isfinite(speed[g, lo])
    wall: FloatArray | None = None
    if deadline_hours is not None:
        # a group's rows share their one-node hours (same rate, same GPUs): search once
        # per group, then each row starts no lower than the nodes its state needs
        group_hours = np.zeros(len(rising))
        group_hours[g] = s.one_node_hours
        every = np.arange(len(rising))
        first = _first_fast_enough(rising, every, group_hours / deadline_hours)
        pick = np.maximum(first[g], lo)
        met &= pick <= hi
        pick = np.minimum(pick, hi)
        wall = wall_at(pick, rising)
        late = met & (wall > deadline_hours)
        for _ in range(2):  # spot re-work stretched them: ask for that much more speed
            if not late.any():
                break
            needed = wall * rising[g, pick] / deadline_hours  # = one-node hours x stretch / D
            ask = np.minimum(np.maximum(_first_fast_enough(rising, g, needed), pick), hi)
            pick = np.where(late, ask, pick)
            wall = wall_at(pick, rising)
            late = met & (wall > deadline_hours)
        if late.any():  # what the stretch did not settle: bisect the rest
            met &= ~late | (wall_at(hi, rising) <= deadline_hours)
            pick = _bisect(late & met, pick, hi, lambda ix: wall_at(ix, rising) <= deadline_hours)
            wall = None
    compute = s.one_node_hours / speed[g, pick]
    if wall is None or (rising[g, pick] != speed[g, pick]).any():
        wall = wall_hours(compute, counts[pick])
    if deadline_hours is not None:
        met &= wall <= deadline_hours  # the curve's own value, not its rising hull
    # the fastest size matters only for the line saying no size meets the deadline
    fastest = wall_at(hi, speed) if not met.any() else np.full(len(g), np.inf)
    return Sizes(
        nodes=np.where(met, counts[pick], 0),
        efficiency=eff[g, pick],
        compute_hours=compute,
        wall_hours=wall,
        cost=s.hourly * counts[pick] * wall,
        compute_share=share[g, pick],
        fastest_nodes=np.where(np.isfinite(fastest), counts[hi], 0),
        fastest_hours=fastest,
    )


def _bisect(
    rows: BoolArray, low: IntArray, high: IntArray, ok: Callable[[IntArray], BoolArray]
) -> IntArray:
    """For ``rows``, the least index in [low, high] where ``ok`` (monotone) holds."""
    low, high = low.copy(), high.copy()
    while (searching := rows & (low < high)).any():
        mid = (low + high) // 2
        good = ok(mid)
        high = np.where(searching & good, mid, high)
        low = np.where(searching & ~good, mid + 1, low)
    return low


_SPAN = 4096.0
"""Above any speed (N × efficiency <= N <= 1024): offsets each group's curve in one array."""


def _first_fast_enough(rising: FloatArray, g: IntArray, needed: FloatArray) -> IntArray:
    """Per row, the first size index whose (non-decreasing) speed reaches ``needed`` (the
    curve's length where none does). Every group's curve is offset by its number so the
    concatenation stays sorted; the queries are sorted too, so one merge-like search
    answers them all (unsorted queries cost three times as much in cache misses)."""
    groups, width = int(rising.shape[0]), int(rising.shape[1])
    offset = np.arange(groups, dtype=np.float64)[:, None] * _SPAN
    flat = (offset + np.clip(rising, -1.0, _SPAN - 2.0)).ravel()
    query = g * _SPAN + np.clip(needed, 0.0, _SPAN - 2.0)
    order = np.argsort(query)
    found: IntArray = np.empty(len(g), np.int64)
    found[order] = np.searchsorted(flat, query[order], side="left")
    found -= g * width
    return found


def _group_curves(
    s: ClusterShape, groups: IntArray, fit: Scaling, counts: IntArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per group of ``groups`` and node count: speed (N × efficiency; -inf where the
    fabric may not carry N > 1), efficiency and the compute share of a step."""
    nodes = counts.astype(np.float64)[None, :]
    gbps = s.group_gbps[groups][:, None]
    times = step_times(
        fit.overlap,
        fit.latency_s,
        nodes=nodes,
        gpus_per_node=s.group_gpus[groups][:, None],
        local_tokens=np.array(s.local_tokens),
        tokens_per_gpu_s=s.group_tokens_per_gpu_s[groups][:, None],
        param_bytes=np.array(s.param_bytes),
        node_gbps=np.nan_to_num(gbps, nan=1.0),
        global_batch=s.global_batch,
        sequence_length=s.sequence_length,
        split=fit.split,
    )
    eff = times.efficiency
    spans = ((nodes == 1) | ~np.isnan(gbps)) & np.isfinite(eff)  # NaN: a shape no row sizes
    speed = np.where(spans, nodes * eff, -np.inf)
    return speed, eff, times.compute / times.step
