"""Serving requests: prefill, decode, and how many requests fit beside the weights.

A request reads ``input_tokens`` and writes ``output_tokens``. Per batch of ``b``
requests on ``g`` GPUs (tensor-parallel, so compute and bandwidth add up):

* prefill is compute-bound: ``2·N·input·b`` FLOPs at the achieved FLOP/s;
* each of the ``output`` decode steps streams the weights once plus every running
  request's KV cache (at its average length, ``input + output/2``) and computes
  ``2·N·b`` FLOPs. The two are added, not overlapped: calibrated on TensorRT-LLM's
  H200 Llama 3.3 70B 128/128 figure alone, the sum predicts its other published
  shapes (128/2048 … 2048/2048, 5000/500) within 12 %, the max (perfect overlap)
  overshoots decode-heavy ones by up to 66 % (tests/recommend/test_serving.py);
* ``b`` is the profile's concurrency, capped by the KV cache that fits beside the
  weights and their runtime overhead (``"max"``: as many as fit, offline throughput).

So 2,048 tokens in / 128 out is prefill-heavy and 128 in / 2,048 out decode-heavy:
they differ in time as measured, where tokens ÷ FLOPS alone cannot tell them apart.
Sources: Kaplan et al. 2020 §2.1 (2·N FLOPs per token), Pope et al., "Efficiently
Scaling Transformer Inference" (arXiv:2211.05102) §2 (decode bound by weight and KV
memory reads), Kwon et al., "vLLM/PagedAttention" (arXiv:2309.06180) §3 (the batch is
limited by KV-cache memory).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tracker.recommend.assumptions import Assumptions
from tracker.recommend.kinds import Precision
from tracker.recommend.vram import GIB, kv_bytes_per_token, weight_bytes

__all__ = ["Serving", "output_tokens_per_second", "serving"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Serving:
    params: float
    weight_bytes: float
    kv_bytes_per_token: float
    input_tokens: float
    output_tokens: float
    concurrency: float
    """Requests at once; ``inf`` for "max" (as many as fit)."""
    overhead_fraction: float


def serving(
    params: float,
    precision: Precision,
    input_tokens: float,
    output_tokens: float,
    concurrency: float,
    kv_heads: int | None,
    a: Assumptions,
) -> Serving:
    return Serving(
        params=params,
        weight_bytes=params * weight_bytes(precision, a),
        kv_bytes_per_token=kv_bytes_per_token(params, precision, kv_heads, a),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        concurrency=concurrency,
        overhead_fraction=a.inference_overhead_fraction,
    )


def output_tokens_per_second(
    s: Serving,
    gpus: FloatArray,
    vram_gib: FloatArray,
    flops_per_gpu: FloatArray,
    bytes_per_s_per_gpu: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """Output tokens/s over all ``gpus`` (``vram_gib`` between them) and the batch that
    ran; NaN where not one request fits."""
    free = vram_gib * GIB - s.weight_bytes * (1.0 + s.overhead_fraction)
    per_request = s.kv_bytes_per_token * (s.input_tokens + s.output_tokens)
    with np.errstate(invalid="ignore", divide="ignore"):
        fits = np.floor(free / per_request)
        batch = np.minimum(fits, s.concurrency) if math.isfinite(s.concurrency) else fits
        batch = np.where(batch >= 1, batch, np.nan)
        flops = gpus * flops_per_gpu
        bandwidth = gpus * bytes_per_s_per_gpu
        prefill = 2.0 * s.params * s.input_tokens * batch / flops
        context = s.input_tokens + s.output_tokens / 2.0
        memory_step = (s.weight_bytes + s.kv_bytes_per_token * context * batch) / bandwidth
        compute_step = 2.0 * s.params * batch / flops
        decode = s.output_tokens * (memory_step + compute_step)
        return batch * s.output_tokens / (prefill + decode), batch


def best_split_tokens_per_second(
    s: Serving,
    gpus: FloatArray,
    vram_gib_per_gpu: FloatArray,
    flops_per_gpu: FloatArray,
    bytes_per_s_per_gpu: FloatArray,
    kept_per_doubling: FloatArray,
) -> FloatArray:
    """Output tokens/s of an offer run as its best split into tensor-parallel replicas.

    Eight GPUs serve a model that fits one GPU as eight replicas, not one 8-way
    tensor-parallel copy, and a model that needs two as four pairs (as the published
    runs do: Llama 70B at TP1 on an H200, TP2 on an H100). Each split ``g`` (a power of
    two dividing the count, or the whole offer) keeps ``kept_per_doubling ** log2(g)``
    of its per-GPU rates; the best total wins. Fractional GPUs are one slice."""
    best = np.full(len(gpus), np.nan)
    splits = sorted({2.0**k for k in range(7)} | {float(g) for g in np.unique(gpus)})
    for g in splits:
        size = np.where(gpus < 1, gpus, g)
        usable = (gpus < 1) | ((gpus >= g) & (np.mod(gpus, g) == 0))
        with np.errstate(invalid="ignore", divide="ignore"):
            kept = kept_per_doubling ** np.log2(np.maximum(size, 1.0))
            group_vram = np.where(gpus < 1, vram_gib_per_gpu, vram_gib_per_gpu * size)
            tps, _ = output_tokens_per_second(
                s, size, group_vram, flops_per_gpu * kept, bytes_per_s_per_gpu * kept
            )
            total = gpus / size * tps
            better = usable & ~np.isnan(total) & (np.isnan(best) | (total > best))
        best = np.where(better, total, best)
    return best
