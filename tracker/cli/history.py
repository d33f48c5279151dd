"""``history``: one offer's price over time, or a GPU's cheapest offer over time.

Modes, by the options given:

* ``--gpu G``: the cheapest $/GPU-hour across matching offers at each step (default 1d);
* ``--provider --instance-type --region`` with ``--resample`` (or ``--plot``): the price
  in force at each step;
* the same offer without them: its stored intervals (``--at TIME``: the one in force then).

The rows come from :mod:`tracker.history.views` (what the web API returns too); argument
checks from :mod:`tracker.history.args` raise one line, shown with exit 2. A further view
of one offer (e.g. its availability) is one more option and one more branch in
:func:`history`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from tracker.cli.context import USAGE, CliError, open_store, settings_of
from tracker.cli.currency import CurrencyOption, CurrencyView, currency_view
from tracker.cli.names import check_providers, check_regions
from tracker.cli.offers import pricing_cell
from tracker.cli.output import Column, FormatOption, OutputFormat, cell, emit, money
from tracker.format import pricing_label
from tracker.history import args as history_args
from tracker.history import views
from tracker.history.args import HistoryArgumentError
from tracker.history.spark import sparkline
from tracker.models import PricingModel
from tracker.store.engine import DatabaseError, Engine
from tracker.store.history import stored_gpu_names

__all__ = ["gpu_selection", "history", "register", "usage_errors"]

DEFAULT_STEP = "1d"

OFFER_STEP_TABLE = (
    Column("time", "time"),
    Column("zone", "zone", priority=2),
    Column("payment_option", "payment", priority=3),
    Column("price_per_hour", "price/h", cell, justify="right"),
    Column("currency", "cur", priority=1),
    Column("price_per_hour_usd", "$/h", money, justify="right"),
    Column("display_price_per_hour", "shown/h", money, justify="right", priority=1),
)
GPU_STEP_TABLE = (
    Column("time", "time"),
    Column("price_per_gpu_hour_usd", "$/GPU·h", money, justify="right"),
    Column("display_price_per_gpu_hour", "shown/GPU·h", money, justify="right", priority=1),
    Column("provider", "provider"),
    Column("instance_type", "instance"),
    Column("region", "region", priority=1),
    Column("zone", "zone", priority=3),
    Column("pricing", "pricing", pricing_cell, priority=2),
    Column("gpu_model", "GPU", priority=2),
)
OFFER_INTERVAL_TABLE = (
    Column("zone", "zone", priority=2),
    Column("payment_option", "payment", priority=3),
    Column("offering_class", "class", priority=4),
    Column("price_per_hour", "price/h", cell, justify="right"),
    Column("currency", "cur"),
    Column("price_per_hour_usd", "$/h", money, justify="right", priority=1),
    Column("display_price_per_hour", "shown/h", money, justify="right", priority=1),
    Column("first_seen", "from"),
    Column("last_seen", "last seen", priority=2),
    Column("ended_at", "ended", priority=1),
)
"""One offer's stored intervals (an empty ``ended`` means still in force)."""


class usage_errors:
    """Turn a history argument error into a usage CliError (exit 2) and a database
    error into a failure (exit 1), each one line."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, HistoryArgumentError):
            raise CliError(str(exc), USAGE) from None
        if isinstance(exc, DatabaseError):
            raise CliError(str(exc)) from None


def gpu_selection(engine: Engine, names: Sequence[str]) -> Any:
    """``--gpu`` names as a selection; an unknown name is a HistoryArgumentError."""
    return history_args.require_gpus(names, lambda wanted: stored_gpu_names(engine, wanted))


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def history(
    ctx: typer.Context,
    gpu: Annotated[
        list[str] | None,
        typer.Option(
            "--gpu",
            "-g",
            help="Cheapest $/GPU-hour per step across offers of this GPU model or family "
            "(repeatable), e.g. H100 (every variant) or h100-sxm.",
        ),
    ] = None,
    provider: Annotated[
        list[str] | None, typer.Option("--provider", "-p", help="Provider (one for an offer).")
    ] = None,
    instance_type: Annotated[str | None, typer.Option("--instance-type", "-i")] = None,
    region: Annotated[
        list[str] | None, typer.Option("--region", "-r", help="Region (one for an offer).")
    ] = None,
    pricing: Annotated[PricingModel, typer.Option("--pricing")] = PricingModel.ON_DEMAND,
    zone: Annotated[
        str | None, typer.Option("--zone", help="Zone (spot); default: every zone.")
    ] = None,
    payment_option: Annotated[str | None, typer.Option("--payment-option")] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Start: an age (30d, 12h, 2w), today, yesterday, or an ISO date/time "
            "(default 30d).",
        ),
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="End: now, or as --since (default: now).")
    ] = None,
    resample: Annotated[
        str | None,
        typer.Option(
            "--resample", help="Step: 1h, 1d, 1w (N of each); the price in force at each step."
        ),
    ] = None,
    at_text: Annotated[
        str | None,
        typer.Option(
            "--at",
            help="Only the price in force at this time: now, today, yesterday, an age (7d) "
            "or an ISO date/time (UTC unless it has an offset).",
        ),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option("--plot", help="Also draw the steps to FILE.png or FILE.svg."),
    ] = None,
    show_availability: Annotated[
        bool,
        typer.Option(
            "--availability",
            help="One offer's availability intervals instead of prices (where reported).",
        ),
    ] = False,
    currency: CurrencyOption = "USD",
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Price history of one offer, or of the cheapest offer of a GPU, over time (USD at
    the exchange rate in force at each step; --currency shows another currency too)."""
    now = _now()
    fx_rates = settings_of(ctx).fx_rates
    check_regions(region)
    check_providers(ctx, open_store(ctx), provider)
    view = currency_view(ctx, open_store(ctx), currency)
    with usage_errors():
        at = None if at_text is None else history_args.parse_time(at_text, "--at", now=now)
        if plot is not None:
            from tracker.history.plot import check_plot_path

            check_plot_path(plot)
        window = history_args.parse_window(since, until, now=now) if since or until else None
        if gpu:
            if (
                instance_type
                or at
                or show_availability
                or zone is not None
                or payment_option is not None
            ):
                raise HistoryArgumentError(
                    "--gpu reads many offers: drop --instance-type, --zone, --payment-option, "
                    "--at and --availability (they name one offer)"
                )
            grid = _grid(window, resample, now)
            _gpu_view(ctx, gpu, grid, provider, region, pricing, plot, fmt, view)
            return
        offer = _offer_key(provider, instance_type, region, pricing, zone, payment_option)
        # One offer: each view is one branch (a new view adds its option and a branch here).
        if show_availability:
            if resample or window or plot:
                raise HistoryArgumentError(
                    "--availability lists intervals: drop --since/--until/--resample/--plot"
                )
            from tracker.cli.availability import (
                AVAILABILITY_COLUMNS,
                AVAILABILITY_TABLE,
                availability_rows,
            )

            engine = open_store(ctx)
            rows = availability_rows(engine, views.find_offer(engine, offer), at)
            emit(
                rows,
                fmt,
                columns=AVAILABILITY_COLUMNS,
                table=AVAILABILITY_TABLE,
                title=f"{offer.describe()} availability",
            )
        elif at is not None:
            if resample or window or plot:
                raise HistoryArgumentError(
                    "--at reads one time: drop --since/--until/--resample/--plot"
                )
            rows = views.offer_intervals(open_store(ctx), offer, at=at, fx_rates=fx_rates)
            table = _viewed(OFFER_INTERVAL_TABLE, view)
            emit(_in(view, rows, "first_seen", at), fmt, table=table, title=offer.describe())
        elif resample is None and plot is None:
            rows = views.offer_intervals(open_store(ctx), offer, window=window, fx_rates=fx_rates)
            table = _viewed(OFFER_INTERVAL_TABLE, view)
            emit(_in(view, rows, "first_seen"), fmt, table=table, title=offer.describe())
        else:
            grid = _grid(window, resample, now)
            rows = _in(view, views.offer_steps(open_store(ctx), offer, grid, fx_rates=fx_rates))
            table = _viewed(OFFER_STEP_TABLE, view)
            _show(rows, fmt, table, views.OFFER_STEP_KEYS, offer.describe())
            _spark_or_plot(rows, "price_per_hour_usd", offer.describe(), "USD per hour", plot, fmt)


def _viewed(table: Sequence[Column], view: CurrencyView) -> tuple[Column, ...]:
    """The table with the view currency's column headed by its code (``EUR/h``)."""
    return tuple(
        replace(c, header=c.header.replace("shown", view.code))
        if c.header.startswith("shown")
        else c
        for c in table
    )


def _in(
    view: CurrencyView,
    rows: list[dict[str, Any]],
    time_key: str = "time",
    at: datetime | None = None,
    usd_key: str = "price_per_hour_usd",
) -> list[dict[str, Any]]:
    """With ``--currency C`` (not USD), each row also carries ``display_currency`` and
    ``display_price_per_hour`` (or ``display_price_per_gpu_hour``): ``usd_key`` in C at
    the rate in force at the row's time (a price already in C exactly as stored)."""
    if view.code == "USD":
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


def _grid(
    window: history_args.Window | None, resample: str | None, now: datetime
) -> history_args.Grid:
    """The steps of a resampled view: ``--resample`` (default 1d) over the window
    (default: the 30 days before now)."""
    rule = resample or DEFAULT_STEP
    step = history_args.parse_step(rule)
    return history_args.make_grid(
        window or history_args.parse_window(None, None, now=now), step, rule
    )


def _gpu_view(
    ctx: typer.Context,
    gpu: list[str],
    grid: history_args.Grid,
    provider: list[str] | None,
    region: list[str] | None,
    pricing: PricingModel,
    plot: Path | None,
    fmt: OutputFormat,
    view: CurrencyView,
) -> None:
    engine = open_store(ctx)
    selection = gpu_selection(engine, gpu)
    where: dict[str, Any] = {
        "provider": provider,
        "region": region,
        "pricing": [pricing],
        "fx_rates": settings_of(ctx).fx_rates,
    }
    rows = views.gpu_steps(engine, selection, grid, **where)
    # Offers without a rate at some step never counted as the cheapest: say how many.
    view.usd.missing.update(views.gpu_steps_without_rate(engine, selection, grid, **where))
    view.report()
    rows = _in(view, rows, usd_key="price_per_gpu_hour_usd")
    title = f"cheapest {'/'.join(gpu)} {pricing_label(pricing.value)}, USD per GPU-hour"
    _show(rows, fmt, _viewed(GPU_STEP_TABLE, view), views.GPU_STEP_KEYS, title)
    _spark_or_plot(rows, "price_per_gpu_hour_usd", title, "USD per GPU-hour", plot, fmt)


def _offer_key(
    provider: list[str] | None,
    instance_type: str | None,
    region: list[str] | None,
    pricing: PricingModel,
    zone: str | None,
    payment_option: str | None,
) -> views.OfferKey:
    if not instance_type or not provider or not region or len(provider) + len(region) != 2:
        raise HistoryArgumentError(
            "history needs --gpu G, or one --provider, --instance-type and one --region "
            "for one offer"
        )
    return views.OfferKey(provider[0], instance_type, region[0], pricing, zone, payment_option)


def _show(
    rows: list[dict[str, Any]],
    fmt: OutputFormat,
    table: Sequence[Column],
    keys: Sequence[str],
    title: str,
) -> None:
    emit(rows, fmt, columns=keys, table=table, title=title)


def _line(row: Mapping[str, Any]) -> str:
    """One plot line per provider and pricing model (and zone, for spot)."""
    parts = [row["provider"], row["pricing"], row.get("zone") or ""]
    return " ".join(p for p in parts if p)


def _spark_or_plot(
    rows: list[dict[str, Any]],
    value: str,
    title: str,
    ylabel: str,
    plot: Path | None,
    fmt: OutputFormat,
) -> None:
    if plot is not None:
        from tracker.history.plot import plot_steps

        window = f" ({_day(rows[0]['time'])} to {_day(rows[-1]['time'])})" if rows else ""
        plot_steps(rows, value=value, line=_line, title=title + window, ylabel=ylabel, path=plot)
        return
    if fmt is OutputFormat.table and sys.stdout.isatty():
        lines: dict[str, list[Any]] = {}
        for r in rows:
            lines.setdefault(_line(r) if value == "price_per_hour_usd" else "", []).append(r[value])
        for label, values in lines.items():
            typer.echo(f"{sparkline(values)} {label}".rstrip())


def _day(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M" if t.hour or t.minute else "%Y-%m-%d")


def register(app: typer.Typer) -> None:
    app.command("history")(history)
