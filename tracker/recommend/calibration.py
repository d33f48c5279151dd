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
from collections.abc import Iterable, Sequence
from dataclasses import replace

from tracker.catalog import GpuSpec
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.measured import Measurement, shipped_measurements, workload_class
from tracker.recommend.profiles import Precision, Profile, WorkloadClass
from tracker.recommend.rating import Basis, Rate
from tracker.recommend.rating import precision_family as _family
from tracker.recommend.roofline import (
    CLASS_TASK,
    achieved_flops,
    cached_fit,
    cited_source,
    closest_size,
    fitted_intensity,
    nearest_gpu,
    scaled_rate,
    spec_of,
)
from tracker.recommend.throughput import Workload, spec_tflops

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


def _architecture_share(rows: tuple[Measurement, ...], a: Assumptions) -> dict[str, float]:
    return cached_fit(_fit_share, rows, a)


def _fit_share(rows: tuple[Measurement, ...], a: Assumptions) -> dict[str, float]:
    """Per architecture: geometric mean of measured MFU ÷ the task's assumed MFU."""
    logs: dict[str, list[float]] = {}
    for m in rows:
        task = CLASS_TASK.get(m.workload_class)
        spec = spec_of(m.gpu)
        peak = spec_tflops(spec, m.precision)
        if task is None or peak is None:
            continue
        mfu = achieved_flops(m, a) / (peak * 1e12)
        logs.setdefault(spec.architecture, []).append(math.log(mfu / a.efficiency_for(task)))
    return {arch: math.exp(sum(v) / len(v)) for arch, v in logs.items()}


def predict(
    p: Profile,
    spec: GpuSpec,
    a: Assumptions,
    measurements: tuple[Measurement, ...],
) -> Rate | None:
    """The rate ``spec`` achieves on ``p``; None when neither data, datasheet nor a
    stand-in rule (:mod:`tracker.recommend.stand_in`: the A10G as the A10) allow one."""
    rate = _predict(p, spec, a, measurements)
    if rate is None:
        from tracker.recommend.stand_in import stand_in_rate

        rate = stand_in_rate(p, spec, a, measurements, predict)
    return rate


def _predict(
    p: Profile,
    spec: GpuSpec,
    a: Assumptions,
    measurements: tuple[Measurement, ...],
) -> Rate | None:
    precision_flag = compute_precision(spec, p.compute)
    precision, flag = precision_flag if precision_flag else (p.compute, "")
    wclass = workload_class(p)
    if wclass is WorkloadClass.LLM_INFERENCE and p.serving:
        from tracker.recommend.serving_rate import predict_serving

        return predict_serving(p, spec, precision_flag, a, measurements)
    if wclass is not None and wclass is not WorkloadClass.LLM_INFERENCE:
        family = _family(precision)
        rows = tuple(
            m for m in measurements if m.workload_class is wclass and _family(m.precision) == family
        )
        own = [m for m in rows if m.gpu == spec.name]
        if own:
            m = closest_size(own, p.params)
            return Rate(
                achieved_flops(m, a), Basis.MEASURED, cited_source(m), m.precision, flag, m.yours
            )
        if precision_flag is None:
            return None
        near = nearest_gpu(spec, precision, rows)
        if near is not None:
            m = closest_size(near[1], p.params)
            flops = scaled_rate(spec, precision, m, fitted_intensity(rows, a), a)
            if flops is not None:
                via = f"from {m.gpu} by compute/bandwidth roofline: {cited_source(m)}"
                rate = Rate(flops, Basis.SCALED, via, precision, flag, m.yours)
                from tracker.recommend.delivery import carry

                return _other_vendor(carry(rate, spec, wclass, measurements, a), spec, near[0])
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


def _other_vendor(rate: Rate, spec: GpuSpec, near: GpuSpec) -> Rate:
    """A rate scaled from another vendor's part, or (accelerators) another generation's:
    that software says nothing about this one's share of its datasheet (MaxText: v5p
    65 % MFU, v6e 44 %), so the range widens to the carried band and the source says
    why. Held out, Trainium1 and the TPUs so scaled miss by 31-37 %."""
    from tracker.recommend.uncertainty import CARRIED

    if (rate.spread or 0.0) >= CARRIED:
        return rate
    if near.vendor != spec.vendor:
        note = f"scaled across vendors ({near.vendor}'s {near.name}): its software's share says nothing of {spec.vendor}'s"
    elif spec.kind == "accelerator" and near.architecture != spec.architecture:
        note = f"no {spec.architecture} measured in this class: scaled from {near.architecture}"
    else:
        return rate
    return replace(rate, source=f"{rate.source}; {note}", spread=CARRIED)


def _training_rows(measurements: tuple[Measurement, ...]) -> tuple[Measurement, ...]:
    return tuple(m for m in measurements if m.workload_class in CLASS_TASK)


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
    rate = predict(p, spec_of(p.reference_gpu), a, tuple(rows))
    if rate is None:
        return w
    return replace(w, flops=p.reference_gpu_hours * 3600.0 * rate.flops)


def basis_notes(rated: Iterable[tuple[str, Rate]]) -> tuple[str, ...]:
    """One ``--explain`` line per ranked GPU model: its basis and source, any fallback,
    and the error its basis carries."""
    from tracker.recommend.uncertainty import relative_error

    seen: dict[str, Rate] = {}
    for gpu, rate in rated:
        seen.setdefault(gpu, rate)
    notes = []
    for gpu, rate in seen.items():
        line = f"{gpu}: basis {rate.label}, {rate.source}"
        if rate.fallback:
            line += f"; precision fallback: {rate.fallback}"
        notes.append(f"{line}; job hours ±{relative_error(rate):.0%}")
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
