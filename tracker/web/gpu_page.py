"""The GPU page: one catalog model's datasheet figures and its cheapest offers now.

Figures come from the GPU catalog (each row cites its datasheet); prices from the same
winner query as the Overview, narrowed to this model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Annotated

from fastapi import APIRouter, Query
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse

from tracker.catalog import GpuSelection, GpuSpec, get_spec
from tracker.format import pricing_label
from tracker.history.args import Window, make_grid
from tracker.history.views import gpu_steps
from tracker.models import PricingModel
from tracker.store.dashboard import cheapest_per_gpu
from tracker.store.engine import Engine
from tracker.web.app import context_of
from tracker.web.currency import page_view
from tracker.web.errors import BadRequest
from tracker.web.overview import COLUMNS
from tracker.web.pages import page
from tracker.web.params import check_known
from tracker.web.svg import Series, Step, step_chart

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
    chart = _history_chart(context.engine, spec.name, context.settings.fx_rates)
    view, now = page_view(context)
    only = GpuSelection(models=(spec.name,), names=())
    winners = {w.group: w for w in cheapest_per_gpu(context.engine, view.rates, now, gpu=only)}
    return page(
        request,
        "gpu.html",
        spec.name,
        spec=spec,
        datasheet=[(k, getattr(spec, k)) for k in DATASHEET],
        winners=winners,
        groups=COLUMNS,
        chart=chart,
    )


HISTORY_DAYS = 90


def _history_chart(engine: Engine, model: str, fx_rates: Mapping[str, Decimal]) -> Markup:
    """The cheapest $/GPU-hour across providers at each day of the last 90, one step
    line per pricing model (tracker.history's aggregate, what ``history --gpu`` prints,
    at the same rates: the stored ones and ``fx_rates``)."""
    now = datetime.now(UTC).replace(microsecond=0)
    window = Window(now - timedelta(days=HISTORY_DAYS), now)
    grid = make_grid(window, timedelta(days=1), "1d")
    selection = GpuSelection(models=(model,), names=())
    series = []
    for pricing in (PricingModel.ON_DEMAND, PricingModel.SPOT, PricingModel.RESERVED_1Y):
        rows = gpu_steps(engine, selection, grid, pricing=[pricing], fx_rates=fx_rates)
        steps = [
            Step(a["time"], b["time"], a["price_per_gpu_hour_usd"])
            for a, b in zip(rows, [*rows[1:], {"time": now}], strict=True)
            if a["price_per_gpu_hour_usd"] is not None
        ]
        if steps:
            series.append(Series(pricing_label(pricing.value), steps))
    return step_chart(
        series,
        unit="USD/GPU·h",
        title=f"cheapest {model}",
        empty=f"No {model} price stored in the last {HISTORY_DAYS} days.",
    )
