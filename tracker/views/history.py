"""Histories and compare: one offer's intervals or steps, a GPU's cheapest offer per
step, and the compare table (``history``, ``compare``, ``/api/v1/history``,
``/api/v1/compare``, the GPU and Compare pages, ``tracker.api``).

:func:`read_history` is the one dispatch from the options people give to the view they
mean, shared by every face: ``gpu`` → the cheapest offer per step; one ``provider``,
``instance_type`` and ``region`` → that offer's intervals (``at``: the one in force
then), or its price at each step with ``resample``. A resampled history ends at its
window's end (now by default), so its last row is the price in force then, and starts
at the first step with data. Argument errors raise
:class:`~tracker.history.args.HistoryArgumentError` (one line naming the option as the
face spells it: ``flag``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from tracker.catalog import GpuSelection
from tracker.discounts import Discounts
from tracker.fx import USD, Rates
from tracker.history import args as history_args
from tracker.history import views
from tracker.history.args import HistoryArgumentError
from tracker.history.compare import compare_rows, compare_without_rate
from tracker.models import PricingModel
from tracker.settings import Settings
from tracker.store import Engine, reads
from tracker.store.reads import SeriesFilter, first_observed, stored_gpu_names
from tracker.views.currency import CurrencyView
from tracker.views.currency import load_rates as reads_rates
from tracker.views.errors import ReadError
from tracker.views.obtainability import with_group_obtainability

__all__ = [
    "DEFAULT_STEP",
    "Compared",
    "HistoryQuery",
    "HistoryResult",
    "SeriesHistory",
    "cli_flag",
    "compare",
    "first_stored",
    "gpu_selection",
    "instance_history",
    "model_history",
    "offer_key",
    "read_history",
    "viewed_rows",
]

DEFAULT_STEP = "1d"

Kind = Literal["gpu_steps", "offer_steps", "offer_intervals"]


def cli_flag(name: str) -> str:
    """``instance_type`` as the CLI spells it: ``--instance-type``."""
    return "--" + name.replace("_", "-")


def _plain(name: str) -> str:
    return name


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    """A history read as people ask for it (the CLI's options, the API's parameters)."""

    gpu: Sequence[str] | None = None
    provider: Sequence[str] | None = None
    instance_type: str | None = None
    region: Sequence[str] | None = None
    pricing: PricingModel = PricingModel.ON_DEMAND
    zone: str | None = None
    payment_option: str | None = None
    since: str | None = None
    until: str | None = None
    resample: str | None = None
    at: datetime | None = None


@dataclass(slots=True)
class HistoryResult:
    kind: Kind
    rows: list[dict[str, Any]]
    title: str
    """What the rows are: ``cheapest H100 on_demand`` or the offer's description."""
    data_since: datetime | None = None
    """The first stored observation of what was asked for (None: nothing stored)."""
    without_rate: dict[str, int] = field(default_factory=dict)
    """Offers left out at some step for want of an exchange rate, by currency."""
    offer: views.OfferKey | None = None
    window_since: datetime | None = None
    """Where the window read starts (None: every stored interval)."""

    @property
    def starts_late(self) -> bool:
        """The data begins after the window does (its first steps were left out)."""
        return (
            self.data_since is not None
            and self.window_since is not None
            and self.data_since > self.window_since
        )


def gpu_selection(engine: Engine, names: Sequence[str]) -> GpuSelection:
    """GPU names as a selection; an unknown name is a HistoryArgumentError."""
    return history_args.require_gpus(names, lambda wanted: stored_gpu_names(engine, wanted))


def _grid(
    window: history_args.Window | None, resample: str | None, now: datetime
) -> history_args.Grid:
    """The steps of a resampled view: ``resample`` (default 1d) over the window (default:
    the 30 days before now), ending at the window's end."""
    rule = resample or DEFAULT_STEP
    span = window or history_args.parse_window(None, None, now=now)
    grid = history_args.make_grid(span, history_args.parse_step(rule), rule)
    return history_args.ending_at(grid, span.until)


def read_history(
    engine: Engine,
    settings: Settings,
    q: HistoryQuery,
    *,
    now: datetime | None = None,
    steps: bool = False,
    flag: Callable[[str], str] = _plain,
) -> HistoryResult:
    """The rows ``q`` asks for (``steps``: resampled even without ``resample``, as a plot
    needs). Raises HistoryArgumentError (one line) and DatabaseError."""
    now = now or datetime.now(UTC).replace(microsecond=0)
    fx_rates = settings.fx_rates
    net = _discounts(engine, settings)
    window = history_args.parse_window(q.since, q.until, now=now) if q.since or q.until else None
    if q.gpu:
        if q.instance_type or q.at or q.zone is not None or q.payment_option is not None:
            named = ", ".join(flag(n) for n in ("instance_type", "zone", "payment_option"))
            raise HistoryArgumentError(
                f"{flag('gpu')} reads many offers: drop {named} and {flag('at')}"
            )
        found = _gpu_history(engine, q, _grid(window, q.resample, now), fx_rates, net)
        found.window_since = _start(window, now)
        return found
    offer = offer_key(q, flag)
    if q.at is not None:
        if q.resample or window or steps:
            plot = f"/{flag('plot')}" if steps else ""
            raise HistoryArgumentError(
                f"{flag('at')} reads one time: drop {flag('since')}/{flag('until')}/"
                f"{flag('resample')}{plot}"
            )
        at = q.at.replace(tzinfo=UTC) if q.at.tzinfo is None else q.at
        rows = views.offer_intervals(engine, offer, at=at, fx_rates=fx_rates, discounts=net)
        since = first_observed(engine, _offer_filter(offer))
        return HistoryResult("offer_intervals", rows, offer.describe(), since, offer=offer)
    where = _offer_filter(offer)
    if q.resample is None and not steps:
        rows = views.offer_intervals(engine, offer, window=window, fx_rates=fx_rates, discounts=net)
        since = first_observed(engine, where)
        return HistoryResult(
            "offer_intervals",
            rows,
            offer.describe(),
            since,
            offer=offer,
            window_since=window.since if window else None,
        )
    grid = _grid(window, q.resample, now)
    rows = views.offer_steps(engine, offer, grid, fx_rates=fx_rates, discounts=net)
    since = first_observed(engine, where)
    return HistoryResult(
        "offer_steps", rows, offer.describe(), since, offer=offer, window_since=_start(window, now)
    )


def _discounts(engine: Engine, settings: Settings) -> Discounts | None:
    """The settings' discount rules with the stored rates (None: no rules, no read)."""
    if not settings.discounts:
        return None
    rates = reads_rates(engine, settings)
    return Discounts(tuple(settings.discounts), rates)


def first_stored(engine: Engine, q: HistoryQuery) -> datetime | None:
    """When the store first observed what ``q`` asks about (None: nothing stored):
    the GPU's matching offers, or the one offer. Raises HistoryArgumentError as
    :func:`read_history` does for a query naming neither."""
    if q.gpu:
        return first_observed(
            engine,
            SeriesFilter(
                gpu=gpu_selection(engine, list(q.gpu)),
                provider=list(q.provider) if q.provider else None,
                region=list(q.region) if q.region else None,
                pricing=[q.pricing],
            ),
        )
    return first_observed(engine, _offer_filter(offer_key(q)))


def _start(window: history_args.Window | None, now: datetime) -> datetime:
    return (window or history_args.parse_window(None, None, now=now)).since


def _gpu_history(
    engine: Engine,
    q: HistoryQuery,
    grid: history_args.Grid,
    fx_rates: Any,
    net: Discounts | None = None,
) -> HistoryResult:
    selection = gpu_selection(engine, list(q.gpu or ()))
    where: dict[str, Any] = {
        "provider": list(q.provider) if q.provider else None,
        "region": list(q.region) if q.region else None,
        "pricing": [q.pricing],
        "fx_rates": fx_rates,
    }
    rows = views.gpu_steps(engine, selection, grid, **where, discounts=net)
    missing = views.gpu_steps_without_rate(engine, selection, grid, **where)
    since = first_observed(
        engine,
        SeriesFilter(
            gpu=selection, provider=where["provider"], region=where["region"], pricing=[q.pricing]
        ),
    )
    title = f"cheapest {'/'.join(q.gpu or ())} {q.pricing.value}"
    return HistoryResult("gpu_steps", rows, title, since, dict(missing))


def model_history(
    engine: Engine,
    settings: Settings,
    model: str,
    pricing: PricingModel,
    *,
    days: int,
    now: datetime,
) -> list[dict[str, Any]]:
    """One catalog model's cheapest $/GPU-hour across providers at each of the last
    ``days`` midnights and at ``now`` (``history --gpu MODEL --since {days}d``, the GPU
    page's chart), at the stored rates and ``settings.fx_rates``: list prices, as the
    page's "Cheapest now" table beside it (the discounts show on the Offers page)."""
    window = history_args.Window(now - timedelta(days=days), now)
    grid = history_args.ending_at(history_args.make_grid(window, timedelta(days=1), "1d"), now)
    selection = GpuSelection(models=(model,), names=())
    return views.gpu_steps(engine, selection, grid, pricing=[pricing], fx_rates=settings.fx_rates)


@dataclass(frozen=True, slots=True)
class SeriesHistory:
    """One stored series of an instance type and its intervals, each with its USD
    figure at the rate in force when it began (None without a rate then)."""

    series: Any
    intervals: list[tuple[Any, Decimal | None]]


def instance_history(
    engine: Engine, rates: Rates, provider: str, instance_type: str, region: str
) -> list[SeriesHistory]:
    """Every series of one instance type in one region (on-demand, spot per zone,
    reserved) with its raw intervals: the offer page. ReadError when none is stored."""
    found = reads.find_series(engine, provider=provider, instance_type=instance_type, region=region)
    if not found:
        raise ReadError(f"no stored offer {provider} {instance_type} {region}")
    out = []
    for s in found:
        points = reads.price_history(engine, s.id)
        usd = [rates.to_usd(p.price, p.currency, p.first_seen) for p in points]
        out.append(SeriesHistory(s, list(zip(points, usd, strict=True))))
    return out


def offer_key(q: HistoryQuery, flag: Callable[[str], str] = _plain) -> views.OfferKey:
    """The one offer ``q`` names; HistoryArgumentError when it names none."""
    providers, regions = list(q.provider or ()), list(q.region or ())
    if not q.instance_type or len(providers) != 1 or len(regions) != 1:
        raise HistoryArgumentError(
            f"history needs {flag('gpu')} G, or one {flag('provider')}, {flag('instance_type')} "
            f"and one {flag('region')} for one offer"
        )
    return views.OfferKey(
        providers[0], q.instance_type, regions[0], q.pricing, q.zone, q.payment_option
    )


def _offer_filter(offer: views.OfferKey) -> SeriesFilter:
    return SeriesFilter(
        provider=[offer.provider],
        instance_type=offer.instance_type,
        region=[offer.region],
        pricing=[offer.pricing],
        zone=offer.zone,
        payment_option=offer.payment_option,
    )


@dataclass(frozen=True, slots=True)
class Compared:
    rows: list[dict[str, Any]]
    without_rate: dict[str, int]


def compare(
    engine: Engine,
    settings: Settings,
    *,
    gpu: Sequence[str] | None = None,
    provider: Sequence[str] | None = None,
    now: datetime | None = None,
    view: CurrencyView | None = None,
) -> Compared:
    """Per GPU model × provider the cheapest on-demand, spot and reserved $/GPU-hour now,
    the spot discount and the 7- and 30-day change of on-demand, in USD at the stored
    rates and ``settings.fx_rates``; a ``view`` in another currency adds the ``display_*``
    figures (raises HistoryArgumentError, DatabaseError)."""
    at = now or datetime.now(UTC).replace(microsecond=0)
    where: dict[str, Any] = {
        "now": at,
        "gpu": gpu_selection(engine, gpu) if gpu else None,
        "provider": list(provider) if provider else None,
        "fx_rates": settings.fx_rates,
    }
    shown = view is not None and view.code != USD
    rows = compare_rows(
        engine,
        **where,
        show=_shown_at(view, at) if view is not None and shown else None,
        currency=view.code if view is not None else USD,
        discounts=_discounts(engine, settings),
    )
    selection = where["gpu"]
    models = None if selection is None or selection.names else list(selection.models)
    rows = with_group_obtainability(engine, rows, at, models)
    return Compared(rows, dict(compare_without_rate(engine, **where)))


def _shown_at(view: CurrencyView, at: datetime) -> Any:
    return lambda usd, own, code: view.show(usd, original=own, currency=code, at=at)


def viewed_rows(
    result: HistoryResult, view: CurrencyView, at: datetime | None = None
) -> list[dict[str, Any]]:
    """The history's rows as every face shows them: with a view currency other than USD
    each row also carries ``display_currency`` and ``display_price_per_hour`` (or
    ``display_price_per_gpu_hour`` for a GPU's steps), converted at the rate in force at
    the row's time, or at ``at`` for the offer's interval in force then (a price already
    in that currency exactly as stored). USD rows are returned as they are."""
    if result.kind == "gpu_steps":
        return _in(view, result.rows, usd_key="price_per_gpu_hour_usd")
    if result.kind == "offer_steps":
        return _in(view, result.rows)
    moment = None if at is None else (at.replace(tzinfo=UTC) if at.tzinfo is None else at)
    return _in(view, result.rows, "first_seen", moment)


def _in(
    view: CurrencyView,
    rows: list[dict[str, Any]],
    time_key: str = "time",
    at: datetime | None = None,
    usd_key: str = "price_per_hour_usd",
) -> list[dict[str, Any]]:
    if view.code == USD:
        return rows
    for row in rows:
        usd, when = row.get(usd_key), at or row.get(time_key)
        own = row.get("price_per_hour") if usd_key == "price_per_hour_usd" else None
        row["display_currency"] = view.code
        row[usd_key.replace("_usd", "").replace("price", "display_price", 1)] = (
            None
            if usd is None
            else view.show(usd, original=own, currency=row.get("currency"), at=when)
        )
    return rows
