"""``compare``: the cheapest $/GPU-hour per GPU model × provider for each pricing model,
the spot discount and the 7/30-day change (rows from :mod:`tracker.history.compare`).

Offers are compared in USD at the exchange rates in force at each time; ``--currency C``
shows the now figures in C too (``display_*`` keys). Offers left out for want of a rate
are counted on stderr, as ``offers`` does."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from tracker.cli.context import open_store, settings_of
from tracker.cli.currency import CurrencyOption, currency_view
from tracker.cli.history import usage_errors
from tracker.cli.names import check_providers
from tracker.cli.offers import share_cell
from tracker.cli.output import Column, FormatOption, OutputFormat, emit, err, money
from tracker.format import percent
from tracker.fx import USD
from tracker.history.compare import COMPARE_KEYS, DISPLAY_KEYS
from tracker.views import history as views_history

__all__ = ["compare", "compare_table", "register"]


def _pct(value: Any) -> str:
    return "" if value is None else percent(value)


def _change(value: Any) -> str:
    return "" if value is None else percent(value, signed=True)


def compare_table(prefix: str = "") -> tuple[Column, ...]:
    """The table display; ``prefix`` ``display_`` shows the view currency's figures."""
    return (
        Column("gpu_model", "GPU"),
        Column("provider", "provider"),
        Column(f"{prefix}on_demand", "on-demand", money, justify="right"),
        Column(f"{prefix}spot", "spot", money, justify="right", priority=1),
        Column(f"{prefix}reserved_1y", "1y", money, justify="right", priority=2),
        Column(f"{prefix}reserved_3y", "3y", money, justify="right", priority=2),
        Column(f"{prefix}savings_plan_1y", "SP1y", money, justify="right", priority=2),
        Column(f"{prefix}savings_plan_3y", "SP3y", money, justify="right", priority=2),
        Column(f"{prefix}capacity_block", "CB", money, justify="right", priority=2),
        Column("spot_discount_pct", "spot off", _pct, justify="right", priority=3),
        Column("change_7d_pct", "7d", _change, justify="right", priority=3),
        Column("change_30d_pct", "30d", _change, justify="right", priority=3),
        Column("obtainability_30d", "got 30d", share_cell, justify="right", priority=4),
    )


NET_TABLE = (
    Column("net_on_demand", "your on-demand $", money, justify="right"),
    Column("net_spot", "your spot $", money, justify="right", priority=1),
    Column("net_reserved_1y", "your 1y $", money, justify="right", priority=2),
    Column("net_reserved_3y", "your 3y $", money, justify="right", priority=2),
    Column("discount", "discount", lambda v: v or "", priority=1),
)
"""With discounts configured: the net USD figures ("your price") and the rules."""


def compare(
    ctx: typer.Context,
    gpu: Annotated[
        list[str] | None,
        typer.Option("--gpu", "-g", help="GPU model or family (repeatable), e.g. H100."),
    ] = None,
    provider: Annotated[list[str] | None, typer.Option("--provider", "-p")] = None,
    currency: CurrencyOption = USD,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Cheapest USD per GPU-hour now per GPU model × provider: on-demand, spot,
    reserved 1y/3y, savings plans 1y/3y (SP1y/SP3y), spot discount, and the 7- and 30-day change of on-demand
    (--currency shows the figures in another currency too)."""
    with usage_errors():
        engine = open_store(ctx)
        check_providers(ctx, engine, provider)
        view = currency_view(ctx, engine, currency)
        found = views_history.compare(
            engine, settings_of(ctx), gpu=gpu, provider=provider, view=view
        )
    rows, left_out = found.rows, found.without_rate
    shown = view.code != USD
    view.usd.missing.update(left_out)
    view.report()
    if not rows:
        err("no offer with a current price matches these filters")
    columns = (*COMPARE_KEYS, "display_currency", *DISPLAY_KEYS) if shown else COMPARE_KEYS
    emit(
        rows,
        fmt,
        columns=columns,
        table=(*compare_table("display_" if shown else ""), *(NET_TABLE if view.discounts else ())),
        title=f"{view.code} per GPU-hour, cheapest offer now"
        + (" (compared in USD)" if shown else ""),
    )


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
