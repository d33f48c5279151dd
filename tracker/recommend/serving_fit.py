"""The serving model on a measurement's setup, and a vendor's fitted serving efficiency.

Split from :mod:`tracker.recommend.serving_rate` (which uses both). Serving has two
phases that bind on different parts: prefill (every prompt token through the weights)
is bound by compute, decode (one token per step, the weights and KV cache read each
step) by memory bandwidth. What a vendor's serving stack delivers of each differs
(MLPerf Inference v4.1 Llama 2 70B: TensorRT on an H100 and vLLM on an MI300X deliver
different shares of the same datasheet figures), so for a GPU with no serving
measurement of its own the efficiency is fitted per (vendor, precision family) on the
shipped rows of that vendor's other GPUs: one factor on datasheet compute (prefill)
and one on datasheet bandwidth (decode), chosen so the serving model reproduces those
rows best in log error. Where a vendor's rows cover one request shape only, the two
phases cannot be told apart and one factor scales both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tracker.models import Interconnect
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.fabric import catalog_interconnect
from tracker.recommend.inference import (
    best_split_tokens_per_second,
    output_tokens_per_second,
    serving,
)
from tracker.recommend.measured import Measurement
from tracker.recommend.profiles import WorkloadClass
from tracker.recommend.rating import load_of, precision_family
from tracker.recommend.roofline import spec_of
from tracker.recommend.throughput import scaling_factor, spec_tflops

__all__ = ["VendorFit", "fit_vendor_efficiencies", "modelled_serving"]

FloatArray = npt.NDArray[np.float64]

# factors 1/8 … 8 on datasheet compute and bandwidth, in steps of 2^(1/8)
_STEPS = np.array([2.0 ** (k / 8) for k in range(-24, 25)])


@dataclass(frozen=True, slots=True)
class VendorFit:
    """One vendor's serving efficiency in one precision family, fitted on its rows."""

    compute: float
    """Delivered ÷ modelled compute (prefill, and decode's matrix work)."""
    bandwidth: float
    """Delivered ÷ modelled memory bandwidth (decode's weight and KV reads)."""
    rows: tuple[str, ...]
    """The measurement ids the factors were fitted on."""
    error: float
    """Root-mean-square log error of the fit over ``rows`` (0.1 is about ±10 %)."""


def modelled_serving(
    m: Measurement, a: Assumptions, compute: FloatArray, bandwidth: FloatArray
) -> FloatArray:
    """Output tokens/s the serving model gives for ``m``'s setup on its datasheet, with
    compute and bandwidth scaled by each pair of factors (NaN where it cannot rate ``m``).

    Worked out as an offer of ``m``'s GPUs is (its best split into tensor-parallel
    replicas, the catalog's interconnect between them), so a GPU's own measurement is
    reproduced exactly for an offer of that many GPUs and that request shape: MLPerf's
    8-GPU systems serve a 70B model as replicas, not as one 8-way group."""
    spec = spec_of(m.gpu)
    peak = spec_tflops(spec, m.precision)
    if peak is None or spec.memory_bandwidth_gbs is None:
        return np.full(len(compute), math.nan)
    assert m.input_tokens is not None and m.output_tokens is not None
    link = catalog_interconnect(spec) if m.gpu_count > 1 else Interconnect.PCIE
    one = np.ones(len(compute))
    job = serving(m.params, m.precision, m.input_tokens, m.output_tokens, load_of(m), m.kv_heads, a)
    flops = peak * 1e12 * a.efficiency_for("inference") * compute
    bytes_s = float(spec.memory_bandwidth_gbs) * 1e9 * a.memory_bandwidth_efficiency * bandwidth
    if m.tensor_parallel is not None:
        # the split the source states (Neuron: one TP group over all the chips it used)
        g = float(m.tensor_parallel)
        kept = scaling_factor(g, link.value, a)
        vram = one * float(spec.vram_gib) * g
        tps, _ = output_tokens_per_second(job, one * g, vram, flops * kept, bytes_s * kept)
        return tps * m.gpu_count / g
    return best_split_tokens_per_second(
        job,
        one * m.gpu_count,
        one * float(spec.vram_gib),
        flops,
        bytes_s,
        one * scaling_factor(2, link.value, a),
    )


def fit_vendor_efficiencies(
    rows: tuple[Measurement, ...], a: Assumptions
) -> dict[tuple[str, str], VendorFit]:
    """Each (vendor, precision family)'s serving efficiency over its shipped rows."""
    groups: dict[tuple[str, str], list[Measurement]] = {}
    for m in rows:
        if m.workload_class is WorkloadClass.LLM_INFERENCE and not m.yours:
            key = (spec_of(m.gpu).vendor, precision_family(m.precision))
            groups.setdefault(key, []).append(m)
    out = {}
    for key, ms in groups.items():
        fit = _fit(ms, a)
        if fit is not None:
            out[key] = fit
    return out


def _fit(ms: list[Measurement], a: Assumptions) -> VendorFit | None:
    """The grid point (compute, bandwidth) with the least squared log error over ``ms``."""
    compute, bandwidth = (g.ravel() for g in np.meshgrid(_STEPS, _STEPS))
    used, errors = [], []
    for m in ms:
        tps = modelled_serving(m, a, compute, bandwidth)
        if np.isfinite(tps).all():
            used.append(m)
            errors.append(np.log(m.throughput / tps))
    if not used:
        return None
    e = np.array(errors)
    shapes = {(m.input_tokens, m.output_tokens) for m in used}
    if len(shapes) < 2:
        # one request shape: prefill and decode cannot be told apart, one factor for both
        e = np.where(compute == bandwidth, e, np.inf)
    loss = (e**2).sum(axis=0)
    best = int(np.argmin(loss))
    rms = math.sqrt(float(loss[best]) / len(used))
    ids = tuple(sorted(m.id for m in used))
    return VendorFit(float(compute[best]), float(bandwidth[best]), ids, rms)
