"""How fast a GPU runs a profile's work: measured, scaled from a measured GPU, or modelled.

Job hours are model FLOPs ÷ the model-FLOP/s one GPU achieves (× multi-GPU scaling).
That rate comes from the first of these that applies (the row's ``basis``):

1. ``measured``: a published (or the user's own) measurement of the same GPU in the same
   workload class and precision family. The achieved model-FLOP/s of the nearest model
   size is taken as is, i.e. throughput is scaled within the class by FLOPs per unit of
   work (parameters, tokens, image FLOPs).
2. ``scaled``: the nearest measured GPU (datasheet compute and memory bandwidth, same
   architecture and vendor preferred), scaled by a roofline ``1 / (1/T + 1/(I·B))`` that
   weighs dense TFLOPS ``T`` against bandwidth ``B`` at an arithmetic intensity ``I``
   fitted per class to the measurements themselves (CNNs come out memory-bound, LLM
   training compute-bound), never by TFLOPS alone.
3. ``modelled``: datasheet TFLOPS × the task's MFU (``assumptions.efficiency``) × the
   architecture's measured share of that MFU (a Hopper reaches less of its peak than an
   Ampere on the same code), 1 where nothing on that architecture was measured.

Precision fallback: a bf16 job runs in fp16 on GPUs without bf16 (T4, V100) and an fp8
job at the best 16-bit rate on GPUs without fp8; the row says so. fp16 and bf16 share a
"16-bit" family for matching measurements (every GPU with both runs them at one rate).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np

from tracker.catalog import GpuSpec
from tracker.models import Interconnect
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.fabric import catalog_interconnect
from tracker.recommend.inference import best_split_tokens_per_second, serving
from tracker.recommend.measured import Measurement, Unit, shipped_measurements, workload_class
from tracker.recommend.profiles import Precision, Profile, Task, WorkloadClass
from tracker.recommend.rating import Basis, Rate
from tracker.recommend.rating import load_of as _load
from tracker.recommend.rating import precision_family as _family
from tracker.recommend.throughput import Workload, scaling_factor, spec_tflops

__all__ = [
    "Basis",
    "Rate",
    "achieved_flops",
    "basis_notes",
    "calibrated_work",
    "compute_precision",
    "gpu_rates",
    "predict",
    "workload_class",
]


_GRID = tuple(2 ** (k / 4) for k in range(0, 53))  # intensities 1 … 8192 FLOPs per byte
_CLASS_TASK = {
    WorkloadClass.CNN_TRAINING: "cnn_training",
    WorkloadClass.DIFFUSION: "cnn_training",
    WorkloadClass.TRANSFORMER_FINETUNE: "full_finetune",
    WorkloadClass.LLM_TRAINING: "pretrain",
}


_T = TypeVar("_T")
_CACHE: dict[tuple[Any, ...], Any] = {}


def _cached(
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


_FALLBACKS = {
    Precision.BF16: (Precision.FP16,),
    Precision.FP16: (Precision.BF16,),
    Precision.FP8: (Precision.BF16, Precision.FP16),
}


def compute_precision(spec: GpuSpec, want: Precision) -> tuple[Precision, str] | None:
    """The precision ``spec`` runs a ``want`` job at, and the flag when it falls back."""
    if spec_tflops(spec, want) is not None:
        return want, ""
    options = [p for p in _FALLBACKS.get(want, ()) if spec_tflops(spec, p) is not None]
    if not options:
        return None
    best = max(options, key=lambda p: spec_tflops(spec, p) or 0.0)
    return best, f"{want.value} runs as {best.value}: {spec.name} has no {want.value} rate"


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


def _spec(name: str) -> GpuSpec:
    from tracker.catalog import get_spec

    return get_spec(name)


def achieved_flops(m: Measurement, a: Assumptions) -> float:
    """Model FLOP/s one GPU achieved in ``m`` (its multi-GPU scaling taken out)."""
    link = Interconnect.PCIE
    if m.gpu_count > 1:
        link = catalog_interconnect(_spec(m.gpu))
    return m.per_gpu * _flops_per_unit(m, a) / scaling_factor(m.gpu_count, link.value, a)


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


def _closest_size(rows: Sequence[Measurement], params: float) -> Measurement:
    return min(rows, key=lambda m: (not m.yours, abs(math.log(m.params / params)), m.id))


def _nearest_gpu(
    target: GpuSpec, tp: Precision, rows: Sequence[Measurement]
) -> tuple[GpuSpec, list[Measurement]] | None:
    by_gpu: dict[str, list[Measurement]] = {}
    for m in rows:
        if m.gpu != target.name:
            by_gpu.setdefault(m.gpu, []).append(m)
    best: tuple[float, str] | None = None
    for name, ms in by_gpu.items():
        d = _distance(target, tp, _spec(name), ms[0].precision)
        if math.isfinite(d) and (best is None or (d, name) < best):
            best = (d, name)
    if best is None:
        return None
    return _spec(best[1]), by_gpu[best[1]]


def _scaled(
    target: GpuSpec,
    tp: Precision,
    source: Measurement,
    intensity: float,
    a: Assumptions,
) -> float | None:
    r1 = _roofline(target, tp, intensity)
    r0 = _roofline(_spec(source.gpu), source.precision, intensity)
    if r1 is None or r0 is None:
        return None
    return achieved_flops(source, a) * r1 / r0


def _intensity(rows: tuple[Measurement, ...], a: Assumptions) -> float:
    return _cached(_fit_intensity, rows, a)


def _fit_intensity(rows: tuple[Measurement, ...], a: Assumptions) -> float:
    """The arithmetic intensity that best predicts each measured GPU from its nearest."""
    pairs: list[tuple[Measurement, Measurement, float]] = []
    for m in rows:
        target = _spec(m.gpu)
        near = _nearest_gpu(target, m.precision, rows)
        if near is not None:
            pairs.append((m, _closest_size(near[1], m.params), achieved_flops(m, a)))
    if not pairs:
        return 256.0

    def error(intensity: float) -> float:
        total = 0.0
        for m, source, actual in pairs:
            pred = _scaled(_spec(m.gpu), m.precision, source, intensity, a)
            if pred is not None:
                total += math.log(pred / actual) ** 2
        return total

    return min(_GRID, key=error)


def _architecture_share(rows: tuple[Measurement, ...], a: Assumptions) -> dict[str, float]:
    return _cached(_fit_share, rows, a)


def _fit_share(rows: tuple[Measurement, ...], a: Assumptions) -> dict[str, float]:
    """Per architecture: geometric mean of measured MFU ÷ the task's assumed MFU."""
    logs: dict[str, list[float]] = {}
    for m in rows:
        task = _CLASS_TASK.get(m.workload_class)
        spec = _spec(m.gpu)
        peak = spec_tflops(spec, m.precision)
        if task is None or peak is None:
            continue
        mfu = achieved_flops(m, a) / (peak * 1e12)
        logs.setdefault(spec.architecture, []).append(math.log(mfu / a.efficiency_for(task)))
    return {arch: math.exp(sum(v) / len(v)) for arch, v in logs.items()}


def _source(m: Measurement) -> str:
    return f"{m.id}: your measurement" if m.yours else f"{m.id} ({m.source})"


def predict(
    p: Profile,
    spec: GpuSpec,
    a: Assumptions,
    measurements: tuple[Measurement, ...],
) -> Rate | None:
    """The rate ``spec`` achieves on ``p``; None when neither data nor datasheet allow one."""
    precision_flag = compute_precision(spec, p.compute)
    precision, flag = precision_flag if precision_flag else (p.compute, "")
    wclass = workload_class(p)
    if wclass is WorkloadClass.LLM_INFERENCE and p.serving:
        return _predict_serving(p, spec, precision_flag, a, measurements)
    if wclass is not None and wclass is not WorkloadClass.LLM_INFERENCE:
        family = _family(precision)
        rows = tuple(
            m for m in measurements if m.workload_class is wclass and _family(m.precision) == family
        )
        own = [m for m in rows if m.gpu == spec.name]
        if own:
            m = _closest_size(own, p.params)
            return Rate(
                achieved_flops(m, a), Basis.MEASURED, _source(m), m.precision, flag, m.yours
            )
        if precision_flag is None:
            return None
        near = _nearest_gpu(spec, precision, rows)
        if near is not None:
            m = _closest_size(near[1], p.params)
            flops = _scaled(spec, precision, m, _intensity(rows, a), a)
            if flops is not None:
                via = f"from {m.gpu} by compute/bandwidth roofline: {_source(m)}"
                return Rate(flops, Basis.SCALED, via, precision, flag, m.yours)
    if precision_flag is None:
        return None
    peak = spec_tflops(spec, precision)
    assert peak is not None
    eff = a.efficiency_for(p.task.value)
    share = 1.0
    if p.task.is_training:
        share = _architecture_share(_training_rows(measurements), a).get(spec.architecture, 1.0)
    source = f"datasheet {peak:g} TFLOPS x {p.task.value} MFU {eff:g}"
    if share != 1.0:
        source += f" x {spec.architecture} measured share {share:.2f}"
    return Rate(peak * 1e12 * eff * share, Basis.MODELLED, source, precision, flag)


def _modelled_serving(m: Measurement, a: Assumptions) -> float:
    """Output tokens/s the serving model gives for ``m``'s setup on its datasheet.

    Worked out as an offer of ``m``'s GPUs is (its best split into tensor-parallel
    replicas, the catalog's interconnect between them), so a GPU's own measurement is
    reproduced exactly for an offer of that many GPUs and that request shape: MLPerf's
    8-GPU systems serve a 70B model as replicas, not as one 8-way group."""
    spec = _spec(m.gpu)
    peak = spec_tflops(spec, m.precision)
    if peak is None or spec.memory_bandwidth_gbs is None:
        return math.nan
    assert m.input_tokens is not None and m.output_tokens is not None
    link = catalog_interconnect(spec) if m.gpu_count > 1 else Interconnect.PCIE
    one = np.ones(1)
    tps = best_split_tokens_per_second(
        serving(m.params, m.precision, m.input_tokens, m.output_tokens, _load(m), m.kv_heads, a),
        one * m.gpu_count,
        one * float(spec.vram_gib),
        one * peak * 1e12 * a.efficiency_for("inference"),
        one * float(spec.memory_bandwidth_gbs) * 1e9 * a.memory_bandwidth_efficiency,
        one * scaling_factor(2, link.value, a),
    )
    return float(tps[0])


def _fit_serving(rows: tuple[Measurement, ...], a: Assumptions) -> dict[Measurement, float]:
    """Each serving row's modelled throughput (rows the model cannot rate are left out)."""
    out = {}
    for m in rows:
        if m.workload_class is WorkloadClass.LLM_INFERENCE:
            tps = _modelled_serving(m, a)
            if math.isfinite(tps):
                out[m] = tps
    return out


def _predict_serving(
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
    modelled = _cached(_fit_serving, measurements, a)
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
        near = _nearest_gpu(spec, precision, rows)
        if near is None:
            source = f"datasheet {peak:g} TFLOPS x inference MFU, serving model"
            return Rate(base, Basis.MODELLED, source, precision, flag)
        own, basis, via = near[1], Basis.SCALED, f"from {near[0].name} by the serving model: "
    m = closest(own)
    k = m.throughput / modelled[m]
    source = f"{via}{_source(m)}; measured/modelled {k:.2f}"
    return Rate(base * k, basis, source, precision, flag, m.yours, memory_scale=k)


def _training_rows(measurements: tuple[Measurement, ...]) -> tuple[Measurement, ...]:
    return tuple(m for m in measurements if m.workload_class in _CLASS_TASK)


def calibrated_work(
    w: Workload, a: Assumptions, measurements: Sequence[Measurement] | None = None
) -> Workload:
    """Reference GPU-hours become FLOPs at the reference GPU's rate, as every GPU is rated.

    Converting them at datasheet TFLOPS × MFU while other GPUs are rated from
    measurements would make the reference GPU itself miss its own hours."""
    p = w.profile
    if p.reference_gpu_hours is None or p.reference_gpu is None:
        return w
    rows = shipped_measurements() if measurements is None else tuple(measurements)
    rate = predict(p, _spec(p.reference_gpu), a, tuple(rows))
    if rate is None:
        return w
    return replace(w, flops=p.reference_gpu_hours * 3600.0 * rate.flops)


def basis_notes(rated: Iterable[tuple[str, Rate]]) -> tuple[str, ...]:
    """One ``--explain`` line per ranked GPU model: its basis and source, and any fallback."""
    seen: dict[str, Rate] = {}
    for gpu, rate in rated:
        seen.setdefault(gpu, rate)
    notes = []
    for gpu, rate in seen.items():
        line = f"{gpu}: basis {rate.label}, {rate.source}"
        if rate.fallback:
            line += f"; precision fallback: {rate.fallback}"
        notes.append(line)
    return tuple(notes)


_RATES: dict[tuple[str, int, str], dict[str, Rate | None]] = {}


def gpu_rates(
    p: Profile,
    specs: Sequence[GpuSpec | None],
    a: Assumptions,
    measurements: Sequence[Measurement] | None = None,
) -> list[Rate | None]:
    """One rate per GPU model of an offer table (None: unknown GPU or no way to rate it).

    A rate depends only on the profile, the GPU, the measurements and the assumptions, so
    each is worked out once per process: the service re-ranks the same profiles after
    every collection."""
    rows = shipped_measurements() if measurements is None else tuple(measurements)
    key = (p.fingerprint(), hash(rows), a.model_dump_json())
    known = _RATES.get(key)
    if known is None:
        if len(_RATES) > 512:
            _RATES.clear()
        known = _RATES[key] = {}
    out: list[Rate | None] = []
    for spec in specs:
        if spec is None:
            out.append(None)
            continue
        if spec.name not in known:
            known[spec.name] = predict(p, spec, a, rows)
        out.append(known[spec.name])
    return out
