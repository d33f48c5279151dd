"""The roofline that scales one GPU's measured rate to another, and the fits it needs.

Shared by the calibration (:mod:`tracker.recommend.calibration`), the serving rates
(:mod:`tracker.recommend.serving_rate`) and the carried family efficiency
(:mod:`tracker.recommend.delivery`), so none of those imports another at load time:
achieved model-FLOP/s of a measurement, the roofline ``1 / (1/T + 1/(I·B))``, the
nearest measured GPU by compute and bandwidth, and the arithmetic intensity ``I`` fitted
per workload class to the measurements themselves.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from tracker.catalog import GpuSpec
from tracker.models import Interconnect
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.fabric import catalog_interconnect
from tracker.recommend.measured import Measurement, Unit
from tracker.recommend.profiles import Precision, Task, WorkloadClass
from tracker.recommend.throughput import scaling_factor, spec_tflops

__all__ = [
    "CLASS_TASK",
    "achieved_flops",
    "cached_fit",
    "cited_source",
    "closest_size",
    "fitted_intensity",
    "nearest_gpu",
    "scaled_rate",
    "spec_of",
]


_GRID = tuple(2 ** (k / 4) for k in range(0, 53))  # intensities 1 … 8192 FLOPs per byte
CLASS_TASK = {
    WorkloadClass.CNN_TRAINING: "cnn_training",
    WorkloadClass.DIFFUSION: "cnn_training",
    WorkloadClass.TRANSFORMER_FINETUNE: "full_finetune",
    WorkloadClass.LLM_TRAINING: "pretrain",
}


_T = TypeVar("_T")
_CACHE: dict[tuple[Any, ...], Any] = {}


def cached_fit(
    fit: Callable[[tuple[Measurement, ...], Assumptions], _T],
    rows: tuple[Measurement, ...],
    a: Assumptions,
) -> _T:
    """Fits depend only on the rows and the assumptions: computed once per pair."""
    key = (fit.__name__, rows, a.model_dump_json())
    if key not in _CACHE:
        if len(_CACHE) > 256:
            _CACHE.clear()
        _CACHE[key] = fit(rows, a)
    return _CACHE[key]  # type: ignore[no-any-return]


def _flops_per_unit(m: Measurement, a: Assumptions) -> float:
    if m.flops_per_image is not None:
        return a.cnn_training_passes * m.flops_per_image
    per_param = a.training_flops_per_param_token
    if m.task in (Task.LORA, Task.QLORA):
        per_param = a.adapter_flops_per_param_token  # frozen base: no weight gradients
    per_token = per_param * m.params
    if m.unit is Unit.SEQUENCES:
        assert m.sequence_length is not None
        return per_token * m.sequence_length
    return per_token


def spec_of(name: str) -> GpuSpec:
    from tracker.catalog import get_spec

    return get_spec(name)


def achieved_flops(m: Measurement, a: Assumptions) -> float:
    """Model FLOP/s one GPU achieved in ``m`` (its multi-GPU scaling taken out).

    Of a multi-host figure (``hosts``: a 256-chip TPU slice, 16 trn1 nodes) only one
    machine's share of GPUs is taken out: the assumed per-doubling loss over 256 chips
    (0.95⁸) would credit one chip with 1.5x what it did, where MaxText's own v5e table
    loses 11 % from 256 to 8,192 chips. The loss between machines stays in the rate."""
    link = Interconnect.PCIE
    if m.gpu_count > 1:
        link = catalog_interconnect(spec_of(m.gpu))
    per_host = m.gpu_count / (m.hosts or 1)
    return m.per_gpu * _flops_per_unit(m, a) / scaling_factor(per_host, link.value, a)


def _roofline(spec: GpuSpec, precision: Precision, intensity: float) -> float | None:
    t = spec_tflops(spec, precision)
    if t is None or spec.memory_bandwidth_gbs is None:
        return None
    return 1.0 / (1.0 / (t * 1e12) + 1.0 / (intensity * float(spec.memory_bandwidth_gbs) * 1e9))


def _distance(target: GpuSpec, tp: Precision, source: GpuSpec, sp: Precision) -> float:
    """How alike two GPUs are: log distance in compute and bandwidth, + architecture/vendor."""
    t1, t0 = spec_tflops(target, tp), spec_tflops(source, sp)
    b1, b0 = target.memory_bandwidth_gbs, source.memory_bandwidth_gbs
    if not (t1 and t0 and b1 and b0):
        return math.inf
    d = abs(math.log(t1 / t0)) + abs(math.log(float(b1) / float(b0)))
    d += 0.5 * (target.architecture != source.architecture) + 1.0 * (target.vendor != source.vendor)
    return d


def closest_size(rows: Sequence[Measurement], params: float) -> Measurement:
    return min(rows, key=lambda m: (not m.yours, abs(math.log(m.params / params)), m.id))


def nearest_gpu(
    target: GpuSpec, tp: Precision, rows: Sequence[Measurement]
) -> tuple[GpuSpec, list[Measurement]] | None:
    by_gpu: dict[str, list[Measurement]] = {}
    for m in rows:
        if m.gpu != target.name:
            by_gpu.setdefault(m.gpu, []).append(m)
    best: tuple[float, str] | None = None
    for name, ms in by_gpu.items():
        d = _distance(target, tp, spec_of(name), ms[0].precision)
        if math.isfinite(d) and (best is None or (d, name) < best):
            best = (d, name)
    if best is None:
        return None
    return spec_of(best[1]), by_gpu[best[1]]


def scaled_rate(
    target: GpuSpec,
    tp: Precision,
    source: Measurement,
    intensity: float,
    a: Assumptions,
) -> float | None:
    r1 = _roofline(target, tp, intensity)
    r0 = _roofline(spec_of(source.gpu), source.precision, intensity)
    if r1 is None or r0 is None:
        return None
    return achieved_flops(source, a) * r1 / r0


def fitted_intensity(rows: tuple[Measurement, ...], a: Assumptions) -> float:
    return cached_fit(_fit_intensity, rows, a)


def _fit_intensity(rows: tuple[Measurement, ...], a: Assumptions) -> float:
    """The arithmetic intensity that best predicts each measured GPU from its nearest."""
    pairs: list[tuple[Measurement, Measurement, float]] = []
    for m in rows:
        target = spec_of(m.gpu)
        near = nearest_gpu(target, m.precision, rows)
        if near is not None:
            pairs.append((m, closest_size(near[1], m.params), achieved_flops(m, a)))
    if not pairs:
        return 256.0

    def error(intensity: float) -> float:
        total = 0.0
        for m, source, actual in pairs:
            pred = scaled_rate(spec_of(m.gpu), m.precision, source, intensity, a)
            if pred is not None:
                total += math.log(pred / actual) ** 2
        return total

    return min(_GRID, key=error)


def cited_source(m: Measurement) -> str:
    return f"{m.id}: your measurement" if m.yours else f"{m.id} ({m.source})"
