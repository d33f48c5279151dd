"""Where a GPU runs a job at a fallback precision, and serving time per offer.

An fp8 job on a GPU without fp8 stores its weights at 16 bits there, so its memory and
its serving throughput differ per GPU model; serving is worked out once per distinct
offer shape (100,000 offers are a few hundred shapes). Rates: :mod:`calibration`;
the serving model itself: :mod:`inference`.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from tracker.recommend.assumptions import Assumptions
from tracker.recommend.calibration import Rate
from tracker.recommend.inference import best_split_tokens_per_second, serving
from tracker.recommend.kinds import Precision
from tracker.recommend.profiles import Profile
from tracker.recommend.table import OfferTable
from tracker.recommend.vram import VramEstimate, estimate_vram, weight_bytes

__all__ = ["serving_seconds", "storage_groups", "vram_by_stored_precision"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def storage_groups(
    p: Profile, a: Assumptions, rates: Sequence[Rate | None]
) -> list[tuple[Precision, IntArray | None]]:
    """The precisions weights are stored at, with the GPU models at a fallback one.

    An fp8 job on a GPU without fp8 holds its weights at the fallback (16-bit) width, so
    it needs that memory there; ``None`` stands for every other GPU model."""
    out: list[tuple[Precision, IntArray | None]] = [(p.precision, None)]
    if p.precision is not p.compute:
        return out  # quantised weights (int8/int4) keep their format whatever the compute
    for precision in sorted({r.precision for r in rates if r and r.fallback}):
        if weight_bytes(precision, a) == weight_bytes(p.precision, a):
            continue
        models = [i for i, r in enumerate(rates) if r and r.fallback and r.precision is precision]
        out.append((precision, np.array(models, np.int64)))
    return out


def vram_by_stored_precision(
    p: Profile, vram: VramEstimate, a: Assumptions, rates: Sequence[Rate | None]
) -> list[tuple[VramEstimate, IntArray | None]]:
    """The job's memory for each stored precision (see :func:`storage_groups`)."""
    out: list[tuple[VramEstimate, IntArray | None]] = []
    for precision, models in storage_groups(p, a, rates):
        if models is None:
            out.append((vram, models))
        else:
            fallback = p.model_copy(update={"precision": precision, "compute_precision": None})
            out.append((estimate_vram(fallback, a), models))
    return out


def serving_seconds(
    p: Profile,
    a: Assumptions,
    table: OfferTable,
    achieved: FloatArray,
    kept: FloatArray,
    rates: Sequence[Rate | None],
) -> FloatArray:
    """``tokens`` output tokens at the serving model's output tokens/s (inference.py)."""
    assert p.tokens is not None and p.input_tokens is not None and p.output_tokens is not None
    scale = np.array([r.memory_scale if r else np.nan for r in rates] or [np.nan])
    bandwidth = table.bandwidth * 1e9 * a.memory_bandwidth_efficiency * scale[table.gpu_code]
    concurrency = float(p.concurrency) if isinstance(p.concurrency, int) else math.inf
    # 100,000 offers are a few hundred distinct (GPU, count, VRAM, link) shapes
    first, inverse = _shapes(table)
    seconds = np.full(len(table), np.nan)
    for precision, models in storage_groups(p, a, rates):
        s = serving(
            p.params, precision, p.input_tokens, p.output_tokens, concurrency, p.kv_heads, a
        )
        tps = best_split_tokens_per_second(
            s,
            table.count[first],
            table.vram_per_gpu[first],
            achieved[first],
            bandwidth[first],
            kept[first],
        )[inverse]
        mask = np.isin(table.gpu_code, models) if models is not None else np.ones(len(table), bool)
        seconds = np.where(mask, p.tokens / tps, seconds)
    return seconds


_SHAPES: dict[int, tuple[weakref.ref[OfferTable], IntArray, IntArray]] = {}


def _shapes(table: OfferTable) -> tuple[IntArray, IntArray]:
    """One offer per distinct (GPU, count, VRAM, link) shape and each offer's shape.

    100,000 offers are a few hundred shapes; serving is worked out once per shape. Kept
    per table (every profile of a recompute shares it)."""
    known = _SHAPES.get(id(table))
    if known is not None and known[0]() is table:
        return known[1], known[2]
    key = np.zeros(len(table), np.int64)
    for column in (table.gpu_code, table.count, table.vram_per_gpu, table.links.code):
        values, index = np.unique(column, return_inverse=True)
        key = key * len(values) + index.ravel()
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    for stale in [k for k, v in _SHAPES.items() if v[0]() is None]:
        del _SHAPES[stale]
    _SHAPES[id(table)] = (weakref.ref(table), first, inverse)
    return first, inverse
