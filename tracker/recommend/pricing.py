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
term (upfront / term hours + recurring hourly). It is only eligible when the user's
commitment horizon covers the whole term; within that horizon the job is charged its
hours at the effective rate (the rest of the term is the user's to use).
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import numpy.typing as npt

from tracker.models import Offer, PricingModel
from tracker.recommend.assumptions import HOURS_PER_MONTH

__all__ = [
    "effective_hourly_usd",
    "expected_wall_hours",
    "interruption_rate_per_hour",
    "term_covered",
]

FloatArray = npt.NDArray[np.float64]


def interruption_rate_per_hour(pct_per_month: float) -> float:
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


def _decimal_attr(offer: Offer, name: str) -> Decimal | None:
    value = offer.attributes.get(name)
    if value is None or isinstance(value, bool):
        return None
    try:
        result = Decimal(str(value))
    except ArithmeticError:
        return None
    return result if result.is_finite() and result >= 0 else None


def effective_hourly_usd(offer: Offer) -> Decimal:
    """USD per hour of the term for reservations, the listed hourly price otherwise.

    Collectors store ``price_per_hour_usd`` as the effective rate; when a reserved offer
    also carries ``upfront_usd`` and ``recurring_hourly_usd`` the rate is recomputed
    from them (upfront spread over the term), which is exact rather than rounded.
    """
    term = offer.pricing.term_hours
    if term is None:
        return offer.price_per_hour_usd
    upfront = _decimal_attr(offer, "upfront_usd")
    recurring = _decimal_attr(offer, "recurring_hourly_usd")
    if upfront is None or recurring is None:
        return offer.price_per_hour_usd
    return upfront / term + recurring
