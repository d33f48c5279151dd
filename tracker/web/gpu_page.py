"""The GPU page: one catalog model's datasheet figures and its cheapest offers now.

Figures come from the GPU catalog (each row cites its datasheet); prices from the same
winner query as the Overview, narrowed to this model.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Annotated

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import HTMLResponse

from tracker.catalog import GpuSelection, GpuSpec, get_spec
from tracker.store.dashboard import cheapest_per_gpu
from tracker.web.app import context_of
from tracker.web.errors import BadRequest
from tracker.web.overview import COLUMNS
from tracker.web.pages import page
from tracker.web.params import check_known

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
    winners = {
        w.group: w
        for w in cheapest_per_gpu(context.engine, gpu=GpuSelection(models=(spec.name,), names=()))
    }
    return page(
        request,
        "gpu.html",
        spec.name,
        spec=spec,
        datasheet=[(k, getattr(spec, k)) for k in DATASHEET],
        winners=winners,
        groups=COLUMNS,
    )
