"""``profiles list|show``: the workload profiles the recommender ranks for."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from tracker.cli.context import USAGE, CliError
from tracker.cli.output import FormatOption, OutputFormat, emit
from tracker.cli.recommend import ProfilesFileOption, load_profile_set, plain_number
from tracker.recommend import Assumptions, Profile, ProfileError, WorkloadError
from tracker.recommend.throughput import workload
from tracker.recommend.vram import GIB
from tracker.views.rankings import two_places as _d

__all__ = ["profile_row", "register"]


def profile_row(p: Profile, source: str, a: Assumptions) -> dict[str, Any]:
    row: dict[str, Any] = {"name": p.name, "source": source}
    row.update(p.model_dump(exclude={"name"}))
    for key, value in row.items():
        if isinstance(value, tuple):
            row[key] = list(value)
    try:
        work = workload(p, a)
    except WorkloadError:
        row["vram_total_gib"] = None
        row["job_pflops"] = None
    else:
        row["vram_total_gib"] = _d(work.vram.total / GIB)
        row["job_pflops"] = None if work.flops is None else _d(work.flops / 1e15)
    return row


def _work(p: Profile) -> str:
    if p.tokens is not None:
        return f"{plain_number(p.tokens)} tokens"
    if p.images is not None and p.epochs is not None:
        return f"{plain_number(p.images)} images x {p.epochs:g} epochs"
    if p.reference_gpu_hours is not None:
        return f"{p.reference_gpu_hours:g} h on {p.reference_gpu}"
    return "none (ranked by $/hour)"


profiles_app = typer.Typer(help="Workload profiles (built-in and your own).", no_args_is_help=True)


@profiles_app.command("list")
def profiles_list(
    ctx: typer.Context,
    profiles_file: ProfilesFileOption = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Every profile: built-in ones and those in your profiles file."""
    ps = load_profile_set(ctx, profiles_file)
    rows = [
        {
            "name": p.name,
            "task": p.task.value,
            "params": plain_number(p.params),
            "precision": p.precision.value,
            "work": _work(p),
            "source": ps.sources.get(p.name, ""),
            "description": p.description,
        }
        for p in sorted(ps.profiles.values(), key=lambda p: p.name)
    ]
    emit(rows, fmt, title="profiles")


@profiles_app.command("show")
def profiles_show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Profile name.")],
    profiles_file: ProfilesFileOption = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """One profile's fields, with its estimated VRAM and job FLOPs."""
    ps = load_profile_set(ctx, profiles_file)
    try:
        p = ps.get(name)
    except ProfileError as exc:
        raise CliError(str(exc), USAGE) from None
    row = profile_row(p, ps.sources.get(name, ""), ps.assumptions)
    if fmt is OutputFormat.table:
        emit(
            [{"field": k, "value": v} for k, v in row.items() if v not in (None, [], "")],
            fmt,
            title=f"profile {name}",
        )
    else:
        emit([row], fmt)


def register(app: typer.Typer) -> None:
    app.add_typer(profiles_app, name="profiles")
