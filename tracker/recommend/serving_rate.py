"""Serving rates: the serving model calibrated per GPU by its measured ÷ modelled throughput.

Split from :mod:`tracker.recommend.calibration` (which dispatches here for serving
profiles): a GPU's rate for a serving job is its datasheet compute × the inference MFU,
× the measured ÷ modelled output tokens/s of its own measurement closest in model size
and request shape (its own at another precision, else the nearest GPU's). Away from a
measured request shape the ratio is the geometric mean over every shape measured on that
model, and the estimate's error widens (:data:`tracker.recommend.uncertainty.SERVING_SHAPE`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tracker.catalog import GpuSpec
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.measured import Measurement
from tracker.recommend.profiles import Precision, Profile, WorkloadClass
from tracker.recommend.rating import Basis, Rate
from tracker.recommend.rating import load_of as _load
from tracker.recommend.rating import precision_family as _family
from tracker.recommend.roofline import cached_fit, cited_source, nearest_gpu, spec_of
from tracker.recommend.serving_fit import fit_vendor_efficiencies, modelled_serving
from tracker.recommend.throughput import spec_tflops

__all__ = ["predict_serving"]


def _modelled_serving(m: Measurement, a: Assumptions) -> float:
    """Output tokens/s the serving model gives for ``m``'s setup on its datasheet."""
    one = np.ones(1)
    return float(modelled_serving(m, a, one, one)[0])


def fit_serving(rows: tuple[Measurement, ...], a: Assumptions) -> dict[Measurement, float]:
    """Each serving row's modelled throughput (rows the model cannot rate are left out)."""
    out = {}
    for m in rows:
        if m.workload_class is WorkloadClass.LLM_INFERENCE:
            tps = _modelled_serving(m, a)
            if math.isfinite(tps):
                out[m] = tps
    return out


def predict_serving(
    p: Profile,
    spec: GpuSpec,
    precision_flag: tuple[Precision, str] | None,
    a: Assumptions,
    measurements: tuple[Measurement, ...],
) -> Rate | None:
    """Serving: the modelled throughput × measured/modelled on the nearest measurement."""
    if precision_flag is None:
        # no datasheet rate (A10G): its own serving measurements, fitted (fitted.py)
        from tracker.recommend.fitted import fitted_serving_rate

        return fitted_serving_rate(p, spec, a, measurements)
    precision, flag = precision_flag
    peak = spec_tflops(spec, precision)
    assert peak is not None and p.input_tokens is not None and p.output_tokens is not None
    base = peak * 1e12 * a.efficiency_for("inference")
    shape = math.log(p.input_tokens / p.output_tokens)
    modelled = cached_fit(fit_serving, measurements, a)
    served = [m for m in measurements if m in modelled]
    rows = [m for m in served if _family(m.precision) == _family(precision)]

    def closest(ms: Sequence[Measurement]) -> Measurement:
        def gap(m: Measurement) -> tuple[bool, float, str]:
            assert m.input_tokens is not None and m.output_tokens is not None
            io = abs(math.log(m.input_tokens / m.output_tokens) - shape)
            return (not m.yours, abs(math.log(m.params / p.params)) + io, m.id)

        return min(ms, key=gap)

    own = [m for m in rows if m.gpu == spec.name]
    basis, via = Basis.MEASURED, ""
    if not own:
        # the GPU's own measurement at another precision before another GPU's: its
        # measured/modelled ratio is that GPU's (and its software's) share of its
        # datasheet, which another vendor's GPU says nothing about (MLPerf: an MI300X
        # serves Llama 2 70B at 0.96x an H100, its datasheet says 1.3-1.6x)
        own = [m for m in served if m.gpu == spec.name]
        basis, via = Basis.SCALED, "from its own measurement at another precision: "
    if not own:
        fitted = _vendor_rate(spec, precision, flag, base, measurements, a)
        if fitted is not None:
            return fitted
        near = nearest_gpu(spec, precision, rows)
        if near is None:
            source = f"datasheet {peak:g} TFLOPS x inference MFU, serving model"
            return Rate(base, Basis.MODELLED, source, precision, flag)
        own, basis, via = near[1], Basis.SCALED, f"from {near[0].name} by the serving model: "
    m = closest(own)
    k = m.throughput / modelled[m]
    source = f"{via}{cited_source(m)}; measured/modelled {k:.2f}"
    spread = _across_vendors(spec, spec_of(m.gpu))
    if (m.input_tokens, m.output_tokens) != (p.input_tokens, p.output_tokens):
        # away from a measured shape: the GPU's ratio over every shape measured on that
        # model (one shape alone is off by up to 40 % on another), and a wider error
        from tracker.recommend.uncertainty import SERVING_SHAPE

        spread = max(SERVING_SHAPE, spread or 0.0)
        same = [o for o in own if (o.params, _load(o), o.yours) == (m.params, _load(m), m.yours)]
        if len(same) > 1:
            k = math.exp(sum(math.log(o.throughput / modelled[o]) for o in same) / len(same))
            source = (
                f"{via}{', '.join(o.id for o in same)}; measured/modelled {k:.2f} (geometric mean)"
            )
    if spread is not None and spec_of(m.gpu).vendor != spec.vendor:
        source += f"; another vendor's serving stack ({spec_of(m.gpu).vendor}): ±{spread:.0%}"
    return Rate(base * k, basis, source, precision, flag, m.yours, memory_scale=k, spread=spread)


def _across_vendors(spec: GpuSpec, source: GpuSpec) -> float | None:
    """The wider range of a serving rate taken from another vendor's measurement: its
    measured/modelled ratio is that vendor's software (MLPerf: the MI300X's 1.15 beside
    the H100's 1.73), so it says little of this part's (held out, the MI300X so rated
    is 78 % fast, Intel's Gaudi 2 tables 36-55 % slow)."""
    from tracker.recommend.uncertainty import CARRIED

    return CARRIED if source.vendor != spec.vendor else None


def _vendor_rate(
    spec: GpuSpec,
    precision: Precision,
    flag: str,
    base: float,
    measurements: tuple[Measurement, ...],
    a: Assumptions,
) -> Rate | None:
    """A GPU with no serving measurement of its own: its datasheet × its vendor's
    serving efficiency in this precision family, fitted per phase on the vendor's other
    GPUs (:mod:`tracker.recommend.serving_fit`); None where the vendor has no such rows.
    With each GPU's own rows held out it rates 17 of 21 NVIDIA serving rows within ±25 %
    (16 by one other GPU's single ratio), but MLPerf's H200 > H100 order still flips
    (a strict xfail in tests/recommend/test_held_out_serving.py)."""
    fits = cached_fit(fit_vendor_efficiencies, measurements, a)
    fit = fits.get((spec.vendor, _family(precision)))
    if fit is None:
        return None
    source = (
        f"{spec.vendor} {_family(precision)} serving efficiency fitted on {len(fit.rows)} rows"
        f" ({', '.join(fit.rows)}): compute x{fit.compute:.2f} (prefill),"
        f" bandwidth x{fit.bandwidth:.2f} (decode), fit error ±{fit.error:.0%}"
    )
    return Rate(
        base * fit.compute, Basis.SCALED, source, precision, flag, memory_scale=fit.bandwidth
    )
