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
from tracker.cli.output import (
    Column,
    FormatOption,
    OutputFormat,
    cell,
    emit,
    err,
    moment,
    money,
)
from tracker.format import iso_z, printable, when
from tracker.history import args as history_args
from tracker.history import views
from tracker.history.args import HistoryArgumentError
from tracker.history.spark import sparkline
from tracker.models import PricingModel
from tracker.store import DatabaseError
from tracker.views.history import (
    DEFAULT_STEP,
    HistoryQuery,
    HistoryResult,
    cli_flag,
    gpu_selection,
    offer_key,
    read_history,
    viewed_rows,
)

__all__ = ["DEFAULT_STEP", "gpu_selection", "history", "register", "usage_errors"]


OFFER_STEP_TABLE = (
    Column("time", "time", moment),
    Column("zone", "zone", priority=2),
    Column("payment_option", "payment", priority=3),
    Column("price_per_hour", "price/h", cell, justify="right"),
    Column("currency", "cur", priority=1),
    Column("price_per_hour_usd", "$/h", money, justify="right"),
    Column("display_price_per_hour", "shown/h", money, justify="right", priority=1),
)
GPU_STEP_TABLE = (
    Column("time", "time", moment),
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
NET_COLUMNS = (
    Column("net_price_per_hour_usd", "your $/h", money, justify="right"),
    Column("discount", "discount", lambda v: v or "", priority=1),
)
"""With discounts configured: what the account paid (USD) and the rule in force then."""
GPU_NET_COLUMNS = (
    Column("net_price_per_gpu_hour_usd", "your $/GPU·h", money, justify="right"),
    Column("discount", "discount", lambda v: v or "", priority=1),
)


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
    check_regions(region)
    check_providers(ctx, open_store(ctx), provider)
    view = currency_view(ctx, open_store(ctx), currency)
    with usage_errors():
        at = None if at_text is None else history_args.parse_time(at_text, "--at", now=now)
    query = HistoryQuery(
        gpu=gpu,
        provider=provider,
        instance_type=instance_type,
        region=region,
        pricing=pricing,
        zone=zone,
        payment_option=payment_option,
        since=since,
        until=until,
        resample=resample,
        at=at,
    )
    with usage_errors():
        if plot is not None:
            from tracker.history.plot import check_plot_path

            check_plot_path(plot)
        if show_availability:
            _availability(ctx, query, bool(resample or since or until or plot), fmt)
            return
        result = read_history(
            open_store(ctx), settings_of(ctx), query, now=now, steps=plot is not None, flag=cli_flag
        )
    if not any(_priced(r) for r in result.rows):
        raise CliError(_no_data(result, query, now))
    if result.starts_late and result.data_since and fmt is not OutputFormat.table:
        # a table's title says it; JSON and CSV keep their rows, so stderr does
        err(f"gpu-tracker: data since {when(result.data_since)}: no row before it")
    if result.kind == "gpu_steps":
        view.usd.missing.update(result.without_rate)
        view.report()
        rows = viewed_rows(result, view)
        title = f"{result.title}, USD per GPU-hour"
        table = _viewed(_net(GPU_STEP_TABLE, view, GPU_NET_COLUMNS), view)
        _show(rows, fmt, table, views.GPU_STEP_KEYS, _since_title(title, result))
        figure, unit = _plotted(view, "price_per_gpu_hour_usd", "USD per GPU-hour")
        _spark_or_plot(rows, figure, title, unit, plot, fmt)
    elif result.kind == "offer_steps":
        rows = viewed_rows(result, view)
        title = _since_title(result.title, result)
        table = _viewed(_net(OFFER_STEP_TABLE, view), view)
        _show(rows, fmt, table, views.OFFER_STEP_KEYS, title)
        figure, unit = _plotted(view, "price_per_hour_usd", "USD per hour")
        _spark_or_plot(rows, figure, result.title, unit, plot, fmt)
    else:
        rows = viewed_rows(result, view, at)
        table = _viewed(_net(OFFER_INTERVAL_TABLE, view), view)
        emit(rows, fmt, table=table, title=_since_title(result.title, result))


def _plotted(view: CurrencyView, key: str, unit: str) -> tuple[str, str]:
    """What a sparkline or plot follows: with discounts, what the account paid."""
    return (f"net_{key}", f"your {unit}") if view.discounts else (key, unit)


def _priced(row: Mapping[str, Any]) -> bool:
    return row.get("price_per_hour") is not None


def _since_title(title: str, result: HistoryResult) -> str:
    """The table's title says since when the store has data for what was asked."""
    return title if result.data_since is None else f"{title} (data since {when(result.data_since)})"


def _no_data(result: HistoryResult, query: HistoryQuery, now: datetime) -> str:
    """One line for a history with nothing to show in its range (exit 1, no file)."""
    stored = (
        f"; data since {when(result.data_since)}"
        if result.data_since is not None
        else "; nothing stored for it"
    )
    if query.at is not None:
        at = query.at if query.at.tzinfo is not None else query.at.replace(tzinfo=UTC)
        return f"no price of {result.title} in force at {iso_z(at)}{stored}"
    window = history_args.parse_window(query.since, query.until, now=now)
    span = f"between {when(window.since)} and {when(window.until)}"
    return f"no price history for {result.title} {span}{stored}"


def _availability(ctx: typer.Context, query: HistoryQuery, ranged: bool, fmt: OutputFormat) -> None:
    """One offer's availability intervals (``--availability``)."""
    if query.gpu:
        raise HistoryArgumentError(
            "--gpu reads many offers: drop --instance-type, --zone, --payment-option, "
            "--at and --availability (they name one offer)"
        )
    if ranged:
        raise HistoryArgumentError(
            "--availability lists intervals: drop --since/--until/--resample/--plot"
        )
    from tracker.cli.availability import (
        AVAILABILITY_COLUMNS,
        AVAILABILITY_TABLE,
        availability_rows,
    )

    offer = offer_key(query, cli_flag)
    at = query.at
    at = at.replace(tzinfo=UTC) if at is not None and at.tzinfo is None else at
    engine = open_store(ctx)
    rows = availability_rows(engine, views.find_offer(engine, offer), at)
    emit(
        rows,
        fmt,
        columns=AVAILABILITY_COLUMNS,
        table=AVAILABILITY_TABLE,
        title=f"{offer.describe()} availability",
    )


def _net(
    table: Sequence[Column], view: CurrencyView, net: Sequence[Column] = NET_COLUMNS
) -> tuple[Column, ...]:
    """``table`` with the "your price" columns when discounts are configured."""
    return (*table, *net) if view.discounts else tuple(table)


def _viewed(table: Sequence[Column], view: CurrencyView) -> tuple[Column, ...]:
    """The table with the view currency's column headed by its code (``EUR/h``)."""
    return tuple(
        replace(c, header=c.header.replace("shown", view.code))
        if c.header.startswith("shown")
        else c
        for c in table
    )


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
            typer.echo(printable(f"{sparkline(values)} {label}".rstrip()))


def _day(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M" if t.hour or t.minute else "%Y-%m-%d")


def register(app: typer.Typer) -> None:
    app.command("history")(history)
