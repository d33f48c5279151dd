"""The arithmetic of one plan in plain words: the table a finance person would check.

Each line is a quantity times a unit price equals a figure, with the figures the plan
row carries, so every number in the total can be redone with a calculator.
"""

from __future__ import annotations

from decimal import Decimal

from tracker import format as fmt
from tracker.plan.build import PlanRow
from tracker.plan.cover import HOURS_PER_MONTH, Cover
from tracker.recommend.demand import Demand

__all__ = ["explain"]


def _n(value: Decimal | int) -> str:
    """A quantity with thousands separators and no trailing zeros (10,240; 0.5)."""
    return f"{Decimal(value).normalize():,f}"


def _usd(value: Decimal) -> str:
    return fmt.money(value)


def explain(row: PlanRow, demand: Demand) -> list[str]:
    lines = [
        f"Plan {row.rank}: {row.provider} {row.region} {row.instance_type} "
        f"({fmt.gpus(row.gpu_count, row.gpu_model)}), {row.months} months of 730 hours"
    ]
    lines += _steady(row, demand)
    lines += _burst(row, demand)
    lines += _storage_egress(row, demand)
    if row.migration_usd:
        lines.append(
            f"Migration: {_usd(row.migration_usd)} once, moving from {demand.current_provider}"
        )
    if row.incomplete:
        lines.append(f"Incomplete: no price for {', '.join(row.incomplete)}; no total")
        return lines
    lines.append(
        f"Total: {_usd(row.total_usd)} = {_usd(row.monthly_usd)} a month over {row.months}"
    )
    if row.all_on_demand_usd is not None and row.savings_pct is not None:
        lines.append(
            f"All on-demand would be {_usd(row.all_on_demand_usd)}: "
            f"this plan saves {fmt.percent(row.savings_pct)}"
        )
    if row.break_even_utilization is not None:
        lines.append(
            "Break-even: the commitments beat on-demand if the steady instances are busy "
            f"more than {fmt.percent(row.break_even_utilization * 100)} of the horizon"
        )
    return lines


def _steady(row: PlanRow, demand: Demand) -> list[str]:
    if row.instances == 0:
        return ["Steady: none"]
    head = (
        f"Steady: {fmt.count(demand.steady_gpus, 'GPU')} on {fmt.count(row.gpu_count, 'GPU')} "
        f"an instance = {fmt.count(row.instances, 'instance')}"
    )
    cover = row.basis.get("cover")
    if not isinstance(cover, Cover):
        return [head, "  no on-demand, reserved or savings plan price covers the horizon"]
    lines = [head]
    for s in cover.segments:
        label = fmt.pricing_label(s.pricing, s.payment_option or None)
        if s.plan_type:
            label += f", {s.plan_type.replace('_', ' ')} plan"
        where = f"months {s.from_month}-{s.from_month + s.months - 1}"
        if s.term_months is None:
            hourly = s.cost / (s.months * HOURS_PER_MONTH)
            lines.append(
                f"  {where}: {label} {fmt.per_hour(hourly)} × {_n(s.months * HOURS_PER_MONTH)} h"
                f" = {_usd(s.cost)}"
            )
        else:
            hours = s.term_months * HOURS_PER_MONTH
            hourly = s.cost / hours
            past = "" if s.months == s.term_months else " (paid in full past the horizon)"
            lines.append(
                f"  {where}: {label} {fmt.per_hour(hourly)} × {_n(hours)} h = {_usd(s.cost)}{past}"
            )
    lines.append(
        f"  = {_usd(cover.cost)} an instance × {row.instances} = {_usd(row.steady_usd or Decimal(0))}"
    )
    return lines


def _burst(row: PlanRow, demand: Demand) -> list[str]:
    if demand.burst_gpu_hours == 0:
        return []
    if row.burst_usd is None:
        return ["Burst: no price for these GPU-hours"]
    b = row.basis
    hours = Decimal(str(b["burst_hours"]))
    on_spot = Decimal(str(b["burst_spot_hours"]))
    lines = [
        f"Burst: {_n(demand.burst_gpu_hours)} GPU-h a month × {row.months} = {_n(hours)} GPU-h,"
        f" {fmt.percent(demand.interruptible * 100)} interruptible"
    ]
    if on_spot:
        spot = Decimal(str(b["spot_per_gpu_hour_usd"]))
        overhead = Decimal(str(b["spot_overhead"]))
        lines.append(
            f"  {_n(on_spot)} GPU-h on spot at {fmt.per_gpu_hour(spot)} × (1 + {overhead} re-work)"
            f" = {_usd(on_spot * spot * (1 + overhead))}"
        )
    if hours - on_spot:
        od = Decimal(str(b["on_demand_per_gpu_hour_usd"]))
        lines.append(
            f"  {_n(hours - on_spot)} GPU-h on-demand at {fmt.per_gpu_hour(od)}"
            f" = {_usd((hours - on_spot) * od)}"
        )
    lines.append(f"  = {_usd(row.burst_usd)}")
    return lines


def _storage_egress(row: PlanRow, demand: Demand) -> list[str]:
    parts = (
        ("Storage", "storage", demand.storage_tb, row.storage_usd, demand.storage.value, ""),
        ("Egress", "egress", demand.egress_tb, row.egress_usd, "internet egress", " a month"),
    )
    lines = []
    for title, name, tb, usd, what, a_month in parts:
        if not tb:
            continue
        if usd is None:
            lines.append(f"{title}: no {what} price in {row.region}")
            continue
        gb = Decimal(str(row.basis[f"{name}_gb"]))
        month = Decimal(str(row.basis[f"{name}_month_usd"]))
        lines.append(
            f"{title}: {_n(tb)} TB = {_n(gb)} GB {what}{a_month}"
            f" = {_usd(month)} a month × {row.months} = {_usd(usd)}"
        )
    return lines
