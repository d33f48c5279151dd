"""Current offers (the ``offers`` listing, ``/api/v1/offers``, the Offers page,
``tracker.api``'s ``offers()``) and the GPU catalog, as the documented JSON rows."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from tracker.catalog import all_specs
from tracker.filters import ANY_OFFER, OfferFilter, Page
from tracker.fx import USD
from tracker.models import OFFER_COLUMNS, offer_dict
from tracker.store import Engine, reads
from tracker.store.series import Obtainability
from tracker.views.currency import CurrencyView
from tracker.views.errors import ReadError
from tracker.views.net import NET_OFFER_KEYS, net_fields, net_usd
from tracker.views.obtainability import (
    OBTAINABILITY_KEYS,
    obtainability_cells,
    offer_obtainability,
)

__all__ = [
    "OFFER_ROW_KEYS",
    "PER_GPU",
    "OfferPage",
    "SortKey",
    "gpu_catalog_rows",
    "offer_page",
    "offer_row",
    "offer_rows",
    "unknown_gpu_rows",
]


class SortKey(StrEnum):
    price = "price"
    price_per_gpu = "price_per_gpu"


OFFER_ROW_KEYS = (
    *(c.name for c in OFFER_COLUMNS if c.name != "attributes"),
    "price_per_gpu_hour_usd",
    "display_currency",
    "display_price_per_hour",
    "display_price_per_gpu_hour",
    *NET_OFFER_KEYS,
    "first_seen",
    "price_since",
    "last_seen",
    "source",
    *OBTAINABILITY_KEYS,
    "attributes",
)
"""The keys of :func:`offer_row`, in order (the documented JSON shape)."""

PER_GPU = Decimal("1e-6")
"""USD per GPU-hour is kept to a millionth of a dollar in every row."""


def offer_row(
    stored: reads.StoredOffer,
    view: CurrencyView | None = None,
    *,
    obtained: Obtainability | None = None,
) -> dict[str, Any]:
    """The documented JSON shape of one offer (keys are a public interface): every
    offer column, then the per-GPU price, the figures in the view currency, the times,
    its obtainability (``obtained``; None where availability was never reported), then
    ``attributes``. ``stored.offer`` carries its USD figure (converted at the rate in
    force, :class:`CurrencyView`); ``view`` None shows USD. The ``net_*`` figures and
    ``discount`` are what the account pays under ``view``'s discounts."""
    o = stored.offer
    row = offer_dict(o)
    attributes = row.pop("attributes")
    usd = o.usd
    row["price_per_gpu_hour_usd"] = (usd / o.gpu_count).quantize(PER_GPU)
    shown = usd if view is None else view.show(usd, original=o.price_per_hour, currency=o.currency)
    if shown is None:  # load_view checked the view currency has a latest rate
        raise ReadError(f"no exchange rate for {row['currency']} in {view and view.code}")
    row["display_currency"] = "USD" if view is None else view.code
    row["display_price_per_hour"] = shown
    row["display_price_per_gpu_hour"] = (shown / o.gpu_count).quantize(PER_GPU)
    row.update(net_fields(o, view))
    row["first_seen"] = stored.first_seen
    row["price_since"] = stored.price_since
    row["last_seen"] = stored.last_seen
    row["source"] = stored.source
    row.update(obtainability_cells(obtained))
    row["attributes"] = attributes
    return row


def offer_rows(
    engine: Engine,
    view: CurrencyView,
    where: OfferFilter = ANY_OFFER,
    *,
    sort: SortKey = SortKey.price,
    limit: int | None = None,
    at: datetime | None = None,
) -> list[dict[str, Any]]:
    """The ``offers`` listing as rows, cheapest first (raises DatabaseError).

    Offers are compared in USD at the latest rates (``view``'s, built by
    :func:`~tracker.views.currency.load_view` from the settings' ``fx_rates``) and shown
    in ``view``'s currency; one without a rate is left out and counted in ``view``.
    With discounts configured they are ordered by the net price the account pays.
    Obtainability is over the windows ending at ``at`` (now)."""
    # Sorted and cut before the rows are built: limit 10 of 100,000 offers builds 10.
    priced = _ranked(engine, view, where, sort)
    return _rows(engine, view, priced[:limit] if limit else priced, at)


def _rows(
    engine: Engine, view: CurrencyView, shown: list[reads.StoredOffer], at: datetime | None
) -> list[dict[str, Any]]:
    """The rows of converted offers, with their obtainability read in one statement."""
    obtained = offer_obtainability(engine, shown, at)
    return [offer_row(s, view, obtained=obtained.get(s.series_id)) for s in shown]


def _ranked(
    engine: Engine, view: CurrencyView, where: OfferFilter, sort: SortKey
) -> list[reads.StoredOffer]:
    """The matching offers converted (those without a rate counted in ``view``), in the
    ``offers`` order: by what the account pays when discounts are configured."""
    priced = []
    for s in reads.current_offers(engine, where):
        converted = view.offer(s.offer)
        if converted is not None:
            priced.append(replace(s, offer=converted))

    def order(s: reads.StoredOffer) -> tuple[Any, ...]:
        # The rows' own figures: price_per_hour_usd, or price_per_gpu_hour_usd as
        # offer_row rounds it; then provider, instance type, region, zone.
        o = s.offer
        price = net_usd(o, view) if view.discounts else o.usd
        usd = price if sort is SortKey.price else (price / o.gpu_count).quantize(PER_GPU)
        return (usd, o.provider, o.instance_type, o.region, o.zone)

    priced.sort(key=order)
    return priced


OfferPage = Page[dict[str, Any]]
"""One page of the ``offers`` listing: :func:`offer_row` rows, in the ``offers`` order."""


def offer_page(
    engine: Engine,
    view: CurrencyView,
    at: datetime,
    where: OfferFilter = ANY_OFFER,
    *,
    sort: SortKey = SortKey.price,
    offset: int = 0,
    limit: int = 50,
) -> OfferPage:
    """One page of the ``offers`` listing, ordered and cut in SQL (the Offers page over
    100,000 offers builds 50 rows); ``view`` must read its rates at ``at``, as the SQL
    that orders by USD does (raises DatabaseError). With discounts configured the SQL
    orders by the net price under the rules in force at ``at``; rules with a glob SQL
    cannot match (``[...]``) make the page cut from :func:`offer_rows`' order instead."""
    rules = view.discounts.rules
    if rules and not reads.orderable(rules):
        return _net_page(engine, view, at, where, sort=sort, offset=offset, limit=limit)
    listing = reads.offer_listing(
        engine,
        view.rates,
        at,
        where,
        per_gpu=sort is SortKey.price_per_gpu,
        offset=offset,
        limit=limit,
        net=_in_force(view, at),
    )
    shown = []
    for s in listing.items:
        converted = view.offer(s.offer)  # the exact figure; the SQL kept offers with a rate
        if converted is not None:
            shown.append(replace(s, offer=converted))
    return Page(listing.total, _rows(engine, view, shown, at), dict(listing.missing))


def _in_force(view: CurrencyView, at: datetime) -> list[reads.NetRule]:
    """The discount rules in force at ``at``, each with its fixed price in USD then."""
    found: list[reads.NetRule] = []
    for rule in view.discounts.rules:
        if not rule.in_force(at):
            continue
        fixed = None
        if rule.price_per_hour is not None:
            fixed = view.rates.to_usd(rule.price_per_hour, rule.currency or USD, at)
        found.append((rule, fixed))
    return found


def _net_page(
    engine: Engine,
    view: CurrencyView,
    at: datetime,
    where: OfferFilter,
    *,
    sort: SortKey,
    offset: int,
    limit: int,
) -> OfferPage:
    """:func:`offer_page` ordered by the net price: every matching offer read and ranked
    in Python (the SQL order is the list price's), then cut; only the page's rows built."""
    ranked = _ranked(engine, view, where, sort)
    rows = _rows(engine, view, ranked[offset : offset + limit], at)
    return Page(len(ranked), rows, dict(view.usd.missing))


def gpu_catalog_rows() -> list[dict[str, Any]]:
    """The GPU catalog's datasheet figures, one row per canonical GPU."""
    return [
        {
            "name": g.name,
            "vendor": g.vendor,
            "kind": g.kind,
            "architecture": g.architecture,
            "year": g.year,
            "vram_gib": g.vram_gib,
            "memory_bandwidth_gbs": g.memory_bandwidth_gbs,
            "bf16_tflops": g.bf16_tflops,
            "fp16_tflops": g.fp16_tflops,
            "fp8_tflops": g.fp8_tflops,
            "fp32_tflops": g.fp32_tflops,
            "nvlink": g.nvlink,
            "source": g.source,
        }
        for g in all_specs()
    ]


def unknown_gpu_rows(engine: Engine) -> list[dict[str, Any]]:
    """The stored GPU names the catalog does not recognise (raises DatabaseError)."""
    return [
        {
            "raw_name": u.raw_name,
            "provider": u.provider,
            "series": u.series,
            "example_instance_type": u.example_instance_type,
        }
        for u in reads.unknown_gpus(engine)
    ]
