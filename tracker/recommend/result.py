"""What a ranking is: its candidates (one offer each, with the job's estimated hours
and cost), the offers excluded and why, and the note when the two cheapest are too close
to call.

Kept apart from :mod:`tracker.recommend.rank`, which builds them, so the modules that only
read a ranking (history, uncertainty, the views) need not import the ranking itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from tracker.models import Interconnect, Offer
from tracker.recommend.profiles import Profile
from tracker.recommend.rating import Rate
from tracker.recommend.reasons import Reason
from tracker.recommend.throughput import Workload
from tracker.recommend.uncertainty import CLOSE_CALL, hours_range, relative_error

__all__ = ["Candidate", "Exclusion", "Ranking", "close_call"]


@dataclass(frozen=True, slots=True)
class Candidate:
    rank: int
    offer: Offer
    vram_needed_gib: float
    """Across the GPUs used (per-GPU need × GPUs; a replica per GPU when not sharded)."""
    vram_available_gib: float
    vram_needed_per_gpu_gib: float
    sharded: bool
    efficiency: float | None
    """Achieved share of the datasheet dense rate (None where the catalog has none)."""
    effective_hourly_usd: Decimal
    """What one hour costs: the listed price, or the amortised rate for reservations."""
    compute_hours: float | None
    """Hours of uninterrupted work (None when the profile gives no work size)."""
    job_hours: float | None
    """Expected wall-clock hours, including spot re-work (None without a work size)."""
    job_cost_usd: Decimal | None
    """None without a work size; reservations: effective hourly × hours ÷ utilization."""
    interruption_pct: float | None
    interconnect: Interconnect
    """The link the estimate assumed: the offer's, or the catalog's when it gave none."""
    interconnect_from_catalog: bool
    rate: Rate
    """How fast this GPU runs the job and where that figure comes from (``basis``)."""
    obtainability_7d: float | None = None
    obtainability_30d: float | None = None
    """Shares of the last 7 / 30 days the offer was reported rentable (None: never said)."""
    nodes: int = 1
    """Instances of the offer the job spans (``gpu_count`` stays GPUs per instance)."""
    scaling_efficiency: float = 1.0
    """Per-GPU throughput at this size ÷ at one node."""
    compute_share: float | None = None
    """Share of a step spent computing when sized as a cluster (rest: communication)."""
    network_gbps: float | None = None
    """The offer's stated inter-node Gbit/s per instance."""
    cluster_gbps: float | None = None
    """The Gbit/s the cluster estimate used (stated, else the fallback); None on one node."""

    @property
    def total_gpus(self) -> float:
        return float(self.offer.gpu_count) * self.nodes

    @property
    def price_per_hour_usd(self) -> Decimal:
        return self.offer.usd

    @property
    def price_per_gpu_hour_usd(self) -> Decimal:
        return self.effective_hourly_usd / self.offer.gpu_count

    @property
    def uncertainty(self) -> float:
        """The ± (a fraction) of ``job_hours``, by the rate's basis."""
        return relative_error(self.rate)

    @property
    def job_hours_low(self) -> float | None:
        return hours_range(self.job_hours, self.rate)[0]

    @property
    def job_hours_high(self) -> float | None:
        return hours_range(self.job_hours, self.rate)[1]

    @property
    def rework_hours(self) -> float | None:
        if self.job_hours is None or self.compute_hours is None:
            return None
        return self.job_hours - self.compute_hours


@dataclass(frozen=True, slots=True)
class Exclusion:
    offer: Offer
    reason: Reason
    detail: str


@dataclass(frozen=True)
class Ranking:
    profile: Profile
    workload: Workload
    candidates: tuple[Candidate, ...]
    considered: int
    feasible: int
    excluded_counts: dict[str, int]
    exclusions: tuple[Exclusion, ...] = field(default=())
    """Filled only when ranking with ``explain=True``."""
    notes: tuple[str, ...] = field(default=())
    """How this ranking was costed where that is not the plain rule (for ``--explain``)."""
    deadline_note: str | None = None
    """Set when no size of any offer meets the profile's deadline: the fastest one."""
    close_call: str | None = None
    """Set when the two cheapest jobs' cost ranges overlap: "... within the estimate's
    error: consider both ..." (:func:`close_call`)."""

    @property
    def leader(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None


def close_call(candidates: Sequence[Candidate]) -> str | None:
    """The note when the two cheapest jobs' cost ranges overlap (None otherwise)."""
    if len(candidates) < 2:
        return None
    first, second = candidates[0], candidates[1]
    if first.job_cost_usd is None or second.job_cost_usd is None:
        return None
    e1, e2 = relative_error(first.rate), relative_error(second.rate)
    c1, c2 = float(first.job_cost_usd), float(second.job_cost_usd)
    if c1 * (1.0 + e1) < c2 * (1.0 - e2):
        return None
    return (
        f"#1 {_named(first)} (job ${c1 * (1 - e1):,.2f}-{c1 * (1 + e1):,.2f}, ±{e1:.0%}) and "
        f"#2 {_named(second)} (${c2 * (1 - e2):,.2f}-{c2 * (1 + e2):,.2f}, ±{e2:.0%}) are "
        f"{CLOSE_CALL}"
    )


def _named(c: Candidate) -> str:
    return f"{c.offer.provider} {c.offer.instance_type}"
