"""Fleet plans as rows: what ``plan``, ``/api/v1/plan`` and the Plan page show.

The plan is priced in USD (:mod:`tracker.plan`); this layer adds the view currency's
figures (``display_*``, converted at the rates in force at ``at``) and turns each plan
into the documented row. Money stays exact ``Decimal`` (cents), ``None`` where a part
has no known price; an incomplete plan has no total, since a sum that leaves out a part
would read as a price.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

from tracker.fx import USD
from tracker.plan.build import CENT, PlanRow
from tracker.plan.stored import stored_plans
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.demand import Demand, PlanInputError
from tracker.service_prices import ServiceKind
from tracker.settings import Settings
from tracker.store import Engine
from tracker.views.currency import load_view
from tracker.views.history import gpu_selection

__all__ = ["DEMAND_DEFAULTS", "PLAN_KEYS", "PlanAnswer", "demand_of", "plan_row", "plans"]

PLAN_KEYS = (
    "rank",
    "provider",
    "region",
    "instance_type",
    "gpu_model",
    "gpu_count",
    "instances",
    "fabric",
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


@dataclass
class PlanAnswer:
    rows: list[dict[str, Any]]
    """The documented rows, best first."""
    plans: list[PlanRow]
    """The same plans with what their figures come from (``--explain``)."""
    left_out: str | None
    """One line for the prices left out for want of an exchange rate, or None."""
    currency: str


def plans(
    engine: Engine,
    settings: Settings,
    demand: Demand,
    *,
    gpu: Sequence[str],
    provider: Sequence[str] | None = None,
    region: Sequence[str] | None = None,
    currency: str = USD,
    at: datetime | None = None,
    top: int | None = None,
    assumptions: Assumptions | None = None,
) -> PlanAnswer:
    """The best ``top`` plans for ``demand`` on ``gpu`` (a family or model), with the
    prices and exchange rates in force now or at ``at``. Raises ReadError subclasses for
    an unknown currency, HistoryArgumentError for an unknown GPU, DatabaseError."""
    view = load_view(engine, settings, currency, at)
    selection = gpu_selection(engine, gpu)
    result = stored_plans(
        engine,
        settings,
        demand,
        gpu=selection,
        provider=provider,
        region=region,
        assumptions=assumptions,
        at=at,
        top=top,
    )
    rows = [plan_row(r, view.code, view.show) for r in result.rows]
    return PlanAnswer(rows, result.rows, result.conversion.report(USD), view.code)


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
        "fabric": row.fabric,
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


_STORAGE = {"ssd": ServiceKind.BLOCK_STORAGE_SSD, "hdd": ServiceKind.BLOCK_STORAGE_HDD}
DEMAND_DEFAULTS: dict[str, Any] = {
    "steady_gpus": "0",
    "burst_gpu_hours": "0",
    "interruptible": "0",
    "months": 36,
    "spot_overhead": None,
    "checkpoint_minutes": "60",
    "storage_tb": "0",
    "storage": "ssd",
    "egress_tb": "0",
    "migration_usd": "0",
    "current_provider": None,
    "fabric": "any",
}
"""``plan``'s demand options and their defaults (``None`` given means "not given", so a
saved plan can refuse options that would silently not apply)."""
_NUMBERS = (
    *("steady_gpus", "burst_gpu_hours", "interruptible", "checkpoint_minutes"),
    *("storage_tb", "egress_tb", "migration_usd"),
)


def _decimal(option: str, text: Any) -> Decimal:
    try:
        value = Decimal(str(text).strip().replace("_", ""))
    except InvalidOperation:
        raise PlanInputError(f"{option}: not a number: {text!r}") from None
    if not value.is_finite():
        raise PlanInputError(f"{option}: not a number: {text!r}")
    return value


def demand_of(given: Mapping[str, Any]) -> Demand:
    """``plan``'s demand options (numbers as text, exact; a missing or ``None`` one takes
    its default) as a :class:`Demand`, for the CLI and the MCP tool alike; a bad one is a
    PlanInputError naming the option as the command line spells it (``--steady-gpus``)."""
    chosen = {k: given[k] if given.get(k) is not None else v for k, v in DEMAND_DEFAULTS.items()}
    storage = chosen["storage"]
    if storage not in _STORAGE:
        raise PlanInputError(f"--storage: {storage!r} is not ssd or hdd")
    values = {n: _decimal(f"--{n.replace('_', '-')}", chosen[n]) for n in _NUMBERS}
    overhead = chosen["spot_overhead"]
    return Demand(
        **values,
        months=chosen["months"],
        storage=_STORAGE[storage],
        current_provider=chosen["current_provider"],
        fabric=chosen["fabric"],
        spot_overhead=None if overhead is None else _decimal("--spot-overhead", overhead),
    )
