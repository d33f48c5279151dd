"""The six tools' work: the CLI's JSON rows for the same options, from the read layer.

Each function takes the :class:`Reader` (settings and engine) and the options as the
CLI names them (``--min-vram`` is ``min_vram``), calls the same ``tracker.views``
functions the command calls, and returns the rows ``gpu-tracker <cmd> --format json``
prints (:func:`tracker.encode.jsonable`: decimals as strings, times ISO-8601 with
``Z``). Bad input raises :class:`ToolInputError`, one line naming the option.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import Field

from tracker.encode import jsonable
from tracker.filters import OfferFilter
from tracker.history import args as history_args
from tracker.history.args import HistoryArgumentError
from tracker.models import PricingModel
from tracker.recommend import ProfileError, WorkloadError
from tracker.recommend.demand import PlanInputError
from tracker.settings import Settings
from tracker.store import DatabaseError, Engine
from tracker.views import history as views_history
from tracker.views.currency import CurrencyView, load_view
from tracker.views.errors import ReadError
from tracker.views.offers import SortKey, gpu_catalog_rows, offer_rows, unknown_gpu_rows
from tracker.views.plan import DEMAND_DEFAULTS, demand_of, plans
from tracker.views.rankings import (
    choose_profile,
    profile_fields,
    profiles_of,
    rank_offers,
    ranking_rows,
)

__all__ = ["Reader", "ToolInputError", "compare", "gpus", "history", "offers", "plan", "recommend"]

Rows = list[dict[str, Any]]
GPU = "GPU model or family, e.g. H100 (every H100 variant) or h100-sxm."
PROVIDER = "Provider names, e.g. aws, runpod, lambda."
REGION = "Provider region names, e.g. us-east-1."
PRICING = (
    "on_demand, spot, reserved_1y, reserved_3y, savings_plan_1y, savings_plan_3y, capacity_block."
)
SINCE = "Start: an age (30d, 12h, 2w), today, yesterday or an ISO date/time (default 30d)."
CURRENCY = (
    "ISO code (USD, EUR, CNY...) to also show the figures in (display_* fields), converted "
    "at the exchange rate in force; offers are ranked in USD either way."
)


class ToolInputError(ValueError):
    """An option the tool cannot use (the message names it), or a store that failed."""


@dataclass(frozen=True, slots=True)
class Reader:
    """What every tool reads with: the settings (fx_rates, profiles) and the store."""

    settings: Settings
    engine: Engine


def _json(rows: Sequence[Mapping[str, Any]]) -> Rows:
    return [jsonable(dict(r)) for r in rows]


def _view(reader: Reader, currency: str) -> CurrencyView:
    try:
        return load_view(reader.engine, reader.settings, currency)
    except ReadError as exc:
        raise ToolInputError(f"currency: {exc}") from None


def _gpus_known(reader: Reader, gpu: Sequence[str] | None) -> None:
    """An unknown GPU name is an error, as in the CLI (not an empty answer)."""
    if gpu:
        views_history.gpu_selection(reader.engine, gpu)


class _answers:
    """Turn the read layer's one-line errors into ToolInputError."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        known = (HistoryArgumentError, DatabaseError, ReadError, PlanInputError, ProfileError)
        if isinstance(exc, (*known, WorkloadError)):
            raise ToolInputError(str(exc)) from None


def offers(
    reader: Reader,
    gpu: Annotated[list[str] | None, Field(description=GPU)] = None,
    provider: Annotated[list[str] | None, Field(description=PROVIDER)] = None,
    region: Annotated[list[str] | None, Field(description=REGION)] = None,
    pricing: Annotated[list[PricingModel] | None, Field(description=PRICING)] = None,
    min_vram: Annotated[
        float | None, Field(ge=0, description="Least usable VRAM per GPU, GiB.")
    ] = None,
    min_gpus: Annotated[float | None, Field(ge=0, description="Fewest GPUs per instance.")] = None,
    available: Annotated[
        bool, Field(description="Only offers last reported available (or low stock).")
    ] = False,
    sort: Annotated[
        SortKey, Field(description="price: USD per hour; price_per_gpu: USD per GPU-hour.")
    ] = SortKey.price,
    limit: Annotated[int | None, Field(ge=1, description="At most this many rows.")] = None,
    currency: Annotated[str, Field(description=CURRENCY)] = "USD",
) -> Rows:
    with _answers():
        _gpus_known(reader, gpu)
        view = _view(reader, currency)
        where = OfferFilter.of(
            gpu=gpu,
            provider=provider,
            region=region,
            pricing=pricing,
            min_vram=min_vram,
            min_gpus=min_gpus,
            available=available,
        )
        rows = offer_rows(reader.engine, view, where, sort=sort, limit=limit)
    return _json(rows)


def compare(
    reader: Reader,
    gpu: Annotated[list[str] | None, Field(description=GPU)] = None,
    provider: Annotated[list[str] | None, Field(description=PROVIDER)] = None,
    currency: Annotated[str, Field(description=CURRENCY)] = "USD",
) -> Rows:
    with _answers():
        view = _view(reader, currency)
        found = views_history.compare(
            reader.engine, reader.settings, gpu=gpu, provider=provider, view=view
        )
    return _json(found.rows)


def history(
    reader: Reader,
    gpu: Annotated[
        list[str] | None, Field(description="The cheapest USD per GPU-hour at each step of " + GPU)
    ] = None,
    provider: Annotated[
        list[str] | None, Field(description="Provider (one, for an offer).")
    ] = None,
    instance_type: Annotated[
        str | None, Field(description="With one provider and region: that offer's history.")
    ] = None,
    region: Annotated[list[str] | None, Field(description="Region (one, for an offer).")] = None,
    pricing: Annotated[PricingModel, Field(description=PRICING)] = PricingModel.ON_DEMAND,
    zone: Annotated[str | None, Field(description="Zone (spot); default every zone.")] = None,
    payment_option: Annotated[str | None, Field(description="Reserved payment option.")] = None,
    since: Annotated[str | None, Field(description=SINCE)] = None,
    until: Annotated[str | None, Field(description="End: now, or as since (default now).")] = None,
    resample: Annotated[
        str | None, Field(description="Step: 1h, 1d, 1w (N of each); the price in force then.")
    ] = None,
    at: Annotated[
        str | None, Field(description="Only the offer's price in force at this time.")
    ] = None,
    currency: Annotated[str, Field(description=CURRENCY)] = "USD",
) -> Rows:
    now = datetime.now(UTC).replace(microsecond=0)
    with _answers():
        view = _view(reader, currency)
        when = None if at is None else history_args.parse_time(at, "at", now=now)
        query = views_history.HistoryQuery(
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
            at=when,
        )
        result = views_history.read_history(reader.engine, reader.settings, query, now=now)
    return _json(views_history.viewed_rows(result, view, when))


def recommend(
    reader: Reader,
    profile: Annotated[
        str | None,
        Field(
            description="Profile name (built-in or the profiles file's), e.g. llama-7b-finetune."
        ),
    ] = None,
    top: Annotated[int, Field(ge=1, description="How many candidates to return.")] = 10,
    explain: Annotated[
        bool,
        Field(description="Also return the excluded offers (excluded_reason, excluded_detail)."),
    ] = False,
    params: Annotated[float | None, Field(description="Model parameters, e.g. 7e9.")] = None,
    task: Annotated[
        str | None,
        Field(description="inference, lora, qlora, full_finetune, pretrain or cnn_training."),
    ] = None,
    precision: Annotated[
        str | None, Field(description="fp32, bf16, fp16, fp8, int8, int4.")
    ] = None,
    tokens: Annotated[
        float | None, Field(description="Tokens to train on or serve (the work size).")
    ] = None,
    images: Annotated[float | None, Field(description="Images to process (the work size).")] = None,
    epochs: Annotated[float | None, Field(description="Passes over the tokens/images.")] = None,
    reference_gpu_hours: Annotated[
        float | None, Field(description="Measured GPU-hours for the job on reference_gpu.")
    ] = None,
    reference_gpu: Annotated[
        str | None, Field(description="The GPU reference_gpu_hours was measured on.")
    ] = None,
    seq_len: Annotated[int | None, Field(description="Sequence length, tokens.")] = None,
    batch: Annotated[int | None, Field(description="Batch size.")] = None,
    min_gpus: Annotated[float | None, Field(description="Fewest GPUs per instance.")] = None,
    max_gpus: Annotated[float | None, Field(description="Most GPUs per instance.")] = None,
    interconnect: Annotated[
        str | None, Field(description="NVLink: required, preferred or any.")
    ] = None,
    spot: Annotated[bool | None, Field(description="Allow interruptible (spot) capacity.")] = None,
    checkpoint_hours: Annotated[
        float | None, Field(description="Checkpoint interval on spot, hours.")
    ] = None,
    horizon_months: Annotated[
        float | None, Field(description="Commitment horizon for reserved terms, months.")
    ] = None,
    utilization: Annotated[
        float | None, Field(description="Share 0-1 of a reservation's term the GPUs are busy.")
    ] = None,
    provider: Annotated[list[str] | None, Field(description="Only these providers.")] = None,
    region: Annotated[list[str] | None, Field(description="Only these regions.")] = None,
    gpu: Annotated[
        list[str] | None, Field(description="Only these GPU models or families.")
    ] = None,
    max_price: Annotated[
        str | None, Field(description="Highest USD per hour for the instance.")
    ] = None,
    budget: Annotated[str | None, Field(description="Highest USD for the whole job.")] = None,
    include_unavailable: Annotated[
        bool, Field(description="Also rank offers reported as having no capacity.")
    ] = False,
    nodes: Annotated[
        str | None, Field(description='Instances per job: a number, or "auto" (sized).')
    ] = None,
    max_nodes: Annotated[int | None, Field(description="Largest cluster auto sizes [64].")] = None,
    deadline: Annotated[
        str | None, Field(description="Finish within, e.g. 10d or 36h (cheapest size that does).")
    ] = None,
    global_batch: Annotated[
        int | None, Field(description="Sequences per optimizer step (caps data parallelism).")
    ] = None,
    fabric: Annotated[
        str | None, Field(description="Network between nodes: required (RDMA), preferred, any.")
    ] = None,
    currency: Annotated[str, Field(description=CURRENCY)] = "USD",
) -> Rows:
    options = {k: v for k, v in locals().items() if k not in _RANKING_ARGS}
    with _answers():
        profile_set = profiles_of(reader.settings)
        _gpus_known(reader, gpu)
        overrides = profile_fields(options)
        if profile is None and not overrides:
            raise ToolInputError("give profile or ad-hoc fields (params, task, ...)")
        chosen = choose_profile(profile_set, profile, overrides)
        view = _view(reader, currency)
        found = rank_offers(
            reader.engine,
            reader.settings,
            chosen,
            profile_set=profile_set,
            top=top,
            explain=explain,
            include_unavailable=include_unavailable,
        )
        view.usd = found.conversion
        rows = ranking_rows(found.ranking, explain, view)
    return _json(rows)


_RANKING_ARGS = ("reader", "profile", "top", "explain", "include_unavailable", "currency")
"""recommend's arguments that are not profile fields (the rest go to profile_fields)."""


def plan(
    reader: Reader,
    gpu: Annotated[list[str], Field(description="GPU model or family to plan on, e.g. H100.")],
    steady_gpus: Annotated[
        str | None, Field(description="GPUs busy all the time (a number as text) [0].")
    ] = None,
    burst_gpu_hours: Annotated[
        str | None, Field(description="Extra GPU-hours a month [0].")
    ] = None,
    interruptible: Annotated[
        str | None, Field(description="Share 0-1 of the burst that spot may run [0].")
    ] = None,
    months: Annotated[int | None, Field(description="Horizon in months of 730 hours [36].")] = None,
    spot_overhead: Annotated[
        str | None,
        Field(description="Re-work share added to spot hours (default: from interruptions)."),
    ] = None,
    checkpoint_minutes: Annotated[
        str | None, Field(description="Checkpoint interval on spot, minutes [60].")
    ] = None,
    storage_tb: Annotated[
        str | None, Field(description="Block storage held, TB of 1,024 GB [0].")
    ] = None,
    storage: Annotated[str | None, Field(description="ssd or hdd [ssd].")] = None,
    egress_tb: Annotated[str | None, Field(description="Internet egress a month, TB [0].")] = None,
    migration_usd: Annotated[
        str | None, Field(description="One-time cost of moving, USD [0].")
    ] = None,
    current_provider: Annotated[
        str | None, Field(description="Where you run now (no migration cost there).")
    ] = None,
    fabric: Annotated[
        str | None,
        Field(description="required: only nodes with a stated RDMA fabric and 2+ GPUs [any]."),
    ] = None,
    provider: Annotated[list[str] | None, Field(description="Only these providers.")] = None,
    region: Annotated[list[str] | None, Field(description="Only these regions.")] = None,
    currency: Annotated[str, Field(description=CURRENCY)] = "USD",
    top: Annotated[int, Field(ge=1, description="How many plans to return.")] = 10,
    at: Annotated[
        str | None, Field(description="Plan with the prices in force then (180d, 2026-06-01).")
    ] = None,
) -> Rows:
    demand = {k: v for k, v in locals().items() if k in DEMAND_DEFAULTS}
    with _answers():
        when = None if at is None else history_args.parse_time(at, "at", now=datetime.now(UTC))
        answer = plans(
            reader.engine,
            reader.settings,
            demand_of(demand),
            gpu=gpu,
            provider=provider,
            region=region,
            currency=currency,
            at=when,
            top=top,
            assumptions=profiles_of(reader.settings).assumptions,
        )
    return _json(answer.rows)


def gpus(
    reader: Reader,
    unknown: Annotated[
        bool, Field(description="Instead: stored GPU names the catalog does not recognise.")
    ] = False,
) -> Rows:
    if not unknown:
        return _json(gpu_catalog_rows())
    with _answers():
        return _json(unknown_gpu_rows(reader.engine))
