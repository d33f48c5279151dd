"""``/api/v1/plan`` and the Plan page: ``gpu-tracker plan`` over HTTP and in the browser.

Both read the same rows through :func:`tracker.views.plan.plans` with the CLI's option
names (``steady_gpus`` for ``--steady-gpus``), so a script, the page and the CLI agree.
Quantities are decimal text, parsed exactly (money is never a binary float); a value no
fleet can have is a 400 naming the parameter, as in the CLI.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Annotated

from fastapi import APIRouter, Query
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse

from tracker.encode import jsonable
from tracker.fx import USD
from tracker.history.args import HistoryArgumentError, parse_time
from tracker.recommend import ProfileError
from tracker.recommend.demand import MAX_MONTHS, Demand, PlanInputError
from tracker.service_prices import ServiceKind
from tracker.views.plan import PlanAnswer, plans
from tracker.views.rankings import profiles_of
from tracker.web.context import WebContext, context_of
from tracker.web.currency import currency_view
from tracker.web.errors import BadRequest
from tracker.web.pages import page
from tracker.web.params import check_known, check_time, clean
from tracker.web.svg import PALETTE

__all__ = ["api_router", "page_router"]

log = logging.getLogger(__name__)

api_router = APIRouter(prefix="/api/v1", tags=["api"])
page_router = APIRouter(include_in_schema=False)

PARAMS = (
    "gpu",
    "steady_gpus",
    "burst_gpu_hours",
    "interruptible",
    "months",
    "spot_overhead",
    "checkpoint_minutes",
    "storage_tb",
    "storage",
    "egress_tb",
    "migration_usd",
    "current_provider",
    "fabric",
    "provider",
    "region",
    "currency",
    "top",
    "at",
)
DECIMAL = r"^[0-9]+(\.[0-9]+)?$"
_STORAGE = {"ssd": ServiceKind.BLOCK_STORAGE_SSD, "hdd": ServiceKind.BLOCK_STORAGE_HDD}
PARTS = ("steady", "burst", "storage", "egress", "migration")

Number = Annotated[
    str, Query(pattern=DECIMAL, max_length=24, description="A decimal number, e.g. 16 or 0.5.")
]


@dataclass(frozen=True, slots=True)
class PlanQuery:
    """The query's options as given (text), the CLI's names with underscores."""

    gpu: str
    steady_gpus: str = "0"
    burst_gpu_hours: str = "0"
    interruptible: str = "0"
    months: int = 36
    spot_overhead: str | None = None
    checkpoint_minutes: str = "60"
    storage_tb: str = "0"
    storage: str = "ssd"
    egress_tb: str = "0"
    migration_usd: str = "0"
    current_provider: str | None = None
    provider: list[str] | None = None
    region: list[str] | None = None
    currency: str = USD
    top: int = 10
    at: str | None = None
    fabric: str = "any"


def _decimal(name: str, text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation:
        raise BadRequest(f"{name}: not a number: {text[:40]!r}") from None


def demand_of(q: PlanQuery) -> Demand:
    """The query as a :class:`Demand`; a 400 naming the parameter otherwise."""
    if q.storage not in _STORAGE:
        raise BadRequest(f"storage: {q.storage!r} is not ssd or hdd")
    names = ("steady_gpus", "burst_gpu_hours", "interruptible", "checkpoint_minutes")
    numbers = {n: _decimal(n, getattr(q, n)) for n in names}
    money = {n: _decimal(n, getattr(q, n)) for n in ("storage_tb", "egress_tb", "migration_usd")}
    overhead = None if q.spot_overhead is None else _decimal("spot_overhead", q.spot_overhead)
    try:
        return Demand(
            **numbers,
            **money,
            months=q.months,
            spot_overhead=overhead,
            storage=_STORAGE[q.storage],
            current_provider=q.current_provider,
            fabric=q.fabric,
        )
    except PlanInputError as exc:  # the CLI's words; the API names parameters, not flags
        message = str(exc).replace("--", "").replace("-", "_")
        raise BadRequest(message) from None


def answer(context: WebContext, q: PlanQuery) -> tuple[PlanAnswer, Demand]:
    demand = demand_of(q)
    when = None
    if q.at is not None:
        try:
            when = check_time("at", parse_time(q.at, "at", now=datetime.now(UTC)))
        except HistoryArgumentError as exc:
            raise BadRequest(str(exc)) from None
    currency_view(context, q.currency)  # a 400 for a currency without a rate
    try:
        assumptions = profiles_of(context.settings).assumptions
    except ProfileError as exc:
        raise BadRequest(f"profiles file: {exc}") from None
    try:
        found = plans(
            context.engine,
            context.settings,
            demand,
            gpu=[q.gpu],
            provider=clean(q.provider),
            region=clean(q.region),
            currency=q.currency,
            at=when,
            top=q.top,
            assumptions=assumptions,
        )
    except HistoryArgumentError as exc:  # an unknown GPU
        raise BadRequest(str(exc).replace("--gpu ", "gpu: ", 1)) from None
    return found, demand


@api_router.get("/plan", summary="Fleet plans over months (gpu-tracker plan --format json)")
def api_plan(
    request: Request,
    gpu: Annotated[str, Query(min_length=1, max_length=64, description="GPU model or family.")],
    steady_gpus: Number = "0",
    burst_gpu_hours: Number = "0",
    interruptible: Number = "0",
    months: Annotated[int, Query(ge=1, le=MAX_MONTHS)] = 36,
    spot_overhead: Annotated[str | None, Query(pattern=DECIMAL)] = None,
    checkpoint_minutes: Number = "60",
    storage_tb: Number = "0",
    storage: Annotated[str, Query(pattern="^(ssd|hdd)$")] = "ssd",
    egress_tb: Number = "0",
    migration_usd: Number = "0",
    current_provider: Annotated[str | None, Query(max_length=64)] = None,
    provider: Annotated[list[str] | None, Query()] = None,
    region: Annotated[list[str] | None, Query()] = None,
    currency: Annotated[str, Query(max_length=10, description="View currency (ISO code).")] = USD,
    top: Annotated[int, Query(ge=1, le=1000)] = 10,
    at: Annotated[str | None, Query(max_length=40)] = None,
    fabric: Annotated[
        str,
        Query(
            pattern="^(any|required)$",
            description="required: only nodes with a stated RDMA fabric and 2+ GPUs.",
        ),
    ] = "any",
) -> JSONResponse:
    """The best plans for the demand, cheapest total first: the rows of ``gpu-tracker
    plan --format json`` with the same options (underscores for hyphens). A request
    needs steady_gpus or burst_gpu_hours above zero."""
    context = context_of(request)
    check_known(request, PARAMS)
    q = PlanQuery(
        gpu, steady_gpus, burst_gpu_hours, interruptible, months, spot_overhead,
        checkpoint_minutes, storage_tb, storage, egress_tb, migration_usd, current_provider,
        provider, region, currency, top, at, fabric,
    )  # fmt: skip
    found, _ = answer(context, q)
    if found.left_out:
        log.warning("/api/v1/plan: %s", found.left_out)
    return JSONResponse(jsonable(found.rows))


@page_router.get("/plan", response_class=HTMLResponse)
def plan_page(request: Request) -> HTMLResponse:
    """A form of the main options and, once a GPU is given, the ranked plans with a
    stacked bar of each one's parts."""
    context = context_of(request)
    check_known(request, PARAMS)
    given = {k: v for k, v in request.query_params.items() if v.strip()}
    if "gpu" not in given:
        return page(request, "plan.html", "Plan", form=given, rows=[], chart=None)
    try:
        q = PlanQuery(
            **{k: v for k, v in given.items() if k not in ("months", "top", "provider", "region")},
            months=int(given.get("months", "36")),
            top=int(given.get("top", "10")),
            provider=request.query_params.getlist("provider") or None,
            region=request.query_params.getlist("region") or None,
        )
    except ValueError:
        raise BadRequest("months and top: whole numbers") from None
    found, _ = answer(context, q)
    return page(
        request,
        "plan.html",
        f"Plan: {q.gpu}",
        form=given,
        rows=found.rows,
        chart=stacked_bars(found.rows),
        currency=found.currency,
        left_out=found.left_out,
    )


def stacked_bars(rows: list[dict[str, object]], *, width: int = 640) -> Markup | None:
    """One horizontal bar a plan, its parts stacked in order, all on one scale (the
    dearest complete plan's total); an incomplete plan shows the parts it has."""
    totals = [sum(_parts(r).values(), Decimal(0)) for r in rows]
    top = max(totals, default=Decimal(0))
    if top <= 0:
        return None
    label_w, bar_h, gap = 220, 16, 6
    height = len(rows) * (bar_h + gap) + 24
    out = [
        f'<svg class="plan-bars" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 '
        f'{label_w + width} {height}" width="100%" role="img" aria-label="each plan\'s '
        'cost by part">'
    ]
    for n, row in enumerate(rows):
        y = n * (bar_h + gap)
        name = f"{row['rank']}. {row['provider']} {row['instance_type']} {row['region']}"
        out.append(f'<text x="0" y="{y + 12}" font-size="11">{escape(name)}</text>')
        x = float(label_w)
        for k, (part, value) in enumerate(_parts(row).items()):
            length = float(value / top) * width
            if length <= 0:
                continue
            out.append(
                f'<rect class="part part-{part}" data-part="{part}" data-value="{value}" '
                f'x="{x:.1f}" y="{y}" width="{length:.1f}" height="{bar_h}" '
                f'fill="{PALETTE[k]}"><title>{part}: {value}</title></rect>'
            )
            x += length
    legend_y = len(rows) * (bar_h + gap) + 14
    for k, part in enumerate(PARTS):
        out.append(
            f'<rect x="{label_w + k * 110}" y="{legend_y - 9}" width="10" height="10" '
            f'fill="{PALETTE[k]}"/><text x="{label_w + k * 110 + 14}" y="{legend_y}" '
            f'font-size="11">{part}</text>'
        )
    out.append("</svg>")
    return Markup("".join(out))


def _parts(row: dict[str, object]) -> dict[str, Decimal]:
    """The row's known parts in the view currency (``display_*``), in stacking order."""
    found = {}
    for part in PARTS:
        value = row.get(f"display_{part}")
        if isinstance(value, Decimal) and value > 0:
            found[part] = value
    return found
