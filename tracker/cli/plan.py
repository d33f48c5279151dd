"""``plan``: the cheapest cover of steady and burst GPU demand over months (total cost)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from tracker import format as fmt
from tracker.cli.context import USAGE, CliError, open_store, settings_of
from tracker.cli.currency import CurrencyOption, currency_view
from tracker.cli.history import usage_errors
from tracker.cli.output import Column, FormatOption, OutputFormat, emit, err
from tracker.fx import USD
from tracker.history.args import parse_time
from tracker.plan.explain import explain
from tracker.recommend.demand import Demand, PlanInputError
from tracker.recommend.profiles import (
    ProfileError,
    ProfileSet,
    load_profiles,
    user_profiles_path,
)
from tracker.views.plan import DEMAND_DEFAULTS, PLAN_KEYS, PlanAnswer, demand_of, plans

__all__ = ["register"]

_SHORT = {
    "on_demand": "OD",
    "reserved_1y": "1y",
    "reserved_3y": "3y",
    "savings_plan_1y": "SP1y",
    "savings_plan_3y": "SP3y",
}


def _money(value: Any) -> str:
    return "" if value is None else fmt.amount(value)


def _commitments(row: dict[str, Any]) -> str:
    """``3y 36m`` / ``1y 12m + OD 6m``: the steady fleet's sequence at a glance."""
    parts = [f"{_SHORT.get(c['pricing'], c['pricing'])} {c['months']}m" for c in row["commitments"]]
    return " + ".join(parts) if parts else "-"


PLAN_TABLE = (
    Column("rank", "#", justify="right"),
    Column("provider", "provider"),
    Column("region", "region", priority=3),
    Column("instance_type", "instance"),
    Column("instances", "inst.", justify="right", priority=4),
    Column("", "steady plan", _commitments, priority=2),
    Column("display_total", "total", _money, justify="right"),
    Column("display_monthly", "a month", _money, justify="right", priority=1),
    Column(
        "savings_pct",
        "saves",
        lambda v: "" if v is None else fmt.percent(v),
        justify="right",
        priority=5,
    ),
    Column("incomplete", "missing", lambda v: ", ".join(v) if v else "", shrink=True),
)
"""The ranking at a glance; each part's figure is in the JSON and CSV and in --explain."""


def _saved(
    profiles: ProfileSet, name: str, where: Path | None, given: dict[str, Any]
) -> tuple[Demand, list[str], list[str], list[str]]:
    """``[plans.NAME]``'s demand and filters; an option it would override is a usage error."""
    clash = [option for option, value in given.items() if value not in (None, [])]
    if clash:
        listed = ", ".join(f"--{o.replace('_', '-')}" for o in clash)
        raise CliError(f"--saved takes the plan's own {listed}: drop it or edit the plan", USAGE)
    saved = profiles.plans.get(name)
    if saved is None:
        known = ", ".join(sorted(profiles.plans)) or "none"
        place = where if where is not None else "the profiles file (none found)"
        raise CliError(f"--saved: no plan {name!r} in {place} (saved plans: {known})", USAGE)
    try:
        demand = saved.demand
    except PlanInputError as exc:  # checked on load; kept for a file edited since
        raise CliError(f"plan {name!r}: {exc}", USAGE) from None
    return demand, saved.gpu, saved.provider, saved.region


def _question(
    profiles: ProfileSet,
    where: Path | None,
    saved: str | None,
    given: dict[str, Any],
    *,
    gpu: list[str] | None,
    provider: list[str] | None,
    region: list[str] | None,
) -> tuple[Demand, list[str], list[str] | None, list[str] | None]:
    """What to plan for: the saved plan named by ``--saved``, or the options given
    (with their defaults); either way a bad one is a usage error."""
    if saved is not None:
        filters = {"gpu": gpu, "provider": provider, "region": region}
        return _saved(profiles, saved, where, filters | given)
    if not gpu:
        raise CliError("--gpu: required, or --saved NAME (a plan in the profiles file)", USAGE)
    try:
        return demand_of(given), gpu, provider, region
    except PlanInputError as exc:
        raise CliError(str(exc), USAGE) from None


def plan(
    ctx: typer.Context,
    gpu: Annotated[
        list[str] | None, typer.Option("--gpu", "-g", help="GPU model or family, e.g. H100.")
    ] = None,
    saved: Annotated[
        str | None,
        typer.Option("--saved", help="Run the profiles file's [plans.NAME] (its own options)."),
    ] = None,
    steady_gpus: Annotated[str | None, typer.Option(help="GPUs busy all the time [0].")] = None,
    burst_gpu_hours: Annotated[
        str | None, typer.Option(help="Extra GPU-hours a month [0].")
    ] = None,
    interruptible: Annotated[
        str | None, typer.Option(help="Share of the burst spot may run, 0-1 [0].")
    ] = None,
    months: Annotated[int | None, typer.Option(help="Horizon in months of 730 h [36].")] = None,
    spot_overhead: Annotated[
        str | None,
        typer.Option(help="Re-work share added to spot hours (default: from interruptions)."),
    ] = None,
    checkpoint_minutes: Annotated[
        str | None, typer.Option(help="Checkpoint interval on spot [60].")
    ] = None,
    storage_tb: Annotated[
        str | None, typer.Option(help="Block storage held, TB of 1,024 GB [0].")
    ] = None,
    storage: Annotated[str | None, typer.Option(help="ssd or hdd [ssd].")] = None,
    egress_tb: Annotated[str | None, typer.Option(help="Internet egress a month, TB [0].")] = None,
    migration_usd: Annotated[str | None, typer.Option(help="One-time cost of moving [0].")] = None,
    current_provider: Annotated[
        str | None, typer.Option(help="Where you run now (no migration cost there).")
    ] = None,
    fabric: Annotated[
        str | None,
        typer.Option(
            help="required: the fleet only on nodes with a stated RDMA fabric and 2+ GPUs [any]."
        ),
    ] = None,
    provider: Annotated[list[str] | None, typer.Option("--provider", "-p")] = None,
    region: Annotated[list[str] | None, typer.Option("--region", "-r")] = None,
    currency: CurrencyOption = USD,
    top: Annotated[int, typer.Option("--top", "-n", min=1)] = 10,
    show_explain: Annotated[
        bool, typer.Option("--explain", help="The arithmetic of the top plan, in words.")
    ] = False,
    profiles_file: Annotated[
        Path | None,
        typer.Option("--profiles-file", help="Assumptions (spot restart time…), saved plans."),
    ] = None,
    at: Annotated[
        str | None,
        typer.Option("--at", help="Plan with the prices in force then (e.g. 180d, 2026-06-01)."),
    ] = None,
    fmt_: FormatOption = OutputFormat.table,
) -> None:
    """Plan a fleet: reserved terms, on-demand and spot for steady and burst demand, plus
    storage, egress and migration; ranked by total cost over the horizon."""
    # The demand options as given (None: not on the command line), by their own names.
    given = {name: value for name, value in locals().items() if name in DEMAND_DEFAULTS}
    settings = settings_of(ctx)
    where = user_profiles_path(profiles_file or settings.profiles_path)
    try:
        profiles = load_profiles(where)
    except ProfileError as exc:
        raise CliError(str(exc), USAGE) from None
    demand, gpu, provider, region = _question(
        profiles, where, saved, given, gpu=gpu, provider=provider, region=region
    )
    with usage_errors():
        when = None if at is None else parse_time(at, "--at", now=datetime.now(UTC))
        engine = open_store(ctx)
        currency_view(ctx, engine, currency)  # a bad --currency: exit 2 in the CLI's words
        answer = plans(
            engine,
            settings,
            demand,
            gpu=gpu,
            provider=provider,
            region=region,
            currency=currency,
            at=when,
            top=top,
            assumptions=profiles.assumptions,
        )
    _render(answer, demand, fmt_, explained=show_explain, gpu=gpu, when=when)


def _render(
    answer: PlanAnswer,
    demand: Demand,
    fmt_: OutputFormat,
    *,
    explained: bool,
    gpu: list[str],
    when: datetime | None,
) -> None:
    """The plans as the format asks, the top one's arithmetic first with ``--explain``."""
    if answer.left_out:
        err(f"gpu-tracker: {answer.left_out}")
    if not answer.rows:
        then = "" if when is None else f" at {fmt.when(when)}"
        raise CliError(f"no stored offer of {', '.join(gpu)} matches these filters{then}", 1)
    if explained and fmt_ is OutputFormat.table:
        for line in explain(answer.plans[0], demand):
            typer.echo(fmt.printable(line))  # names from the store, shown escaped
        typer.echo("")
    emit(answer.rows, fmt_, columns=PLAN_KEYS, table=PLAN_TABLE, title=f"plans, {answer.currency}")


def register(app: typer.Typer) -> None:
    app.command("plan")(plan)
