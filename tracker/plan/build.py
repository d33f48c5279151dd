"""A plan per (provider, region, instance type): steady fleet, bursts, disks, egress.

The steady fleet is ``ceil(N / GPUs per instance)`` instances, each covered by the
cheapest sequence of on-demand months and 1- or 3-year terms (:mod:`tracker.plan.cover`).
The burst is GPU-hours: its interruptible share on spot at the per-GPU-hour price ×
(1 + re-work), unless on-demand is cheaper even then, the rest on-demand. Disks are
GB × price per GB-month × months; egress is priced tier by tier each month.

A part that has no known price is ``None``, never 0, its name listed in
``incomplete``, and such plans rank after every complete one. Money is exact
``Decimal`` until the row is finished, then rounded to cents (half-even).
"""

from __future__ import annotations

import math
from bisect import insort
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Protocol

from tracker.models import PricingModel
from tracker.plan.cover import HOURS_PER_MONTH, Cover, Term, cheapest_cover
from tracker.plan.nodes import cluster_node
from tracker.recommend.demand import Demand
from tracker.recommend.pricing import effective_hourly
from tracker.service_prices import GB_PER_TB, ServiceKind, tiered_cost

__all__ = [
    "Candidate",
    "PlanRow",
    "PriceRow",
    "Tiers",
    "ToUsd",
    "build_plans",
    "candidates",
    "service_lookup",
    "spot_overhead",
]

CENT = Decimal("0.01")
_TERMS = {
    m.value: m.term_hours // (HOURS_PER_MONTH * 12) * 12
    for m in PricingModel
    if m.term_hours is not None
}
"""Months of each commitment: 1- and 3-year reservations and savings plans."""
_ON_DEMAND, _SPOT = PricingModel.ON_DEMAND.value, PricingModel.SPOT.value
_SAVINGS_PLANS = {PricingModel.SAVINGS_PLAN_1Y.value, PricingModel.SAVINGS_PLAN_3Y.value}

Tiers = list[tuple[Decimal, Decimal | None, Decimal]]
"""``(tier start GB, tier end GB or None, USD per unit)``, as :func:`tiered_cost` takes."""
ServiceLookup = Callable[[str, str, ServiceKind], Tiers | None]
"""USD tiers of one service in one (provider, region), None when no price is stored."""


def _cents(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_EVEN)


class PriceRow(Protocol):
    """One stored price a plan can use, in its own currency (the store's plan rows)."""

    @property
    def provider(self) -> str: ...
    @property
    def region(self) -> str: ...
    @property
    def instance_type(self) -> str: ...
    @property
    def pricing(self) -> str: ...
    @property
    def payment_option(self) -> str: ...
    @property
    def zone(self) -> str: ...
    @property
    def gpu_model(self) -> str: ...
    @property
    def gpu_count(self) -> Decimal: ...
    @property
    def price(self) -> Decimal: ...
    @property
    def currency(self) -> str: ...
    @property
    def interruption_max_pct(self) -> str | None:
        """The provider's published interruption bucket bound (% a month), spot only."""

    @property
    def upfront_usd(self) -> str | None: ...
    @property
    def recurring_hourly_usd(self) -> str | None: ...
    @property
    def offering_class(self) -> str: ...
    @property
    def fabric(self) -> str:
        """The inter-node network the offer states (``tracker.models.Fabric``)."""


ToUsd = Callable[[Decimal, str], Decimal | None]
"""A price in its currency to USD at the rate in force, None without a rate (counted)."""
OverheadFor = Callable[[PriceRow], Decimal]
"""The re-work share of a spot price (from its provider's interruption rate)."""


@dataclass
class Candidate:
    """Every stored price of one instance type in one region that a plan can use."""

    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpu_count: Decimal
    on_demand: Decimal | None = None
    """USD per instance-hour."""
    spot: PriceRow | None = None
    """The cheapest spot price of the region's zones."""
    spot_usd: Decimal = Decimal(0)
    terms: dict[str, Term] = field(default_factory=dict)
    """The cheapest effective rate of each term length (over payment options)."""
    fabric: str = "unknown"
    """The inter-node network the type's prices state (a stated fabric wins over unknown)."""


def candidates(prices: Iterable[PriceRow], to_usd: ToUsd) -> list[Candidate]:
    """Group prices by (provider, region, instance type), in USD; a price whose
    currency has no rate is left out (``to_usd`` counts it)."""
    groups: dict[tuple[str, str, str], Candidate] = {}
    for o in prices:
        usd = to_usd(o.price, o.currency)
        if usd is None:
            continue
        key = (o.provider, o.region, o.instance_type)
        c = groups.get(key)
        if c is None:
            c = groups[key] = Candidate(*key, gpu_model=o.gpu_model, gpu_count=o.gpu_count)
        if c.fabric == "unknown":
            c.fabric = o.fabric
        if o.pricing == _ON_DEMAND:
            c.on_demand = usd if c.on_demand is None else min(c.on_demand, usd)
        elif o.pricing == _SPOT:
            if c.spot is None or usd < c.spot_usd:
                c.spot, c.spot_usd = o, usd
        elif o.pricing in _TERMS:
            hourly = _term_hourly(o, usd)
            held = c.terms.get(o.pricing)
            if held is None or hourly < held.hourly:
                plan_type = o.offering_class if o.pricing in _SAVINGS_PLANS else ""
                c.terms[o.pricing] = Term(
                    o.pricing, _TERMS[o.pricing], hourly, o.payment_option, plan_type
                )
    return sorted(groups.values(), key=lambda c: (c.provider, c.region, c.instance_type))


def _term_hourly(o: PriceRow, usd: Decimal) -> Decimal:
    if o.upfront_usd is None or o.recurring_hourly_usd is None:
        return usd
    parts = {"upfront_usd": o.upfront_usd, "recurring_hourly_usd": o.recurring_hourly_usd}
    return effective_hourly(PricingModel(o.pricing), usd, parts)


def spot_overhead(
    interruption_pct: float, checkpoint_hours: float, restart_hours: float, write_hours: float
) -> Decimal:
    """Expected re-work share of spot hours (Daly's estimate per checkpoint segment):
    ``e^{λR}(e^{λ(τ+δ)} − 1) / (λτ) − 1`` with λ interruptions per hour."""
    lam = interruption_pct / 100.0 / HOURS_PER_MONTH
    tau = checkpoint_hours
    if lam <= 0:
        ratio = (tau + write_hours) / tau
    else:
        ratio = math.exp(lam * restart_hours) * math.expm1(lam * (tau + write_hours)) / (lam * tau)
    return Decimal(repr(round(ratio - 1, 6)))


@dataclass
class PlanRow:
    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpu_count: Decimal
    instances: int
    commitments: list[dict[str, object]]
    steady_usd: Decimal | None
    burst_usd: Decimal | None
    storage_usd: Decimal | None
    egress_usd: Decimal | None
    migration_usd: Decimal
    all_on_demand_usd: Decimal | None
    break_even_utilization: Decimal | None
    incomplete: list[str]
    months: int
    basis: dict[str, object] = field(default_factory=dict)
    """The unit prices and quantities the figures come from (what ``--explain`` shows)."""
    rank: int = 0
    fabric: str = "unknown"
    """The inter-node network the instance type's prices state."""

    @property
    def total_usd(self) -> Decimal:
        """The known parts (the whole total when ``incomplete`` is empty)."""
        parts = (self.steady_usd, self.burst_usd, self.storage_usd, self.egress_usd)
        return sum((p for p in parts if p is not None), self.migration_usd)

    @property
    def monthly_usd(self) -> Decimal:
        return _cents(self.total_usd / self.months)

    @property
    def savings_pct(self) -> Decimal | None:
        if self.incomplete or not self.all_on_demand_usd:
            return None
        saved = (self.all_on_demand_usd - self.total_usd) / self.all_on_demand_usd * 100
        return saved.quantize(CENT, rounding=ROUND_HALF_EVEN)


def build_plans(
    offers: Sequence[Candidate],
    demand: Demand,
    services: ServiceLookup,
    overhead_for: OverheadFor,
    top: int | None = None,
) -> list[PlanRow]:
    """The candidates' plans, ranked: complete plans by total, then incomplete ones
    (fewest missing parts first, then by the known total); names break ties.

    With ``demand.fabric == "required"`` only cluster nodes are planned
    (:func:`tracker.plan.nodes.cluster_node`: a stated RDMA fabric and two GPUs or more).

    With ``top``, only the best ``top`` are priced in full. Every candidate first gets a
    lower bound: its steady fleet at the cheapest monthly rate it sells (no cover can
    beat every month at the cheapest rate), its other parts exactly. Candidates are then
    priced in order of that bound until the next bound cannot beat the ``top``-th plan,
    so the rows and their order are exactly those of pricing every candidate.
    """
    services = _memo(services)
    if demand.fabric == "required":
        offers = [c for c in offers if cluster_node(c.fabric, c.gpu_count)]
    if top is None:
        rows = [_plan(c, demand, services, overhead_for) for c in offers]
    else:
        rows = _best(offers, demand, services, overhead_for, top)
    rows.sort(key=_key)
    for n, row in enumerate(rows, start=1):
        row.rank = n
    return rows


def _key(r: PlanRow) -> tuple[int, Decimal, str, str, str]:
    return (len(r.incomplete), r.total_usd, r.provider, r.region, r.instance_type)


def _best(
    offers: Sequence[Candidate],
    demand: Demand,
    services: ServiceLookup,
    overhead_for: OverheadFor,
    top: int,
) -> list[PlanRow]:
    shared: dict[tuple[str, str], tuple[Decimal | None, Decimal | None]] = {}
    bounds = sorted(
        (_bound(c, demand, services, overhead_for, shared), n) for n, c in enumerate(offers)
    )
    rows: list[PlanRow] = []
    keys: list[tuple[int, Decimal, str, str, str]] = []
    for bound, n in bounds:
        if len(keys) >= top and bound > keys[top - 1]:
            break
        row = _plan(offers[n], demand, services, overhead_for)
        rows.append(row)
        insort(keys, _key(row))
    return sorted(rows, key=_key)[:top]


def _bound(
    c: Candidate,
    d: Demand,
    services: ServiceLookup,
    overhead_for: OverheadFor,
    shared: dict[tuple[str, str], tuple[Decimal | None, Decimal | None]],
) -> tuple[int, Decimal, str, str, str]:
    """A key no lower than the candidate's plan's :func:`_key` can be.

    ``shared`` keeps each (provider, region)'s storage and egress figures: they depend
    on nothing else, and thousands of candidates share a region."""
    scratch: dict[str, object] = {}
    where = (c.provider, c.region)
    if where not in shared:
        shared[where] = (_storage(c, d, services, scratch), _egress(c, d, services, scratch))
    storage, egress = shared[where]
    instances = math.ceil(d.steady_gpus / c.gpu_count) if d.steady_gpus else 0
    rates = [t.cost / t.months for t in c.terms.values()]
    if c.on_demand is not None:
        rates.append(c.on_demand * HOURS_PER_MONTH)
    parts: list[Decimal | None] = [
        None if instances and not rates else min(rates, default=Decimal(0)) * d.months * instances,
        _burst(c, d, overhead_for, scratch),
        storage,
        egress,
    ]
    known = sum((p for p in parts if p is not None), Decimal(0))
    # The parts are rounded to cents when priced: allow each its half cent.
    floor = known - CENT * 2
    return (sum(p is None for p in parts), floor, c.provider, c.region, c.instance_type)


def _memo(services: ServiceLookup) -> ServiceLookup:
    """The lookup once per (provider, region, service): candidates share regions."""
    seen: dict[tuple[str, str, ServiceKind], Tiers | None] = {}

    def lookup(provider: str, region: str, service: ServiceKind) -> Tiers | None:
        key = (provider, region, service)
        if key not in seen:
            seen[key] = services(provider, region, service)
        return seen[key]

    return lookup


def _plan(c: Candidate, d: Demand, services: ServiceLookup, overhead_for: OverheadFor) -> PlanRow:
    basis: dict[str, object] = {"on_demand_hourly_usd": c.on_demand}
    instances = math.ceil(d.steady_gpus / c.gpu_count) if d.steady_gpus else 0
    cover = _steady_cover(c, d, instances)
    steady = None if cover is None else _cents(cover.cost * instances)
    burst = _burst(c, d, overhead_for, basis)
    storage = _storage(c, d, services, basis)
    egress = _egress(c, d, services, basis)
    migration = Decimal(0)
    if d.migration_usd and d.current_provider and c.provider != d.current_provider:
        migration = _cents(d.migration_usd)
    parts = {"steady": steady, "burst": burst, "storage": storage, "egress": egress}
    all_od = _all_on_demand(c, d, instances, storage, egress, migration)
    return PlanRow(
        provider=c.provider,
        region=c.region,
        instance_type=c.instance_type,
        gpu_model=c.gpu_model,
        gpu_count=c.gpu_count,
        instances=instances,
        commitments=[s.as_dict() for s in cover.segments] if cover else [],
        steady_usd=steady,
        burst_usd=burst,
        storage_usd=storage,
        egress_usd=egress,
        migration_usd=migration,
        all_on_demand_usd=all_od,
        break_even_utilization=_break_even(c, d, cover),
        incomplete=[name for name, value in parts.items() if value is None],
        months=d.months,
        basis=basis | {"cover": cover, "terms": dict(c.terms)},
        fabric=c.fabric,
    )


def _steady_cover(c: Candidate, d: Demand, instances: int) -> Cover | None:
    if instances == 0:
        return Cover(Decimal(0), ())
    return cheapest_cover(d.months, c.on_demand, list(c.terms.values()))


def _burst(
    c: Candidate, d: Demand, overhead_for: OverheadFor, basis: dict[str, object]
) -> Decimal | None:
    hours = d.burst_gpu_hours * d.months
    if hours == 0:
        return Decimal(0)
    od = None if c.on_demand is None else c.on_demand / c.gpu_count
    spot = None
    if c.spot is not None:
        overhead = d.spot_overhead if d.spot_overhead is not None else overhead_for(c.spot)
        spot = c.spot_usd / c.spot.gpu_count * (1 + overhead)
        basis |= {"spot_per_gpu_hour_usd": c.spot_usd / c.spot.gpu_count}
        basis |= {"spot_overhead": overhead, "spot_zone": c.spot.zone}
    interruptible = hours * d.interruptible
    steady_part = hours - interruptible
    # Interruptible work can always run on-demand: the cheaper of the two carries it.
    cheaper = [p for p in (spot, od) if p is not None]
    if (steady_part and od is None) or (interruptible and not cheaper):
        return None
    on_spot = Decimal(0)
    cost = Decimal(0)
    if spot is not None and (od is None or spot < od):
        on_spot, cost = interruptible, interruptible * spot
    basis |= {"burst_hours": hours, "burst_spot_hours": on_spot}
    basis |= {"on_demand_per_gpu_hour_usd": od, "spot_effective_per_gpu_hour_usd": spot}
    if hours - on_spot:
        assert od is not None
        cost += (hours - on_spot) * od
    return _cents(cost)


def _storage(
    c: Candidate, d: Demand, services: ServiceLookup, basis: dict[str, object]
) -> Decimal | None:
    return _service(c, d.storage, d.storage_tb, d.months, services, basis, "storage")


def _egress(
    c: Candidate, d: Demand, services: ServiceLookup, basis: dict[str, object]
) -> Decimal | None:
    return _service(
        c, ServiceKind.EGRESS_INTERNET, d.egress_tb, d.months, services, basis, "egress"
    )


def _service(
    c: Candidate,
    kind: ServiceKind,
    tb: Decimal,
    months: int,
    services: ServiceLookup,
    basis: dict[str, object],
    name: str,
) -> Decimal | None:
    """``tb`` of a service a month (held, or sent) priced tier by tier, times the months;
    None when the region has no price for it or its tiers leave a gap."""
    if tb == 0:
        return Decimal(0)
    tiers = services(c.provider, c.region, kind)
    if not tiers:
        return None
    gb = tb * GB_PER_TB
    try:
        per_month = tiered_cost(gb, tiers)
    except ValueError:
        return None
    basis |= {f"{name}_gb": gb, f"{name}_month_usd": per_month}
    return _cents(per_month * months)


def _all_on_demand(
    c: Candidate,
    d: Demand,
    instances: int,
    storage: Decimal | None,
    egress: Decimal | None,
    migration: Decimal,
) -> Decimal | None:
    """The same demand with every hour on-demand: what the plan's savings are against."""
    if c.on_demand is None or storage is None or egress is None:
        return None
    steady = c.on_demand * HOURS_PER_MONTH * d.months * instances
    burst = d.burst_gpu_hours * d.months * c.on_demand / c.gpu_count
    return _cents(steady + burst) + storage + egress + migration


def _break_even(c: Candidate, d: Demand, cover: Cover | None) -> Decimal | None:
    """The share of the horizon the steady instances must be busy for the chosen
    commitments to cost no more than on-demand for the busy hours alone."""
    if cover is None or not cover.committed or c.on_demand is None:
        return None
    on_demand = c.on_demand * HOURS_PER_MONTH * d.months
    return (cover.cost / on_demand).quantize(Decimal("0.0001"), rounding=ROUND_HALF_EVEN)


def service_lookup(prices: Mapping[tuple[str, str, ServiceKind], Tiers]) -> ServiceLookup:
    """A lookup over tiers already converted to USD."""

    def lookup(provider: str, region: str, service: ServiceKind) -> Tiers | None:
        return prices.get((provider, region, service))

    return lookup
