"""The dashboard's reads: one page of current offers, and the cheapest offer per GPU.

Both must answer in well under 300 ms over 100,000 offers, so the database sorts,
counts, pages and picks the winners; Python sees one page or one row per GPU model,
pricing model and currency, never the whole listing. They share
:func:`queries.current_offers_select` with ``offers`` (same joins, same filters), so the
pages list what the CLI lists. Decimal columns are text on SQLite: ordering and numeric
filters compare them as floats (a tie at the 10th decimal place orders by the offer's
identity instead).

Prices are stored in their own currency and ranked by the USD figure at the rate in
force at ``at`` (the stored ECB steps, then the manual ``fx_rates``: the same rule as
:func:`tracker.store.series.usd_sql`). The rate is looked up once per currency, not per
row: the cheapest offers are picked per currency in SQL and compared in USD here; the
page of offers orders by ``price × rate`` with the rates of the currencies found as
literals (found by the count that also says which offers have no rate). An offer
without a rate is left out, never taken at 1.0, and counted by currency (``missing``).
On Postgres the reads run without JIT compilation: it costs more than the reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Float, Numeric, and_, case, cast, func, select
from sqlalchemy.dialects.postgresql import array

from tracker.filters import ANY_OFFER, OfferFilter, Page
from tracker.fx import Rates
from tracker.models import PricingModel
from tracker.store import series as availability
from tracker.store.reads._net_order import NetRule, net_usd_order
from tracker.store.reads._offers import (
    StoredOffer,
    current_offers_select,
    identity_clauses,
    readable_offers,
)
from tracker.store.schema import PricePoint, Series
from tracker.store.series import usd_rate_case
from tracker.store.sql import Bind, execute

__all__ = [
    "Cheapest",
    "CheapestRow",
    "SpanningLow",
    "cheapest",
    "cheapest_per_gpu",
    "currency_counts",
    "offer_listing",
    "without_rate",
]


_GROUPS = {
    PricingModel.ON_DEMAND.value: "on_demand",
    PricingModel.SPOT.value: "spot",
    PricingModel.RESERVED_1Y.value: "reserved",
    PricingModel.RESERVED_3Y.value: "reserved",
}


def _rates_of(rates: Rates, at: datetime, currencies: Sequence[str]) -> dict[str, Decimal]:
    """USD per unit at ``at`` of each of ``currencies`` that has a rate then."""
    found = {c: rates.usd_per_unit(c, at) for c in currencies}
    return {c: r for c, r in found.items() if r is not None}


def _hardware(stmt: Any, where: OfferFilter) -> Any:
    """``where``'s hardware minimums as clauses (Decimal columns are text on SQLite: the
    comparison is made on floats, as a person's ``--min-vram 79.5`` means)."""
    count = cast(Series.gpu_count, Float)
    if where.min_vram is not None:
        share = case((count < 1, count), else_=1.0)  # a GPU slice has its share of VRAM
        stmt = stmt.where(cast(Series.gpu_memory_gib, Float) * share >= float(where.min_vram))
    if where.min_gpus is not None:
        stmt = stmt.where(count >= float(where.min_gpus))
    return stmt


def _matching(where: OfferFilter) -> Any:
    """The current offers ``where`` selects, every column :func:`stored_offer` reads."""
    return _hardware(current_offers_select(where), where)


def _aggregate(where: OfferFilter, *columns: Any) -> Any:
    """``columns`` over the same current offers as :func:`_matching`, without the join
    to the availability intervals unless ``where.available`` needs it (an aggregate does
    not read them, and the join costs a third of the scan)."""
    stmt = (
        select(*columns)
        .select_from(Series)
        .join(PricePoint, and_(PricePoint.series_id == Series.id, PricePoint.ended_at.is_(None)))
        .where(Series.delisted_at.is_(None), *identity_clauses(where))
    )
    if where.available:
        stmt = availability.join_current(stmt).where(availability.rentable())
    return _hardware(stmt, where)


def currency_counts(bind: Bind, where: OfferFilter = ANY_OFFER) -> dict[str, int]:
    """Matching current offers by currency (one aggregate; no rate needed).

    Unfiltered, the open intervals alone are counted: each belongs to a listed series
    (delisting closes it in the same transaction), and skipping the join with 100,000
    series halves the cost of the Offers page's first view."""
    if where == ANY_OFFER:
        stmt: Any = select(PricePoint.currency, func.count()).where(PricePoint.ended_at.is_(None))
    else:
        stmt = _aggregate(where, PricePoint.currency, func.count())
    stmt = stmt.group_by(PricePoint.currency)
    rows = execute(bind, stmt, "cannot count the current offers")
    return {str(currency): int(n) for currency, n in rows}


def without_rate(
    bind: Bind, rates: Rates, at: datetime, where: OfferFilter = ANY_OFFER
) -> dict[str, int]:
    """Matching current offers left out of the USD pages, by currency: no rate at ``at``."""
    counts = currency_counts(bind, where)
    priced = _rates_of(rates, at, list(counts))
    return {c: n for c, n in counts.items() if c not in priced}


def offer_listing(
    bind: Bind,
    rates: Rates,
    at: datetime,
    where: OfferFilter = ANY_OFFER,
    *,
    per_gpu: bool = False,
    offset: int = 0,
    limit: int = 50,
    net: Sequence[NetRule] = (),
) -> Page[StoredOffer]:
    """How many offers with a USD figure at ``at`` match, the ``limit`` of them from
    ``offset`` in the CLI's order ($/hour or $/GPU-hour, then provider, instance type,
    region, zone), and the ones left out for want of a rate. Two statements: the count
    per currency, then the page ordered by ``price × rate`` (rates as literals). The
    offers carry their own currency's price; the caller converts them for display
    (exactly, with :class:`tracker.fx.Rates`). ``net``: the discount rules in force at
    ``at``, so the page is ordered by the net price (tracker.store.reads._net_order)."""
    counts = currency_counts(bind, where)
    priced = _rates_of(rates, at, list(counts))
    missing = {c: n for c, n in counts.items() if c not in priced}
    total = sum(n for c, n in counts.items() if c in priced)
    if not priced or offset >= total:
        return Page(total, [], missing)
    price: Any
    if len(priced) == 1 and not per_gpu and not net and bind.dialect.name == "postgresql":
        # One currency: its price order is the USD order (one positive rate), and the
        # open-price index (0008) hands over the first page without sorting them all.
        price = PricePoint.price
    else:
        rate = usd_rate_case(PricePoint.currency, priced)
        usd = net_usd_order(
            cast(cast(PricePoint.price, Numeric()) * rate, Float), net, bind.dialect.name
        )
        price = usd / cast(Series.gpu_count, Float) if per_gpu else usd
    stmt = (
        _matching(where)
        .where(PricePoint.currency.in_(list(priced)))
        .order_by(
            price, Series.provider, Series.instance_type, Series.region, Series.zone, Series.id
        )
        .offset(offset)
        .limit(limit)
    )
    rows = execute(bind, stmt, "cannot read the current offers")
    return Page(total, readable_offers(rows), missing)


@dataclass(frozen=True, slots=True)
class CheapestRow:
    gpu_model: str
    group: str
    """on_demand, spot or reserved (1- and 3-year terms together)."""
    offers: int
    """Offers of this GPU model in every group (after the filters)."""
    provider: str
    instance_type: str
    region: str
    zone: str
    pricing: str
    price_per_hour_usd: Decimal
    gpu_count: Decimal
    fabric: str = "unknown"
    """The inter-node network the offer states (the GPU page shows it)."""
    network_gbps: Decimal | None = None


SpanningLow = tuple[str, str, Decimal]
"""(GPU model, currency, lowest price per GPU-hour in that currency)."""


@dataclass(frozen=True, slots=True)
class Cheapest:
    rows: list[CheapestRow]
    """By GPU model, then group."""
    missing: dict[str, int] = field(default_factory=dict)
    """Matching offers without a rate at ``at``, by currency (left out)."""
    spanning: list[SpanningLow] = field(default_factory=list)
    """With ``since``: the lowest open prices started by then, of the ``since_pricing``
    offers (what :func:`tracker.store.reads.cheapest_trend` calls spanning)."""


def cheapest(
    bind: Bind,
    rates: Rates,
    at: datetime,
    where: OfferFilter = ANY_OFFER,
    *,
    since: datetime | None = None,
    since_pricing: Sequence[PricingModel] = (),
) -> Cheapest:
    """Per GPU model and price group, the offer with the lowest $/GPU-hour at the rates
    in force at ``at`` (ties: the series stored first), and the offers left out for want
    of a rate; one aggregate over the current offers plus one lookup of the winners.

    With ``since``, the same scan also gives the Overview's trend its *spanning* lows
    (an aggregate ``FILTER`` on Postgres; a second statement on SQLite, whose bare
    ``id`` needs ``min()`` to be the only aggregate): ``since_pricing`` must select a
    subset of what ``where.pricing`` does (its hardware minimums apply too). Every open interval belongs to a listed series
    (delisting closes it), so these are the open intervals the trend would read.

    The aggregate groups by GPU model, pricing model, currency and GPU count and carries
    each group's winner along instead of sorting or joining back: on Postgres
    ``min(ARRAY[price, id])`` (arrays compare element by element, numerics exactly), on
    SQLite a bare ``id`` beside ``min()``, which SQLite documents to come from the row
    holding the minimum. Within a group the lowest price is the lowest USD figure per
    GPU (one GPU count, one positive rate), so no row is divided or converted in SQL;
    the few group winners are compared here, per GPU-hour in USD.
    """
    postgres = bind.dialect.name == "postgresql"
    started = PricePoint.first_seen <= since if since is not None else None
    if postgres:
        columns: list[Any] = [func.min(array([PricePoint.price, cast(Series.id, Numeric)]))]
        if started is not None:
            columns.append(func.min(PricePoint.price).filter(started))
    else:
        columns = [func.min(cast(PricePoint.price, Float)), Series.id]
    stmt = (
        _aggregate(
            where,
            Series.gpu_model,
            Series.pricing,
            PricePoint.currency,
            Series.gpu_count,
            func.count(),
            *columns,
        )
        .where(Series.pricing.in_(list(_GROUPS)))
        .group_by(Series.gpu_model, Series.pricing, PricePoint.currency, Series.gpu_count)
    )
    groups = execute(bind, stmt, "cannot read the cheapest offers")
    spanning: list[SpanningLow] = []
    if since is not None:
        wanted = {PricingModel(p).value for p in since_pricing}
        if postgres:
            spanning = [
                (str(r[0]), str(r[2]), Decimal(r[6]) / Decimal(r[3]))
                for r in groups
                if r[6] is not None and r[1] in wanted
            ]
        else:
            spanning = _spanning_sqlite(bind, stmt, started, wanted)
    priced = _rates_of(rates, at, sorted({str(row[2]) for row in groups}))
    missing: dict[str, int] = {}
    per_model: dict[str, int] = {}
    best: dict[tuple[str, str], tuple[Decimal, int]] = {}
    for row in groups:
        model, pricing_, currency, n = str(row[0]), str(row[1]), str(row[2]), int(row[4])
        if currency not in priced:
            missing[currency] = missing.get(currency, 0) + n
            continue
        per_model[model] = per_model.get(model, 0) + n
        low, sid = (row[5][0], int(row[5][1])) if postgres else (row[5], int(row[6]))
        key = (Decimal(str(low)) / Decimal(row[3]) * priced[currency], sid)
        slot = (model, _GROUPS[pricing_])
        if slot not in best or key < best[slot]:
            best[slot] = key
    winners = {sid: slot for slot, (_, sid) in best.items()}
    return Cheapest(_details(bind, rates, at, winners, per_model), missing, spanning)


def _spanning_sqlite(bind: Bind, stmt: Any, started: Any, wanted: set[str]) -> list[SpanningLow]:
    per = cast(PricePoint.price, Float) / cast(Series.gpu_count, Float)
    lows = (
        stmt.with_only_columns(
            Series.gpu_model, PricePoint.currency, func.min(per), maintain_column_froms=False
        )
        .where(started, Series.pricing.in_(sorted(wanted)))
        .group_by(None)
        .group_by(Series.gpu_model, PricePoint.currency)
    )
    rows = execute(bind, lows, "cannot read the cheapest offers")
    return [(str(m), str(c), Decimal(str(v))) for m, c, v in rows]


def _details(
    bind: Bind,
    rates: Rates,
    at: datetime,
    winners: dict[int, tuple[str, str]],
    per_model: dict[str, int],
) -> list[CheapestRow]:
    """The winners' offers, with their exact USD price per hour."""
    if not winners:
        return []
    details = execute(
        bind,
        select(
            Series.id,
            Series.provider,
            Series.instance_type,
            Series.region,
            Series.zone,
            Series.pricing,
            PricePoint.price,
            PricePoint.currency,
            Series.gpu_count,
            Series.fabric,
            Series.network_gbps,
        )
        .join_from(
            Series,
            PricePoint,
            and_(PricePoint.series_id == Series.id, PricePoint.ended_at.is_(None)),
        )
        .where(Series.id.in_(list(winners))),
        "cannot read the cheapest offers",
    )
    result = []
    for row in details:
        sid, provider_, instance_type, region_, zone, pricing_, price, currency, gpus = row[:9]
        fabric, gbps = row[9], row[10]
        exact_usd = rates.to_usd(price, currency, at)
        if exact_usd is None:  # the aggregate kept only currencies with a rate at ``at``
            raise ValueError(f"no USD rate for {currency} at {at}")
        model, grp = winners[sid]
        result.append(
            CheapestRow(
                model,
                grp,
                per_model[model],
                provider_,
                instance_type,
                region_,
                zone,
                pricing_,
                exact_usd,
                gpus,
                fabric,
                None if gbps is None else Decimal(str(gbps)),
            )
        )
    return sorted(result, key=lambda r: (r.gpu_model, r.group))


def cheapest_per_gpu(
    bind: Bind,
    rates: Rates,
    at: datetime,
    where: OfferFilter = ANY_OFFER,
) -> list[CheapestRow]:
    """The rows of :func:`cheapest` (per GPU model and group, its winner)."""
    return cheapest(bind, rates, at, where).rows
