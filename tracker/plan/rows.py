"""A plan as the row every face shows: the CLI's JSON and table, ``/api/v1/plan``.

Money stays exact ``Decimal`` (cents), ``None`` where a part has no known price; an
incomplete plan has no total (a sum that leaves out a part would read as a price).
``display_*`` are the USD figures in the view currency, converted by the caller's
``show`` (None when that currency has no rate).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from tracker.plan.build import CENT, PlanRow

__all__ = ["PLAN_KEYS", "plan_row"]

PLAN_KEYS = (
    "rank",
    "provider",
    "region",
    "instance_type",
    "gpu_model",
    "gpu_count",
    "instances",
    "commitments",
    "steady_usd",
    "burst_usd",
    "storage_usd",
    "egress_usd",
    "migration_usd",
    "total_usd",
    "monthly_usd",
    "all_on_demand_usd",
    "savings_pct",
    "break_even_utilization",
    "incomplete",
    "display_currency",
    "display_steady",
    "display_burst",
    "display_storage",
    "display_egress",
    "display_migration",
    "display_total",
    "display_monthly",
    "display_all_on_demand",
)
_MONEY = ("steady", "burst", "storage", "egress", "migration", "total", "monthly", "all_on_demand")


def plan_row(
    row: PlanRow, currency: str, show: Callable[[Decimal], Decimal | None]
) -> dict[str, Any]:
    complete = not row.incomplete
    out: dict[str, Any] = {
        "rank": row.rank,
        "provider": row.provider,
        "region": row.region,
        "instance_type": row.instance_type,
        "gpu_model": row.gpu_model,
        "gpu_count": row.gpu_count,
        "instances": row.instances,
        "commitments": row.commitments,
        "steady_usd": row.steady_usd,
        "burst_usd": row.burst_usd,
        "storage_usd": row.storage_usd,
        "egress_usd": row.egress_usd,
        "migration_usd": row.migration_usd,
        "total_usd": row.total_usd if complete else None,
        "monthly_usd": row.monthly_usd if complete else None,
        "all_on_demand_usd": row.all_on_demand_usd,
        "savings_pct": row.savings_pct,
        "break_even_utilization": row.break_even_utilization,
        "incomplete": list(row.incomplete),
        "display_currency": currency,
    }
    for name in _MONEY:
        usd = out[f"{name}_usd"]
        shown = None if usd is None else show(usd)
        out[f"display_{name}"] = (
            None if shown is None else shown.quantize(CENT, rounding=ROUND_HALF_EVEN)
        )
    return out
