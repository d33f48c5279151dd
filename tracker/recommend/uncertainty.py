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
  another workload class (:mod:`tracker.recommend.delivery`), or that is scaled from
  another vendor's part (or, for TPUs, Trainium and Inferentia, another generation's;
  serving: another vendor's measured/modelled ratio): ±35 %. Held out, Trainium1 and
  the TPUs so scaled miss by 31-37 %.
- ``modelled``: datasheet × MFU, or a stand-in rule (the A10G as the A10): ±50 %.
- serving at a request shape no measurement of the GPU (or of its nearest GPU) has: ±35 %
  (held out, a TensorRT-LLM shape is predicted from the others within ±35 % for 23 of 24).

A job's hours then lie in ``hours × (1 ± error)``; so does its cost.
"""

from __future__ import annotations

from tracker.recommend.rating import Basis, Rate

__all__ = [
    "BANDS",
    "CARRIED",
    "CLOSE_CALL",
    "SERVING_SHAPE",
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
