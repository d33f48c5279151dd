"""The MCP server: the six tools of :mod:`tracker.mcp.tools`, described for a model.

Each tool answers with one text item, the JSON array ``gpu-tracker <cmd> --format json``
prints for the same options (same keys, decimals as strings, ISO-8601 UTC times), so
an assistant reads what a script reads. The store is read in a worker thread: a tool
never blocks the event loop that serves the other requests of ``serve``.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from tracker import __version__
from tracker.mcp import tools
from tracker.mcp.tools import Reader

__all__ = ["DESCRIPTIONS", "build_server"]

_MONEY = (
    " Money fields are exact decimal strings: price_per_hour and currency are the "
    "provider's own figure; *_usd fields are USD (price_per_hour_usd: USD per hour for "
    "the whole instance; price_per_gpu_hour_usd: USD per GPU-hour); display_* fields are "
    "the same figures in display_currency (the currency option); net_* fields and discount "
    "are what the account pays under its configured discount rules (equal to the list "
    "figures, discount null, where no rule applies); rankings and plans use them. VRAM is "
    "GiB. Times are ISO-8601 UTC. Returns a JSON array of rows (the CLI's --format json)."
)
DESCRIPTIONS = {
    "offers": "Current GPU cloud offers (listed, latest price), cheapest first. Each row "
    "is one offer: provider, instance_type, region, zone, pricing (on_demand, spot, "
    "reserved_1y...), gpu_model, gpu_count, gpu_memory_gib (GiB per GPU), vcpus, "
    "memory_gib, availability, first_seen/last_seen." + _MONEY,
    "compare": "Cheapest USD per GPU-hour now for each GPU model x provider: on_demand, "
    "spot, reserved_1y/3y, savings_plan_1y/3y columns, spot_discount_pct (spot below "
    "on-demand, percent) and change_7d_pct/change_30d_pct (of on-demand)." + _MONEY,
    "history": "Price over time. With gpu: the cheapest USD per GPU-hour at each step "
    "(time, price_per_gpu_hour_usd, and which offer). With one provider, instance_type "
    "and region: that offer's stored price intervals (first_seen, last_seen, ended_at; "
    "at: the one in force then), or with resample its price at each step." + _MONEY,
    "recommend": "Offers ranked by the estimated cost of a whole job (a named profile "
    "or ad-hoc fields: params, task, precision, tokens...). Rows: rank, the offer, "
    "vram_needed_gib/vram_available_gib (GiB), effective_price_per_hour_usd (USD per hour, "
    "reservations amortised), job_hours (with job_hours_low/high), job_cost_usd (USD for "
    "the job), basis (how the hours were estimated); with explain also excluded offers "
    "with excluded_reason/excluded_detail." + _MONEY,
    "plan": "Cheapest fleet plans for steady and burst GPU demand over a horizon of "
    "months: reserved terms, on-demand and spot, plus storage, egress and migration. Rows: "
    "rank, provider, region, instance_type, instances, commitments (pricing and months), "
    "steady_usd, burst_usd, storage_usd, egress_usd, migration_usd, total_usd (USD over "
    "the horizon), monthly_usd, all_on_demand_usd, savings_pct, incomplete (parts with no "
    "known price: then no total)." + _MONEY,
    "gpus": "The GPU catalog: name, vendor, architecture, vram_gib (GiB), "
    "memory_bandwidth_gbs (GB/s), dense tensor TFLOPS (bf16_tflops, fp16_tflops, "
    "fp8_tflops, fp32_tflops), nvlink, and the datasheet sources; with unknown, the GPU "
    "names seen in collected data that the catalog does not recognise.",
}
"""What a model reads to pick a tool and read its rows."""

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def _tool(reader: Reader, fn: Callable[..., tools.Rows]) -> Callable[..., Any]:
    """``fn`` with ``reader`` bound, as an async tool whose parameters (the schema the
    SDK builds) are ``fn``'s others and whose answer is the rows' JSON text."""
    signature = inspect.signature(fn, eval_str=True)
    params = list(signature.parameters.values())[1:]

    async def call(**options: Any) -> str:
        work = functools.partial(fn, reader, **options)
        try:
            rows = await anyio.to_thread.run_sync(work)
        except tools.ToolInputError as exc:  # the model reads the line; a crash stays hidden
            raise ToolError(str(exc)) from None
        return json.dumps(rows, indent=2)

    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=params, return_annotation=str
    )
    call.__name__ = fn.__name__
    return call


def build_server(reader: Reader) -> MCPServer[Any]:
    """An MCP server with the six read-only tools over ``reader``'s store."""
    server: MCPServer[Any] = MCPServer(
        "gpu-tracker",
        version=__version__,
        instructions="GPU cloud prices collected by gpu-tracker: current offers, history, "
        "comparisons, job cost rankings and fleet plans. Prices are USD unless a field "
        "says otherwise.",
    )
    for name in ("offers", "compare", "history", "recommend", "plan", "gpus"):
        server.add_tool(
            _tool(reader, getattr(tools, name)),
            name=name,
            description=DESCRIPTIONS[name],
            annotations=_READ_ONLY,
            structured_output=False,
        )
    return server
