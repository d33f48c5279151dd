"""The GPU page: one catalog model's datasheet figures, its cheapest offers now, and how
often each provider and region could actually rent it out (obtainability, where the
provider reports availability).

Figures come from the GPU catalog (each row cites its datasheet); prices from the same
winner query as the Overview, narrowed to this model.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Query
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse

from tracker.catalog import GpuSpec, chip_unit, get_spec
from tracker.format import pricing_label
from tracker.models import PricingModel
from tracker.views.history import model_history
from tracker.views.obtainability import group_rows
from tracker.views.overview import COLUMNS, cheapest_now
from tracker.web.context import WebContext, context_of
from tracker.web.currency import page_view
from tracker.web.errors import BadRequest
from tracker.web.pages import page
from tracker.web.params import check_known
from tracker.web.svg import Series, chart_steps, step_chart

__all__ = ["router"]

router = APIRouter(include_in_schema=False)

DATASHEET = tuple(f.name for f in fields(GpuSpec) if f.name not in ("name", "aliases", "note"))


@router.get("/gpu", response_class=HTMLResponse)
def gpu_page(
    request: Request, name: Annotated[str, Query(min_length=1, max_length=64)]
) -> HTMLResponse:
    context = context_of(request)
    check_known(request, ("name",))
    try:
        spec = get_spec(name)
    except KeyError:
        raise BadRequest(f"name: {name!r} is not a canonical GPU model (see 'gpus')") from None
    view, now = page_view(context)
    chart = _history_chart(context, spec.name, now)
    winners = cheapest_now(context.engine, view.rates, now, spec.name)
    obtainable = group_rows(context.engine, now, [spec.name])
    return page(
        request,
        "gpu.html",
        spec.name,
        spec=spec,
        unit=chip_unit([spec.name]),
        datasheet=[(k, getattr(spec, k)) for k in DATASHEET],
        winners=winners,
        groups=COLUMNS,
        chart=chart,
        obtainable=obtainable,
    )


HISTORY_DAYS = 90


def _history_chart(context: WebContext, model: str, now: datetime) -> Markup:
    """The cheapest $/GPU-hour across providers at each day of the last 90 and now, one
    step line per pricing model (what ``history --gpu`` prints, at the same rates: the
    stored ones and ``fx_rates``): the line ends at the price in force now, the
    "Cheapest now" table's figure. The axis ends at now; a store younger than the
    window says so (a price seen once is a point at now)."""
    series = []
    for pricing in (PricingModel.ON_DEMAND, PricingModel.SPOT, PricingModel.RESERVED_1Y):
        rows = model_history(
            context.engine, context.settings, model, pricing, days=HISTORY_DAYS, now=now
        )
        steps = chart_steps(rows, "price_per_gpu_hour_usd")
        if steps:
            series.append(Series(pricing_label(pricing.value), steps))
    return step_chart(
        series,
        unit=f"USD/{chip_unit([model])}·h",
        title=f"cheapest {model}",
        empty=f"No {model} price stored in the last {HISTORY_DAYS} days.",
        now=now,
        window_start=now - timedelta(days=HISTORY_DAYS),
    )
