"""Rank offers by what the whole job will cost on them, and say why the rest were left out.

Pure: offers in, ranking out, no database. Every offer is either a candidate (it
fits, it is allowed, its cost is computable) or excluded with exactly one reason,
the first that applies in :class:`Reason` order, so ``--explain`` reads as the
filter chain a person would apply.

Estimates run in float over :class:`~tracker.recommend.table.OfferTable` columns;
each shown candidate's cost is then recomputed as ``Decimal(effective hourly price)
× Decimal(estimated hours)`` (÷ utilization for reservations, see
:mod:`tracker.recommend.pricing`) and rounded to cents: the hours are an estimate,
the price is the provider's exact figure. A profile without a work size has no hours:
the offers that fit are then ordered by what an hour of work costs on them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal

import numpy as np
import numpy.typing as npt

from tracker.capacity_blocks import capacity_block_terms
from tracker.models import Interconnect, Offer, PricingModel
from tracker.recommend import pricing
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.blocks import fit_blocks
from tracker.recommend.calibration import Rate, basis_notes, calibrated_work, gpu_rates
from tracker.recommend.cluster import size_clusters
from tracker.recommend.fabric import INTERCONNECTS, node_gbps, rdma
from tracker.recommend.kinds import FabricNeed
from tracker.recommend.measured import Measurement
from tracker.recommend.per_gpu import serving_seconds, vram_by_stored_precision
from tracker.recommend.profiles import InterconnectNeed, Profile, Task
from tracker.recommend.reasons import Reason, exclusion_detail
from tracker.recommend.result import Candidate, Exclusion, Ranking, close_call
from tracker.recommend.scaling_fit import fitted_scaling
from tracker.recommend.sizing import (
    cluster_notes,
    cluster_shape,
    fastest_note,
    min_nodes,
    wall_hours,
)
from tracker.recommend.table import PRICING_CODES, OfferTable, SpecLookup
from tracker.recommend.table import catalog_lookup as _catalog_lookup
from tracker.recommend.throughput import Workload, spec_tflops, workload
from tracker.recommend.vram import GIB

__all__ = ["rank", "rank_table"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
CENT = Decimal("0.01")
RESERVED = tuple(m for m in PricingModel if m.term_hours is not None)
_RESERVED_BY_CODE = np.array([m in RESERVED for m in PRICING_CODES], np.bool_)


def rank(
    profile: Profile,
    offers: Sequence[Offer],
    assumptions: Assumptions | None = None,
    *,
    top: int | None = None,
    explain: bool = False,
    lookup: SpecLookup = _catalog_lookup,
    measurements: Sequence[Measurement] | None = None,
    include_unavailable: bool = False,
) -> Ranking:
    """Rank ``offers`` for ``profile``; ``top=None`` returns every feasible offer.

    ``measurements``: what estimates calibrate against (default: the shipped table; an
    empty sequence leaves only the datasheet efficiency model)."""
    table = OfferTable.build(offers, lookup)
    return rank_table(
        profile,
        table,
        assumptions or Assumptions(),
        top=top,
        explain=explain,
        measurements=measurements,
        include_unavailable=include_unavailable,
    )


def rank_table(
    profile: Profile,
    table: OfferTable,
    a: Assumptions,
    *,
    top: int | None = None,
    explain: bool = False,
    work: Workload | None = None,
    measurements: Sequence[Measurement] | None = None,
    include_unavailable: bool = False,
) -> Ranking:
    """Rank the table's offers for ``profile``. Offers the provider last reported
    unavailable are excluded (reason ``unavailable``, counted like every other reason)
    unless ``include_unavailable``; unknown availability is never a reason."""
    p = profile
    rates = gpu_rates(p, table.specs, a, measurements)
    w = calibrated_work(work or workload(p, a), a, measurements)
    n = len(table)
    reason = np.zeros(n, np.int8)

    def exclude(code: Reason, mask: npt.NDArray[np.bool_]) -> None:
        reason[(reason == 0) & mask] = code

    if p.providers:
        allowed = np.isin(table.provider_code, table.codes(p.providers, table.providers))
        exclude(Reason.PROVIDER, ~allowed)
    if p.regions:
        allowed = np.isin(table.region_code, table.codes(p.regions, table.regions))
        exclude(Reason.REGION, ~allowed)
    if not include_unavailable:  # within the asked-for providers and regions
        exclude(Reason.UNAVAILABLE, table.unavailable)
    if p.min_obtainability is not None:  # NaN (never reported) compares False: kept
        with np.errstate(invalid="ignore"):
            exclude(Reason.OBTAINABILITY, table.obtainability_30d < p.min_obtainability)
    pc = table.pricing_code
    if not p.interruptible:
        exclude(Reason.SPOT_NOT_ALLOWED, pc == PRICING_CODES[PricingModel.SPOT])
    for model in RESERVED:
        if not pricing.reservation_eligible(model, p.horizon_months, p.utilization):
            exclude(Reason.RESERVED_TERM, pc == PRICING_CODES[model])
    if p.gpus:
        allowed = np.isin(table.gpu_code, table.codes(p.gpus, table.gpu_models)) & table.known
        exclude(Reason.GPU_NOT_ALLOWED, ~allowed)
    exclude(Reason.GPU_UNKNOWN, ~table.known)
    count = table.count
    if p.min_gpus is not None:
        exclude(Reason.GPU_COUNT, count < p.min_gpus - 1e-9)
    if p.max_gpus is not None:
        exclude(Reason.GPU_COUNT, count > p.max_gpus + 1e-9)
    whole = table.whole_gpus
    multi = whole > 1
    links = table.links
    ic, fast = links.code, links.fast
    if p.interconnect is InterconnectNeed.REQUIRED:
        exclude(Reason.INTERCONNECT, multi & ~fast)
    if p.fabric_need is FabricNeed.REQUIRED:
        exclude(Reason.FABRIC, ~rdma(table.fabric_code))
    per_model = np.array([r.flops if r else np.nan for r in rates] or [np.nan])
    achieved = np.where(table.known, per_model[table.gpu_code], np.nan) if n else np.empty(0)
    exclude(Reason.NO_THROUGHPUT, np.isnan(achieved))
    if w.decode_steps or p.serving:
        exclude(Reason.NO_BANDWIDTH, np.isnan(table.bandwidth))
    exclude(Reason.VRAM_UNKNOWN, np.isnan(table.vram_per_gpu))

    # --- memory fit -------------------------------------------------------------------
    if p.task is Task.INFERENCE or p.interconnect is InterconnectNeed.ANY:
        sharded = multi
    else:
        sharded = multi & fast
    cluster = p.sizes_clusters and p.task.is_training and p.tokens is not None
    need_per_gpu = np.full(n, np.nan)
    shard_gib = np.full(n, np.nan)
    fixed_gib = np.full(n, np.nan)
    for vram, models in vram_by_stored_precision(p, w.vram, a, rates):
        mask = np.isin(table.gpu_code, models) if models is not None else np.ones(n, np.bool_)
        need = np.where(sharded, vram.shardable / whole + vram.per_gpu_fixed, vram.total) / GIB
        need_per_gpu = np.where(mask, need, need_per_gpu)
        if cluster:  # what more instances would shard (the sizing's fewest nodes)
            shard_gib = np.where(mask, vram.shardable / GIB, shard_gib)
            fixed_gib = np.where(mask, vram.per_gpu_fixed / GIB, fixed_gib)
    gbps = (
        node_gbps(table.fabric_code, table.network_gbps, p.fabric_need, a.fallback_network_gbps)
        if cluster
        else np.full(n, np.nan)  # one node: no network between instances is used
    )
    fewest, grows = min_nodes(p, table, sharded & ~np.isnan(gbps), shard_gib, fixed_gib, cluster)
    with np.errstate(invalid="ignore"):
        exclude(Reason.VRAM, (need_per_gpu > table.vram_per_gpu) & ~grows)

    # --- time and cost ----------------------------------------------------------------
    per_doubling = np.array([a.multi_gpu_scaling[name] for name in INTERCONNECTS])
    scaling = per_doubling[ic] ** np.log2(np.maximum(count, 1.0))
    if p.task.is_training:
        scaling = np.where(sharded & ~fast, scaling * a.sharded_pcie_factor, scaling)
    rate = achieved * scaling  # model FLOP/s per GPU on this offer
    # what an hour of the job costs: reservations charge idle hours too (÷ utilization)
    per_job_hour = table.hourly
    if p.utilization is not None:
        divisor = np.array([pricing.utilization_divisor(m, p.utilization) for m in PRICING_CODES])
        per_job_hour = per_job_hour / divisor[pc]
    spot = pc == PRICING_CODES[PricingModel.SPOT]
    interrupt = table.interruption_pct
    if w.flops is None:
        compute_hours = wall = np.full(n, np.nan)
        cost = per_job_hour  # the ranking key: no hours to multiply by
        pct = interrupt
    else:
        kept = per_doubling[ic]
        seconds = _job_seconds(w, a, p, table, rate, achieved, kept, rates)
        exclude(Reason.VRAM, np.isnan(seconds))  # serving: not one request fits
        compute_hours, wall, pct = _hours(a, p, table, seconds, spot, rework=not cluster)
        cost = per_job_hour * wall
    nodes = np.ones(n, np.int64)
    eff = np.ones(n)
    share = np.full(n, np.nan)
    deadline_note = None
    if cluster and w.flops is not None:
        rows = np.flatnonzero(reason == 0)
        shape = cluster_shape(p, w.flops, a, table, rows, rate, gbps, fewest, compute_hours)
        lo, hi = p.node_counts
        sizes = size_clusters(
            shape,
            fitted_scaling(),
            np.arange(lo, hi + 1),
            p.deadline_hours,
            wall_hours(a, p, pct, spot, rows),
        )
        nodes[rows], eff[rows], share[rows] = sizes.nodes, sizes.efficiency, sizes.compute_share
        compute_hours[rows], wall[rows] = sizes.compute_hours, sizes.wall_hours
        spread = rows[(sizes.nodes > 1) & sharded[rows]]  # state shards over every node
        need_per_gpu[spread] = (
            shard_gib[spread] / (whole[spread] * nodes[spread]) + fixed_gib[spread]
        )
        cost[rows] = per_job_hour[rows] * sizes.nodes * sizes.wall_hours
        # no allowed size: past the deadline, or (a fixed node count) not over this fabric
        exclude(Reason.DEADLINE if p.deadline_hours else Reason.FABRIC, nodes == 0)
        if p.deadline_hours is not None and not (nodes[rows] > 0).any():
            deadline_note = fastest_note(p, table, rows, sizes)
    elif p.deadline_hours is not None and w.flops is not None:
        exclude(Reason.DEADLINE, wall > p.deadline_hours)
    cost = _paid_whole(
        table, pc, reason, nodes, wall if w.flops is not None else None, per_job_hour, cost, exclude
    )
    if p.max_price_per_hour is not None:
        exclude(Reason.MAX_PRICE, table.hourly > float(p.max_price_per_hour))
    if p.budget_usd is not None:
        with np.errstate(invalid="ignore"):
            exclude(Reason.BUDGET, cost > float(p.budget_usd))

    feasible_ix = np.flatnonzero(reason == 0)
    chosen = _order(feasible_ix, cost, wall if w.flops is not None else np.zeros(n), table, top)
    candidates = tuple(
        _candidate(
            i + 1,
            int(ix),
            table,
            p,
            need_per_gpu,
            bool(sharded[ix]),
            float(rate[ix]),
            None if w.flops is None else float(compute_hours[ix]),
            None if w.flops is None else float(wall[ix]),
            float(pct[ix]) if bool(spot[ix]) and p.interruptible else None,
            Interconnect(INTERCONNECTS[int(ic[ix])]),
            bool(links.from_catalog[ix]),
            rates[int(table.gpu_code[ix])],
            (int(nodes[ix]), float(eff[ix]), float(share[ix]), float(gbps[ix])),
            int(table.cluster_nodes[ix]),
        )
        for i, ix in enumerate(chosen)
    )
    counts = np.bincount(reason, minlength=len(Reason) + 1)
    excluded_counts = {r.label: int(counts[r.value]) for r in Reason if counts[r.value]}
    exclusions: tuple[Exclusion, ...] = ()
    if explain:
        exclusions = tuple(
            Exclusion(
                table.offers[ix],
                Reason(int(reason[ix])),
                exclusion_detail(
                    Reason(int(reason[ix])), ix, p, table, need_per_gpu, cost, sharded, ic
                ),
            )
            for ix in np.flatnonzero(reason).tolist()
        )
    return Ranking(
        profile=p,
        workload=w,
        candidates=candidates,
        considered=n,
        feasible=len(feasible_ix),
        excluded_counts=excluded_counts,
        exclusions=exclusions,
        notes=_notes(p, w.flops is not None, pc, reason, links.from_catalog)
        + basis_notes((c.offer.gpu_model, c.rate) for c in candidates)
        + (cluster_notes(candidates) if cluster else ()),
        close_call=close_call(candidates),
        deadline_note=deadline_note,
    )


def _job_seconds(
    w: Workload,
    a: Assumptions,
    p: Profile,
    table: OfferTable,
    rate: FloatArray,
    achieved: FloatArray,
    kept: FloatArray,
    rates: Sequence[Rate | None],
) -> FloatArray:
    """Seconds of uninterrupted work: FLOPs at the rate, or serving's prefill + decode."""
    assert w.flops is not None
    count = table.count
    with np.errstate(invalid="ignore", divide="ignore"):
        if p.serving:
            return serving_seconds(p, a, table, achieved, kept, rates)
        seconds = w.flops / (count * rate)
        if w.decode_steps:
            memory = (
                w.decode_steps
                * w.weight_bytes
                / (count * table.bandwidth * 1e9 * a.memory_bandwidth_efficiency)
            )
            seconds = np.fmax(seconds, memory)
    return seconds


def _hours(
    a: Assumptions,
    p: Profile,
    table: OfferTable,
    seconds: FloatArray,
    spot: BoolArray,
    rework: bool = True,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Compute hours, expected wall hours (spot re-work added) and interruption %.
    ``rework=False``: the cluster sizing adds the re-work per size, so it is left out."""
    compute_hours = seconds / 3600.0
    interrupt = table.interruption_pct
    if not (p.interruptible and spot.any()):
        return compute_hours, compute_hours, interrupt
    default_pct = np.array([a.interruption_pct(name) for name in table.providers])
    pct = np.where(np.isnan(interrupt), default_pct[table.provider_code], interrupt)
    if not rework:
        return compute_hours, compute_hours.copy(), pct
    rate = pricing.interruption_rate_per_hour(pct)
    with np.errstate(invalid="ignore", over="ignore"):
        redone = pricing.expected_wall_hours(
            compute_hours,
            rate,
            p.checkpoint_interval_hours,
            a.restart_hours,
            a.checkpoint_write_hours,
        )
    return compute_hours, np.where(spot, redone, compute_hours), pct


def _notes(
    p: Profile,
    has_work: bool,
    pc: IntArray,
    reason: npt.NDArray[np.int8],
    ic_from_catalog: BoolArray,
) -> tuple[str, ...]:
    notes = []
    if not has_work:
        notes.append(
            "no work size: the offers that fit are ranked by effective $/hour "
            "(reservations: ÷ utilization); job hours and cost are left empty"
        )
    if p.utilization is not None and (_RESERVED_BY_CODE[pc] & (reason == 0)).any():
        notes.append(
            f"reserved and savings plan offers: job cost = effective $/h × job hours ÷ "
            f"utilization {p.utilization:g} (a commitment is paid for its whole term, used or not)"
        )
    inferred = int((ic_from_catalog & (reason == 0)).sum())
    if inferred:
        notes.append(
            f"interconnect taken from the GPU catalog for {inferred} ranked multi-GPU "
            "offer(s) that do not state it (SXM boards: NVLink; OAM boards: the vendor's "
            "GPU fabric)"
        )
    return tuple(notes)


def _order(
    feasible: npt.NDArray[np.int64],
    cost: FloatArray,
    wall: FloatArray,
    table: OfferTable,
    top: int | None,
) -> npt.NDArray[np.int64]:
    """Cheapest job first; then faster, then cheaper per hour, then by identity."""
    ix = feasible
    if top is not None and len(ix) > top:
        c = cost[ix]
        kth = np.partition(c, top - 1)[top - 1]
        ix = ix[c <= kth]  # keeps ties at the boundary so the tie-break decides
    keys = (table.tie_order[ix], table.hourly[ix], wall[ix], cost[ix])
    ordered = ix[np.lexsort(keys)]
    return ordered[:top] if top is not None else ordered


def _paid_whole(
    table: OfferTable,
    pc: npt.NDArray[np.integer],
    reason: npt.NDArray[np.int8],
    nodes: npt.NDArray[np.int64],
    wall: FloatArray | None,
    per_job_hour: FloatArray,
    cost: FloatArray,
    exclude: Callable[[Reason, npt.NDArray[np.bool_]], None],
) -> FloatArray:
    """Offers sold only whole: a capacity block (only for a job whose nodes and hours fit
    it, at its whole fee: :mod:`tracker.recommend.blocks`) and one node of a fixed-size
    cluster (at most its nodes, every node paid: :mod:`tracker.fixed_clusters`). Returns
    the job costs, a copy where any changed (never the table's own prices, whatever
    ``cost`` aliases); ``wall``: the job's hours, None for a job without a size."""
    blocks = pc == PRICING_CODES[PricingModel.CAPACITY_BLOCK]
    if blocks.any():
        live = np.flatnonzero(blocks & (reason == 0))
        fits, block_cost = fit_blocks(table, live, nodes, wall)
        exclude(Reason.CAPACITY_BLOCK, blocks & ~fits)
        cost = cost.copy()
        cost[fits] = block_cost[fits]
    held = table.cluster_nodes
    fixed = held > 0
    if fixed.any():
        exclude(Reason.CLUSTER_SIZE, fixed & (nodes > held))
        hours = wall[fixed] if wall is not None else 1.0
        cost = cost.copy()
        cost[fixed] = per_job_hour[fixed] * held[fixed] * hours
    return cost


def _candidate(
    position: int,
    ix: int,
    table: OfferTable,
    p: Profile,
    need_per_gpu: FloatArray,
    sharded: bool,
    rate: float,
    compute_hours: float | None,
    wall: float | None,
    pct: float | None,
    interconnect: Interconnect,
    interconnect_from_catalog: bool,
    gpu_rate: Rate | None,
    size: tuple[int, float, float, float],
    cluster_nodes: int = 0,
) -> Candidate:
    offer = table.offers[ix]
    hourly = pricing.effective_hourly_usd(offer)
    nodes, scaling_efficiency, compute_share, gbps = size
    cost = None
    block = capacity_block_terms(offer)
    if wall is not None and block is not None:  # a block is paid whole (blocks.py)
        cost = pricing.job_cost_usd(offer.pricing, hourly * block.instances, block.hours, None)
    elif wall is not None:
        hours = Decimal(f"{wall:.6f}")
        paid = cluster_nodes or nodes  # a fixed cluster is paid whole (tracker.fixed_clusters)
        cost = pricing.job_cost_usd(offer.pricing, hourly * paid, hours, p.utilization)
    per_gpu = float(need_per_gpu[ix])
    return Candidate(
        rank=position,
        offer=offer,
        vram_needed_gib=per_gpu * int(table.whole_gpus[ix]),
        vram_available_gib=float(table.vram_total[ix]),
        vram_needed_per_gpu_gib=per_gpu,
        sharded=sharded,
        efficiency=_efficiency(rate, offer.gpu_model, gpu_rate),
        effective_hourly_usd=hourly,
        compute_hours=compute_hours,
        job_hours=wall,
        job_cost_usd=cost,
        interruption_pct=pct,
        interconnect=interconnect,
        interconnect_from_catalog=interconnect_from_catalog,
        rate=_known(gpu_rate),
        obtainability_7d=_share(table.obtainability_7d[ix]),
        obtainability_30d=_share(table.obtainability_30d[ix]),
        nodes=nodes,
        scaling_efficiency=scaling_efficiency,
        compute_share=None if np.isnan(compute_share) else compute_share,
        network_gbps=None if np.isnan(table.network_gbps[ix]) else float(table.network_gbps[ix]),
        cluster_gbps=None if nodes <= 1 or np.isnan(gbps) else gbps,
    )


def _share(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _known(rate: Rate | None) -> Rate:
    assert rate is not None, "a candidate's GPU always has a rate (NO_THROUGHPUT excludes)"
    return rate


def _efficiency(rate: float, gpu_model: str, gpu_rate: Rate | None) -> float | None:
    spec = _catalog_lookup(gpu_model)
    peak = None if spec is None or gpu_rate is None else spec_tflops(spec, gpu_rate.precision)
    return None if peak is None else rate / (peak * 1e12)
