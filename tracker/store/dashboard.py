"""The dashboard's reads: one page of current offers, and the cheapest offer per GPU.

Both must answer in well under 300 ms over 100,000 offers, so the database sorts,
counts, pages and picks the winners; Python sees one page or one row per GPU model
and price group, never the whole listing. They share :func:`queries.current_offers_select`
with ``offers`` (same joins, same filters), so the pages list what the CLI lists.
Decimal columns are text on SQLite: ordering and numeric filters compare them as
floats (a tie at the 10th decimal place orders by the offer's identity instead).

Prices are stored in their own currency: both reads rank by the USD figure at the rate
in force at ``at`` (:func:`tracker.store.fx.usd_sql`, the stored ECB steps then the
manual ``fx_rates``). An offer without a rate is left out, never taken at 1.0;
:func:`without_rate` counts them so the page can say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Engine, Float, Numeric, and_, case, cast, func, select
from sqlalchemy.dialects.postgresql import array

from tracker.catalog import GpuSelection
from tracker.fx import Rates
from tracker.models import PricingModel
from tracker.store.errors import database_errors
from tracker.store.fx import usd_sql
from tracker.store.queries import StoredOffer, _stored, current_offers_select
from tracker.store.schema import PricePoint, Series

__all__ = ["CheapestRow", "cheapest_per_gpu", "offer_page", "without_rate"]

Bind = Engine | Connection

_GROUPS = {
    PricingModel.ON_DEMAND.value: "on_demand",
    PricingModel.SPOT.value: "spot",
    PricingModel.RESERVED_1Y.value: "reserved",
    PricingModel.RESERVED_3Y.value: "reserved",
}


def _execute(bind: Bind, stmt: Any, what: str) -> Sequence[Any]:
    with database_errors(what):
        if isinstance(bind, Engine):
            with bind.connect() as conn:
                return conn.execute(stmt).all()
        return bind.execute(stmt).all()


def _usd(rates: Rates, at: datetime) -> Any:
    """The open price's USD figure at the rate in force at ``at`` (NULL without one):
    ``rates`` gives the manual ``fx_rates``, the ECB steps are read in the statement."""
    return usd_sql(PricePoint.price, PricePoint.currency, at, rates.manual)


def _per_gpu(usd: Any) -> Any:
    return cast(usd, Float) / cast(Series.gpu_count, Float)


def _hardware(stmt: Any, min_vram: float | None, min_gpus: float | None) -> Any:
    count = cast(Series.gpu_count, Float)
    if min_vram is not None:
        share = case((count < 1, count), else_=1.0)  # a GPU slice has its share of VRAM
        stmt = stmt.where(cast(Series.gpu_memory_gib, Float) * share >= min_vram)
    if min_gpus is not None:
        stmt = stmt.where(count >= min_gpus)
    return stmt


def without_rate(
    bind: Bind,
    rates: Rates,
    at: datetime,
    *,
    gpu: GpuSelection | None = None,
    provider: Sequence[str] | None = None,
    region: Sequence[str] | None = None,
    pricing: Sequence[PricingModel] | None = None,
    min_vram: float | None = None,
    min_gpus: float | None = None,
) -> dict[str, int]:
    """Matching current offers left out of the USD pages, by currency: no rate at ``at``."""
    stmt = _hardware(
        current_offers_select(gpu=gpu, provider=provider, region=region, pricing=pricing),
        min_vram,
        min_gpus,
    ).where(_usd(rates, at).is_(None))
    stmt = stmt.with_only_columns(
        PricePoint.currency, func.count(), maintain_column_froms=True
    ).group_by(PricePoint.currency)
    rows = _execute(bind, stmt, "cannot count the offers without an exchange rate")
    return {str(currency): int(n) for currency, n in rows}


def offer_page(
    bind: Bind,
    rates: Rates,
    at: datetime,
    *,
    gpu: GpuSelection | None = None,
    provider: Sequence[str] | None = None,
    region: Sequence[str] | None = None,
    pricing: Sequence[PricingModel] | None = None,
    min_vram: float | None = None,
    min_gpus: float | None = None,
    per_gpu: bool = False,
    offset: int = 0,
    limit: int = 50,
) -> tuple[int, list[StoredOffer]]:
    """(how many offers with a USD figure at ``at`` match, the ``limit`` of them from
    ``offset``) in the CLI's order: $/hour (or $/GPU-hour), then provider, instance
    type, region, zone. The offers carry their own currency's price; the caller converts
    them for display (exactly, with :class:`tracker.fx.Rates`)."""
    usd = _usd(rates, at)
    stmt = current_offers_select(gpu=gpu, provider=provider, region=region, pricing=pricing)
    stmt = _hardware(stmt, min_vram, min_gpus).where(usd.is_not(None))
    total = _execute(
        bind, select(func.count()).select_from(stmt.subquery()), "cannot count the offers"
    )[0][0]
    price = _per_gpu(usd) if per_gpu else cast(usd, Float)
    stmt = stmt.order_by(
        price, Series.provider, Series.instance_type, Series.region, Series.zone, Series.id
    )
    rows = _execute(bind, stmt.offset(offset).limit(limit), "cannot read the current offers")
    return int(total), [_stored(row) for row in rows]


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


def cheapest_per_gpu(
    bind: Bind,
    rates: Rates,
    at: datetime,
    *,
    gpu: GpuSelection | None = None,
    provider: Sequence[str] | None = None,
    region: Sequence[str] | None = None,
    pricing: Sequence[PricingModel] | None = None,
) -> list[CheapestRow]:
    """Per GPU model and price group, the offer with the lowest $/GPU-hour at the rates
    in force at ``at`` (ties: the series stored first), in one aggregate over the current
    offers that have a USD figure plus one lookup of the winners by id.

    The aggregate carries its winner along instead of sorting or joining back (sorting
    100,000 rows by text keys under a locale collation, or scanning them twice, costs
    more than the rest of the page): on Postgres ``min(ARRAY[per_gpu, id])`` (arrays
    compare element by element, numerics exactly), on SQLite a bare ``id`` beside
    ``min()``, which SQLite documents to come from the row holding the minimum.
    """
    group = case(*((Series.pricing == value, label) for value, label in _GROUPS.items()), else_="")
    postgres = bind.dialect.name == "postgresql"
    usd = _usd(rates, at)
    if postgres:
        exact = usd / Series.gpu_count
        winner: Any = func.min(array([exact, cast(Series.id, Numeric)]))
        columns = [winner]
    else:
        columns = [func.min(_per_gpu(usd)), Series.id]
    stmt = (
        current_offers_select(gpu=gpu, provider=provider, region=region, pricing=pricing)
        .with_only_columns(
            Series.gpu_model,
            group.label("grp"),
            func.count(),
            *columns,
            maintain_column_froms=False,
        )
        .where(Series.pricing.in_(list(_GROUPS)), usd.is_not(None))
        .group_by(Series.gpu_model, group)
    )
    groups = _execute(bind, stmt, "cannot read the cheapest offers")
    winners = {int(row[3][1]) if postgres else int(row[4]): (row[0], row[1]) for row in groups}
    per_model: dict[str, int] = {}
    for row in groups:
        per_model[row[0]] = per_model.get(row[0], 0) + int(row[2])
    details = _execute(
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
    for sid, provider_, instance_type, region_, zone, pricing_, price, currency, gpus in details:
        # The exact figure (SQLite ranks in REAL arithmetic); same rate, same answer.
        exact_usd = rates.to_usd(price, currency, at)
        if exact_usd is None:  # the statement kept only offers with a rate at ``at``
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
            )
        )
    return sorted(result, key=lambda r: (r.gpu_model, r.group))
