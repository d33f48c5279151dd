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
from tracker.web.params import DECIMAL, POSITIVE, TIME_PATTERN, check_known, check_time, clean
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
SHARE = r"^(0(\.[0-9]+)?|1(\.0+)?)$"
"""A share from 0 to 1 (``0``, ``0.5``, ``1``)."""
_STORAGE = {"ssd": ServiceKind.BLOCK_STORAGE_SSD, "hdd": ServiceKind.BLOCK_STORAGE_HDD}
PARTS = ("steady", "burst", "storage", "egress", "migration")

Number = Annotated[
    str,
    Query(
        pattern=DECIMAL,
        max_length=24,
        description="A decimal number up to 1,000,000,000, e.g. 16 or 0.5.",
    ),
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


Positive = Annotated[
    str,
    Query(
        pattern=POSITIVE,
        max_length=24,
        description="A decimal number above zero, up to 1,000,000,000, e.g. 16 or 0.5.",
    ),
]
Share = Annotated[
    str, Query(pattern=SHARE, description="A share from 0 to 1, e.g. 0.5 (default 0).")
]
Gpu = Annotated[str, Query(min_length=1, max_length=64, description="GPU model or family.")]
Months = Annotated[int, Query(ge=1, le=MAX_MONTHS)]
Overhead = Annotated[str | None, Query(pattern=DECIMAL, max_length=24)]
Storage = Annotated[str, Query(pattern="^(ssd|hdd)$")]
Provider = Annotated[str | None, Query(min_length=1, max_length=64)]
Names = Annotated[list[str] | None, Query()]
Currency = Annotated[str, Query(max_length=10, description="View currency (ISO code).")]
Top = Annotated[int, Query(ge=1, le=1000)]
At = Annotated[str | None, Query(pattern=TIME_PATTERN)]
FabricRule = Annotated[
    str,
    Query(
        pattern="^(any|required)$",
        description="required: only nodes with a stated RDMA fabric and 2+ GPUs.",
    ),
]


@api_router.get("/plan", summary="Fleet plans over months (gpu-tracker plan --format json)")
def api_plan(
    request: Request,
    gpu: Gpu,
    steady_gpus: Positive,
    burst_gpu_hours: Number = "0",
    interruptible: Share = "0",
    months: Months = 36,
    spot_overhead: Overhead = None,
    checkpoint_minutes: Annotated[str, Query(pattern=POSITIVE, max_length=24)] = "60",
    storage_tb: Number = "0",
    storage: Storage = "ssd",
    egress_tb: Number = "0",
    migration_usd: Number = "0",
    current_provider: Provider = None,
    provider: Names = None,
    region: Names = None,
    currency: Currency = USD,
    top: Top = 10,
    at: At = None,
    fabric: FabricRule = "any",
) -> JSONResponse:
    """The best plans for a fleet with GPUs busy all the time (``steady_gpus``) and any
    bursts on top, cheapest total first: the rows of ``gpu-tracker plan --format json``
    with the same options (underscores for hyphens). A fleet of bursts only:
    ``/api/v1/plan/burst``. ``migration_usd`` above zero needs ``current_provider``."""
    check_known(request, PARAMS)
    q = PlanQuery(
        gpu, steady_gpus, burst_gpu_hours, interruptible, months, spot_overhead,
        checkpoint_minutes, storage_tb, storage, egress_tb, migration_usd, current_provider,
        provider, region, currency, top, at, fabric,
    )  # fmt: skip
    return _plan_rows(request, q, "/api/v1/plan")


@api_router.get("/plan/burst", summary="Plans for bursts only (gpu-tracker plan --burst-…)")
def api_plan_burst(
    request: Request,
    gpu: Gpu,
    burst_gpu_hours: Positive,
    interruptible: Share = "0",
    months: Months = 36,
    spot_overhead: Overhead = None,
    checkpoint_minutes: Annotated[str, Query(pattern=POSITIVE, max_length=24)] = "60",
    storage_tb: Number = "0",
    storage: Storage = "ssd",
    egress_tb: Number = "0",
    migration_usd: Number = "0",
    current_provider: Provider = None,
    provider: Names = None,
    region: Names = None,
    currency: Currency = USD,
    top: Top = 10,
    at: At = None,
    fabric: FabricRule = "any",
) -> JSONResponse:
    """``/api/v1/plan`` for a fleet without steady GPUs: ``burst_gpu_hours`` a month,
    on spot and on-demand (``gpu-tracker plan --burst-gpu-hours N --format json``)."""
    check_known(request, tuple(p for p in PARAMS if p != "steady_gpus"))
    q = PlanQuery(
        gpu, "0", burst_gpu_hours, interruptible, months, spot_overhead,
        checkpoint_minutes, storage_tb, storage, egress_tb, migration_usd, current_provider,
        provider, region, currency, top, at, fabric,
    )  # fmt: skip
    return _plan_rows(request, q, "/api/v1/plan/burst")


def _plan_rows(request: Request, q: PlanQuery, route: str) -> JSONResponse:
    found, _ = answer(context_of(request), q)
    if found.left_out:
        log.warning("%s: %s", route, found.left_out)
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
    dearest complete plan's total); an incomplete plan shows the parts it has.

    Each plan's name is HTML text above its bar, not SVG text beside it: an SVG label
    has a fixed box and a long name (``2. lambda gpu_8x_h100_sxm5 us-east-1``) was cut
    at its edge; HTML text wraps on a narrow screen and is never clipped."""
    totals = [sum(_parts(r).values(), Decimal(0)) for r in rows]
    top = max(totals, default=Decimal(0))
    if top <= 0:
        return None
    out = ['<ol class="plan-bars" aria-label="each plan\'s cost by part">']
    for row in rows:
        name = f"{row['provider']} {row['instance_type']} {row['region']}"
        out.append(
            f'<li value="{escape(str(row["rank"]))}"><span class="plan-label">{escape(name)}'
            f'</span><svg class="plan-bar" xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {width} 16" width="100%" height="16" preserveAspectRatio="none" '
            f'role="img" aria-label="{escape(name)}">'
        )
        x = 0.0
        for part, value in _parts(row).items():
            length = float(value / top) * width
            if length <= 0:
                continue
            out.append(
                f'<rect class="part part-{part}" data-part="{part}" data-value="{value}" '
                f'x="{x:.1f}" y="0" width="{length:.1f}" height="16" '
                f'fill="{PALETTE[PARTS.index(part)]}"><title>{part}: {value}</title></rect>'
            )
            x += length
        out.append("</svg></li>")
    out.append('</ol><p class="plan-legend">')
    for k, part in enumerate(PARTS):
        out.append(
            f'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" aria-hidden="true">'
            f'<rect width="10" height="10" fill="{PALETTE[k]}"/></svg> {part} '
        )
    out.append("</p>")
    return Markup("".join(out))


def _parts(row: dict[str, object]) -> dict[str, Decimal]:
    """The row's known parts in the view currency (``display_*``), in stacking order."""
    found = {}
    for part in PARTS:
        value = row.get(f"display_{part}")
        if isinstance(value, Decimal) and value > 0:
            found[part] = value
    return found
