"""``recommend`` and ``estimate``: the recommender on the command line (``profiles`` is in
tracker/cli/profiles.py)."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer

from tracker.cli.context import USAGE, CliError, open_store, settings_of
from tracker.cli.currency import CurrencyOption, currency_view
from tracker.cli.names import check_gpus, check_providers, check_regions
from tracker.cli.offers import OFFER_HEAD, share_cell
from tracker.cli.output import Column, FormatOption, OutputFormat, emit, err, money
from tracker.recommend import (
    Assumptions,
    Profile,
    ProfileError,
    ProfileSet,
    Ranking,
    Reason,
    WorkloadError,
    estimate_vram,
    load_profiles,
    make_profile,
)
from tracker.recommend.profiles import Task, user_profiles_path
from tracker.recommend.vram import GIB
from tracker.store import DatabaseError
from tracker.views.rankings import choose_profile, rank_offers, ranking_rows, two_places

__all__ = ["ranking_rows", "register"]

ProfilesFileOption = Annotated[
    Path | None,
    typer.Option(
        "--profiles-file",
        help="Profiles TOML (default: settings.profiles_path, else the user config dir's).",
    ),
]

CANDIDATE_COLUMNS = (
    "rank",
    "provider",
    "instance_type",
    "region",
    "zone",
    "pricing",
    "payment_option",
    "gpu_model",
    "gpu_count",
    "interconnect",
    "nodes",
    "total_gpus",
    "fabric",
    "network_gbps",
    "scaling_efficiency",
    "vram_needed_gib",
    "vram_available_gib",
    "price_per_hour_usd",
    "net_price_per_hour_usd",
    "discount",
    "effective_price_per_hour_usd",
    "price_per_gpu_hour_usd",
    "job_hours",
    "job_hours_low",
    "job_hours_high",
    "job_cost_usd",
    "display_currency",
    "display_effective_price_per_hour",
    "display_job_cost",
    "obtainability_7d",
    "obtainability_30d",
    "basis",
    "basis_source",
    "compute_precision",
    "precision_fallback",
)


def _vram_cell(row: dict[str, Any]) -> str:
    """``23.3/640``: GiB the job needs across the GPUs it uses, of the GiB they have."""
    need, have = row["vram_needed_gib"], row["vram_available_gib"]
    return f"{need:.1f}/{have.normalize():f}"


def _hours(value: Decimal | None) -> str:
    return "" if value is None else f"{value:,.2f}"


def _plus_minus(value: float | None) -> str:
    """``25`` under ``±%``: how far the job's hours may be off (by the estimate's basis)."""
    return "" if value is None else f"{value * 100:.0f}"


def _percent(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def candidate_table(
    symbol: str = "$", *, explain: bool = False, clusters: bool = False
) -> tuple[Column, ...]:
    """The ranking as a table: $/h is what an hour costs the job (amortised for
    reservations, net of the account's discounts: ``discount`` names the rule, a column
    shown only where one applies), in the view currency; the per-GPU price and the
    exact figures are in the JSON and CSV. ``clusters``: a node-count column (the profile
    sizes clusters). With ``explain``, how likely the capacity is there and stays: the
    spot interruption rate (% a month) and beside it the share of the last 30 days the
    offer was reported rentable (blank where its provider never says)."""
    risk = (
        Column("interruption_pct", "interrupt %/mo", _percent, justify="right", priority=4),
        Column("obtainability_30d", "got 30d", share_cell, justify="right", priority=4),
    )
    return (
        Column("rank", "#", justify="right"),
        *OFFER_HEAD,
        *((Column("nodes", "nodes", justify="right"),) if clusters else ()),
        Column("", "VRAM", _vram_cell, justify="right", priority=5),
        Column("display_effective_price_per_hour", f"{symbol}/h", money, justify="right"),
        Column("job_hours", "hours", _hours, justify="right", priority=4),
        Column("uncertainty", "±%", _plus_minus, justify="right", priority=3),
        Column("display_job_cost", f"job {symbol}", money, justify="right"),
        Column("discount", "discount", lambda v: v or "", priority=2),
        *(risk if explain else ()),
    )


CANDIDATE_TABLE = candidate_table()
EXCLUDED_TABLE = (
    *OFFER_HEAD,
    Column("excluded_reason", "reason"),
    Column("excluded_detail", "why", priority=5, shrink=True, min_width=20),
)


def plain_number(value: float) -> str:
    """7e9 rather than 7e+09: how people write parameter counts."""
    return f"{value:g}".replace("e+0", "e").replace("e+", "e")


def load_profile_set(ctx: typer.Context, profiles_file: Path | None) -> ProfileSet:
    configured = profiles_file
    if configured is None:
        configured = settings_of(ctx).profiles_path
    try:
        return load_profiles(user_profiles_path(configured))
    except ProfileError as exc:
        raise CliError(str(exc), USAGE) from None


def _adhoc_fields(**flags: Any) -> dict[str, Any]:
    return {k: v for k, v in flags.items() if v is not None and v != []}


def recommend(
    ctx: typer.Context,
    profile: Annotated[
        str | None, typer.Option("--profile", "-P", help="Profile name (see 'profiles list').")
    ] = None,
    top: Annotated[int, typer.Option("--top", "-n", min=1, help="How many to show.")] = 10,
    explain: Annotated[
        bool, typer.Option("--explain", help="Also list excluded offers and why.")
    ] = False,
    params: Annotated[
        float | None, typer.Option("--params", help="Model parameters, e.g. 7e9.")
    ] = None,
    task: Annotated[
        str | None, typer.Option("--task", help=", ".join(t.value for t in Task))
    ] = None,
    precision: Annotated[str | None, typer.Option("--precision")] = None,
    tokens: Annotated[
        float | None, typer.Option("--tokens", help="Tokens to train on / serve.")
    ] = None,
    images: Annotated[float | None, typer.Option("--images")] = None,
    epochs: Annotated[float | None, typer.Option("--epochs")] = None,
    reference_gpu_hours: Annotated[float | None, typer.Option("--reference-gpu-hours")] = None,
    reference_gpu: Annotated[str | None, typer.Option("--reference-gpu")] = None,
    sequence_length: Annotated[int | None, typer.Option("--seq-len")] = None,
    batch_size: Annotated[int | None, typer.Option("--batch")] = None,
    min_gpus: Annotated[float | None, typer.Option("--min-gpus")] = None,
    max_gpus: Annotated[float | None, typer.Option("--max-gpus")] = None,
    interconnect: Annotated[
        str | None, typer.Option("--interconnect", help="required, preferred or any (NVLink).")
    ] = None,
    spot: Annotated[
        bool | None, typer.Option("--spot/--no-spot", help="Allow interruptible capacity.")
    ] = None,
    checkpoint_hours: Annotated[float | None, typer.Option("--checkpoint-hours")] = None,
    horizon_months: Annotated[
        float | None, typer.Option("--horizon-months", help="Commitment horizon (reserved).")
    ] = None,
    utilization: Annotated[
        float | None,
        typer.Option(
            "--utilization",
            help="Share of a reservation's term the GPUs are busy, 0-1 (reserved needs it).",
        ),
    ] = None,
    provider: Annotated[list[str] | None, typer.Option("--provider", "-p")] = None,
    region: Annotated[list[str] | None, typer.Option("--region", "-r")] = None,
    gpu: Annotated[
        list[str] | None, typer.Option("--gpu", "-g", help="Allowed GPU models.")
    ] = None,
    max_price: Annotated[str | None, typer.Option("--max-price", help="Max USD/hour.")] = None,
    budget: Annotated[str | None, typer.Option("--budget", help="Max USD for the job.")] = None,
    min_obtainability: Annotated[
        float | None,
        typer.Option(
            "--min-obtainability",
            min=0,
            max=1,
            help="Least share of the last 30 days an offer was reported rentable, 0-1.",
        ),
    ] = None,
    include_unavailable: Annotated[
        bool,
        typer.Option(
            "--include-unavailable",
            help="Also rank offers the provider last reported as having no capacity.",
        ),
    ] = False,
    nodes: Annotated[
        str | None,
        typer.Option(
            "--nodes", help="Instances per job: a number, or auto (sized 1..--max-nodes)."
        ),
    ] = None,
    max_nodes: Annotated[
        int | None, typer.Option("--max-nodes", min=1, help="Largest cluster auto sizes [64].")
    ] = None,
    deadline: Annotated[
        str | None,
        typer.Option(
            "--deadline", help="Finish within, e.g. 10d, 36h: the cheapest size that does."
        ),
    ] = None,
    global_batch: Annotated[
        int | None, typer.Option("--global-batch", min=1, help="Sequences per optimizer step.")
    ] = None,
    fabric: Annotated[
        str | None,
        typer.Option("--fabric", help="Network between nodes: required (RDMA), preferred or any."),
    ] = None,
    profiles_file: ProfilesFileOption = None,
    currency: CurrencyOption = "USD",
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Offers ranked by the estimated cost of the whole job (a profile, or ad-hoc flags)."""
    profile_set = load_profile_set(ctx, profiles_file)
    check_regions(region)
    if provider or gpu:
        engine = open_store(ctx)
        check_providers(ctx, engine, provider)
        check_gpus(engine, gpu)  # an unknown name is exit 2, as in history
    overrides = _adhoc_fields(
        params=params,
        task=task,
        precision=precision,
        tokens=tokens,
        images=images,
        epochs=epochs,
        reference_gpu_hours=reference_gpu_hours,
        reference_gpu=reference_gpu,
        sequence_length=sequence_length,
        batch_size=batch_size,
        min_gpus=min_gpus,
        max_gpus=max_gpus,
        interconnect=interconnect,
        interruptible=spot,
        checkpoint_interval_hours=checkpoint_hours,
        horizon_months=horizon_months,
        utilization=utilization,
        providers=provider,
        regions=region,
        gpus=gpu,
        max_price_per_hour=max_price,
        budget_usd=budget,
        min_obtainability=min_obtainability,
        nodes=nodes,
        max_nodes=max_nodes,
        deadline_hours=deadline,
        global_batch=global_batch,
        fabric=fabric,
    )
    try:
        if profile is None and not overrides:
            raise CliError("give --profile NAME or ad-hoc flags (--params, --task, ...)", USAGE)
        chosen = choose_profile(profile_set, profile, overrides)
        engine = open_store(ctx)
        view = currency_view(ctx, engine, currency)
        found = rank_offers(
            engine,
            settings_of(ctx),
            chosen,
            profile_set=profile_set,
            top=top,
            explain=explain,
            include_unavailable=include_unavailable,
        )
        view.usd = found.conversion  # what the USD ranking left out is what gets reported
        ranking = found.ranking
    except (ProfileError, WorkloadError) as exc:
        raise CliError(str(exc), USAGE) from None
    except DatabaseError as exc:
        raise CliError(str(exc)) from None
    rows = ranking_rows(ranking, explain, view)
    view.report()
    if fmt is OutputFormat.table:
        emit(
            rows[: len(ranking.candidates)],
            fmt,
            table=candidate_table(
                view.symbol, explain=explain, clusters=ranking.profile.sizes_clusters
            ),
            title=ranking_title(ranking),
        )
        note = Column("note", "note", wrap=True, min_width=40)
        if ranking.close_call:
            emit([{"note": ranking.close_call}], fmt, table=(note,))
        if ranking.deadline_note:
            err(f"gpu-tracker: {ranking.deadline_note}")
        if explain and ranking.notes:
            notes = [{"note": n} for n in ranking.notes]
            emit(notes, fmt, table=(note,), title="how costs were worked out")
        if explain and ranking.exclusions:
            emit(rows[len(ranking.candidates) :], fmt, table=EXCLUDED_TABLE, title="excluded")
    else:
        columns = (*CANDIDATE_COLUMNS, "excluded_reason", "excluded_detail") if explain else None
        emit(rows, fmt, columns=columns or CANDIDATE_COLUMNS)
        if ranking.deadline_note:
            err(f"gpu-tracker: {ranking.deadline_note}")
    skipped = ranking.excluded_counts.get(Reason.UNAVAILABLE.label, 0)
    if skipped and fmt is not OutputFormat.table:  # a table says it in its title
        err(
            f"gpu-tracker: skipped {skipped} offer(s) the provider reported unavailable "
            "(--include-unavailable ranks them)"
        )
    if not ranking.considered and not view.usd.skipped:
        err("gpu-tracker: no offers stored yet; run 'gpu-tracker collect' first")
    elif not ranking.candidates:
        err(f"gpu-tracker: no offer fits {chosen.name}" + ("" if explain else "; see --explain"))


def ranking_title(ranking: Ranking) -> str:
    """One line: what fits, how it is ordered, what was left out and why."""
    title = (
        f"{ranking.profile.name}: {ranking.feasible} of {ranking.considered} offers fit "
        f"(needs {ranking.workload.vram.total / GIB:.1f} GiB on one GPU)"
    )
    if not ranking.workload.has_work:
        title += "; no work size given, so ranked by effective $/hour (job hours and cost empty)"
    excluded = ", ".join(f"{k} {v}" for k, v in ranking.excluded_counts.items())
    skipped = ranking.excluded_counts.get(Reason.UNAVAILABLE.label, 0)
    if skipped:
        title += f"; {skipped} skipped as unavailable (--include-unavailable ranks them)"
    return title + (f"; excluded: {excluded}" if excluded else "")


def estimate(
    ctx: typer.Context,
    params: Annotated[float, typer.Option("--params", help="Model parameters, e.g. 7e9.")],
    task: Annotated[str, typer.Option("--task", help=", ".join(t.value for t in Task))],
    precision: Annotated[str, typer.Option("--precision")],
    sequence_length: Annotated[int | None, typer.Option("--seq-len")] = None,
    batch_size: Annotated[int | None, typer.Option("--batch")] = None,
    gpus: Annotated[
        int | None, typer.Option("--gpus", min=1, help="Also show the per-GPU need, sharded.")
    ] = None,
    profiles_file: ProfilesFileOption = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """VRAM needed by a job, component by component."""
    assumptions = load_profile_set(ctx, profiles_file).assumptions
    data = _adhoc_fields(
        params=params,
        task=task,
        precision=precision,
        sequence_length=sequence_length,
        batch_size=batch_size,
    )
    try:
        p = make_profile("estimate", data)
    except ProfileError as exc:
        raise CliError(str(exc), USAGE) from None
    emit(estimate_rows(p, assumptions, gpus), fmt, title=_estimate_title(p))


def _estimate_title(p: Profile) -> str:
    return f"VRAM for {plain_number(p.params)} parameters, {p.task.value}, {p.precision.value}"


def estimate_rows(p: Profile, a: Assumptions, gpus: int | None) -> list[dict[str, Any]]:
    vram = estimate_vram(p, a)
    if not math.isfinite(vram.total):  # the profile's bounds keep it finite; never print inf
        raise CliError(f"profile {p.name!r}: the VRAM estimate is not a finite number", USAGE)
    rows: list[dict[str, Any]] = [
        {"component": name, "gib": two_places(gib)} for name, gib in vram.rows()
    ]
    rows.append({"component": "total (one GPU)", "gib": two_places(vram.total / GIB)})
    if gpus is not None and gpus > 1:
        rows.append(
            {
                "component": f"per GPU, {gpus} GPUs sharded",
                "gib": two_places(vram.per_gpu(gpus, sharded=True) / GIB),
            }
        )
    return rows


def register(app: typer.Typer) -> None:
    app.command("recommend")(recommend)
    app.command("estimate")(estimate)
