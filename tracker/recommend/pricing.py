"""Turning a price into a job cost: spot re-work and reserved amortisation.

Spot: an interruption throws away the work since the last checkpoint and costs a
restart. With interruptions arriving at rate λ (Poisson), the expected wall time for
``T`` hours of work checkpointed every ``τ`` hours is Daly's estimate

    T_wall = (T / τ) · e^{λR} · (e^{λ(τ+δ)} − 1) / λ

(J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart
dumps", Future Generation Computer Systems 22(3), 2006, eq. 9 with M = 1/λ), where R
is the restart time and δ the checkpoint write time. Without checkpoints τ = T: the
whole job restarts, which is why long uncheckpointed jobs lose on spot however big
the discount. λ comes from the provider's published interruption frequency (AWS Spot
Advisor: share of capacity reclaimed over the trailing month; we use the bucket's
upper bound as expected interruptions per instance-month, which is conservative),
else a configurable default.

Reserved: the effective hourly price is what the commitment costs per hour of the
term (upfront / term hours + recurring hourly). A savings plan (AWS) is costed the same
way: its rate is already the effective hourly price, and the plan is paid for every
hour of its term. A reservation is paid for every hour
of the term, used or not, so it is only eligible when the user's commitment horizon
covers the whole term *and* they state an expected utilization ``u`` (the share of
the term their GPUs are busy). Each busy hour then costs the effective rate ÷ ``u``,
and the job is charged ``effective hourly × job hours ÷ u``: at ``u = 1`` every hour
of the term is somebody's job, at ``u = 0.5`` every job also pays for an idle hour.
Charging a job only its own hours would make a 2-hour job look cheapest on a 1-year
term it would leave idle for 8,758 hours.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_EVEN, Decimal
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from tracker.models import Offer, PricingModel
from tracker.recommend.assumptions import HOURS_PER_MONTH

__all__ = [
    "effective_hourly",
    "effective_hourly_usd",
    "expected_wall_hours",
    "interruption_rate_per_hour",
    "job_cost_usd",
    "reservation_eligible",
    "term_covered",
    "utilization_divisor",
]

FloatArray = npt.NDArray[np.float64]
_Rate = TypeVar("_Rate", float, FloatArray)
CENT = Decimal("0.01")


def interruption_rate_per_hour(pct_per_month: _Rate) -> _Rate:
    """Interruptions per instance-hour from a share of capacity reclaimed per month."""
    return pct_per_month / 100.0 / HOURS_PER_MONTH


def expected_wall_hours(
    work_hours: FloatArray,
    rate_per_hour: FloatArray,
    checkpoint_hours: float | None,
    restart_hours: float,
    checkpoint_write_hours: float,
) -> FloatArray:
    """Daly's expected wall-clock hours for ``work_hours`` of work (vectorised)."""
    tau = work_hours if checkpoint_hours is None else np.minimum(checkpoint_hours, work_hours)
    segment = tau + checkpoint_write_hours
    lam = rate_per_hour
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        per_segment = np.where(
            lam > 0,
            np.exp(lam * restart_hours) * np.expm1(lam * segment) / np.where(lam > 0, lam, 1.0),
            segment,
        )
        result: FloatArray = work_hours / tau * per_segment
    return result


def term_covered(pricing: PricingModel, horizon_months: float) -> bool:
    """A reservation is eligible only when the commitment horizon covers its term."""
    term = pricing.term_hours
    return term is None or horizon_months * HOURS_PER_MONTH >= term - 1e-9


def reservation_eligible(
    pricing: PricingModel, horizon_months: float, utilization: float | None
) -> bool:
    """Pay-as-you-go always; a reservation when the horizon covers it and ``u`` is known."""
    if pricing.term_hours is None:
        return True
    return utilization is not None and term_covered(pricing, horizon_months)


def utilization_divisor(pricing: PricingModel, utilization: float | None) -> float:
    """What a job's hours are divided by: ``u`` for a reservation, 1 otherwise."""
    if pricing.term_hours is None or utilization is None:
        return 1.0
    return utilization


def job_cost_usd(
    pricing: PricingModel, hourly: Decimal, hours: Decimal, utilization: float | None
) -> Decimal:
    """Exact price × estimated hours (÷ utilization for reservations), to the cent."""
    cost = hourly * hours
    divisor = utilization_divisor(pricing, utilization)
    if divisor != 1.0:
        cost = cost / Decimal(repr(divisor))
    return cost.quantize(CENT, rounding=ROUND_HALF_EVEN)


def _decimal_attr(attributes: Mapping[str, object], name: str) -> Decimal | None:
    value = attributes.get(name)
    if value is None or isinstance(value, bool):
        return None
    try:
        result = Decimal(str(value))
    except ArithmeticError:
        return None
    return result if result.is_finite() and result >= 0 else None


def effective_hourly(
    pricing: PricingModel, usd: Decimal, attributes: Mapping[str, object] | None
) -> Decimal:
    """USD per hour of the term for reservations, the listed hourly price otherwise.

    ``usd`` (converted at the rate in force when read) is the effective rate; when a
    reserved USD price also carries ``upfront_usd`` and ``recurring_hourly_usd`` the
    rate is recomputed from them (upfront spread over the term), which is exact
    rather than rounded.
    """
    term = pricing.term_hours
    if term is None or not attributes:
        return usd
    upfront = _decimal_attr(attributes, "upfront_usd")
    recurring = _decimal_attr(attributes, "recurring_hourly_usd")
    if upfront is None or recurring is None:
        return usd
    return upfront / term + recurring


def effective_hourly_usd(offer: Offer) -> Decimal:
    """:func:`effective_hourly` of an offer (its USD figure and attributes)."""
    return effective_hourly(offer.pricing, offer.usd, offer.attributes)
