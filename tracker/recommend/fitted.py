"""Serving on a GPU without datasheet TFLOPS, from the rates its own measurements imply.

The serving model (inference.py) needs a compute rate (prefill and the per-token
matmuls) and a memory bandwidth (decode reads the weights and KV cache). Every other
GPU takes the first from its datasheet; the A10G has none (NVIDIA publishes no figures
for this AWS-only part, and it is not an A10). Rather than invent a peak, both are
fitted to the GPU's own serving measurements: an effective FLOP/s ``F`` and a
bandwidth scale ``s`` on the catalog's bandwidth × ``memory_bandwidth_efficiency``,
the pair whose modelled output tokens/s matches the measured ones best (least squares
in log over a grid). Measurements at several concurrencies pin both: one request at a
time is bound by reading the weights (``s``), twenty at once add the prefill and batch
compute (``F``). A single measurement cannot separate them; the fit then keeps ``s``
nearest 1. The row's basis is ``measured`` and its source names the rows and the fit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tracker.catalog import GpuSpec
from tracker.models import Interconnect
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.fabric import catalog_interconnect
from tracker.recommend.inference import best_split_tokens_per_second, serving
from tracker.recommend.kinds import WorkloadClass
from tracker.recommend.measured import Measurement
from tracker.recommend.profiles import Profile
from tracker.recommend.rating import Basis, Rate
from tracker.recommend.rating import load_of as _load
from tracker.recommend.rating import precision_family as _family
from tracker.recommend.throughput import scaling_factor

__all__ = ["Fit", "fit_serving", "fitted_serving_rate"]

_FLOPS = np.array([2 ** (k / 8) * 1e12 for k in range(81)])  # 1 … 1,024 TFLOPS
_SCALES = np.array([2 ** (k / 16) for k in range(-16, 17)])  # bandwidth × 0.5 … 2
_CACHE: dict[tuple[object, ...], Fit | None] = {}


class Fit:
    """The fitted pair and how well it reproduces the rows it was fitted to."""

    __slots__ = ("flops", "rows", "scale", "worst")

    def __init__(self, flops: float, scale: float, worst: float, rows: tuple[Measurement, ...]):
        self.flops = flops
        self.scale = scale
        self.worst = worst
        """Largest |modelled ÷ measured − 1| over ``rows``."""
        self.rows = rows


def _tokens_per_second(
    m: Measurement, spec: GpuSpec, a: Assumptions, flops: np.ndarray, scale: np.ndarray
) -> np.ndarray:
    """``m``'s setup (GPUs, request shape, concurrency) at each (F, s) of the grid."""
    assert m.input_tokens is not None and m.output_tokens is not None
    assert spec.memory_bandwidth_gbs is not None
    link = catalog_interconnect(spec) if m.gpu_count > 1 else Interconnect.PCIE
    ones = np.ones(len(flops))
    bandwidth = float(spec.memory_bandwidth_gbs) * 1e9 * a.memory_bandwidth_efficiency
    return best_split_tokens_per_second(
        serving(m.params, m.precision, m.input_tokens, m.output_tokens, _load(m), m.kv_heads, a),
        ones * m.gpu_count,
        ones * float(spec.vram_gib),
        flops,
        bandwidth * scale,
        ones * scaling_factor(2, link.value, a),
    )


def fit_serving(spec: GpuSpec, rows: Sequence[Measurement], a: Assumptions) -> Fit | None:
    """The (F, s) that best reproduce ``rows`` (serving measurements of ``spec``)."""
    if not rows or spec.memory_bandwidth_gbs is None:
        return None
    key = (spec.name, tuple(rows), a.model_dump_json())
    if key in _CACHE:
        return _CACHE[key]
    flops, scale = (grid.ravel() for grid in np.meshgrid(_FLOPS, _SCALES, indexing="ij"))
    error = np.zeros(len(flops))
    worst = np.zeros(len(flops))
    for m in rows:
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = _tokens_per_second(m, spec, a, flops, scale) / m.throughput
        error += np.log(ratio) ** 2
        worst = np.maximum(worst, np.abs(ratio - 1))
    error = np.where(np.isnan(error), np.inf, error)
    fit: Fit | None = None
    if np.isfinite(error).any():
        # ties (one row fits a whole curve of pairs): the scale nearest 1, then the least F
        best = min(
            np.flatnonzero(error <= error.min() + 1e-12),
            key=lambda i: (abs(math.log(scale[i])), flops[i]),
        )
        fit = Fit(float(flops[best]), float(scale[best]), float(worst[best]), tuple(rows))
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[key] = fit
    return fit


def fitted_serving_rate(
    p: Profile, spec: GpuSpec, a: Assumptions, measurements: Sequence[Measurement]
) -> Rate | None:
    """A serving rate for ``spec`` from its own measurements; None without any."""
    own = [
        m
        for m in measurements
        if m.gpu == spec.name and m.workload_class is WorkloadClass.LLM_INFERENCE
    ]
    if any(m.yours for m in own):
        own = [m for m in own if m.yours]  # your numbers win
    same = [m for m in own if _family(m.precision) == _family(p.compute)]
    rows = same or own
    fit = fit_serving(spec, rows, a)
    if fit is None:
        return None
    precision, flag = p.compute, ""
    measured_at = rows[0].precision
    if not same:
        precision = measured_at
        flag = (
            f"{p.compute.value} runs as {measured_at.value}: {spec.name} has no "
            f"datasheet rates; measured at {measured_at.value}"
        )
    ids = ", ".join(m.id for m in rows)
    source = (
        f"fitted to its own measurements ({ids}; {rows[0].source}): effective "
        f"{fit.flops / 1e12:.0f} TFLOPS and bandwidth x{fit.scale:.2f} reproduce them within "
        f"{fit.worst:.0%} ({spec.name} has no datasheet TFLOPS)"
    )
    yours = any(m.yours for m in rows)
    return Rate(fit.flops, Basis.MEASURED, source, precision, flag, yours, memory_scale=fit.scale)
