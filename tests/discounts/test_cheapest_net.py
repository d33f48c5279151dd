"""The cheapest offer per step and the compare cells rank net prices, also when a rule
covers only some instance types of a provider's region (SQLite and Postgres).

testcloud, H100-SXM, us-east-1, on-demand, observed 2026-11-01:
    big    8 GPUs at 80.00/h: 10.00 per GPU-hour list
    small  1 GPU  at  9.00/h:  9.00 per GPU-hour list
The rule ``big-deal`` takes 20 % off ``big*`` from 2026-11-15: 80.00 × 0.8 = 64.00/h,
64 / 8 = 8.00 per GPU-hour, below small's 9.00. Ranking each region's cheapest list
offer (small) and discounting it would miss that: the rule names instance types, so
the groups are read per instance type.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from sqlalchemy import Engine

from tests.conftest import make_offer
from tests.listed_collector import collect
from tracker.catalog import GpuSelection
from tracker.discounts import Discounts, parse_discounts
from tracker.fx import Rates
from tracker.history import args as history_args
from tracker.history.compare import compare_rows
from tracker.history.views import gpu_steps

D = Decimal
NOV_1 = datetime(2026, 11, 1, tzinfo=UTC)
RULES = parse_discounts(
    [
        {
            "name": "big-deal",
            "provider": "testcloud",
            "instance_types": ["big*"],
            "percent": 20,
            "valid_from": datetime(2026, 11, 15, tzinfo=UTC),
        }
    ]
)


def _offers() -> list[object]:
    common = {"gpu_model": "H100-SXM", "gpu_memory_gib": D(80), "interconnect": "nvlink"}
    return [
        make_offer(instance_type="big", gpu_count=D(8), price_per_hour=D("80.00"), **common),
        make_offer(instance_type="small", gpu_count=D(1), price_per_hour=D("9.00"), **common),
    ]


def test_the_cheapest_per_step_is_the_cheapest_net_offer(engine: Engine) -> None:
    collect(engine, _offers(), NOV_1)  # type: ignore[arg-type]
    window = history_args.Window(
        datetime(2026, 11, 14, tzinfo=UTC), datetime(2026, 11, 16, tzinfo=UTC)
    )
    grid = history_args.make_grid(window, timedelta(days=1), "1d")
    h100 = GpuSelection(models=("H100-SXM",), names=())
    rows = gpu_steps(engine, h100, grid, fx_rates={}, discounts=Discounts(RULES, Rates()))
    got = [(r["time"].day, r["instance_type"], r["net_price_per_gpu_hour_usd"]) for r in rows]
    # 11-14: before the rule, small (9.00) beats big (10.00); from 11-15 big nets 8.00
    assert got == [(14, "small", D("9")), (15, "big", D("8")), (16, "big", D("8"))]
    assert rows[1]["price_per_gpu_hour_usd"] == D("10") and rows[1]["discount"] == "big-deal"
    listed = gpu_steps(engine, h100, grid, fx_rates={})
    assert {r["instance_type"] for r in listed} == {"small"}  # no rules: the list ranking


def test_compare_cells_take_the_cheapest_net_offer(engine: Engine) -> None:
    collect(engine, _offers(), NOV_1)  # type: ignore[arg-type]
    now = datetime(2026, 11, 20, tzinfo=UTC)
    [row] = compare_rows(engine, now=now, fx_rates={}, discounts=Discounts(RULES, Rates()))
    assert (row["on_demand"], row["net_on_demand"], row["discount"]) == (
        D("9"),
        D("8"),
        "big-deal",
    )
