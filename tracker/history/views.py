"""The history rows people read: one offer's price at each step, a GPU's cheapest offer
at each step, and one offer's raw intervals.

Each function takes parsed arguments (see :mod:`tracker.history.args`) and returns the
documented row dicts the CLI renders as a table, CSV or JSON and the web API returns as
JSON, so both show the same rows. Every function takes the configured ``fx_rates``
(required: a reader that forgot them would leave out or misprice foreign offers);
:mod:`tracker.views.history` passes the settings' own. Keys never disappear: a step
where nothing was in force (a delisted gap) has its price keys set to None; steps
before the first price are left out, so a history starts when its data does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from tracker.catalog import GpuSelection
from tracker.discounts import NET_KEYS, Discounts
from tracker.history.args import Grid, HistoryArgumentError, Window
from tracker.models import PricingModel
from tracker.store import Engine, quantize_money, reads
from tracker.store import reads as store
from tracker.store import series as fx_store

__all__ = [
    "GPU_STEP_KEYS",
    "OFFER_STEP_KEYS",
    "OfferKey",
    "find_offer",
    "gpu_steps",
    "gpu_steps_without_rate",
    "offer_intervals",
    "offer_steps",
    "per_gpu_hour",
]

OFFER_STEP_KEYS = (
    "time",
    "price_per_hour",
    "currency",
    "price_per_hour_usd",
    "provider",
    "instance_type",
    "region",
    "zone",
    "pricing",
    "payment_option",
    *NET_KEYS,
)
"""A row of one offer's resampled history (JSON keys, CSV columns); the ``net_*`` keys
and ``discount`` are what the account paid under the rule in force at each step."""

GPU_STEP_KEYS = (
    "time",
    "price_per_gpu_hour_usd",
    "provider",
    "instance_type",
    "region",
    "zone",
    "pricing",
    "payment_option",
    "gpu_model",
    "gpu_count",
    "price_per_hour",
    "currency",
    "price_per_hour_usd",
    "net_price_per_gpu_hour_usd",
    *NET_KEYS,
)
"""A row of a GPU's cheapest-offer history: the figure, then which offer it was, then
its net figures (with discounts configured the cheapest is the cheapest net)."""

GPU_HOUR = Decimal("1e-6")


def per_gpu_hour(price_usd: Decimal, gpu_count: Decimal) -> Decimal:
    """USD per GPU-hour to a millionth of a dollar, as ``offers`` shows it."""
    return (price_usd / gpu_count).quantize(GPU_HOUR)


@dataclass(frozen=True, slots=True)
class OfferKey:
    """One offer as people name it; without a zone every zone's series is meant."""

    provider: str
    instance_type: str
    region: str
    pricing: PricingModel = PricingModel.ON_DEMAND
    zone: str | None = None
    payment_option: str | None = None

    def describe(self) -> str:
        text = f"{self.provider} {self.instance_type} {self.region} {self.pricing.value}"
        return text + (f" zone {self.zone}" if self.zone else "")


def find_offer(engine: Engine, offer: OfferKey) -> list[Any]:
    """The stored series the key names (several zones or payment options when those are
    not given); none is a :class:`HistoryArgumentError`."""
    key = {
        "provider": offer.provider,
        "instance_type": offer.instance_type,
        "region": offer.region,
        "pricing": offer.pricing.value,
    }
    if offer.zone is not None:
        key["zone"] = offer.zone
    if offer.payment_option is not None:
        key["payment_option"] = offer.payment_option
    series = reads.find_series(engine, **key)
    if not series:
        raise HistoryArgumentError(f"no stored offer {offer.describe()}")
    return series


def _usd(value: Any) -> Decimal | None:
    """A USD figure read from SQL (REAL arithmetic on SQLite) at the store's money scale."""
    if value is None:
        return None
    return quantize_money(value if isinstance(value, Decimal) else Decimal(str(value)))


def offer_steps(
    engine: Engine,
    offer: OfferKey,
    grid: Grid,
    *,
    fx_rates: Mapping[str, Decimal],
    discounts: Discounts | None = None,
) -> list[dict[str, Any]]:
    """The price in force at every step of ``grid``, per matching series (zone), with its
    USD figure at the exchange rate in force at that step (None without a rate) and its
    net figures under the discount rule in force then; an offer the store does not have
    is a :class:`HistoryArgumentError`."""
    where = store.SeriesFilter(
        provider=[offer.provider],
        instance_type=offer.instance_type,
        region=[offer.region],
        pricing=[offer.pricing],
        zone=offer.zone,
        payment_option=offer.payment_option,
    )
    steps = reads.probe_offer_steps(engine, grid, where, fx_rates=fx_rates)
    if not steps:
        raise HistoryArgumentError(f"no stored offer {offer.describe()}")
    times = grid.times()
    # Steps are ordered by series then time: a series' steps before its first price
    # (before it was first observed) are left out; a gap after it (delisted) stays.
    started: set[tuple[Any, ...]] = set()
    kept = []
    for step in steps:
        series = tuple(step[1:7])
        if series in started or step.price is not None:
            started.add(series)
            kept.append(step)
    net = discounts or Discounts()
    return [
        {
            "time": times[k],
            "price_per_hour": price,
            "currency": currency,
            # a USD price is its own figure, already at the money scale
            "price_per_hour_usd": usd if usd is price else _usd(usd),
            "provider": provider,
            "instance_type": instance_type,
            "region": region,
            "zone": zone,
            "pricing": pricing,
            "payment_option": payment_option,
            **net.fields(
                (provider, pricing, instance_type, region),
                price,
                currency,
                usd if usd is price else _usd(usd),
                times[k],
            ),
        }
        for (
            k,
            provider,
            instance_type,
            region,
            zone,
            pricing,
            payment_option,
            price,
            currency,
            usd,
        ) in kept
    ]


def gpu_steps(
    engine: Engine,
    gpu: GpuSelection,
    grid: Grid,
    *,
    provider: Sequence[str] | None = None,
    region: Sequence[str] | None = None,
    pricing: Sequence[PricingModel] | None = None,
    fx_rates: Mapping[str, Decimal],
    discounts: Discounts | None = None,
) -> list[dict[str, Any]]:
    """At every step, the matching offer with the lowest USD price per GPU-hour at that
    step's exchange rates (ties go to the first by provider, instance type, region, zone,
    pricing, payment option); an offer without a rate then never counts. Read from the
    cheapest-price rollup (tracker.store.reads). With ``discounts`` it is the lowest net
    price under the rules in force at each step: see :func:`_cheapest_net`."""
    where = store.SeriesFilter(gpu=gpu, provider=provider, region=region, pricing=pricing)
    net = discounts or Discounts()
    times = grid.times()
    if net:
        found = _cheapest_net(engine, grid, where, fx_rates, net, times)
    else:
        found = {c.k: c for c in reads.cheapest_from_rollup(engine, grid, where, fx_rates=fx_rates)}
    rows: list[dict[str, Any]] = []
    first = min(found, default=len(times))
    for k, t in enumerate(times):
        if k < first:
            continue
        c = found.get(k)
        row: dict[str, Any] = dict.fromkeys(GPU_STEP_KEYS)
        row["time"] = t
        if c is not None:
            row.update(
                price_per_gpu_hour_usd=per_gpu_hour(Decimal(str(c.price_usd)), c.gpu_count),
                provider=c.provider,
                instance_type=c.instance_type,
                region=c.region,
                zone=c.zone,
                pricing=c.pricing,
                payment_option=c.payment_option,
                gpu_model=c.gpu_model,
                gpu_count=c.gpu_count,
                price_per_hour=c.price,
                currency=c.currency,
                price_per_hour_usd=_usd(c.price_usd),
            )
            row.update(_step_net(net, c, t))
        rows.append(row)
    return rows


def _step_net(net: Discounts, c: store.CheapestStep, t: datetime) -> dict[str, Any]:
    fields = net.fields(
        (c.provider, c.pricing, c.instance_type, c.region),
        c.price,
        c.currency,
        _usd(c.price_usd),
        t,
    )
    usd = fields["net_price_per_hour_usd"]
    fields["net_price_per_gpu_hour_usd"] = None if usd is None else per_gpu_hour(usd, c.gpu_count)
    return fields


def _cheapest_net(
    engine: Engine,
    grid: Grid,
    where: store.SeriesFilter,
    fx_rates: Mapping[str, Decimal],
    net: Discounts,
    times: Sequence[datetime],
) -> dict[int, store.CheapestStep]:
    """Per step, the candidate with the lowest net USD per GPU-hour. A rule covers whole
    (provider, pricing, region[, instance type]) groups, and within one group a
    percentage keeps the list order (a fixed price, always ranked per instance type,
    makes them equal), so each group's
    cheapest list offer is its cheapest net one: the store ranks within groups, this
    ranks the groups' net figures (ties by offer identity, as the list ranking)."""
    per = ["provider", "pricing", "region"]
    if any(r.instance_types or r.price_per_hour is not None for r in net.rules):
        per.append("instance_type")
    best: dict[int, tuple[tuple[Any, ...], store.CheapestStep]] = {}
    for c in reads.cheapest_from_rollup(engine, grid, where, per=per, fx_rates=fx_rates):
        usd = net.net(
            (c.provider, c.pricing, c.instance_type, c.region),
            c.price,
            c.currency,
            _usd(c.price_usd),
            times[c.k],
        ).price_per_hour_usd
        if usd is None:
            continue
        rank = (per_gpu_hour(usd, c.gpu_count), *c[2:8])
        held = best.get(c.k)
        if held is None or rank < held[0]:
            best[c.k] = (rank, c)
    return {k: c for k, (_, c) in best.items()}


def gpu_steps_without_rate(
    engine: Engine,
    gpu: GpuSelection,
    grid: Grid,
    *,
    provider: Sequence[str] | None = None,
    region: Sequence[str] | None = None,
    pricing: Sequence[PricingModel] | None = None,
    fx_rates: Mapping[str, Decimal],
) -> dict[str, int]:
    """The offers :func:`gpu_steps` (same arguments) left out at some step for want of
    an exchange rate then, by currency (each offer once): the count its reader reports."""
    where = store.SeriesFilter(gpu=gpu, provider=provider, region=region, pricing=pricing)
    return reads.without_rate_at(engine, grid, where, fx_rates=fx_rates)


def offer_intervals(
    engine: Engine,
    offer: OfferKey,
    *,
    at: datetime | None = None,
    window: Window | None = None,
    fx_rates: Mapping[str, Decimal],
    discounts: Discounts | None = None,
) -> list[dict[str, Any]]:
    """The stored intervals of an offer: all, those in force during ``window``, or the
    one in force at ``at``; each with its USD figure at the exchange rate in force when
    it began (at ``at`` when given; None without a rate, never 1.0), and its net figures
    under the discount rule in force at that same moment (a rule that starts inside an
    interval shows in a resampled history, never by splitting the stored interval)."""
    rates = fx_store.load_rates(engine, fx_rates)
    net = discounts or Discounts()
    key = (offer.provider, offer.pricing.value, offer.instance_type, offer.region)
    rows = []
    for s in find_offer(engine, offer):
        if at is not None:
            point = reads.price_at(engine, s.id, at)
            points = [point] if point is not None else []
        else:
            points = reads.price_history(engine, s.id)
        for p in points:
            if window is not None and (
                p.first_seen > window.until
                or (p.ended_at is not None and p.ended_at <= window.since)
            ):
                continue
            moment = at or p.first_seen
            usd = rates.to_usd(p.price, p.currency, moment)
            rows.append(
                {
                    "zone": s.zone,
                    "payment_option": s.payment_option,
                    "offering_class": s.offering_class,
                    "price_per_hour": p.price,
                    "currency": p.currency,
                    "price_per_hour_usd": usd,
                    "first_seen": p.first_seen,
                    "last_seen": p.last_seen,
                    "ended_at": p.ended_at,
                    **net.fields(key, p.price, p.currency, usd, moment),
                }
            )
    return rows
