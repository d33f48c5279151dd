"""How far a job-time estimate may be off, and when two offers are too close to call.

Each rate carries a relative error by where it comes from (its ``basis``), sized to the
leave-one-out errors of the shipped measurements (tests/recommend/test_uncertainty.py
holds each band to covering at least 90 % of them, so a change to the table or the model
that widens the errors fails there rather than showing a false precision):

- ``measured``: this GPU measured in the job's class; only the model size is scaled.
  90 % of leave-one-out predictions fall within ±14 %: the band is ±15 %.
- ``scaled``: another GPU's measurement, scaled by the roofline: 90 % within ±21 %,
  band ±25 %.
- a scaled rate that also carries the GPU family's delivered efficiency over from
  another workload class (:mod:`tracker.recommend.delivery`): ±35 %.
- ``modelled``: datasheet × MFU, or a stand-in rule (the A10G as the A10): ±50 %.
- serving at a request shape no measurement of the GPU (or of its nearest GPU) has: ±35 %
  (held out, a TensorRT-LLM shape is predicted from the others within ±35 % for 23 of 24).

A job's hours then lie in ``hours × (1 ± error)``; so does its cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tracker.recommend.rating import Basis, Rate

if TYPE_CHECKING:
    from tracker.recommend.rank import Candidate

__all__ = [
    "BANDS",
    "CARRIED",
    "CLOSE_CALL",
    "SERVING_SHAPE",
    "close_call",
    "hours_range",
    "relative_error",
]

BANDS = {Basis.MEASURED: 0.15, Basis.SCALED: 0.25, Basis.MODELLED: 0.50}
CARRIED = 0.35
SERVING_SHAPE = 0.35
CLOSE_CALL = "within the estimate's error: consider both"


def relative_error(rate: Rate) -> float:
    """The ± (a fraction) of a job's hours on this rate."""
    return rate.spread if rate.spread is not None else BANDS[rate.basis]


def hours_range(hours: float | None, rate: Rate) -> tuple[float | None, float | None]:
    if hours is None:
        return None, None
    error = relative_error(rate)
    return hours * (1.0 - error), hours * (1.0 + error)


def close_call(candidates: Sequence[Candidate]) -> str | None:
    """The note when the two cheapest jobs' cost ranges overlap (None otherwise)."""
    if len(candidates) < 2:
        return None
    first, second = candidates[0], candidates[1]
    if first.job_cost_usd is None or second.job_cost_usd is None:
        return None
    e1, e2 = relative_error(first.rate), relative_error(second.rate)
    c1, c2 = float(first.job_cost_usd), float(second.job_cost_usd)
    if c1 * (1.0 + e1) < c2 * (1.0 - e2):
        return None
    return (
        f"#1 {_named(first)} (job ${c1 * (1 - e1):,.2f}-{c1 * (1 + e1):,.2f}, ±{e1:.0%}) and "
        f"#2 {_named(second)} (${c2 * (1 - e2):,.2f}-{c2 * (1 + e2):,.2f}, ±{e2:.0%}) are "
        f"{CLOSE_CALL}"
    )


def _named(c: Candidate) -> str:
    return f"{c.offer.provider} {c.offer.instance_type}"
